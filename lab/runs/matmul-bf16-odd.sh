#!/usr/bin/env bash
# lab/runs/matmul-bf16-odd.sh: matmul bf16 at odd shapes beside torch in
# one gpu-check run: the kernels $2 names (a regex on the file path;
# default bf16 14) timed at 1021x1031x1039 (the op's all-odd edge cube)
# and 8192x50257x768 (a GPT-2-sized vocabulary projection: B's and C's
# rows off 16-byte boundaries), cuBLAS interleaved in each eval, and torch
# eager, torch.compile and max-autotune at the same shapes under kproof's
# protocol (KP_TORCH_SHAPES). scripts/summarize.py judges such shapes
# against torch.compile. About 300 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmodd
export BUILD=/tmp/matmul-build
S=1021x1031x1039,8192x50257x768
OUT=$OUT/odd KP_COMMIT=${1:-unknown} KP_KERNELS="matmul/cuda/(${2:-bf16-14})" KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape,${S//,/,--shape,} KP_TORCH_OPS=matmul KP_TORCH_DTYPES=bf16 KP_TORCH_BUDGET=1 \
KP_TORCH_SHAPES=$S timeout 520 bash scripts/gpu-check.sh build,kernels,torch >"$OUT/odd.log" 2>&1
echo "odd exit $?"; pack
