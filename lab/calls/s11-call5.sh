#!/usr/bin/env bash
# Session 11, call 5: lab 38 (w and b staged in shared memory once a
# block, call 4: 63.74 us against 21's 64.13 at 65536x1024) again, with
# rsqrtf (37) and in blocks of 16 and 4 rows (36, 35). A screen only,
# about 25 s warm. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin s11c5
python3 lab/gen.py >/dev/null || echo "gen.py failed"
L=kernels/layernorm/cuda S=kernels/softmax/cuda
lab_stamp "${1:-}"
timeout 240 lab/screen.sh 7 30 \
  $L/bf16-21-two-pass.cu:65536:1024 $L/bf16-38-lab-smemwb.cu:65536:1024 $L/bf16-37-lab-smemrsq.cu:65536:1024 \
  $L/bf16-36-lab-smem16.cu:65536:1024 $L/bf16-35-lab-smem4.cu:65536:1024 \
  $S/bf16-14-keep-x.cu:65536:1024 >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null; pack
