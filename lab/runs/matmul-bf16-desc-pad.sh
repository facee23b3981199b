#!/usr/bin/env bash
# lab/runs/matmul-bf16-desc-pad.sh: matmul bf16 11 against lab 42 (11 with
# its wgmma descriptors built once and advanced by adds) and lab 43 (11
# with B's padded copy four rows a thread, their loads issued before the
# stores), both from lab/gen.py: 42 and 43 on the op's 14 shapes, 43 also
# on 11's 13 partial and unaligned extras (its copy runs only where B's
# rows are not 16-byte aligned), then all three timed at the canonical
# shapes, each against the faster of cuBLAS and another of the three
# interleaved in its eval. About 200 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmdescpad
export BUILD=/tmp/matmul-build
python3 lab/gen.py >/dev/null
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-(42|43)' \
  timeout 100 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-43' \
KP_CORRECT_ARGS=--shape,4097x4095x4095,--shape,264x1030x136,--shape,4096x4096x4095,--shape,4096x4095x4096,--shape,2056x1024x1,--shape,9x7x5,--shape,8x8x8,--shape,128x256x64,--shape,384x520x72,--shape,1000x1032x8192,--shape,96x80x112,--shape,4095x4095x4095,--shape,1024x4095x4095 \
  timeout 45 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-(11|42|43)' KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape-set,canonical timeout 150 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; pack
