#!/usr/bin/env bash
# Session 7, device call 6: layernorm 11 at 65536x1024 with two and four
# warps a row (lab/gen.py 68/69) against 11's warp a row.
set -u
OUT=${OUT:-$PWD/lab-out}
L=kernels/layernorm/cuda
python3 lab/gen.py >/dev/null
timeout 200 lab/screen.sh 4 30 \
  $L/f32-11-one-merge.cu:65536:1024 $L/f32-69-lab-tpr64.cu:65536:1024 $L/f32-68-lab-tpr128.cu:65536:1024 \
  $L/bf16-11-one-merge.cu:65536:1024 $L/bf16-69-lab-tpr64.cu:65536:1024 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
