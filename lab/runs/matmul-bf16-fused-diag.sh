#!/usr/bin/env bash
# lab/runs/matmul-bf16-fused-diag.sh: where matmul bf16 13's time goes at
# 4095^3, launch by launch (lab/mm_kernels.py): 12, 13 and the diagnostics
# 44 (no wait for B's panels), 45 (no proxy fence), 46 (the copy alone)
# from lab/gen.py; then 12 and 13 at 4096x4095x4096 (A aligned, B padded,
# C staged). About 120 s. $1: the commit.
# bf16 13 (and 44-46, generated from it) was dropped: it runs at the
# commit it names, where the file exists (results/2026-12-04-h200-*).
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmfd
SHA=${1:-unknown}
lab_stamp "$SHA"
python3 lab/gen.py >/dev/null
K=kernels/matmul/cuda
LIMIT=${LAB_LIMIT:-200}
run() {
  left=$((LIMIT - SECONDS))
  [ "$left" -lt 20 ] && { echo "$1: skipped, $left s left" >>"$OUT/mm.txt"; return; }
  s=$1; shift
  PYTHONUNBUFFERED=1 timeout "$left" python3 lab/mm_kernels.py --shape "$s" --modes '' "$@" >>"$OUT/mm.txt" 2>>"$OUT/mm.log"
  echo "[$SECONDS s] $s exit $?" >>"$OUT/mm.txt"
  pack
}
run 4095x4095x4095 --kernel $K/bf16-12-desc-adds.cu --kernel $K/bf16-13-fused-pad.cu --kernel $K/bf16-44-lab-nowait.cu \
  --kernel $K/bf16-45-lab-nofence.cu --kernel $K/bf16-46-lab-copyonly.cu
run 4096x4095x4096 --kernel $K/bf16-12-desc-adds.cu --kernel $K/bf16-13-fused-pad.cu --kernel $K/bf16-46-lab-copyonly.cu
cp "$OUT/mm.txt" "$FINAL/mm.txt" 2>/dev/null
pack
