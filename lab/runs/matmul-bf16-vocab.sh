#!/usr/bin/env bash
# lab/runs/matmul-bf16-vocab.sh: where bf16 18's time goes at the
# vocabulary projection, launch by launch (lab/mm_kernels.py, 10 cold
# calls, no torch): 18, its diagnostics 55-57 (lab/gen.py; wrong output by
# design: no tensor stores, no element stores, no epilogue on the
# row-class tiles) and cuBLAS (bf16-cublas.cu) at 8192x50257x768, then 18
# and cuBLAS at 8192x50264x768 (C's rows 16-byte aligned: 18's aligned
# path) and at 4095^3. $1: the commit. About 250 s.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmvocab
lab_stamp "${1:-unknown}"
python3 lab/gen.py >/dev/null
K=kernels/matmul/cuda
run() { # shape, kernel files...
  local s=$1; shift
  local args=""
  for f in "$@"; do args="$args --kernel $f"; done
  echo "== $s" >>"$OUT/launches.log"
  PYTHONUNBUFFERED=1 timeout 200 python3 lab/mm_kernels.py --shape "$s" --modes '' $args >>"$OUT/launches.txt" \
    2>>"$OUT/launches.log"
  echo "[$SECONDS s] $s exit $?" >>"$OUT/launches.log"; pack
}
run 8192x50257x768 $K/bf16-18-class-stores.cu $K/bf16-55-lab-notensor.cu $K/bf16-56-lab-noelem.cu \
  $K/bf16-57-lab-noepi.cu $K/bf16-cublas.cu
run 8192x50264x768 $K/bf16-18-class-stores.cu $K/bf16-cublas.cu
run 4095x4095x4095 $K/bf16-18-class-stores.cu $K/bf16-55-lab-notensor.cu $K/bf16-56-lab-noelem.cu \
  $K/bf16-57-lab-noepi.cu $K/bf16-cublas.cu
