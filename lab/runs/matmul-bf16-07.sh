#!/usr/bin/env bash
# lab/runs/matmul-bf16-07.sh: matmul bf16 07 (06 with A's unaligned rows
# read in place as eight row classes, B padded by a realigning vector copy,
# C whose rows are not 16-byte aligned staged through shared memory and
# stored a row a warp instruction) on every shape of the op and on partial
# and unaligned shapes, then 06 and 07 timed at the canonical shapes
# against cuBLAS (interleaved in the same eval). Ran on the H200:
# results/2026-12-03-h200-378b096/matmul-bf16-07.
# The extra shapes (at most 16 an eval; the op's own shapes add
# 4095x4097x61 and 1021x1031x1039): K, N and M all odd
# (4097x4095x4095: A by row classes, a short last class tile, B padded, C
# rows at odd elements; 1021 rows: A padded), C's rows 4-byte aligned only
# (264x1030x136, 130x300x65), A by row classes with C aligned
# (4096x4096x4095; 2056x1024x1: eight classes of 257 rows, dx = j;
# 1031x520x9: a pair a class, its second tile one row or none), B and C
# unaligned with A aligned (4096x4095x4096), tiny M (9x7x5, 1x8x3), and
# 06's partial tiles (8x8x8, 128x256x64, 136x264x8, 384x520x72,
# 1000x1032x8192, 4104x4112x4096, 96x80x112). The correctness
# protocol's misaligned rounds put each buffer one element off 16 bytes.
# About 250 s cold (at most 360: 130 + 80 + 150). $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin matmul07
export BUILD=/tmp/matmul-build
OUT=$OUT/all KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-07' \
  timeout 130 bash scripts/gpu-check.sh build,correct >"$OUT/all.log" 2>&1
echo "all shapes exit $?"; grep -E "exit [0-9]+ " "$OUT/all.log"; pack
OUT=$OUT/tiles KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-07' \
KP_CORRECT_ARGS=--shape,4097x4095x4095,--shape,264x1030x136,--shape,130x300x65,--shape,4096x4096x4095,--shape,4096x4095x4096,--shape,2056x1024x1,--shape,1031x520x9,--shape,9x7x5,--shape,1x8x3,--shape,8x8x8,--shape,128x256x64,--shape,136x264x8,--shape,384x520x72,--shape,1000x1032x8192,--shape,4104x4112x4096,--shape,96x80x112 \
  timeout 80 bash scripts/gpu-check.sh correct >"$OUT/tiles.log" 2>&1
echo "tiles exit $?"; grep -E "exit [0-9]+ " "$OUT/tiles.log"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-0[67]' \
KP_BUDGET=8 KP_EVAL_ARGS=--shape-set,canonical \
  timeout 150 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; grep -E "exit [0-9]+ " "$OUT/time.log"; pack
