#!/usr/bin/env bash
# Session 6, device call 7: issue 5's table again, with the cluster-split
# candidates in place of their predecessors (one candidate per op and
# dtype; their other shapes run the predecessors' code unchanged): softmax
# bf16 11, layernorm f32 13, layernorm bf16 14; then every shape of the
# three under the rigorous correctness check, last, as time allows (the
# timeout's TERM makes gpu-check.sh pack what finished). $1: the commit.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} \
KP_KERNELS='softmax/cuda/(f32-07|bf16-11)|layernorm/cuda/(f32-13|bf16-14)|sum/cuda/f32-05' \
KP_CORRECT_KERNELS='softmax/cuda/bf16-11|layernorm/cuda/(f32-13|bf16-14)' \
KP_BUDGET=1.5 KP_BUDGET_sum=10 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=softmax,layernorm,sum KP_TORCH_BUDGET=1 KP_JOBS=3 OUT=$OUT \
  timeout 430 bash scripts/gpu-check.sh build,calibrate,kernels,torch,correct
