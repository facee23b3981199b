#!/usr/bin/env bash
# Session 8, device call 6 (what device time was left): layernorm bf16 19
# (11 with x at L2 evict_last, the policy made once a kernel) on every shape
# of the op under the rigorous correctness check, then 11 and 19 timed
# under kproof at the canonical shapes, side by side (no torch: not a
# table of record). $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} KP_KERNELS='layernorm/cuda/bf16-(11|19)' KP_CORRECT_KERNELS='layernorm/cuda/bf16-19' \
KP_BUDGET=1.5 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline KP_JOBS=4 OUT=$OUT \
  timeout 250 bash scripts/gpu-check.sh build,correct,kernels
echo "gpu-check exit $?"
