#!/usr/bin/env bash
# lab/runs/matmul-bf16-stages.sh: matmul bf16 11 against lab 38 (11 on a
# ring of 3 stages) and lab 39 (38 with the staged C store on the producer
# warpgroup's warps 2 and 3, from a whole tile's C in shared memory), both
# from lab/gen.py. 38 and 39 on the op's 14 shapes, 39 also on 11's 13
# partial and unaligned extras (its new store runs only where C's rows are
# not 16-byte aligned or A's rows are row classes), then all three timed
# at the canonical shapes, each against the faster of cuBLAS and another
# kernel interleaved in its eval. 38 says what a stage less costs the
# mainloop (4096^3, 8192^3); 39 whether the consumers freed of the store
# win it back at 4095^3 (11: 216.05 us; torch.compile 211-214). About
# 200 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmstages
export BUILD=/tmp/matmul-build
python3 lab/gen.py >/dev/null
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-(38|39)' \
  timeout 90 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-39' \
KP_CORRECT_ARGS=--shape,4097x4095x4095,--shape,264x1030x136,--shape,4096x4096x4095,--shape,4096x4095x4096,--shape,2056x1024x1,--shape,9x7x5,--shape,8x8x8,--shape,128x256x64,--shape,384x520x72,--shape,1000x1032x8192,--shape,96x80x112,--shape,4095x4095x4095,--shape,1024x4095x4095 \
  timeout 45 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-(11|38|39)' KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape-set,canonical timeout 120 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; pack
