#!/usr/bin/env bash
# Session 7, device call 4: Nsight Compute on layernorm bf16 at 4096x16384:
# 11 (registers), 15 (bulk-copy rows, six an SM), 15 at 512 x 4 and the
# same without w and b loads (wrong output), to see which unit the w and b
# loads saturate; and a screen of 15 at 512 x 4 with an explicit 132 KiB
# carveout (L1 left for w and b).
set -u
OUT=${OUT:-$PWD/lab-out}
L=kernels/layernorm/cuda
python3 lab/gen.py >/dev/null
timeout 120 lab/screen.sh 3 30 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-79-lab-tma512.cu:4096:16384 $L/bf16-71-lab-carve.cu:4096:16384 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
timeout 240 lab/profile.sh $L/bf16-11-one-merge.cu 4096 16384 $L/bf16-15-tma-rows.cu 4096 16384 \
  $L/bf16-79-lab-tma512.cu 4096 16384 $L/bf16-76-lab-nowb512.cu 4096 16384 >"$OUT/profile.log" 2>&1
echo "profile exit $?"
