#!/usr/bin/env bash
# lab/runs/matmul-bf16-19.sh: matmul bf16 19 (ping-pong halves) against
# 18. First 19's element map at the ten row-class shapes of
# matmul-errmap.sh (a hang shows there as exit 124 within 30 s a shape),
# then kproof's check on the op's 14 shapes, the 16 row-class extras and
# three more, then 18 and 19 launch by launch (lab/mm_kernels.py, 10 cold
# calls) at six shapes, then one gpu-check run timing 18 and 19 with
# cuBLAS interleaved at the same six shapes. About 450 s. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mm19
lab_stamp "${1:-unknown}"
export BUILD=/tmp/matmul-build
K=kernels/matmul/cuda
f=$K/bf16-19-ping-pong.cu
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude lab/probes/mm_errmap.cu "$f" \
  -o "$OUT/em-19" -lcuda >"$OUT/build-em.txt" 2>&1
for s in "4095 4095 4095 0" "4095 4095 4095 1" "4096 4095 4096 0" "1024 1030 1001 0" "1024 1030 1001 3" \
         "4097 4095 4095 0" "1024 4097 4095 0" "768 520 72 0" "4096 4096 4095 1" "1000 1032 8192 0" \
         "4096 4096 4096 0" "2049 520 64 0" "1030 1032 8 0"; do
  echo "== bf16-19 $s" >>"$OUT/errmap.txt"
  timeout 30 "$OUT/em-19" $s >>"$OUT/errmap.txt" 2>&1
  echo "exit $?" >>"$OUT/errmap.txt"
done
pack
CK=matmul/cuda/bf16-19
OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=4 KP_CORRECT_KERNELS="$CK" \
  timeout 150 bash scripts/gpu-check.sh build,correct >"$OUT/ops.log" 2>&1
echo "ops exit $?"; pack
OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=4 KP_CORRECT_KERNELS="$CK" \
KP_CORRECT_ARGS=$MM_ROWCLASS_EXTRAS \
  timeout 60 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
echo "extra exit $?"; pack
OUT=$OUT/extra2 KP_COMMIT=${1:-unknown} KP_JOBS=4 KP_CORRECT_KERNELS="$CK" \
KP_CORRECT_ARGS=--shape,1024x4097x768,--shape,2048x1030x64,--shape,1031x9x8 \
  timeout 40 bash scripts/gpu-check.sh correct >"$OUT/extra2.log" 2>&1
echo "extra2 exit $?"; pack
S=4096x4096x4096,8192x8192x8192,4095x4095x4095,8192x1024x8192,4096x4095x4096,8192x50257x768
for s in ${S//,/ }; do
  echo "== $s" >>"$OUT/launches.log"
  PYTHONUNBUFFERED=1 timeout 60 python3 lab/mm_kernels.py --shape $s --modes '' \
    --kernel $K/bf16-18-class-stores.cu --kernel $f >>"$OUT/launches.txt" 2>>"$OUT/launches.log"
  echo "$s exit $?" >>"$OUT/launches.log"; pack
done
OUT=$OUT/timed KP_COMMIT=${1:-unknown} KP_KERNELS="matmul/cuda/bf16-(18|19)" KP_BUDGET=1.5 \
KP_EVAL_ARGS=--shape,${S//,/,--shape,} timeout 200 bash scripts/gpu-check.sh kernels >"$OUT/timed.log" 2>&1
echo "timed exit $?"; pack
