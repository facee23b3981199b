#!/usr/bin/env bash
# lab/runs/matmul-bf16-fused.sh: matmul bf16 12 (descriptor adds) and 13
# (B's padded copy written inside the product): 13 on the op's 14 shapes
# and on 11's 13 partial and unaligned extras, 12 on the extras, then 11,
# 12 and 13 timed at the canonical shapes, each against the faster of
# cuBLAS and another of the three interleaved in its eval. About 200 s.
# $1: the commit.
# bf16 13 (and 44-46, generated from it) was dropped: it runs at the
# commit it names, where the file exists (results/2026-12-04-h200-*).
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmfused
export BUILD=/tmp/matmul-build
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-13' \
  timeout 100 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-1[23]' \
KP_CORRECT_ARGS=--shape,4097x4095x4095,--shape,264x1030x136,--shape,4096x4096x4095,--shape,4096x4095x4096,--shape,2056x1024x1,--shape,9x7x5,--shape,8x8x8,--shape,128x256x64,--shape,384x520x72,--shape,1000x1032x8192,--shape,96x80x112,--shape,4095x4095x4095,--shape,1024x4095x4095 \
  timeout 60 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-1[23]' KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape-set,canonical timeout 150 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; pack
