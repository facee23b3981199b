#!/bin/sh
# Builds and runs the CUDA backend's device test (needs a GPU): the test
# program, plus the cuBLAS baseline candidates built the way kproof builds
# candidates, which the test checks on odd shapes. Extra arguments go to the
# test (--no-calibrate, --no-sticky, --big).
set -eu
cd "$(dirname "$0")/../.."
NVCC=${NVCC:-nvcc}
OUT=${OUT_DIR:-build-cuda/gpu-tests}
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v "$NVCC")")")}
mkdir -p "$OUT"
GEN="-gencode arch=compute_90a,code=sm_90a"
LIBS="-L$CUDA_HOME/extras/CUPTI/lib64 -L$CUDA_HOME/lib64 -Xlinker -rpath=$CUDA_HOME/extras/CUPTI/lib64:$CUDA_HOME/lib64"
$NVCC -std=c++17 -O2 -D_GNU_SOURCE -Iinclude -Isrc $GEN --fmad=false -Xcompiler -Wall,-Wextra,-ffp-contract=off \
    tests/gpu/dev_backend_test.cu src/cuda/backend.cu src/cuda/trace.cu src/cuda/calibrate.cu src/cuda/naive_ref.cu src/cuda/nvml.c \
    src/core/*.c src/ops/*.c \
    $LIBS -lcublas -lcupti -ldl -lpthread -o "$OUT/dev_backend_test"
for k in f32 bf16; do
    $NVCC -O3 -std=c++17 -shared -Xcompiler -fPIC $GEN -Iinclude kernels/matmul/cuda/$k-cublas.cu \
        -o "$OUT/cublas_$k.so" -lcublas
done
exec "$OUT/dev_backend_test" --cublas-f32 "$OUT/cublas_f32.so" --cublas-bf16 "$OUT/cublas_bf16.so" "$@"
