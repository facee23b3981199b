#!/usr/bin/env bash
# lab/runs/matmul-bf16-22.sh: matmul bf16 22 against 21 in one short run:
# lab/bf16_22_pieces.py; 22's error map (lab/probes/mm_errmap.cu) at
# eleven shapes, nine of them with B's rows off 16 bytes (two with M <
# 1024, the path without row classes); 21 and 22 launch by launch
# (lab/mm_kernels.py, 10 cold calls) at 4095^3, 4096x4095x4096 and
# 8192x50257x768; then while time is left kproof's check of 22 on the op's
# 14 shapes and the 16 row-class extras, and both timed under kproof with
# cuBLAS interleaved at the three shapes (1 s a shape).
# $1: the commit. About 300 s; stops starting steps after $LAB_LIMIT s
# (default 400).
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mm22
lab_stamp "${1:-unknown}"
LIMIT=${LAB_LIMIT:-400}
K=kernels/matmul/cuda
K21=$K/bf16-21-box-staging.cu K22=$K/bf16-22-b-in-kernel.cu
export BUILD=/tmp/matmul-build
left() { echo $((LIMIT - SECONDS)); }
python3 lab/bf16_22_pieces.py >"$OUT/pieces.txt" 2>&1; echo "exit $?" >>"$OUT/pieces.txt"
# Builds side by side: the error map's binary, both kernel libraries, kproof.
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude lab/probes/mm_errmap.cu "$K22" \
  -o "$OUT/em22" -lcuda >"$OUT/build-em.txt" 2>&1 &
(OUT=$OUT/build KP_COMMIT=${1:-unknown} KP_JOBS=8 timeout 200 bash scripts/gpu-check.sh build >"$OUT/build.log" 2>&1) &
for f in "$K21" "$K22"; do
  PYTHONUNBUFFERED=1 timeout 200 python3 lab/mm_kernels.py --shape 1024x1024x1024 --modes '' --calls 1 --kernel "$f" \
    >/dev/null 2>&1 &
done
wait
pack
for s in "4095 4095 4095 0" "4095 4095 4095 1" "4096 4095 4096 0" "1024 1030 1001 0" "1024 1030 1001 3" \
         "4097 4095 4095 0" "1024 4097 4095 0" "768 1031 200 0" "1000 1031 1000 1" "2048 50257 768 0" \
         "4096 4096 4095 1"; do
  echo "== bf16-22-b-in-kernel $s" >>"$OUT/errmap.txt"
  timeout 30 "$OUT/em22" $s >>"$OUT/errmap.txt" 2>&1
  rc=$?; echo "exit $rc" >>"$OUT/errmap.txt"
  [ $rc -ne 124 ] || { echo "timed out: a wait that never ends; nothing more runs" >>"$OUT/errmap.txt"; pack; exit 1; }
done
pack
for s in 4095x4095x4095 4096x4095x4096 8192x50257x768; do
  [ "$(left)" -gt 60 ] || { echo "$s: skipped" >>"$OUT/launches.log"; continue; }
  PYTHONUNBUFFERED=1 timeout 100 python3 lab/mm_kernels.py --shape $s --modes '' --kernel "$K21" --kernel "$K22" \
    >>"$OUT/launches.txt" 2>>"$OUT/launches.log"
  echo "[$SECONDS s] $s exit $?" >>"$OUT/launches.log"; pack
done
[ "$(left)" -gt 60 ] && (OUT=$OUT/ops KP_COMMIT=${1:-unknown} KP_JOBS=8 KP_CORRECT_KERNELS=matmul/cuda/bf16-22 \
  timeout "$(left)" bash scripts/gpu-check.sh correct >"$OUT/ops.log" 2>&1; echo "ops exit $?" >>"$OUT/ops.log")
pack
[ "$(left)" -gt 60 ] && (OUT=$OUT/extra KP_COMMIT=${1:-unknown} KP_JOBS=8 KP_CORRECT_KERNELS=matmul/cuda/bf16-22 \
  KP_CORRECT_ARGS=$MM_ROWCLASS_EXTRAS timeout 80 bash scripts/gpu-check.sh correct >"$OUT/extra.log" 2>&1
  echo "extra exit $?" >>"$OUT/extra.log")
pack
t=$(( $(left) - 15 ))
[ "$t" -gt 60 ] && (OUT=$OUT/timed KP_COMMIT=${1:-unknown} KP_KERNELS="matmul/cuda/bf16-(21|22)" KP_BUDGET=1 \
  KP_EVAL_ARGS=--shape,4095x4095x4095,--shape,4096x4095x4096,--shape,8192x50257x768 \
  timeout "$t" bash scripts/gpu-check.sh kernels >"$OUT/timed.log" 2>&1; echo "timed exit $?" >>"$OUT/timed.log")
pack
