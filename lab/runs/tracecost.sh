#!/usr/bin/env bash
# lab/runs/tracecost.sh: lab/tracecost.sh on the best kernel of every
# row-local op and of sum, at their canonical shapes: whether CUPTI itself
# slows a kernel, and which half of what kproof switches on does. About
# 150-250 s on the H200 (252 driver processes). $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin tracecost
lab_stamp "${1:-unknown}"
norm="16384:4096 65536:1024 4096:16384"
specs=()
for f in kernels/layernorm/cuda/bf16-24-*.cu kernels/layernorm/cuda/f32-17-*.cu \
         kernels/rmsnorm/cuda/bf16-02-*.cu kernels/rmsnorm/cuda/f32-02-*.cu; do
  for s in $norm; do specs+=("$f:$s"); done
done
for f in kernels/softmax/cuda/bf16-14-*.cu kernels/softmax/cuda/f32-10-*.cu; do
  for s in 8192:8192 65536:1024 4096:32768; do specs+=("$f:$s"); done
done
for f in kernels/sum/cuda/f32-05-*.cu; do
  for s in 1:268435456 1:16777216 1:1048576; do specs+=("$f:$s"); done
done
bash lab/tracecost.sh "${LAB_ROUNDS:-3}" "${LAB_CALLS:-100}" "${specs[@]}" >"$OUT/tracecost.log" 2>&1
echo "tracecost exit $?"; pack
