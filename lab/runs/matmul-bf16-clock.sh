#!/usr/bin/env bash
# lab/runs/matmul-bf16-clock.sh: the SM clock inside a cold call of
# matmul bf16 14's product (lab 52: 14 reading clock64 and %globaltimer in
# every CTA, lab/gen.py), at the four canonical shapes, launch by launch
# (lab/mm_kernels.py, 10 cold calls each after one warm-up; one lab-clock
# line a call in clock.log). Says whether kproof's cold calls run at the
# board's power limit (12 and cuBLAS back to back: 1455-1515 MHz at 690 W)
# or near the 1980 MHz the SMs may run. About 120 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmclk
lab_stamp "${1:-unknown}"
python3 lab/gen.py >/dev/null
K=kernels/matmul/cuda
for s in 4096x4096x4096 8192x8192x8192 4095x4095x4095 8192x1024x8192; do
  echo "== $s" >>"$OUT/clock.log"
  PYTHONUNBUFFERED=1 timeout 100 python3 lab/mm_kernels.py --shape $s --modes '' \
    --kernel $K/bf16-52-lab-clock.cu >>"$OUT/clock.txt" 2>>"$OUT/clock.log"
  echo "$s exit $?"; pack
done
