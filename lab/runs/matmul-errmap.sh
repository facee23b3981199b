#!/usr/bin/env bash
# lab/runs/matmul-errmap.sh: where bf16 matmul kernel files write C wrong,
# element by element (lab/probes/mm_errmap.cu: every element against an
# fp32 reference, by row class, tile column and row end), at the row-class
# shapes, C on and off 16 bytes; then the strides of the tensor torch.mm
# returns, eager and compiled (lab/probes/torch_out_strides.py); then the
# kernel files launch by launch (lab/mm_kernels.py, 10 cold calls) at
# 4095^3, 4096x4095x4096 and 8192x50257x768. $1: the commit; $2: the
# kernel files (default bf16 17 and 18); $3 = nostrides leaves out the
# strides probe. About 300 s.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmerr
lab_stamp "${1:-unknown}"
K=kernels/matmul/cuda
files=${2:-$K/bf16-17-c-classes.cu $K/bf16-18-class-stores.cu}
for f in $files; do
  b=$(basename "${f%.cu}")
  nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude lab/probes/mm_errmap.cu "$f" \
    -o "$OUT/em-$b" -lcuda >"$OUT/build-$b.txt" 2>&1 &
done
wait
for f in $files; do
  b=$(basename "${f%.cu}")
  for s in "4095 4095 4095 0" "4095 4095 4095 1" "4096 4095 4096 0" "1024 1030 1001 0" "1024 1030 1001 3" \
           "4097 4095 4095 0" "1024 4097 4095 0" "768 520 72 0" "4096 4096 4095 1" "1000 1032 8192 0"; do
    echo "== $b $s" >>"$OUT/errmap.txt"
    timeout 60 "$OUT/em-$b" $s >>"$OUT/errmap.txt" 2>&1
    echo "exit $?" >>"$OUT/errmap.txt"
  done
  pack
done
for s in 4095x4095x4095 4096x4095x4096 8192x50257x768; do
  args=""
  for f in $files; do args="$args --kernel $f"; done
  echo "== $s" >>"$OUT/launches.log"
  PYTHONUNBUFFERED=1 timeout 100 python3 lab/mm_kernels.py --shape $s --modes '' $args >>"$OUT/launches.txt" \
    2>>"$OUT/launches.log"
  echo "$s exit $?" >>"$OUT/launches.log"; pack
done
[ "${3:-}" = nostrides ] && exit 0
PYTHONUNBUFFERED=1 timeout 120 python3 lab/probes/torch_out_strides.py 90 4095x4095x4095 4096x4095x4096 \
  8192x50257x768 1021x1031x1039 >"$OUT/strides.txt" 2>"$OUT/strides.log"
echo "strides exit $?" >>"$OUT/strides.txt"
pack
