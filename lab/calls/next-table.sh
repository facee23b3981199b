#!/usr/bin/env bash
# Prepared in session 8, not yet run: issue 5's table with layernorm bf16
# 19 (11 with x at L2 evict_last; PASS on all 30 shapes and faster than 11
# at 16384x4096 in results/2026-12-01-h200-session8/call6-d6697d6) in
# place of 11: calibrate, the best kernel of each op and dtype at the
# canonical shapes, torch eager / compile / max-autotune-no-cudagraphs, in
# one run (about 300 s cold). $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} \
KP_KERNELS='softmax/cuda/(f32-10|bf16-12)|layernorm/cuda/(f32-17|bf16-20)|sum/cuda/f32-05' \
KP_BUDGET=1.5 KP_BUDGET_sum=10 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=softmax,layernorm,sum KP_TORCH_BUDGET=1 KP_JOBS=4 OUT=$OUT \
  timeout 500 bash scripts/gpu-check.sh build,calibrate,kernels,torch
echo "gpu-check exit $?"
