#!/usr/bin/env bash
# Session 7, device call 5: bulk-copy rows for the f32 shapes where
# torch.compile led by 0.5-0.8% in session 6's table: softmax f32 09 and
# layernorm f32 15 (eight rows of 1024 a block, a warp a row) and their
# four-row variants against 07 and 11 at 65536x1024; softmax f32 rows of
# 8192 on the bulk-copy path against 07 at 8192x8192 (lab/screen.sh).
set -u
OUT=${OUT:-$PWD/lab-out}
S=kernels/softmax/cuda L=kernels/layernorm/cuda
python3 lab/gen.py >/dev/null
timeout 240 lab/screen.sh 4 30 \
  $S/f32-07-two-warps-1k.cu:65536:1024 $S/f32-09-tma-rows.cu:65536:1024 $S/f32-78-lab-tma128.cu:65536:1024 \
  $S/f32-07-two-warps-1k.cu:8192:8192 $S/f32-77-lab-tma8k.cu:8192:8192 \
  $L/f32-11-one-merge.cu:65536:1024 $L/f32-15-tma-warp-rows.cu:65536:1024 $L/f32-78-lab-tma128.cu:65536:1024 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"
