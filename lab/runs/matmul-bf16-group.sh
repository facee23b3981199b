#!/usr/bin/env bash
# lab/runs/matmul-bf16-group.sh: matmul bf16 11 against lab 40 and 41 (11
# with 4 and 16 pair rows a group in the unit walk, from lab/gen.py): 40
# and 41 on the op's 14 shapes, then all three timed at the canonical
# shapes, each against the faster of cuBLAS and another of the three
# interleaved in its eval. About 200 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmgroup
export BUILD=/tmp/matmul-build
python3 lab/gen.py >/dev/null
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=2 KP_CORRECT_KERNELS='matmul/cuda/bf16-(40|41)' \
  timeout 100 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/bf16-(11|40|41)' KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape-set,canonical timeout 150 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; pack
