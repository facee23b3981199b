#!/usr/bin/env bash
# Prepared in session 10 as next-1k.sh; session 11 ran it as call 1
# (results/2026-12-01-h200-session11/call1-737a17a). The last of issue 5's targets,
# layernorm bf16 at 65536x1024 (session 10 call 5: 21 at 63.94 us [63.34,
# 64.43] against max-autotune's 63.41, a tie). In one call, about 450 s (at most 580):
# 1. correctness of every best kernel on every shape of its op (layernorm
#    f32 17 has not run the two rows added in session 9) and of lab 96-98
#    (lab/gen.py: rows of 1024 kept packed, 32-64 rows an SM);
# 2. a screen at 65536x1024: 21, lab 96/97/98, lab 99 (21 without w and
#    b: a diagnostic, wrong output, what w and b cost there) and softmax
#    bf16 14 (the same traffic, 100.7% of a memcpy in call 3);
# 3. torch.compile's kernels for layernorm bf16 65536x1024 (launch shape
#    and Triton source, lab/torch_kernels.py), not yet seen for bf16 there.
# Works under /tmp, one archive back. $1: the commit.
set -u
. "$(dirname "$0")/lib.sh"; lab_call_begin next1k
python3 lab/gen.py >/dev/null || echo "gen.py failed"
L=kernels/layernorm/cuda S=kernels/softmax/cuda
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_JOBS=5 \
  KP_CORRECT_KERNELS='layernorm/cuda/(f32-17|bf16-21|bf16-9[678]-lab)|softmax/cuda/(f32-10|bf16-14)|sum/cuda/f32-05' \
  timeout 320 bash scripts/gpu-check.sh build,correct >"$OUT/gc.log" 2>&1
echo "gpu-check exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"; pack
timeout 120 lab/screen.sh 5 30 \
  $L/bf16-21-two-pass.cu:65536:1024 $L/bf16-96-lab-packed48.cu:65536:1024 \
  $L/bf16-97-lab-packed64.cu:65536:1024 $L/bf16-98-lab-packed32.cu:65536:1024 \
  $L/bf16-99-lab-nowb.cu:65536:1024 \
  $S/bf16-14-keep-x.cu:65536:1024 >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null; pack
timeout 140 python3 lab/torch_kernels.py "$OUT/tk" layernorm:bf16:65536:1024 >"$OUT/tk.log" 2>&1
echo "torch_kernels exit $?"; cat "$OUT/tk/torch-kernels.txt" 2>/dev/null; pack
