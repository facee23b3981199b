#!/usr/bin/env bash
# lab/runs/rmsnorm-harness.sh: rmsnorm's fast CUDA kernels against torch in
# one harness (lab/torch_vs.py), at most about 200 s on the H200. $1: the
# commit. Packs $OUT/run.tgz every 30 s and at the end; the table also
# lands beside it as $OUT/torch-vs.txt.
#
# kproof's eval and bench/torch_baselines.py put f32 02 and torch.compile
# within 1% of each other from two processes and two harnesses
# (results/README.md: 0.99x / 1.01x / 0.99x), inside what the harnesses
# differ by. Here, in one process, round-robin on the same inputs under one
# cold protocol, at 16384x4096, 65536x1024 and 4096x16384:
#   f32:  02 keep-x, its A/A copy, lab 73 wide (lab/gen.py: 256 threads of
#         16 values at 4096 columns, 1024 at 16384; 0.1-0.3% ahead of 02 in
#         a screen, results/2026-12-04-h200-3291f92), torch eager,
#         torch.compile, max-autotune-no-cudagraphs, a copy of the bytes;
#   bf16: 02 shared-w, its A/A copy, the same torch contenders and copy.
# The answer per shape and kernel: best torch / kernel with a paired 95%
# interval (above 1: the kernel is faster), the A/A beside it.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin rmsh
SHA=${1:-unknown}
lab_stamp "$SHA"
LIMIT=${LAB_LIMIT:-200}
log() { echo "[$SECONDS s] $*" | tee -a "$OUT/steps.txt"; }
BUILD=/tmp/rmsh.build # shared objects stay out of the archive
rm -rf "$BUILD"

R=kernels/rmsnorm/cuda
K=(--kernel "$R/f32-02-keep-x.cu")
if python3 lab/gen.py >"$OUT/gen.log" 2>&1 && [ -f "$R/f32-73-lab-wide.cu" ]; then
  K+=(--kernel "$R/f32-73-lab-wide.cu")
else
  log "lab/gen.py failed or wrote no f32-73-lab-wide.cu: 02 alone for f32 ($(tail -1 "$OUT/gen.log"))"
fi
K+=(--kernel "$R/bf16-02-shared-w.cu")
nvidia-smi -q -d CLOCK,PERFORMANCE >"$OUT/clocks-before.txt" 2>&1
python3 -c 'import torch, sys; print(torch.__version__, torch.version.cuda, sys.version.split()[0])' >"$OUT/versions.txt" 2>&1
nvcc --version | tail -2 >>"$OUT/versions.txt" 2>&1

# The tool stops itself at its deadline; timeout is the backstop.
dl=$((LIMIT - SECONDS - 6))
log "torch_vs: ${K[*]} (deadline ${dl} s)"
KP_COMMIT=$SHA PYTHONUNBUFFERED=1 timeout $((dl + 4)) python3 lab/torch_vs.py "${K[@]}" \
  --budget 3 --deadline "$dl" --build-dir "$BUILD" \
  --out "$OUT/torch-vs.json" --txt "$OUT/torch-vs.txt" >"$OUT/torch-vs.out" 2>"$OUT/torch-vs.log" &
pid=$!
last=$SECONDS
while kill -0 "$pid" 2>/dev/null; do
  sleep 2
  [ $((SECONDS - last)) -ge 30 ] && { pack; last=$SECONDS; }
done
wait "$pid"
log "torch_vs exit $?"
cp "$BUILD"/*.log "$OUT/" 2>/dev/null # the nvcc commands and their output
nvidia-smi -q -d CLOCK,PERFORMANCE >"$OUT/clocks-after.txt" 2>&1
[ -s "$OUT/torch-vs.txt" ] && cp "$OUT/torch-vs.txt" "$FINAL/torch-vs.txt"
log "done"
pack
