#!/usr/bin/env bash
# Session 8, device call 4: issue 5's table in one run (calibrate, the best
# kernel of each op and dtype at the canonical shapes, torch eager /
# compile / max-autotune-no-cudagraphs), one candidate per op and dtype:
# softmax f32 10, bf16 12; layernorm f32 17, bf16 11; sum f32 05. Before
# it, softmax f32 10 on every shape of the op under the rigorous
# correctness check (its split kernel took the hint after call 3).
# $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} \
KP_KERNELS='softmax/cuda/(f32-10|bf16-12)|layernorm/cuda/(f32-17|bf16-11)|sum/cuda/f32-05' \
KP_CORRECT_KERNELS='softmax/cuda/f32-10' \
KP_BUDGET=1.5 KP_BUDGET_sum=10 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=softmax,layernorm,sum KP_TORCH_BUDGET=1 KP_JOBS=4 OUT=$OUT \
  timeout 560 bash scripts/gpu-check.sh build,calibrate,correct,kernels,torch
echo "gpu-check exit $?"
