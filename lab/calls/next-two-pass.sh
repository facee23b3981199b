#!/usr/bin/env bash
# Prepared in session 9, run as session 10's call 1
# (results/2026-12-01-h200-session10/call1-a30451d): layernorm bf16 21 (torch.compile's
# two-read structure for rows of 12K-32K, four rows an SM) and lab 52/53
# (1024-column rows on 64 / 128 threads) under the rigorous correctness
# check on every shape of the op, then a screen against 20 where torch's
# device time led (results/2026-12-01-h200-session9/call7-0abfcfa):
# 4096x16384 and 65536x1024, and 16384x4096 as a control (21 runs 20's
# code there). About 200 s cold. Works under /tmp, one archive back.
# $1: the commit, for env.txt.
set -u
FINAL=${OUT:-$PWD/lab-out}
OUT=/tmp/twopass; rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
pack() { tar czf "$FINAL/.call.tgz" -C "$OUT" . 2>/dev/null && mv -f "$FINAL/.call.tgz" "$FINAL/call.tgz"; }
python3 lab/gen.py >/dev/null || echo "gen.py failed"
L=kernels/layernorm/cuda
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='layernorm/cuda/bf16-(21|5[23]-lab)' KP_JOBS=3 \
  timeout 180 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"; pack
timeout 240 lab/screen.sh 5 30 \
  $L/bf16-20-wb-ahead.cu:4096:16384 $L/bf16-21-two-pass.cu:4096:16384 \
  $L/bf16-20-wb-ahead.cu:2048:32768 $L/bf16-21-two-pass.cu:2048:32768 \
  $L/bf16-20-wb-ahead.cu:65536:1024 $L/bf16-53-lab-c1k8.cu:65536:1024 $L/bf16-52-lab-c1k16.cu:65536:1024 \
  $L/bf16-20-wb-ahead.cu:16384:4096 $L/bf16-21-two-pass.cu:16384:4096 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null; pack
