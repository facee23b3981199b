#!/usr/bin/env bash
# lab/runs/matmul-bf16-chains.sh: matmul bf16 18 and lab 44 (19, the
# dropped ping-pong step, with two m64n128k16 chains a half; 19's own times
# are in results/2026-12-05-h200-f86e38b) launch by launch
# (lab/mm_kernels.py, 10 cold calls) at 4096^3 and 8192x50257x768, then
# lab 44's element map at three shapes. About 100 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmch
lab_stamp "${1:-unknown}"
K=kernels/matmul/cuda
for s in 4096x4096x4096 8192x50257x768; do
  echo "== $s" >>"$OUT/launches.log"
  PYTHONUNBUFFERED=1 timeout 60 python3 lab/mm_kernels.py --shape $s --modes '' --kernel $K/bf16-18-class-stores.cu \
    --kernel $K/bf16-44-lab-twochains.cu >>"$OUT/launches.txt" 2>>"$OUT/launches.log"
  echo "$s exit $?" >>"$OUT/launches.log"; pack
done
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude lab/probes/mm_errmap.cu $K/bf16-44-lab-twochains.cu \
  -o "$OUT/em-44" -lcuda >"$OUT/build-em.txt" 2>&1
for s in "4096 4096 4096 0" "4095 4095 4095 1" "2049 520 64 0"; do
  echo "== lab-44 $s" >>"$OUT/errmap.txt"
  timeout 30 "$OUT/em-44" $s >>"$OUT/errmap.txt" 2>&1
  echo "exit $?" >>"$OUT/errmap.txt"
done
pack
