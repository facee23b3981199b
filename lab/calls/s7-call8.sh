#!/usr/bin/env bash
# Session 7, device call 8: the harness with misaligned correctness calls
# and the new edge shapes (every launch branch of the best kernels), on
# the GPU: build, device test, every shape of the best kernel of each op
# and dtype plus matmul's (cuBLAS wrappers included) under the rigorous
# correctness check, then the demo matrix (every exploit under the naive
# flaws and the rigorous protocol). $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} KP_JOBS=4 OUT=$OUT \
KP_CORRECT_KERNELS='softmax/cuda/(f32-07|bf16-12)|layernorm/cuda/(f32-16|bf16-11)|sum/cuda/f32-05|matmul/cuda/(f32-03|bf16-02|f32-cublas|bf16-cublas)' \
KP_DEMO_TIMEOUT=280 timeout 580 bash scripts/gpu-check.sh build,device,correct,exploits
echo "gpu-check exit $?"
