#!/usr/bin/env bash
# Session 12, call 2: issue 5's table again, as session 11's call 6 ran it
# (calibrate, the best kernel of each op and dtype at the canonical shapes,
# torch eager / compile / max-autotune-no-cudagraphs, one gpu-check run),
# on a fresh machine: a second run of the same tree says whether the 15 of
# 15, two of them by the medians only, reproduce. About 430 s cold (call
# 6: build 46 s, kernels 220 s, torch 158 s). $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin s12c2
OUT=$OUT/gc KP_COMMIT=${1:-unknown} \
KP_KERNELS='softmax/cuda/(f32-10|bf16-14)|layernorm/cuda/(f32-17|bf16-23)|sum/cuda/f32-05' \
KP_BUDGET=1.5 KP_BUDGET_sum=10 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=softmax,layernorm,sum KP_TORCH_BUDGET=1 KP_JOBS=4 \
  timeout 570 bash scripts/gpu-check.sh build,calibrate,kernels,torch >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; pack
cat "$OUT/gc/summary.md" 2>/dev/null | head -60
