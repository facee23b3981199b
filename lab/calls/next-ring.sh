#!/usr/bin/env bash
# Prepared in session 7, not yet run: layernorm bf16 17 (a resident block
# an SM, w and b in registers, rows by bulk copy into a ring) against 11
# at 4096x16384 (where 11 sits at 89% of copy) and 8192x16384, its
# two-blocks-an-SM variant, and 17's every shape under the rigorous
# correctness check. $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/lab-out}
L=kernels/layernorm/cuda
python3 lab/gen.py >/dev/null
timeout 200 lab/screen.sh 4 30 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-17-ring-rows.cu:4096:16384 $L/bf16-70-lab-ring2.cu:4096:16384 \
  $L/bf16-11-one-merge.cu:8192:16384 $L/bf16-17-ring-rows.cu:8192:16384 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='layernorm/cuda/bf16-17' KP_JOBS=1 \
  timeout 300 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"
