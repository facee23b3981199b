#!/usr/bin/env bash
# lab/runs/rmsnorm-harness.sh: rmsnorm's fast CUDA kernels against torch in
# one harness (lab/torch_vs.py), at most about 200 s on the H200. $1: the
# commit. Packs $OUT/run.tgz every 30 s and at the end; the table also
# lands beside it as $OUT/torch-vs.txt. LAB_TV_ARGS: more arguments for
# lab/torch_vs.py (a dry run: "--shapes 64x256 --setup-guess 1").
#
# The best kernels and their predecessors at 16384x4096, 65536x1024 and
# 4096x16384, in one process, round-robin on the same inputs under one
# cold protocol (results/README.md: the table this makes):
#   f32:  03 (rows of 4096 read twice), its A/A copy, lab 80 and 81 (03's
#         rows-of-4096 kernel with L1-allocating loads, as torch.compile's;
#         x read twice / once), torch eager, torch.compile,
#         max-autotune-no-cudagraphs, a copy;
#   bf16: 04 (rows of 4096 two a block), its A/A copy, 03, the same torch
#         contenders and copy.
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
python3 lab/gen.py >"$OUT/gen.log" 2>&1 || log "lab/gen.py failed: $(tail -1 "$OUT/gen.log")"
K=(--kernel "$R/f32-03-two-reads-4k.cu")
for v in f32-80-lab-l1 f32-81-lab-l1regs; do [ -f "$R/$v.cu" ] && K+=(--kernel "$R/$v.cu"); done
K+=(--kernel "$R/bf16-04-pair-rows.cu" --kernel "$R/bf16-03-regs-16k.cu")
nvidia-smi -q -d CLOCK,PERFORMANCE >"$OUT/clocks-before.txt" 2>&1
nvcc --version | tail -2 >"$OUT/nvcc.txt" 2>&1 # torch's version is in the JSON

# The tool stops itself at its deadline; timeout is the backstop.
dl=$((LIMIT - SECONDS - 6))
log "torch_vs: ${K[*]} (deadline ${dl} s)"
KP_COMMIT=$SHA PYTHONUNBUFFERED=1 timeout $((dl + 4)) python3 lab/torch_vs.py "${K[@]}" \
  --budget 3 --deadline "$dl" --build-dir "$BUILD" ${LAB_TV_ARGS:-} \
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
