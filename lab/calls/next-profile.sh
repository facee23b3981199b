#!/usr/bin/env bash
# Prepared in session 6, not yet run: Nsight Compute on what is still short, for the
# next session: layernorm f32 11 and torch.compile's max-autotune kernel at
# 16384x4096 (torch runs at the copy rate there), layernorm bf16 11 and
# the same kernel without row reductions (lab/gen.py's diagnostic, wrong
# output by design) at 4096x16384.
set -u
OUT=${OUT:-$PWD/lab-out}
python3 lab/gen.py >/dev/null
L=kernels/layernorm/cuda
timeout 200 lab/profile.sh $L/f32-11-one-merge.cu 16384 4096 $L/bf16-11-one-merge.cu 4096 16384 \
  $L/bf16-85-lab-noreduce.cu 4096 16384 >"$OUT/profile.log" 2>&1
echo "profile exit $?"
mv "$OUT/lab-profile.tgz" "$OUT/lab-profile-ours.tgz" 2>/dev/null
timeout 240 lab/profile.sh torch layernorm f32 16384 4096 >"$OUT/profile-torch.log" 2>&1
echo "profile torch exit $?"
