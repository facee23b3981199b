#!/usr/bin/env bash
# lab/runs/matmul-bf16-09.sh: matmul bf16 09 (07 with B's unaligned rows
# read in place by the producer warpgroup and written realigned into each
# stage, no padded copy of B) on every shape of the op and on partial and
# unaligned shapes, then 07 and 09 timed at the canonical shapes against
# cuBLAS (interleaved in the same eval; 4095^3 is the shape 09 is for, the
# aligned shapes run 07's code in both).
# The extra shapes (16, kproof eval's most): B's rows unaligned with every
# A and C path (4097x4095x4095: row classes, C staged; 4096x4095x4096: A
# aligned, C staged; 264x1030x136 and 130x300x65: N even but not a
# multiple of 8; 1031x520x9 and 2056x1024x1: B's rows aligned, row
# classes, B rows before 0; 4096x4096x4095), tiny and partial shapes
# (9x7x5, 1x8x3, 8x8x8, 96x80x112, 136x264x8, 384x520x72, 1000x1032x8192,
# 4104x4112x4096, 4095x4097x61). The correctness protocol's misaligned
# rounds put each buffer one element off 16 bytes (B off 16 bytes with N
# % 8 == 0: the realigned path with 06's A and C).
# About 200 s cold (at most 285: 110 + 65 + 110). $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin matmul09
export BUILD=/tmp/matmul-build
OUT=$OUT/all KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-09' \
  timeout 110 bash scripts/gpu-check.sh build,correct >"$OUT/all.log" 2>&1
echo "all shapes exit $?"; grep -E "exit [0-9]+ " "$OUT/all.log"; pack
OUT=$OUT/tiles KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-09' \
KP_CORRECT_ARGS=--shape,4097x4095x4095,--shape,4096x4095x4096,--shape,264x1030x136,--shape,130x300x65,--shape,1031x520x9,--shape,2056x1024x1,--shape,4096x4096x4095,--shape,9x7x5,--shape,1x8x3,--shape,8x8x8,--shape,96x80x112,--shape,136x264x8,--shape,384x520x72,--shape,1000x1032x8192,--shape,4104x4112x4096,--shape,4095x4097x61 \
  timeout 65 bash scripts/gpu-check.sh correct >"$OUT/tiles.log" 2>&1
echo "tiles exit $?"; grep -E "exit [0-9]+ " "$OUT/tiles.log"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-0[79]' \
KP_BUDGET=6 KP_EVAL_ARGS=--shape-set,canonical \
  timeout 110 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; grep -E "exit [0-9]+ " "$OUT/time.log"; pack
