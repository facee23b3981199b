#!/usr/bin/env bash
# lab/runs/matmul-bf16-table.sh: the matmul table of record in one
# gpu-check run: bf16 21 (or the kernels $2 names, a regex on
# the file path) and f32 05 at the canonical shapes, cuBLAS interleaved
# in each eval, and torch eager, torch.compile and max-autotune under
# kproof's protocol (scripts/gpu-check.sh build,kernels,torch). About
# 360 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmtab
export BUILD=/tmp/matmul-build
OUT=$OUT/table KP_COMMIT=${1:-unknown} KP_KERNELS="matmul/cuda/(${2:-bf16-21}|f32-05)" KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape-set,canonical KP_TORCH_OPS=matmul KP_TORCH_DTYPES=bf16,f32 KP_TORCH_BUDGET=1 \
  timeout 520 bash scripts/gpu-check.sh build,kernels,torch >"$OUT/table.log" 2>&1
echo "table exit $?"; pack
