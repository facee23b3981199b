#!/usr/bin/env bash
# lab/runs/matmul-launches.sh: every device kernel a matmul call launches,
# with its duration (lab/mm_kernels.py), for bf16 06 and 07 and torch at
# 4095^3 and 4096^3: where 07's time above the aligned product goes (the
# padded copy of B, the mainloop, the staged C) and what torch.compile runs
# there. About 120 s. $1: the commit. Packs $OUT/run.tgz after each shape.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mml
SHA=${1:-unknown}
lab_stamp "$SHA"
LIMIT=${LAB_LIMIT:-150}
K=kernels/matmul/cuda
for s in 4095x4095x4095 4096x4096x4096; do
  left=$((LIMIT - SECONDS))
  [ "$left" -lt 20 ] && { echo "$s: skipped, $left s left" >>"$OUT/mm.txt"; continue; }
  PYTHONUNBUFFERED=1 timeout "$left" python3 lab/mm_kernels.py --shape "$s" \
    --kernel "$K/bf16-07-row-classes.cu" --kernel "$K/bf16-06-cluster-multicast.cu" >>"$OUT/mm.txt" 2>>"$OUT/mm.log"
  echo "[$SECONDS s] $s exit $?" >>"$OUT/mm.txt"
  pack
done
cp "$OUT/mm.txt" "$FINAL/mm.txt" 2>/dev/null
pack
