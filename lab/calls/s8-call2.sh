#!/usr/bin/env bash
# Session 8, device call 2: a screen of layernorm bf16 18 (rows of 16384
# kept packed, three rows an SM) and the session-8 lab variants (w and b
# prefetched into L1, x under an L2 evict_last policy, x without L1
# allocation and w, b with L1::evict_last; softmax f32 07 at 32 blocks an
# SM) against 11 / 16 / 07 where issue 5 is short; then 18 on every shape
# of the op under the rigorous correctness check. $1: the commit.
set -u
FINAL=${OUT:-$PWD/lab-out}
OUT=/tmp/s8c2; rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
pack() { tar czf "$FINAL/.call.tgz" -C "$OUT" . 2>/dev/null && mv -f "$FINAL/.call.tgz" "$FINAL/call.tgz"; }
t0=$(date +%s); stamp() { pack; echo "== +$(( $(date +%s) - t0 )) s $*"; }
L=kernels/layernorm/cuda S=kernels/softmax/cuda
python3 lab/gen.py >/dev/null
stamp screen
B=$L/bf16 F=$L/f32
timeout 300 lab/screen.sh 5 30 \
  $B-11-one-merge.cu:4096:16384 $B-18-packed-rows.cu:4096:16384 $B-60-lab-packed4.cu:4096:16384 \
  $B-64-lab-pf.cu:4096:16384 $B-63-lab-xlast.cu:4096:16384 $B-62-lab-wbl1.cu:4096:16384 $B-61-lab-pfna.cu:4096:16384 \
  $B-11-one-merge.cu:16384:4096 $B-64-lab-pf.cu:16384:4096 $B-62-lab-wbl1.cu:16384:4096 $B-61-lab-pfna.cu:16384:4096 \
  $F-16-four-warps-1k.cu:16384:4096 $F-64-lab-pf.cu:16384:4096 $F-63-lab-xlast.cu:16384:4096 \
  $F-62-lab-wbl1.cu:16384:4096 $F-61-lab-pfna.cu:16384:4096 \
  $F-16-four-warps-1k.cu:65536:1024 $F-64-lab-pf.cu:65536:1024 $F-63-lab-xlast.cu:65536:1024 $F-62-lab-wbl1.cu:65536:1024 \
  $S/f32-07-two-warps-1k.cu:65536:1024 $S/f32-64-lab-lb32.cu:65536:1024 $S/f32-63-lab-xlast.cu:65536:1024 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null
stamp correct
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='layernorm/cuda/bf16-(18|60)' KP_JOBS=2 \
  timeout 200 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"
stamp done
