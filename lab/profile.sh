#!/usr/bin/env bash
# lab/profile.sh: Nsight Compute's view of kernels kproof times, for finding
# where a kernel loses its last percent (DRAM throughput, stall reasons).
# Run on the GPU machine. Everything goes into a work folder ($LAB_DIR,
# default $OUT.lab) and is packed into $OUT/lab-profile.tgz at the end (the
# device tool brings back at most 8 files from $OUT).
#   lab/profile.sh KERNEL.cu ROWS COLS [KERNEL.cu ROWS COLS ...]
#   lab/profile.sh torch OP DTYPE ROWS COLS   (torch.compile max-autotune-no-cudagraphs)
# The op and dtype of a kernel file come from its path, as in gpu-check.sh.
# ncu runs with --clock-control none (the clocks are left as the driver sets them);
# where it cannot read the counters (a gVisor machine) it says so and the
# driver's own event timing still prints.
set -uo pipefail
OUT=${OUT:-$PWD/lab-out}
W=${LAB_DIR:-$OUT.lab}
mkdir -p "$OUT" "$W"
# Only this run's files: a warm machine keeps $W from earlier calls.
touch "$W/.profile-start"
trap '(cd "$W" && find . -type f -newer .profile-start ! -name "drv-*" -print0 | tar czf "$OUT/lab-profile.tgz" --null -T -) 2>/dev/null' EXIT
SECTIONS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
. "$(dirname "$0")/driver-build.sh"
one_kernel() { # file rows cols
  local f=$1 rows=$2 cols=$3 fam base exe
  fam=$(family_of "$f"); base=$(basename "${f%.*}")
  exe=$(driver_exe "$f")
  driver_build "$f" || return
  "$exe" "$rows" "$cols" 20 | tee "$W/$fam-$base-${rows}x$cols.time.txt"
  timeout 300 ncu --clock-control none --launch-skip 3 --launch-count 1 -k "regex:^(?!lab_)" $SECTIONS \
    "$exe" "$rows" "$cols" 5 >"$W/$fam-$base-${rows}x$cols.ncu.txt" 2>&1
  echo "$f ${rows}x$cols: ncu exit $? ($(grep -m1 -E 'DRAM Throughput|==ERROR==|==WARNING==' "$W/$fam-$base-${rows}x$cols.ncu.txt" | tr -s ' '))"
}
one_torch() { # op dtype rows cols
  local op=$1 dt=$2 rows=$3 cols=$4 log=$W/torch-$1-$2-$3x$4.ncu.txt
  # torch.compile's kernels are Triton ones; skip the autotuning launches.
  timeout 500 ncu --clock-control none --target-processes all -k "regex:triton" --launch-skip 40 --launch-count 1 $SECTIONS \
    python3 - "$op" "$dt" "$rows" "$cols" >"$log" 2>&1 <<'PY'
import sys, torch
op, dt, rows, cols = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
dtype = torch.float32 if dt == "f32" else torch.bfloat16
x = torch.randn(rows, cols, device="cuda", dtype=dtype)
w = torch.randn(cols, device="cuda", dtype=dtype); b = torch.randn(cols, device="cuda", dtype=dtype)
f = (lambda x: torch.softmax(x, -1)) if op == "softmax" else (lambda x: torch.nn.functional.layer_norm(x, (cols,), w, b))
g = torch.compile(f, dynamic=False, mode="max-autotune-no-cudagraphs")
for _ in range(60): g(x)
torch.cuda.synchronize()
PY
  echo "torch $op $dt ${rows}x$cols: ncu exit $? ($(grep -m1 -E 'DRAM Throughput|==ERROR==' "$log" | tr -s ' '))"
}
if [ "${1:-}" = torch ]; then shift; one_torch "$@"; exit; fi
while [ $# -ge 3 ]; do one_kernel "$1" "$2" "$3"; shift 3; done
