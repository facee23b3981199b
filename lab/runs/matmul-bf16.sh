#!/usr/bin/env bash
# lab/runs/matmul-bf16.sh: matmul bf16 04 (03 with one wgmma group kept in
# flight and a persistent grid) and 05 (04 for every shape with K <= 8192,
# through padded copies of operands the copy engine cannot read) on every
# shape of the op and on aligned partial-tile shapes, then bf16 03, 04 and
# 05 timed at the canonical shapes against cuBLAS. Not yet run; the
# predictions are in the kernels' headers. 8 s a shape: at 1.5 s, 8192^3
# ended NOISY with two samples (results/2026-12-01-h200-d4f45ea), since the
# minimum of 10 samples waits for at most five budgets and a sample there
# (fresh inputs, flush, the call, the interleaved cuBLAS call, the check of
# the output) took 3.7 s or more.
# About 400 s cold (at most 590); each part packed as it ends. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin matmul
export BUILD=/tmp/matmul-build
OUT=$OUT/all KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-0[45]' \
  timeout 150 bash scripts/gpu-check.sh build,correct >"$OUT/all.log" 2>&1
echo "all shapes exit $?"; grep -E "exit [0-9]+ " "$OUT/all.log"; pack
OUT=$OUT/tiles KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-0[45]' \
KP_CORRECT_ARGS=--shape,8x8x8,--shape,128x256x64,--shape,136x264x8,--shape,384x520x72,--shape,1000x1032x8192,--shape,4104x4112x4096,--shape,96x80x112,--shape,200x136x256 \
  timeout 60 bash scripts/gpu-check.sh correct >"$OUT/tiles.log" 2>&1
echo "tiles exit $?"; grep -E "exit [0-9]+ " "$OUT/tiles.log"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-0[345]' \
KP_BUDGET=8 KP_EVAL_ARGS=--shape-set,canonical \
  timeout 370 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; grep -E "exit [0-9]+ " "$OUT/time.log"; pack
