#!/usr/bin/env bash
# Session 11, call 4: what w and b cost layernorm bf16 21 at 65536x1024
# (1.3%, call 1), by where they and x sit in L1 (lab/gen.py, session 11:
# lab 41 x at L1::no_allocate, 40 w and b at L1::evict_last, 39 both and
# rsqrtf, 38 w and b staged in shared memory once a block), with 43
# (rsqrtf, call 3) again. A screen only, about 25 s warm. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin s11c4
python3 lab/gen.py >/dev/null || echo "gen.py failed"
L=kernels/layernorm/cuda S=kernels/softmax/cuda
lab_stamp "${1:-}"
timeout 240 lab/screen.sh 5 30 \
  $L/bf16-21-two-pass.cu:65536:1024 $L/bf16-43-lab-rsq.cu:65536:1024 $L/bf16-41-lab-xna.cu:65536:1024 \
  $L/bf16-40-lab-wbl1.cu:65536:1024 $L/bf16-39-lab-l1both.cu:65536:1024 $L/bf16-38-lab-smemwb.cu:65536:1024 \
  $S/bf16-14-keep-x.cu:65536:1024 >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null; pack
