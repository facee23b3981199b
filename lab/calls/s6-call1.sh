#!/usr/bin/env bash
# Session 6, device call 1: where the long rows lose time, and layernorm f32 10.
# 1. lab/screen.sh: the long-row kernels at 4096, 8192 and 16384 rows (a
#    fixed cost per call shows as a rising % of copy with more rows; a rate
#    limit as a flat one), the diagnostics (softmax bf16 07 as a copy
#    through its buffers; layernorm 05 without row reductions), layernorm
#    f32 10 against 05 on the three canonical shapes, and the .L2::256B /
#    st.global.cs variants (lab/gen.py, session 6).
# 2. gpu-check.sh: every shape of layernorm f32 10 under the rigorous
#    correctness check.
# 3. lab/profile.sh (ncu) on the two bf16 long-row kernels, if counters read.
set -u
OUT=${OUT:-$PWD/lab-out}
python3 lab/gen.py >/dev/null
S=kernels/softmax/cuda L=kernels/layernorm/cuda
timeout 300 lab/screen.sh 3 30 \
  $S/bf16-07-stream-rows.cu:4096:32768 $S/bf16-07-stream-rows.cu:8192:32768 $S/bf16-07-stream-rows.cu:16384:32768 \
  $S/bf16-92-lab-copythrough.cu:4096:32768 $S/bf16-92-lab-copythrough.cu:16384:32768 $S/bf16-84-lab-l2pf.cu:4096:32768 \
  $L/bf16-05-warp-per-row.cu:4096:16384 $L/bf16-05-warp-per-row.cu:8192:16384 $L/bf16-05-warp-per-row.cu:16384:16384 \
  $L/bf16-85-lab-noreduce.cu:4096:16384 $L/bf16-84-lab-l2pf.cu:4096:16384 \
  $L/f32-05-warp-per-row.cu:16384:4096 $L/f32-05-warp-per-row.cu:4096:16384 $L/f32-05-warp-per-row.cu:65536:1024 \
  $L/f32-10-loads-first.cu:16384:4096 $L/f32-10-loads-first.cu:4096:16384 $L/f32-10-loads-first.cu:65536:1024 \
  $L/f32-84-lab-l2pf.cu:16384:4096 $L/f32-84-lab-l2pf.cu:4096:16384 $L/f32-83-lab-stcs.cu:16384:4096 \
  $L/f32-82-lab-both.cu:16384:4096 $L/f32-85-lab-noreduce.cu:16384:4096 \
  $S/f32-07-two-warps-1k.cu:65536:1024 $S/f32-07-two-warps-1k.cu:4096:32768 $S/f32-07-two-warps-1k.cu:8192:32768 \
  $S/f32-84-lab-l2pf.cu:65536:1024 $S/f32-83-lab-stcs.cu:65536:1024 $S/f32-82-lab-both.cu:65536:1024 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
OUT=$OUT/gc KP_CORRECT_KERNELS='layernorm/cuda/f32-10' KP_JOBS=4 timeout 200 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"
timeout 80 lab/profile.sh $S/bf16-07-stream-rows.cu 4096 32768 $L/bf16-05-warp-per-row.cu 4096 16384 >"$OUT/profile.log" 2>&1
echo "profile exit $?"
