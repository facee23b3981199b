#!/usr/bin/env bash
# lab/runs/matmul-bf16-23-25.sh: matmul bf16 23, 24 and 25 against 21 in
# one run: error maps (lab/probes/mm_errmap.cu) of 23 at nine shapes of
# the aligned path (k-tiles a tile from 1 to 128, a last pair half below
# M, C rows 50264 wide) and of 24 and 25 at ten row-class shapes (C on
# and off 16 bytes); 21, 23, 24 and 25 launch by launch (lab/mm_kernels.py,
# 10 cold calls) at 4096^3, 8192x50264x768, 8192^3, 8192x1024x8192,
# 4095^3, 4096x4095x4096 and 8192x50257x768; then while time is left
# kproof's check of 23, 24 and 25 on the op's 14 shapes and of 24 and 25
# on the 16 row-class extras, and all four timed under kproof with cuBLAS
# interleaved at the op's canonical shapes (1 s a shape). $1: the commit (pass it: a device
# copy's .git may be stale). About 560 s; stops starting steps after
# $LAB_LIMIT s (default 570); below 200 it builds no kproof and runs only
# the error maps and launches.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mm2325
lab_stamp "${1:-unknown}"
LIMIT=${LAB_LIMIT:-570}
K=kernels/matmul/cuda
K21=$K/bf16-21-box-staging.cu K23=$K/bf16-23-deferred-epilogue.cu K24=$K/bf16-24-deferred-classes.cu
K25=$K/bf16-25-half-deferred-classes.cu
export BUILD=/tmp/matmul-build
left() { echo $((LIMIT - SECONDS)); }
for n in 23 24 25; do
  f=K$n
  nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude lab/probes/mm_errmap.cu "${!f}" \
    -o "$OUT/em$n" -lcuda >"$OUT/build-em$n.txt" 2>&1 &
done
[ "$LIMIT" -lt 200 ] ||
  (OUT=$OUT/build KP_COMMIT=${1:-unknown} KP_JOBS=8 timeout 200 bash scripts/gpu-check.sh build >"$OUT/build.log" 2>&1) &
for f in "$K21" "$K23" "$K24" "$K25"; do
  PYTHONUNBUFFERED=1 timeout 200 python3 lab/mm_kernels.py --shape 1024x1024x1024 --modes '' --calls 1 --kernel "$f" \
    >/dev/null 2>&1 &
done
wait
pack
errmap() { # $1: 23, 24 or 25, then the shapes
  local n=$1 s rc; shift
  for s in "$@"; do
    echo "== bf16-$n $s" >>"$OUT/errmap.txt"
    timeout 30 "$OUT/em$n" $s >>"$OUT/errmap.txt" 2>&1
    rc=$?; echo "exit $rc" >>"$OUT/errmap.txt"
    [ $rc -ne 124 ] || { echo "timed out: a wait that never ends; nothing more runs" >>"$OUT/errmap.txt"; pack; exit 1; }
  done
}
errmap 23 "4096 4096 4096 0" "1024 1024 64 0" "768 520 72 0" "4096 4096 192 0" "1000 1032 8192 0" \
  "4224 4096 4096 0" "2048 50264 768 0" "8192 1024 8192 0" "1031 1032 1000 0"
rowclass=("4095 4095 4095 0" "4095 4095 4095 1" "4096 4095 4096 0" "1024 1030 1001 0" "1024 1030 1001 3" \
  "4097 4095 4095 0" "1024 4097 4095 0" "2048 50257 768 0" "4096 4096 4095 1" "1024 1030 64 0")
errmap 24 "${rowclass[@]}"
errmap 25 "${rowclass[@]}"
pack
for s in 4096x4096x4096 8192x50264x768 8192x8192x8192 8192x1024x8192 4095x4095x4095 4096x4095x4096 8192x50257x768; do
  [ "$(left)" -gt 40 ] || { echo "$s: skipped" >>"$OUT/launches.log"; continue; }
  PYTHONUNBUFFERED=1 timeout 100 python3 lab/mm_kernels.py --shape $s --modes '' --kernel "$K21" --kernel "$K23" \
    --kernel "$K24" --kernel "$K25" >>"$OUT/launches.txt" 2>>"$OUT/launches.log"
  echo "[$SECONDS s] $s exit $?" >>"$OUT/launches.log"; pack
done
[ "$LIMIT" -ge 200 ] || exit 0
[ "$(left)" -gt 60 ] && (OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=8 KP_CORRECT_KERNELS="matmul/cuda/bf16-2[345]" \
  timeout "$(left)" bash scripts/gpu-check.sh correct >"$OUT/ops.log" 2>&1; echo "ops exit $?" >>"$OUT/ops.log")
pack
[ "$(left)" -gt 60 ] && (OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=8 KP_CORRECT_KERNELS="matmul/cuda/bf16-2[45]" \
  KP_CORRECT_ARGS=$MM_ROWCLASS_EXTRAS timeout 80 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
  echo "extra exit $?" >>"$OUT/extra.log")
pack
t=$(( $(left) - 15 ))
[ "$t" -gt 60 ] && (OUT=$OUT/timed KP_COMMIT=${1:-unknown} KP_KERNELS="matmul/cuda/bf16-(21|23|24|25)" KP_BUDGET=1 \
  KP_EVAL_ARGS=--shape-set,canonical \
  timeout "$t" bash scripts/gpu-check.sh kernels >"$OUT/timed.log" 2>&1; echo "timed exit $?" >>"$OUT/timed.log")
pack
