#!/usr/bin/env bash
# Session 6, device call 2: layernorm 11 (one merged reduction of equal
# halves) against 05 / 10 on the canonical shapes (lab/screen.sh), and
# every shape of both 11s under the rigorous correctness check.
set -u
OUT=${OUT:-$PWD/lab-out}
L=kernels/layernorm/cuda
timeout 240 lab/screen.sh 3 30 \
  $L/bf16-05-warp-per-row.cu:4096:16384 $L/bf16-11-one-merge.cu:4096:16384 \
  $L/bf16-05-warp-per-row.cu:16384:4096 $L/bf16-11-one-merge.cu:16384:4096 \
  $L/bf16-05-warp-per-row.cu:65536:1024 $L/bf16-11-one-merge.cu:65536:1024 \
  $L/f32-10-loads-first.cu:4096:16384 $L/f32-11-one-merge.cu:4096:16384 \
  $L/f32-10-loads-first.cu:16384:4096 $L/f32-11-one-merge.cu:16384:4096 \
  $L/f32-10-loads-first.cu:65536:1024 $L/f32-11-one-merge.cu:65536:1024 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
OUT=$OUT/gc KP_CORRECT_KERNELS='layernorm/cuda/(f32|bf16)-11' KP_JOBS=4 timeout 300 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"
