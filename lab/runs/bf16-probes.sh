#!/usr/bin/env bash
# lab/runs/bf16-probes.sh: two looks at what bf16 kernels leave, about 150 s.
#  1. torch.compile's rmsnorm bf16 kernels at 16384x4096 (lab/torch_kernels.py,
#     both modes) with Inductor's and Triton's caches kept: the chosen
#     configs (*.best_config) and the PTX, for the layout max-autotune runs.
#  2. matmul bf16 07 launch by launch (lab/mm_kernels.py) at shapes with one
#     dimension of 4095 each: K (A's rows unaligned: the row classes, B and C
#     aligned), N (B padded, C's rows unaligned: the staged store), M (a
#     partial tile only), beside torch eager.
# $1: the commit. Packs $OUT/run.tgz after each step.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin bfp
SHA=${1:-unknown}
lab_stamp "$SHA"
LIMIT=${LAB_LIMIT:-170}
export TORCHINDUCTOR_CACHE_DIR=/tmp/bfp.ind TRITON_CACHE_DIR=/tmp/bfp.ind/triton
rm -rf /tmp/bfp.ind
timeout 90 python3 lab/torch_kernels.py "$OUT/torch-kernels" rmsnorm:bf16:16384:4096 >"$OUT/torch-kernels.log" 2>&1
echo "[$SECONDS s] torch_kernels exit $?" >>"$OUT/steps.txt"
(cd /tmp/bfp.ind && find . \( -name '*.ptx' -o -name '*.best_config' -o -name '*.json' -o -name '*.ttgir' \) -print0 |
  tar czf "$OUT/inductor-cache.tgz" --null -T -) 2>>"$OUT/steps.txt"
pack
K=kernels/matmul/cuda
for s in 4096x4096x4095 4096x4095x4096 4095x4096x4096; do
  left=$((LIMIT - SECONDS))
  [ "$left" -lt 15 ] && { echo "$s: skipped, $left s left" >>"$OUT/mm.txt"; continue; }
  PYTHONUNBUFFERED=1 timeout "$left" python3 lab/mm_kernels.py --shape "$s" --modes eager \
    --kernel "$K/bf16-07-row-classes.cu" >>"$OUT/mm.txt" 2>>"$OUT/mm.log"
  echo "[$SECONDS s] $s exit $?" >>"$OUT/mm.txt"
  pack
done
cp "$OUT/mm.txt" "$FINAL/mm.txt" 2>/dev/null
pack
