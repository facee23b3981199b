#!/usr/bin/env bash
# lab/runs/matmul-bf16-06.sh: matmul bf16 06 (05 on 2-CTA clusters sharing
# the B tile by multicast, C stored by bulk tensor copies) on every shape
# of the op and on aligned partial-tile shapes, then 04 and 06 timed at
# the canonical shapes against cuBLAS (interleaved in the same eval). Not
# yet run; the prediction is in the kernel's header.
# The extra shapes: tiles_m odd (8x8x8, 384x520x72, 4104x4112x4096: a
# pair's second tile lies below M and stores nothing), more units than
# clusters (4104x4112x4096: 289 units, several rounds a cluster), C's rows
# 4-byte but not 16-byte aligned (264x1030x136: two-element stores, B
# padded), one tile and one k-tile (128x256x64), K = 8192 with partial
# tiles (1000x1032x8192).
# About 300 s cold (at most 450: 120 + 70 + 260). $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin matmul06
export BUILD=/tmp/matmul-build
OUT=$OUT/all KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-06' \
  timeout 120 bash scripts/gpu-check.sh build,correct >"$OUT/all.log" 2>&1
echo "all shapes exit $?"; grep -E "exit [0-9]+ " "$OUT/all.log"; pack
OUT=$OUT/tiles KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-06' \
KP_CORRECT_ARGS=--shape,8x8x8,--shape,128x256x64,--shape,136x264x8,--shape,384x520x72,--shape,1000x1032x8192,--shape,4104x4112x4096,--shape,264x1030x136,--shape,96x80x112,--shape,200x136x256 \
  timeout 70 bash scripts/gpu-check.sh correct >"$OUT/tiles.log" 2>&1
echo "tiles exit $?"; grep -E "exit [0-9]+ " "$OUT/tiles.log"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-0[46]' \
KP_BUDGET=8 KP_EVAL_ARGS=--shape-set,canonical \
  timeout 260 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; grep -E "exit [0-9]+ " "$OUT/time.log"; pack
