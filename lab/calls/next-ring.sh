#!/usr/bin/env bash
# Prepared in session 7, not yet run: layernorm bf16 17 (a resident block
# an SM, w and b in registers, rows by bulk copy into a ring) and its
# two-blocks-an-SM variant 70. Correctness first, each call bounded (an
# mbarrier wait that never completes would hang): shapes where blocks
# walk more rows than the ring holds, on the exact-fit path (16384) and
# the two-reduction path (12288), then every shape of the op; then a
# screen against 11 at 4096x16384 (11: 89% of copy) and 8192x16384.
# $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/lab-out}
L=kernels/layernorm/cuda
python3 lab/gen.py >/dev/null
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='layernorm/cuda/bf16-(17|70)' KP_JOBS=2 \
  timeout 60 bash scripts/gpu-check.sh build >"$OUT/build.log" 2>&1
echo "build exit $?"
for f in bf16-17-ring-rows bf16-70-lab-ring2; do
  timeout 120 build-gpu/kproof eval $L/$f.cu --op layernorm --dtype bf16 --correctness --timeout 20 \
    --shape 600x16384 --shape 600x12288 --shape 200x16384 --shape 133x12288 >"$OUT/ring-$f.txt" 2>&1
  echo "$f: ring shapes exit $? ($(tail -1 "$OUT/ring-$f.txt"))"
done
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='layernorm/cuda/bf16-(17|70)' KP_JOBS=2 \
  timeout 200 bash scripts/gpu-check.sh correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"
timeout 150 lab/screen.sh 4 30 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-17-ring-rows.cu:4096:16384 $L/bf16-70-lab-ring2.cu:4096:16384 \
  $L/bf16-11-one-merge.cu:8192:16384 $L/bf16-17-ring-rows.cu:8192:16384 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
