#!/usr/bin/env bash
# Session 11, call 8: the rest of "every kernel PASSes every shape of its
# op" (issue 5) for the whole numbered history, not only the best kernels.
# The committed results show the older softmax and layernorm kernels never
# ran the launch-branch edge shapes added in session 7 (13x128 .. 2x24576)
# and a few have no committed record of the canonical shapes. Here: every
# numbered softmax, layernorm and sum CUDA kernel on the op's whole edge
# set, then the canonical set for the ones with no committed record of it.
# Correctness only; within about 180 s of device time (the session's
# last), so each part has its own time limit and is packed as it ends.
# It ran out (results/2026-12-01-h200-session11/call8-1c4668e): layernorm
# bf16 01-12 finished, all PASS; next-history.sh runs the rest.
# $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin s11c8
export BUILD=/tmp/s11c8-build
OUT=$OUT/edge KP_COMMIT=${1:-unknown} KP_JOBS=12 KP_CORRECT_KERNELS='(softmax|layernorm|sum)/cuda/' \
KP_CORRECT_ARGS=--shape-set,edge \
  timeout 110 bash scripts/gpu-check.sh build,correct >"$OUT/edge.log" 2>&1
echo "edge exit $?"; grep -cE "exit 0 PASS" "$OUT/edge.log"; grep -E "exit [0-9]+ " "$OUT/edge.log" | grep -v "exit 0 PASS"; pack
OUT=$OUT/canon KP_COMMIT=${1:-unknown} KP_JOBS=11 \
KP_CORRECT_KERNELS='layernorm/cuda/(bf16-09|f32-08|f32-15)|softmax/cuda/f32-0[23459]|sum/cuda/f32-0[234]' \
KP_CORRECT_ARGS=--shape-set,canonical \
  timeout 120 bash scripts/gpu-check.sh correct >"$OUT/canon.log" 2>&1
echo "canonical exit $?"; grep -E "exit [0-9]+ " "$OUT/canon.log"; pack
