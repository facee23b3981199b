#!/usr/bin/env bash
# Session 9 call 3: call 2 again on whatever H200 the call gets (is issue
# 5's table reproducible?), after the correctness of every best kernel on
# every shape of its op, misaligned calls included, in the same run.
# $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} \
KP_KERNELS='softmax/cuda/(f32-10|bf16-12)|layernorm/cuda/(f32-17|bf16-20)|sum/cuda/f32-05' \
KP_BUDGET=1.5 KP_BUDGET_sum=10 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=softmax,layernorm,sum KP_TORCH_BUDGET=1 KP_JOBS=4 OUT=$OUT \
  timeout 560 bash scripts/gpu-check.sh build,calibrate,correct,kernels,torch
echo "gpu-check exit $?"
