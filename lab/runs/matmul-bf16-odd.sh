#!/usr/bin/env bash
# lab/runs/matmul-bf16-odd.sh: matmul bf16 at odd shapes beside torch.
# The kernel $3 names (a regex on the file path; default bf16-21) checked
# on the op's 14 shapes and the row-class extras plus three with K % 8 ==
# 0 and N odd; then one gpu-check run: 18 and 21 (or the kernels $2 names)
# timed at 1021x1031x1039 (the op's all-odd edge cube), 4096x4095x4096 (N
# odd alone) and 8192x50257x768 (a GPT-2-sized vocabulary projection: B's
# and C's rows off 16-byte boundaries), or the shapes $MM_ODD_SHAPES lists
# (commas), cuBLAS interleaved in each eval, and torch eager,
# torch.compile and max-autotune at the same shapes under kproof's
# protocol (KP_TORCH_SHAPES); scripts/summarize.py judges such shapes
# against torch.compile. About 550 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmodd
export BUILD=/tmp/matmul-build
python3 lab/gen.py >/dev/null
CK=matmul/cuda/${3:-bf16-21}
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=4 KP_CORRECT_KERNELS="$CK" \
  timeout 100 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
# One eval takes at most 16 --shape: the row-class extras (16), then three more.
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=4 KP_CORRECT_KERNELS="$CK" \
KP_CORRECT_ARGS=$MM_ROWCLASS_EXTRAS \
  timeout 60 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/extra2 KP_COMMIT=${1:-unknown} KP_JOBS=4 KP_CORRECT_KERNELS="$CK" \
KP_CORRECT_ARGS=--shape,1024x4097x768,--shape,2048x1030x64,--shape,1031x9x8 \
  timeout 40 bash scripts/gpu-check.sh correct >"$OUT/extra2.log" 2>&1
echo "extra2 exit $?"; pack
S=${MM_ODD_SHAPES:-1021x1031x1039,4096x4095x4096,8192x50257x768}
OUT=$OUT/odd KP_COMMIT=${1:-unknown} KP_KERNELS="matmul/cuda/(${2:-bf16-(18|21)})" KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape,${S//,/,--shape,} KP_TORCH_OPS=matmul KP_TORCH_DTYPES=bf16 KP_TORCH_BUDGET=1 \
KP_TORCH_SHAPES=$S timeout 380 bash scripts/gpu-check.sh build,kernels,torch >"$OUT/odd.log" 2>&1
echo "odd exit $?"; pack
