#!/usr/bin/env bash
# Session 10, call 2: rows of 1024 on resident warps. layernorm bf16 22
# and softmax bf16 13 (numbered) and lab 54/55 (22 with w and b in
# registers; x at evict_first) under the rigorous correctness check on
# every shape of their op, then a screen at 65536x1024 against 20/21 and
# 12, where torch.compile's device time led or tied
# (results/2026-12-01-h200-session9/call7-0abfcfa). About 200 s cold.
# Works under /tmp, one archive back. $1: the commit, for env.txt.
set -u
FINAL=${OUT:-$PWD/lab-out}
OUT=/tmp/s10c2; rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
pack() { tar czf "$FINAL/.call.tgz" -C "$OUT" . 2>/dev/null && mv -f "$FINAL/.call.tgz" "$FINAL/call.tgz"; }
python3 lab/gen.py >/dev/null || echo "gen.py failed"
L=kernels/layernorm/cuda S=kernels/softmax/cuda
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='layernorm/cuda/bf16-(22|5[45]-lab)|softmax/cuda/bf16-13' KP_JOBS=4 \
  timeout 200 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"; pack
timeout 240 lab/screen.sh 5 30 \
  $L/bf16-21-two-pass.cu:65536:1024 $L/bf16-22-warp-stream.cu:65536:1024 \
  $L/bf16-54-lab-wbregs.cu:65536:1024 $L/bf16-55-lab-xfirst.cu:65536:1024 \
  $S/bf16-12-tma-rows.cu:65536:1024 $S/bf16-13-warp-stream.cu:65536:1024 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null; pack
