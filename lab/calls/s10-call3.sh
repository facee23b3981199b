#!/usr/bin/env bash
# Session 10, call 3: L2 policies at 1024 columns. softmax bf16 14 (12
# with x at evict_last on the register path) and lab 80/81 (layernorm
# bf16 21 and softmax bf16 14 with y's stores streamed, or at
# evict_first) under the rigorous correctness check on every shape of
# their op, then a screen at 65536x1024 (where torch.compile's device
# time led or tied: results/2026-12-01-h200-session9/call7-0abfcfa),
# 8192x8192 (softmax's register path too) and 16384x4096 (layernorm's).
# About 220 s cold. Works under /tmp, one archive back. $1: the commit.
set -u
FINAL=${OUT:-$PWD/lab-out}
OUT=/tmp/s10c3; rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
pack() { tar czf "$FINAL/.call.tgz" -C "$OUT" . 2>/dev/null && mv -f "$FINAL/.call.tgz" "$FINAL/call.tgz"; }
python3 lab/gen.py >/dev/null || echo "gen.py failed"
L=kernels/layernorm/cuda S=kernels/softmax/cuda
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='softmax/cuda/bf16-(14|8[01]-lab)|layernorm/cuda/bf16-8[01]-lab' KP_JOBS=5 \
  timeout 220 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"; pack
timeout 260 lab/screen.sh 5 30 \
  $L/bf16-21-two-pass.cu:65536:1024 $L/bf16-80-lab-ycs.cu:65536:1024 $L/bf16-81-lab-yfirst.cu:65536:1024 \
  $S/bf16-12-tma-rows.cu:65536:1024 $S/bf16-14-keep-x.cu:65536:1024 \
  $S/bf16-80-lab-ycs.cu:65536:1024 $S/bf16-81-lab-yfirst.cu:65536:1024 \
  $S/bf16-12-tma-rows.cu:8192:8192 $S/bf16-14-keep-x.cu:8192:8192 $S/bf16-80-lab-ycs.cu:8192:8192 \
  $L/bf16-21-two-pass.cu:16384:4096 $L/bf16-80-lab-ycs.cu:16384:4096 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null; pack
