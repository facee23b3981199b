#!/usr/bin/env bash
# ctest_gpu.sh: the GPU tests as CTest sees them. Where no GPU answers they
# are SKIPPED with the reason (exit 77), never silently passed.
# Usage: ctest_gpu.sh BUILD_DIR SOURCE_DIR
set -u
B=$1
S=$2
if [ ! -x "$B/kproof-worker-cuda" ]; then
    echo "SKIPPED: the cuda worker is not built (no CUDA toolkit at configure time)"
    exit 77
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIPPED: no GPU answers here (nvidia-smi -L failed); run scripts/gpu-check.sh on a GPU machine"
    exit 77
fi
set -e
cd "$S"
bash tests/gpu/run_dev_backend_test.sh --no-calibrate
# The protocol end to end on the GPU: a naive kernel is correct at every shape.
"$B/kproof" eval kernels/softmax/cuda/f32-01-naive.cu --op softmax --correctness --quiet
