#!/usr/bin/env bash
# Session 6, device call 6: balanced grids (every block the same number of
# rows, to one): softmax f32 08 against 07, layernorm f32 12 against 11,
# layernorm bf16 13 against 11 (lab/screen.sh), and every shape of the
# three under the rigorous correctness check. $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/lab-out}
S=kernels/softmax/cuda L=kernels/layernorm/cuda
timeout 220 lab/screen.sh 3 30 \
  $S/f32-07-two-warps-1k.cu:65536:1024 $S/f32-08-balanced-grid.cu:65536:1024 \
  $S/f32-07-two-warps-1k.cu:8192:8192 $S/f32-08-balanced-grid.cu:8192:8192 \
  $S/f32-07-two-warps-1k.cu:4096:32768 $S/f32-08-balanced-grid.cu:4096:32768 \
  $L/f32-11-one-merge.cu:16384:4096 $L/f32-12-balanced-grid.cu:16384:4096 \
  $L/f32-11-one-merge.cu:65536:1024 $L/f32-12-balanced-grid.cu:65536:1024 \
  $L/f32-11-one-merge.cu:4096:16384 $L/f32-12-balanced-grid.cu:4096:16384 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-13-balanced-grid.cu:4096:16384 \
  $L/bf16-11-one-merge.cu:16384:4096 $L/bf16-13-balanced-grid.cu:16384:4096 \
  $L/bf16-11-one-merge.cu:65536:1024 $L/bf16-13-balanced-grid.cu:65536:1024 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='softmax/cuda/f32-08|layernorm/cuda/(f32-12|bf16-13)' KP_JOBS=3 \
  timeout 300 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"
