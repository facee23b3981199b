#!/usr/bin/env bash
# Session 7, device call 7: layernorm launch shapes with fewer values a
# thread (lab/gen.py 65-68) at 1024 and 4096 columns, f32 and bf16.
set -u
OUT=${OUT:-$PWD/lab-out}
L=kernels/layernorm/cuda
python3 lab/gen.py >/dev/null
timeout 240 lab/screen.sh 4 30 \
  $L/f32-11-one-merge.cu:65536:1024 $L/f32-68-lab-tpr128.cu:65536:1024 $L/f32-67-lab-tpr256.cu:65536:1024 \
  $L/f32-11-one-merge.cu:16384:4096 $L/f32-66-lab-4k512.cu:16384:4096 $L/f32-65-lab-4k256.cu:16384:4096 \
  $L/bf16-11-one-merge.cu:65536:1024 $L/bf16-68-lab-tpr128.cu:65536:1024 \
  $L/bf16-11-one-merge.cu:16384:4096 $L/bf16-66-lab-4k512.cu:16384:4096 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
