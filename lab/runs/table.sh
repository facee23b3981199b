#!/usr/bin/env bash
# lab/runs/table.sh: the table of record (results/README.md) in one
# gpu-check run: calibrate, the best kernel of each op and dtype at the
# canonical shapes, torch eager / compile / max-autotune-no-cudagraphs
# (bench/torch_baselines.py, judged on its device time by
# scripts/summarize.py). About 430 s cold on one H200.
# $1: the commit, for env.txt; $2: the bf16 layernorm (default bf16-24);
# $3: the bf16 softmax (default bf16-14).
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} \
KP_KERNELS="softmax/cuda/(f32-10|${3:-bf16-14})|layernorm/cuda/(f32-17|${2:-bf16-24})|sum/cuda/f32-05" \
KP_BUDGET=1.5 KP_BUDGET_sum=10 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=softmax,layernorm,sum KP_TORCH_BUDGET=1 KP_JOBS=4 OUT=$OUT \
  timeout 560 bash scripts/gpu-check.sh build,calibrate,kernels,torch
echo "gpu-check exit $?"
