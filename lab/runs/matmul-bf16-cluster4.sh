#!/usr/bin/env bash
# lab/runs/matmul-bf16-cluster4.sh: matmul bf16 12 against lab 48 (12 with
# clusters of 4 CTAs sharing each B tile, lab/gen.py): 48 on the op's 14
# shapes and 11's 13 partial and unaligned extras, 12 and 48 timed at the
# canonical shapes (each against the faster of cuBLAS and the other,
# interleaved in its eval), then both and cuBLAS back to back at 4096^3
# and 8192^3 with the SM clock and board power (lab/mm_power.py), and
# 48 on three shapes where a cluster has live and dead tiles (tiles_m % 4
# == 2, and a row class two tiles tall). About 330 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmc4
export BUILD=/tmp/matmul-build
python3 lab/gen.py >/dev/null
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-48' \
  timeout 100 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-48' \
KP_CORRECT_ARGS=--shape,768x520x72,--shape,700x1030x136,--shape,2048x1030x1001,--shape,4097x4095x4095,--shape,264x1030x136,--shape,4096x4096x4095,--shape,4096x4095x4096,--shape,2056x1024x1,--shape,9x7x5,--shape,8x8x8,--shape,128x256x64,--shape,384x520x72,--shape,1000x1032x8192,--shape,96x80x112,--shape,4095x4095x4095,--shape,1024x4095x4095 \
  timeout 45 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-(12|48)' KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape-set,canonical timeout 110 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; pack
K=kernels/matmul/cuda
rc=0
for s in 4096x4096x4096 8192x8192x8192; do
  PYTHONUNBUFFERED=1 timeout 100 python3 lab/mm_power.py --shape $s --seconds 3 --kernel $K/bf16-12-desc-adds.cu \
    --kernel $K/bf16-48-lab-cluster4.cu >>"$OUT/power.txt" 2>>"$OUT/power.log" || rc=$?
  pack
done
echo "power exit $rc"; pack
