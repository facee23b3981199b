#!/usr/bin/env bash
# lab/runs/matmul-bf16-08.sh: matmul bf16 08 (07 with the last partial
# round of units split along K over every cluster, stream-K, where the
# busiest cluster saves at least 16 k-tiles) on every shape of the op and
# on split, partial and unaligned shapes, then 07, 08 and lab 35 (08
# splitting every partial round, from lab/gen.py) timed at the canonical
# shapes against cuBLAS (interleaved in the same eval). Its prediction and
# measurement are in 08's header (results/2026-12-04-h200-3291f92).
# The extra shapes (16, kproof eval's most): split on 66 clusters
# (4104x4112x4096: tiles_m odd, N partial, finishers adding three
# writers; 3200x4352x2000: a partial last k-tile; 1700x5000x2000: ranges of
# about 4 k-tiles, finishers adding up to 8 writers; 1408x4864x4096,
# 2944x4608x1536), then 07's unaligned and partial shapes, on paths 08
# leaves as they were (4097x4095x4095, 264x1030x136, 4096x4096x4095,
# 4096x4095x4096, 2056x1024x1, 9x7x5, 8x8x8, 128x256x64, 384x520x72,
# 1000x1032x8192, 96x80x112). The op's own shapes split at 8192^3; the
# timed eval checks lab 35's split at 4096^3 and 8192x1024x8192 too. The
# correctness protocol's misaligned rounds put each buffer one element off
# 16 bytes.
# Lab 35 is checked on the extras beside 08 (its compile then overlaps
# 08's checks). About 170 s warm (at most 230: 85 + 45 + 100). $1: the
# commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin matmul08
export BUILD=/tmp/matmul-build
OUT=$OUT/all KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-08' \
  timeout 85 bash scripts/gpu-check.sh build,correct >"$OUT/all.log" 2>&1
echo "all shapes exit $?"; grep -E "exit [0-9]+ " "$OUT/all.log"; pack
python3 lab/gen.py >/dev/null # writes lab 35 (and the other lab variants, not run here)
OUT=$OUT/tiles KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-(08|35-lab-splitall)' \
KP_CORRECT_ARGS=--shape,4104x4112x4096,--shape,3200x4352x2000,--shape,1700x5000x2000,--shape,1408x4864x4096,--shape,2944x4608x1536,--shape,4097x4095x4095,--shape,264x1030x136,--shape,4096x4096x4095,--shape,4096x4095x4096,--shape,2056x1024x1,--shape,9x7x5,--shape,8x8x8,--shape,128x256x64,--shape,384x520x72,--shape,1000x1032x8192,--shape,96x80x112 \
  timeout 45 bash scripts/gpu-check.sh correct >"$OUT/tiles.log" 2>&1
echo "tiles exit $?"; grep -E "exit [0-9]+ " "$OUT/tiles.log"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-(0[78]|35-lab-splitall)' \
KP_BUDGET=6 KP_EVAL_ARGS=--shape-set,canonical \
  timeout 100 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; grep -E "exit [0-9]+ " "$OUT/time.log"; pack
