#!/usr/bin/env bash
# lab/runs/matmul-ncu-cublas.sh: Nsight Compute's view of matmul bf16 11
# beside cuBLAS (torch.mm, what torch eager calls) at 4096^3: one launch
# each, SpeedOfLight, ComputeWorkloadAnalysis, WarpStateStats and
# MemoryWorkloadAnalysis, clocks as the driver sets them. Where 11's
# mainloop loses the 1% to cuBLAS (and the 5% the target asks) should show
# as tensor-pipe activity, issue stalls or L2/DRAM traffic. About 120 s.
# $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin mmncu
lab_stamp "${1:-unknown}"
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section MemoryWorkloadAnalysis"
timeout 150 ncu --clock-control none -k regex:bf16_gemm --launch-skip 2 --launch-count 1 $S \
  python3 lab/mm_kernels.py --shape 4096x4096x4096 --modes '' --calls 5 \
  --kernel kernels/matmul/cuda/bf16-11-flat-store.cu >"$OUT/ncu-bf16-11.txt" 2>&1
echo "11 exit $?"; pack
timeout 150 ncu --clock-control none -k 'regex:nvjet|xmma|gemm|cutlass' --launch-skip 2 --launch-count 1 $S \
  python3 lab/mm_kernels.py --shape 4096x4096x4096 --modes eager --calls 5 >"$OUT/ncu-cublas.txt" 2>&1
echo "cublas exit $?"; pack
