#!/usr/bin/env bash
# Session 12, call 4: matmul bf16 03 (wgmma fed by the copy engine) on the
# H200 for the first time, and the first committed timings of the matmul
# kernels (f32 03, bf16 02 had correctness records only).
#   1. bf16 03 on every shape of the op (only the canonical ones but 4095^3
#      and the quick ones take the wgmma path; the rest is 02's code);
#   2. bf16 03 on aligned shapes that take the wgmma path with partial
#      tiles in M, N and K, and K at the chunk limit (8192);
#   3. f32 03, bf16 02 and bf16 03 timed at the canonical shapes against
#      cuBLAS, interleaved (eval's strongest baseline), 1.5 s a shape;
#   4. the wgmma kernel's SASS: HGMMA present, no local memory.
# About 330 s cold (build 46 s). $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin s12c4
export BUILD=/tmp/s12c4-build
OUT=$OUT/all KP_COMMIT=${1:-unknown} KP_JOBS=1 KP_CORRECT_KERNELS='matmul/cuda/bf16-03' \
  timeout 150 bash scripts/gpu-check.sh build,correct >"$OUT/all.log" 2>&1
echo "all shapes exit $?"; grep -E "exit [0-9]+ " "$OUT/all.log"; pack
OUT=$OUT/tiles KP_COMMIT=${1:-unknown} KP_JOBS=1 KP_CORRECT_KERNELS='matmul/cuda/bf16-03' \
KP_CORRECT_ARGS=--shape,8x8x8,--shape,128x256x64,--shape,136x264x8,--shape,384x520x72,--shape,1000x1032x8192,--shape,4104x4112x4096,--shape,96x80x112,--shape,200x136x256 \
  timeout 90 bash scripts/gpu-check.sh correct >"$OUT/tiles.log" 2>&1
echo "tiles exit $?"; grep -E "exit [0-9]+ " "$OUT/tiles.log"; pack
OUT=$OUT/time KP_COMMIT=${1:-unknown} KP_KERNELS='matmul/cuda/(bf16-0[23]|f32-03)' \
KP_BUDGET=1.5 KP_EVAL_ARGS=--shape-set,canonical \
  timeout 200 bash scripts/gpu-check.sh kernels >"$OUT/time.log" 2>&1
echo "time exit $?"; grep -E "exit [0-9]+ " "$OUT/time.log"; pack
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude -cubin -o "$OUT/w.cubin" \
  kernels/matmul/cuda/bf16-03-wgmma.cu >/dev/null 2>&1 && cuobjdump --dump-sass "$OUT/w.cubin" >"$OUT/w.sass" 2>&1
awk '/Function : .*bf16_gemm_wgmma/,/Function : .*bf16_gemm_mma/' "$OUT/w.sass" | grep -cE "HGMMA" | sed 's/^/HGMMA lines in the wgmma kernel: /'
grep -cE "LDL|STL" "$OUT/w.sass" | sed 's/^/LDL+STL lines in the file: /'
rm -f "$OUT/w.cubin"; pack
grep -h "matmul" "$OUT"/time/summary.md 2>/dev/null | head -20
