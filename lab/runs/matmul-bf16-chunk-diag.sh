#!/usr/bin/env bash
# lab/runs/matmul-bf16-chunk-diag.sh: matmul bf16 14's row-class C store
# at 4095^3. Lab 49 (14 with a lane's chunk reads batched) on the op's 14
# shapes and 16 partial and unaligned extras; 14 and 49 timed at 4095^3
# (each against the faster of cuBLAS and the other, interleaved); then 12,
# 14, 49 and the diagnostics 50 (C staged, not stored) and 51 (C neither
# staged nor stored) launch by launch at 4095^3 (lab/mm_kernels.py): what
# the store still costs. About 200 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmcd
export BUILD=/tmp/matmul-build
python3 lab/gen.py >/dev/null
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-49' \
  timeout 100 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-49' \
KP_CORRECT_ARGS=$MM_ROWCLASS_EXTRAS \
  timeout 60 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-(14|49)' KP_BUDGET=2 \
KP_EVAL_ARGS=--shape,4095x4095x4095 timeout 60 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; pack
K=kernels/matmul/cuda
PYTHONUNBUFFERED=1 timeout 120 python3 lab/mm_kernels.py --shape 4095x4095x4095 --modes '' \
  --kernel $K/bf16-12-desc-adds.cu --kernel $K/bf16-14-chunk-store.cu --kernel $K/bf16-49-lab-batched.cu \
  --kernel $K/bf16-50-lab-nostore.cu --kernel $K/bf16-51-lab-noepilogue.cu >"$OUT/mm.txt" 2>"$OUT/mm.log"
echo "launches exit $?"; pack
