#!/usr/bin/env bash
# Session 12, call 3: the two kernels call 1's canonical part did not reach
# before its time limit (softmax f32 05 and 09; the 9 others PASS), on the
# op's canonical shapes, correctness only. Two at a time on 16 cores:
# about 120 s (call 1: 163-184 s each with six in flight). $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin s12c3
export BUILD=/tmp/s12c3-build
OUT=$OUT/canon KP_COMMIT=${1:-unknown} KP_JOBS=2 \
KP_CORRECT_KERNELS='softmax/cuda/f32-0[59]' \
KP_CORRECT_ARGS=--shape-set,canonical \
  timeout 400 bash scripts/gpu-check.sh build,correct >"$OUT/canon.log" 2>&1
echo "canonical exit $?"; grep -E "exit [0-9]+ " "$OUT/canon.log"; pack
