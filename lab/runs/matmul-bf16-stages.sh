#!/usr/bin/env bash
# lab/runs/matmul-bf16-stages.sh: what one ring stage less costs matmul
# bf16 11's mainloop: 11 and lab 38 (11 on 3 stages, from lab/gen.py) on
# the op's 14 shapes, then timed at the canonical shapes, each against the
# faster of cuBLAS and the other interleaved in its eval. About 150 s.
# If 38 keeps 11's times at 4096^3 and 8192^3, the 48 KiB it frees can hold
# a tile's C for a store off the consumer warps. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmstages
export BUILD=/tmp/matmul-build
python3 lab/gen.py >/dev/null
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-38' \
  timeout 75 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-(11|38)' KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape-set,canonical timeout 90 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; pack
