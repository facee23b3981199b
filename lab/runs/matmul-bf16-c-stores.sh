#!/usr/bin/env bash
# lab/runs/matmul-bf16-c-stores.sh: matmul bf16 15 (a row-class tile's C
# stored a row at a time by bulk copies) and 16 (by tensor stores through
# C's row-class maps) against 14: 15 and 16 on the op's 14 shapes and 16
# partial and unaligned extras (row-class tiles with N odd and even, C's
# rows at every alignment), 14, 15 and 16 timed at 4095^3 (each against
# the fastest of cuBLAS and the others, interleaved), then launch by
# launch at 4095^3 (lab/mm_kernels.py). About 260 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmcst
export BUILD=/tmp/matmul-build
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=4 KP_CORRECT_KERNELS='matmul/cuda/bf16-1[56]' \
  timeout 110 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=4 KP_CORRECT_KERNELS='matmul/cuda/bf16-1[56]' \
KP_CORRECT_ARGS=$MM_ROWCLASS_EXTRAS \
  timeout 60 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-1[456]' KP_BUDGET=2 \
KP_EVAL_ARGS=--shape,4095x4095x4095 timeout 70 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; pack
K=kernels/matmul/cuda
PYTHONUNBUFFERED=1 timeout 60 python3 lab/mm_kernels.py --shape 4095x4095x4095 --modes '' \
  --kernel $K/bf16-14-chunk-store.cu --kernel $K/bf16-15-bulk-rows.cu --kernel $K/bf16-16-class-stores.cu \
  >"$OUT/mm.txt" 2>"$OUT/mm.log"
echo "launches exit $?"; pack
