#!/usr/bin/env bash
# Session 11, call 7: every numbered layernorm CUDA kernel (f32 and bf16,
# the whole history) on the two shapes session 9 added to the op
# (2x20480, 2x28672), which the kernels before f32 17 and bf16 21 never
# ran (the older ones also missed session 7's edge shapes: call 8 and
# next-history.sh). Correctness only
# (scripts/gpu-check.sh's correct stage, KP_CORRECT_ARGS). About 200 s
# cold. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin s11c7
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_JOBS=8 KP_CORRECT_KERNELS='layernorm/cuda/' \
KP_CORRECT_ARGS=--shape,2x20480,--shape,2x28672 \
  timeout 300 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"; pack
