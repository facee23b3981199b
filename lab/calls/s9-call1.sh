#!/usr/bin/env bash
# Session 9 call 1 (prepared in session 8): layernorm bf16 20 (19 with w and b
# loaded a chunk ahead, the first chunk's before the row reduction) on
# every shape of the op under the rigorous correctness check, then a screen
# against 19 and 11 at the three canonical shapes. If 20 wins at
# 4096x16384 and loses nowhere, the table (lab/calls/next-table.sh) should
# run 20 in place of 19. Works under /tmp, one archive back.
# $1: the commit, for env.txt.
set -u
FINAL=${OUT:-$PWD/lab-out}
OUT=/tmp/wbahead; rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
pack() { tar czf "$FINAL/.call.tgz" -C "$OUT" . 2>/dev/null && mv -f "$FINAL/.call.tgz" "$FINAL/call.tgz"; }
L=kernels/layernorm/cuda
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='layernorm/cuda/bf16-20' KP_JOBS=2 \
  timeout 150 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"; pack
timeout 200 lab/screen.sh 5 30 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-19-keep-x.cu:4096:16384 $L/bf16-20-wb-ahead.cu:4096:16384 \
  $L/bf16-19-keep-x.cu:16384:4096 $L/bf16-20-wb-ahead.cu:16384:4096 \
  $L/bf16-19-keep-x.cu:65536:1024 $L/bf16-20-wb-ahead.cu:65536:1024 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null; pack
