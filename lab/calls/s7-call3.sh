#!/usr/bin/env bash
# Session 7, device call 3: layernorm bf16 16 (two rows a block share each
# w and b load) against 11 and against itself with one and three rows a
# block; softmax bf16 12 with its new launch shapes (1024 x 4 at 32768,
# 512 x 4 at 16384) against 07; then every shape of 16 and 12 under the
# rigorous correctness check. $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/lab-out}
S=kernels/softmax/cuda L=kernels/layernorm/cuda
python3 lab/gen.py >/dev/null
timeout 240 lab/screen.sh 3 30 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-16-row-pairs.cu:4096:16384 \
  $L/bf16-73-lab-pairs1.cu:4096:16384 $L/bf16-72-lab-pairs3.cu:4096:16384 \
  $L/bf16-11-one-merge.cu:8192:16384 $L/bf16-16-row-pairs.cu:8192:16384 \
  $S/bf16-07-stream-rows.cu:4096:32768 $S/bf16-12-tma-rows.cu:4096:32768 \
  $S/bf16-07-stream-rows.cu:4096:16384 $S/bf16-12-tma-rows.cu:4096:16384 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='softmax/cuda/bf16-12|layernorm/cuda/bf16-16' KP_JOBS=2 \
  timeout 300 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"
