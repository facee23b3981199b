#!/usr/bin/env bash
# lab/runs/matmul-f32.sh: matmul f32 04 (3xtf32 on the tensor cores, every
# product as three tf32 MMAs with the accumulator folded into an IEEE fp32
# total every 128 k; prediction in its header) on every shape of the op
# and on aligned shapes with partial tiles (the op's edge shapes mostly
# take 03's code: odd K or N), then f32 03 and 04 timed against cuBLAS
# SGEMM at the canonical shapes (8 s a shape, as matmul-bf16.sh says why),
# then torch's matmul baselines (eager, compile, max-autotune; the bf16
# 4095^3 target is torch.compile) with their own time limit:
# max-autotune tunes for a while. Not yet run.
# About 450 s cold (at most 590); each part packed as it ends. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin matmulf32
export BUILD=/tmp/matmulf32-build
OUT=$OUT/all KP_COMMIT=${1:-unknown} KP_JOBS=1 KP_CORRECT_KERNELS='matmul/cuda/f32-04' \
  timeout 120 bash scripts/gpu-check.sh build,correct >"$OUT/all.log" 2>&1
echo "all shapes exit $?"; grep -E "exit [0-9]+ " "$OUT/all.log"; pack
OUT=$OUT/tiles KP_COMMIT=${1:-unknown} KP_JOBS=1 KP_CORRECT_KERNELS='matmul/cuda/f32-04' \
KP_CORRECT_ARGS=--shape,8x8x8,--shape,128x128x32,--shape,136x264x8,--shape,384x520x72,--shape,1000x1032x8192,--shape,4100x4104x4096,--shape,96x80x112,--shape,200x136x260 \
  timeout 60 bash scripts/gpu-check.sh correct >"$OUT/tiles.log" 2>&1
echo "tiles exit $?"; grep -E "exit [0-9]+ " "$OUT/tiles.log"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/f32-0[34]' \
KP_BUDGET=8 KP_EVAL_ARGS=--shape-set,canonical \
  timeout 200 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; grep -E "exit [0-9]+ " "$OUT/time.log"; pack
OUT=$OUT/torch KP_COMMIT=${1:-unknown} KP_TORCH_OPS=matmul KP_TORCH_BUDGET=2 KP_TORCH_TIMEOUT=180 \
  timeout 200 bash scripts/gpu-check.sh torch >"$OUT/torch.log" 2>&1
echo "torch exit $?"; pack
