#!/usr/bin/env bash
# Session 6, device call 3: layernorm bf16 12 (resident blocks, the next
# row's loads in flight) against 11 and 05 (lab/screen.sh), and every
# shape of 12 under the rigorous correctness check.
set -u
OUT=${OUT:-$PWD/lab-out}
L=kernels/layernorm/cuda
timeout 200 lab/screen.sh 3 30 \
  $L/bf16-05-warp-per-row.cu:4096:16384 $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-12-rows-ahead.cu:4096:16384 \
  $L/bf16-11-one-merge.cu:2048:32768 $L/bf16-12-rows-ahead.cu:2048:32768 \
  $L/bf16-11-one-merge.cu:16384:16384 $L/bf16-12-rows-ahead.cu:16384:16384 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
OUT=$OUT/gc KP_CORRECT_KERNELS='layernorm/cuda/bf16-12' KP_JOBS=4 timeout 300 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"
