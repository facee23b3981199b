#!/usr/bin/env bash
# Prepared in session 11 (as next-history.sh), run as session 12 call 1
# (results/2026-12-01-h200-session12/call1-0d62826: the 57 edge runs and
# 9 of the 11 canonical ones PASS; s12-call3.sh ran the other 2). The last
# check of issue 5, every
# numbered softmax, layernorm and sum CUDA kernel (the whole history, not
# only the best) passing every shape of its op. The committed results
# show the older kernels never ran the launch-branch edge shapes added in
# session 7 (13x128 .. 2x24576), and 11 of them have no committed record
# of the canonical shapes. Session 11 call 8 ran out of device time after
# layernorm bf16 01-12 (all PASS on the 27 edge shapes); this runs the
# rest: the edge set for the other 57 kernels, then the canonical set for
# the 11. Correctness only; about 420 s cold (at most 560), each part
# packed as it ends. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin history
export BUILD=/tmp/history-build
OUT=$OUT/edge KP_COMMIT=${1:-unknown} KP_JOBS=12 \
KP_CORRECT_KERNELS='layernorm/cuda/(bf16-(1[3-9]|2[0-9])|f32-)|softmax/cuda/|sum/cuda/' \
KP_CORRECT_ARGS=--shape-set,edge \
  timeout 290 bash scripts/gpu-check.sh build,correct >"$OUT/edge.log" 2>&1
echo "edge exit $?"; grep -cE "exit 0 PASS" "$OUT/edge.log"; grep -E "exit [0-9]+ " "$OUT/edge.log" | grep -v "exit 0 PASS"; pack
OUT=$OUT/canon KP_COMMIT=${1:-unknown} KP_JOBS=6 \
KP_CORRECT_KERNELS='layernorm/cuda/(bf16-09|f32-08|f32-15)|softmax/cuda/f32-0[23459]|sum/cuda/f32-0[234]' \
KP_CORRECT_ARGS=--shape-set,canonical \
  timeout 260 bash scripts/gpu-check.sh correct >"$OUT/canon.log" 2>&1
echo "canonical exit $?"; grep -E "exit [0-9]+ " "$OUT/canon.log"; pack
