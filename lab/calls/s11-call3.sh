#!/usr/bin/env bash
# Session 11, call 3: why lab 51 (max-autotune's layout at 65536x1024: two
# rows a 128-thread block, w and b shared) ran 70.08 us where max-autotune
# ran 62.91 (call 2). A screen at 65536x1024 (no correctness: a lab that
# wins is made a numbered kernel and checked then) of 21, 51, lab 46
# (51 with max-autotune's loads and rsqrtf), 45 (x plain), 44 (rsqrtf),
# 43 (21 with rsqrtf), 42 (21 with x at no L2 hint) and softmax bf16 14.
# About 25 s warm. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin s11c3
python3 lab/gen.py >/dev/null || echo "gen.py failed"
L=kernels/layernorm/cuda S=kernels/softmax/cuda
lab_stamp "${1:-}"
timeout 240 lab/screen.sh 5 30 \
  $L/bf16-21-two-pass.cu:65536:1024 $L/bf16-51-lab-share2.cu:65536:1024 $L/bf16-46-lab-share2tri.cu:65536:1024 \
  $L/bf16-45-lab-share2xplain.cu:65536:1024 $L/bf16-44-lab-share2rsq.cu:65536:1024 \
  $L/bf16-43-lab-rsq.cu:65536:1024 $L/bf16-42-lab-xnohint.cu:65536:1024 \
  $S/bf16-14-keep-x.cu:65536:1024 >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null; pack
