#!/usr/bin/env bash
# Session 7, device call 1: rows brought into shared memory by the bulk
# copy engine (cp.async.bulk + mbarrier), one short-lived block a row:
# layernorm bf16 15, layernorm f32 14 and softmax bf16 12 against the
# kernels they extend (lab/screen.sh, with lab/gen.py's launch-shape
# variants), then every shape of the three under the rigorous correctness
# check. $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/lab-out}
S=kernels/softmax/cuda L=kernels/layernorm/cuda
python3 lab/gen.py >/dev/null
timeout 240 lab/screen.sh 3 30 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-15-tma-rows.cu:4096:16384 $L/bf16-79-lab-tma512.cu:4096:16384 \
  $L/bf16-11-one-merge.cu:16384:4096 $L/bf16-78-lab-tma4k.cu:16384:4096 \
  $L/f32-11-one-merge.cu:16384:4096 $L/f32-14-tma-rows.cu:16384:4096 $L/f32-79-lab-tma256.cu:16384:4096 \
  $L/f32-11-one-merge.cu:4096:16384 $L/f32-14-tma-rows.cu:4096:16384 \
  $S/bf16-07-stream-rows.cu:4096:32768 $S/bf16-12-tma-rows.cu:4096:32768 $S/bf16-79-lab-tma1024.cu:4096:32768 \
  $S/bf16-07-stream-rows.cu:8192:8192 $S/bf16-78-lab-tma8k.cu:8192:8192 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
cp "$OUT/screen.txt" "$OUT/screen-copy.txt" 2>/dev/null
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='softmax/cuda/bf16-12|layernorm/cuda/(f32-14|bf16-15)' KP_JOBS=3 \
  timeout 300 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"
