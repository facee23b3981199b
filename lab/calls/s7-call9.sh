#!/usr/bin/env bash
# Session 7, device call 9: issue 5's table in one run (calibrate, the best
# kernel of each op and dtype at the canonical shapes, torch eager /
# compile / max-autotune-no-cudagraphs), one candidate per op and dtype:
# softmax f32 07, bf16 12; layernorm f32 16, bf16 11; sum f32 05.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} \
KP_KERNELS='softmax/cuda/(f32-07|bf16-12)|layernorm/cuda/(f32-16|bf16-11)|sum/cuda/f32-05' \
KP_BUDGET=1.5 KP_BUDGET_sum=10 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=softmax,layernorm,sum KP_TORCH_BUDGET=1 KP_JOBS=4 OUT=$OUT \
  timeout 440 bash scripts/gpu-check.sh build,calibrate,kernels,torch
echo "gpu-check exit $?"
