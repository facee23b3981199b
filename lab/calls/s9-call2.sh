#!/usr/bin/env bash
# Session 9 call 2: issue 5's table, prepared in session 8 with layernorm
# bf16 19 and run with 20 in its place (20 won call 1's screen): calibrate,
# the best kernel of each op and dtype at the canonical shapes, torch
# eager / compile / max-autotune-no-cudagraphs, in one run (343 s warm).
# $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} \
KP_KERNELS='softmax/cuda/(f32-10|bf16-12)|layernorm/cuda/(f32-17|bf16-20)|sum/cuda/f32-05' \
KP_BUDGET=1.5 KP_BUDGET_sum=10 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=softmax,layernorm,sum KP_TORCH_BUDGET=1 KP_JOBS=4 OUT=$OUT \
  timeout 500 bash scripts/gpu-check.sh build,calibrate,kernels,torch
echo "gpu-check exit $?"
