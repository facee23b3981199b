#!/usr/bin/env bash
# Session 11, call 6: layernorm bf16 23 (21 with w and b staged in shared
# memory at 1024 columns and rsqrtf; lab 37 ran 63.36 us against 21's
# 64.06 in call 5) under the rigorous correctness check on every shape of
# the op, then issue 5's table as next-table.sh runs it (calibrate, the
# best kernel of each op and dtype at the canonical shapes, torch eager /
# compile / max-autotune-no-cudagraphs), in one gpu-check run: about 450 s
# cold, at most 580. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin s11c6
OUT=$OUT/gc KP_COMMIT=${1:-unknown} \
KP_CORRECT_KERNELS='layernorm/cuda/bf16-23' \
KP_KERNELS='softmax/cuda/(f32-10|bf16-14)|layernorm/cuda/(f32-17|bf16-23)|sum/cuda/f32-05' \
KP_BUDGET=1.5 KP_BUDGET_sum=10 KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
KP_TORCH_OPS=softmax,layernorm,sum KP_TORCH_BUDGET=1 KP_JOBS=4 \
  timeout 570 bash scripts/gpu-check.sh build,calibrate,correct,kernels,torch >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log" | head; pack
cat "$OUT/gc/summary.md" 2>/dev/null | head -60
