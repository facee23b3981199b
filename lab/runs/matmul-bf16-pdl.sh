#!/usr/bin/env bash
# lab/runs/matmul-bf16-pdl.sh: matmul bf16 12 against lab 47 (12 with the
# product launched as pad_rows' programmatic dependent, lab/gen.py): 47 on
# the op's 14 shapes and 11's 13 partial and unaligned extras, 12 and 47
# timed at the canonical shapes (each against the faster of cuBLAS and the
# other, interleaved in its eval), then both launch by launch at 4095^3
# (lab/mm_kernels.py). About 200 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmpdl
export BUILD=/tmp/matmul-build
python3 lab/gen.py >/dev/null
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-47' \
  timeout 100 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-47' \
KP_CORRECT_ARGS=--shape,4097x4095x4095,--shape,264x1030x136,--shape,4096x4096x4095,--shape,4096x4095x4096,--shape,2056x1024x1,--shape,9x7x5,--shape,8x8x8,--shape,128x256x64,--shape,384x520x72,--shape,1000x1032x8192,--shape,96x80x112,--shape,4095x4095x4095,--shape,1024x4095x4095 \
  timeout 45 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-(12|47)' KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape-set,canonical timeout 110 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; pack
K=kernels/matmul/cuda
PYTHONUNBUFFERED=1 timeout 60 python3 lab/mm_kernels.py --shape 4095x4095x4095 --modes '' \
  --kernel $K/bf16-12-desc-adds.cu --kernel $K/bf16-47-lab-pdl.cu >"$OUT/mm.txt" 2>"$OUT/mm.log"
echo "mm exit $?"; pack
