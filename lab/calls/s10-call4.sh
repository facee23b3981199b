#!/usr/bin/env bash
# Session 10, call 4: layernorm bf16 at 65536x1024, what it adds over
# softmax there (lab/gen.py, session 10: lab 82 pivot by shuffle, 83 w and
# b at evict_last, 94/95 blocks of 4 or 16 rows), under the rigorous
# correctness check on every shape of the op, then a screen at 65536x1024
# and 16384x4096 against 21 (20's code at both). About 200 s cold. Works
# under /tmp, one archive back. $1: the commit.
set -u
FINAL=${OUT:-$PWD/lab-out}
OUT=/tmp/s10c4; rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
pack() { tar czf "$FINAL/.call.tgz" -C "$OUT" . 2>/dev/null && mv -f "$FINAL/.call.tgz" "$FINAL/call.tgz"; }
python3 lab/gen.py >/dev/null || echo "gen.py failed"
L=kernels/layernorm/cuda
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='layernorm/cuda/bf16-(8[23]|9[45])-lab' KP_JOBS=4 \
  timeout 220 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"; pack
timeout 260 lab/screen.sh 5 30 \
  $L/bf16-21-two-pass.cu:65536:1024 $L/bf16-82-lab-pivshfl.cu:65536:1024 $L/bf16-83-lab-wblast.cu:65536:1024 \
  $L/bf16-94-lab-blk128.cu:65536:1024 $L/bf16-95-lab-blk512.cu:65536:1024 \
  $L/bf16-21-two-pass.cu:16384:4096 $L/bf16-82-lab-pivshfl.cu:16384:4096 $L/bf16-83-lab-wblast.cu:16384:4096 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null; pack
