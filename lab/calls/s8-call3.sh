#!/usr/bin/env bash
# Session 8, device call 3: build and the device backend test (with its new
# check that lines read under an L2 evict_last policy do not outlive
# kp_dev_flush); a screen of softmax f32 10 and layernorm f32 17 (x at L2
# evict_last) at every canonical shape against 07 / 16, the same hint on
# 07's split path at 4096x32768 (lab 63), and layernorm bf16 11 with x at
# evict_first and w, b at evict_last; then 10 and 17 on every shape of
# their ops under the rigorous correctness check. $1: the commit.
set -u
FINAL=${OUT:-$PWD/lab-out}
OUT=/tmp/s8c3; rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
pack() { tar czf "$FINAL/.call.tgz" -C "$OUT" . 2>/dev/null && mv -f "$FINAL/.call.tgz" "$FINAL/call.tgz"; }
t0=$(date +%s); stamp() { pack; echo "== +$(( $(date +%s) - t0 )) s $*"; }
L=kernels/layernorm/cuda S=kernels/softmax/cuda
python3 lab/gen.py >/dev/null
stamp build+device
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='softmax/cuda/f32-10|layernorm/cuda/f32-17' KP_JOBS=2 \
  timeout 120 bash scripts/gpu-check.sh build,device >"$OUT/gc-device.log" 2>&1
echo "build+device exit $?"; grep -E "flush|evict|FAIL|passed" "$OUT/gc-device.log"
stamp screen
timeout 200 lab/screen.sh 5 30 \
  $L/f32-16-four-warps-1k.cu:16384:4096 $L/f32-17-keep-x.cu:16384:4096 \
  $L/f32-16-four-warps-1k.cu:65536:1024 $L/f32-17-keep-x.cu:65536:1024 \
  $L/f32-16-four-warps-1k.cu:4096:16384 $L/f32-17-keep-x.cu:4096:16384 \
  $S/f32-07-two-warps-1k.cu:65536:1024 $S/f32-10-keep-x.cu:65536:1024 \
  $S/f32-07-two-warps-1k.cu:8192:8192 $S/f32-10-keep-x.cu:8192:8192 \
  $S/f32-07-two-warps-1k.cu:4096:32768 $S/f32-63-lab-xlast.cu:4096:32768 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-59-lab-xfirst.cu:4096:16384 $L/bf16-58-lab-wblast.cu:4096:16384 \
  $L/bf16-57-lab-xfwl.cu:4096:16384 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null
stamp correct
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='softmax/cuda/f32-10|layernorm/cuda/f32-17' KP_JOBS=2 \
  timeout 200 bash scripts/gpu-check.sh correct >"$OUT/gc.log" 2>&1
echo "gpu-check correct exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"
stamp done
