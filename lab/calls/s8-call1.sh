#!/usr/bin/env bash
# Session 8, device call 1: layernorm bf16 17 and lab variant 70 (the ring
# prepared in session 7, never run): bounded correctness at shapes where
# blocks walk more rows than the ring holds, then a screen against 11;
# every shape of 17, 70 and softmax bf16 12 (its 16K path on a full row,
# 3x16384, and after its dead stream kernel was removed) under the rigorous
# correctness check; then which kernels torch.compile runs where issue 5 is
# still short (Triton source and launch shapes), to learn from.
# $1: the commit, for env.txt.
set -u
FINAL=${OUT:-$PWD/lab-out}
# work under /tmp, packed into $FINAL/call.tgz after every stage (at most
# 8 files come back from the device machine)
OUT=/tmp/s8c1; rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
pack() { tar czf "$FINAL/.call.tgz" -C "$OUT" . 2>/dev/null && mv -f "$FINAL/.call.tgz" "$FINAL/call.tgz"; }
L=kernels/layernorm/cuda
t0=$(date +%s); stamp() { pack; echo "== +$(( $(date +%s) - t0 )) s $*"; }
python3 lab/gen.py >/dev/null
stamp build
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_JOBS=3 timeout 90 bash scripts/gpu-check.sh build >"$OUT/build.log" 2>&1
echo "build exit $?"
for f in bf16-17-ring-rows bf16-70-lab-ring2; do
  stamp "ring $f"
  timeout 70 build-gpu/kproof eval $L/$f.cu --op layernorm --dtype bf16 --correctness --timeout 20 \
    --shape 600x16384 --shape 600x12288 --shape 200x16384 --shape 133x12288 >"$OUT/ring-$f.txt" 2>&1
  echo "$f: ring shapes exit $? ($(tail -1 "$OUT/ring-$f.txt"))"
done
stamp screen
timeout 120 lab/screen.sh 4 30 \
  $L/bf16-11-one-merge.cu:4096:16384 $L/bf16-17-ring-rows.cu:4096:16384 $L/bf16-70-lab-ring2.cu:4096:16384 \
  $L/bf16-11-one-merge.cu:8192:16384 $L/bf16-17-ring-rows.cu:8192:16384 \
  >"$OUT/screen.log" 2>&1
echo "screen exit $?"; cat "$OUT/screen.txt" 2>/dev/null
stamp correct
OUT=$OUT/gc KP_COMMIT=${1:-unknown} KP_CORRECT_KERNELS='layernorm/cuda/bf16-(17|70)|softmax/cuda/bf16-12' KP_JOBS=3 \
  timeout 170 bash scripts/gpu-check.sh correct >"$OUT/gc.log" 2>&1
echo "gpu-check correct exit $?"; grep -E "exit [0-9]+ " "$OUT/gc.log"
stamp torch-kernels
PYTHONUNBUFFERED=1 timeout 170 python3 lab/torch_kernels.py "$OUT/tk" layernorm:f32:16384:4096 softmax:f32:65536:1024 \
  layernorm:f32:65536:1024 layernorm:bf16:4096:16384 >"$OUT/torch-kernels.log" 2>&1
echo "torch kernels exit $?"
stamp done
