#!/usr/bin/env bash
# Session 6, device call 4: issue 5's table in one run (calibrate, the best
# kernel of each op and dtype at the canonical shapes, torch eager /
# compile / max-autotune-no-cudagraphs), one candidate per op and dtype.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_KERNELS='softmax/cuda/(f32-07|bf16-07)|layernorm/cuda/(f32-11|bf16-11)|sum/cuda/f32-05' \
KP_BUDGET=1.5 KP_BUDGET_sum=10 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=softmax,layernorm,sum KP_TORCH_BUDGET=1 KP_JOBS=4 OUT=$OUT \
  timeout 560 bash scripts/gpu-check.sh build,calibrate,kernels,torch
