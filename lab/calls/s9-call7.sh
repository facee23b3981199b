#!/usr/bin/env bash
# Session 9, device call 7: call 6 found torch.compile's samples mostly
# host-bound (Python and guard dispatch of 75-210 us against 64-130 us of
# device time), so the issue-5 table's torch times were partly dispatch.
# This run: torch for layernorm and softmax (device times with intervals
# now in torch.json), then layernorm f32 17, bf16 20 and softmax bf16 12
# (the shapes where torch's device time is closest) in the same run. The
# device budget left (345 s) does not hold the whole table.
# $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} \
KP_KERNELS='softmax/cuda/bf16-12|layernorm/cuda/(f32-17|bf16-20)' \
KP_BUDGET=1 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=layernorm,softmax KP_TORCH_BUDGET=0.7 OUT=$OUT \
  timeout 270 bash scripts/gpu-check.sh calibrate,torch,build,kernels
echo "gpu-check exit $?"
