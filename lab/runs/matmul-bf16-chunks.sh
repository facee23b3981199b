#!/usr/bin/env bash
# lab/runs/matmul-bf16-chunks.sh: matmul bf16 14 (12 with the row-class
# tiles' C stored as aligned 16-byte chunks) against 12: 14 on the op's 14
# shapes and 16 partial and unaligned extras (row-class tiles with N odd
# and even, C's rows at every alignment), 12 and 14 timed at the
# canonical shapes (each against the faster of cuBLAS and the other,
# interleaved in its eval), then both launch by launch at 4095^3
# (lab/mm_kernels.py: B's copy and the product apart). About 300 s.
# $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmcs
export BUILD=/tmp/matmul-build
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-14' \
  timeout 100 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-14' \
KP_CORRECT_ARGS=$MM_ROWCLASS_EXTRAS \
  timeout 60 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-(12|14)' KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape-set,canonical timeout 110 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; pack
K=kernels/matmul/cuda
PYTHONUNBUFFERED=1 timeout 90 python3 lab/mm_kernels.py --shape 4095x4095x4095 --modes '' \
  --kernel $K/bf16-12-desc-adds.cu --kernel $K/bf16-14-chunk-store.cu >"$OUT/mm.txt" 2>"$OUT/mm.log"
echo "launches exit $?"; pack
