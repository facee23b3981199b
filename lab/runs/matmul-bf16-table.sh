#!/usr/bin/env bash
# lab/runs/matmul-bf16-table.sh: matmul bf16 15 checked on the op's 14
# shapes and 16 partial and unaligned extras, then the matmul table of
# record in one gpu-check run: bf16 14 and 15 and f32 05 at the canonical
# shapes, cuBLAS interleaved in each eval, and torch eager, torch.compile
# and max-autotune under kproof's protocol (scripts/gpu-check.sh
# kernels,torch on the build the checks made). About 450 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmtab
export BUILD=/tmp/matmul-build
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-15' \
  timeout 90 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-15' \
KP_CORRECT_ARGS=--shape,768x520x72,--shape,1024x1030x1001,--shape,2048x1030x1001,--shape,4097x4095x4095,--shape,1031x300x9,--shape,4096x4096x4095,--shape,4096x4095x4096,--shape,2049x520x1,--shape,1024x7x9,--shape,1100x256x200,--shape,1024x4097x4095,--shape,1000x1032x8192,--shape,4095x4095x4095,--shape,1024x4095x4095,--shape,3000x263x1031,--shape,1030x1x17 \
  timeout 50 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/table KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/(bf16-1[45]|f32-05)' KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape-set,canonical KP_TORCH_OPS=matmul KP_TORCH_DTYPES=bf16,f32 KP_TORCH_BUDGET=1 \
  timeout 340 bash scripts/gpu-check.sh kernels,torch >"$OUT/table.log" 2>&1
echo "table exit $?"; pack
