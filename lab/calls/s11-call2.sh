#!/usr/bin/env bash
# Session 11, call 2: layernorm bf16 at 65536x1024 with w and b shared by
# R rows of a 128-thread block (lab/gen.py, session 11: lab 47-51), the
# shape of max-autotune's kernel there (call 1: two rows a 128-thread
# program, 62.91 us), after call 1's diagnostic (21 without w and b:
# 63.30 us against 64.13). Correctness of lab 47-51 on every shape of the
# op, then a screen at 65536x1024 against 21 and softmax bf16 14 (the same
# traffic). About 250 s cold. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin s11c2
python3 lab/gen.py >/dev/null || echo "gen.py failed"
L=kernels/layernorm/cuda S=kernels/softmax/cuda
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_JOBS=5 KP_CORRECT_KERNELS='layernorm/cuda/bf16-(4[789]|5[01])-lab' \
  timeout 200 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"; pack
timeout 200 lab/screen.sh 5 30 \
  $L/bf16-21-two-pass.cu:65536:1024 $L/bf16-51-lab-share2.cu:65536:1024 $L/bf16-47-lab-share2sunk.cu:65536:1024 \
  $L/bf16-50-lab-share3.cu:65536:1024 $L/bf16-49-lab-share4.cu:65536:1024 $L/bf16-48-lab-share8.cu:65536:1024 \
  $S/bf16-14-keep-x.cu:65536:1024 >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null; pack
