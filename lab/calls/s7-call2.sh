#!/usr/bin/env bash
# Session 7, device call 2: why layernorm bf16 15 (bulk-copy rows) lost to
# 11 where softmax bf16 12 won 5% over 07 (call 1): 15 without w and b
# loads (diagnostics, wrong output), 15 padded to five and four rows an
# SM; softmax bf16 12's launch shapes at 32768 columns (lab/gen.py).
set -u
OUT=${OUT:-$PWD/lab-out}
S=kernels/softmax/cuda L=kernels/layernorm/cuda
python3 lab/gen.py >/dev/null
timeout 300 lab/screen.sh 3 30 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-15-tma-rows.cu:4096:16384 $L/bf16-79-lab-tma512.cu:4096:16384 \
  $L/bf16-77-lab-nowb.cu:4096:16384 $L/bf16-76-lab-nowb512.cu:4096:16384 \
  $L/bf16-75-lab-5rows.cu:4096:16384 $L/bf16-74-lab-4rows.cu:4096:16384 \
  $S/bf16-07-stream-rows.cu:4096:32768 $S/bf16-12-tma-rows.cu:4096:32768 $S/bf16-79-lab-tma1024.cu:4096:32768 \
  $S/bf16-77-lab-tma256.cu:4096:32768 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
