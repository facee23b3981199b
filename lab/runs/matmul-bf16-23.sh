#!/usr/bin/env bash
# lab/runs/matmul-bf16-23.sh: matmul bf16 23 against 21 in one short run:
# 23's error map (lab/probes/mm_errmap.cu) at nine shapes of the aligned
# path (k-tiles a tile from 1 to 128, a last pair half below M, C rows
# 50264 wide), 21 and 23 launch by launch (lab/mm_kernels.py, 10 cold
# calls) at 4096^3, 8192x50264x768, 8192^3 and 8192x1024x8192; then while
# time is left kproof's check of 23 on the op's 14 shapes, and both timed
# under kproof with cuBLAS interleaved at the op's canonical shapes (1 s a
# shape). $1: the commit (pass it: a device copy's .git may be stale).
# About 420 s; stops starting steps after $LAB_LIMIT s (default 420);
# below 200 it builds no kproof and runs only the error map and launches.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mm23
lab_stamp "${1:-unknown}"
LIMIT=${LAB_LIMIT:-420}
K=kernels/matmul/cuda
K21=$K/bf16-21-box-staging.cu K23=$K/bf16-23-deferred-epilogue.cu
export BUILD=/tmp/matmul-build
left() { echo $((LIMIT - SECONDS)); }
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude lab/probes/mm_errmap.cu "$K23" \
  -o "$OUT/em23" -lcuda >"$OUT/build-em.txt" 2>&1 &
[ "$LIMIT" -lt 200 ] ||
  (OUT=$OUT/build KP_COMMIT=${1:-unknown} KP_JOBS=8 timeout 200 bash scripts/gpu-check.sh build >"$OUT/build.log" 2>&1) &
for f in "$K21" "$K23"; do
  PYTHONUNBUFFERED=1 timeout 200 python3 lab/mm_kernels.py --shape 1024x1024x1024 --modes '' --calls 1 --kernel "$f" \
    >/dev/null 2>&1 &
done
wait
pack
for s in "4096 4096 4096 0" "1024 1024 64 0" "768 520 72 0" "4096 4096 192 0" "1000 1032 8192 0" \
         "4224 4096 4096 0" "2048 50264 768 0" "8192 1024 8192 0" "1031 1032 1000 0"; do
  echo "== bf16-23-deferred-epilogue $s" >>"$OUT/errmap.txt"
  timeout 30 "$OUT/em23" $s >>"$OUT/errmap.txt" 2>&1
  rc=$?; echo "exit $rc" >>"$OUT/errmap.txt"
  [ $rc -ne 124 ] || { echo "timed out: a wait that never ends; nothing more runs" >>"$OUT/errmap.txt"; pack; exit 1; }
done
pack
for s in 4096x4096x4096 8192x50264x768 8192x8192x8192 8192x1024x8192; do
  [ "$(left)" -gt 30 ] || { echo "$s: skipped" >>"$OUT/launches.log"; continue; }
  PYTHONUNBUFFERED=1 timeout 100 python3 lab/mm_kernels.py --shape $s --modes '' --kernel "$K21" --kernel "$K23" \
    >>"$OUT/launches.txt" 2>>"$OUT/launches.log"
  echo "[$SECONDS s] $s exit $?" >>"$OUT/launches.log"; pack
done
[ "$LIMIT" -ge 200 ] || exit 0
[ "$(left)" -gt 60 ] && (OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=8 KP_CORRECT_KERNELS=matmul/cuda/bf16-23 \
  timeout "$(left)" bash scripts/gpu-check.sh correct >"$OUT/ops.log" 2>&1; echo "ops exit $?" >>"$OUT/ops.log")
pack
t=$(( $(left) - 15 ))
[ "$t" -gt 60 ] && (OUT=$OUT/timed KP_COMMIT=${1:-unknown} KP_KERNELS="matmul/cuda/bf16-(21|23)" KP_BUDGET=1 \
  KP_EVAL_ARGS=--shape-set,canonical \
  timeout "$t" bash scripts/gpu-check.sh kernels >"$OUT/timed.log" 2>&1; echo "timed exit $?" >>"$OUT/timed.log")
pack
