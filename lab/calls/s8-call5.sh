#!/usr/bin/env bash
# Session 8, device call 5: the demo (every exploit under the naive flaws
# and the rigorous protocol, and the best kernels, now softmax f32 10 and
# layernorm f32 17) with the build; then a screen: layernorm bf16 11 with x
# at L2 evict_last made once a kernel (lab 56) at 4096x16384 and 16384x4096.
# $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} KP_JOBS=4 OUT=$OUT KP_DEMO_TIMEOUT=330 \
  timeout 400 bash scripts/gpu-check.sh build,exploits
echo "gpu-check exit $?"
python3 lab/gen.py >/dev/null
L=kernels/layernorm/cuda
OUT=/tmp/s8c5 timeout 120 lab/screen.sh 4 30 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-56-lab-keep.cu:4096:16384 \
  $L/bf16-11-one-merge.cu:16384:4096 $L/bf16-56-lab-keep.cu:16384:4096 >/tmp/s8c5-screen.log 2>&1
echo "screen exit $?"; cat /tmp/s8c5/screen.txt; cp /tmp/s8c5/screen.txt "$OUT/screen.txt" 2>/dev/null
