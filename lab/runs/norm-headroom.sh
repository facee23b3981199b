#!/usr/bin/env bash
# lab/runs/norm-headroom.sh: two questions in one run of at most about 235 s
# on the H200 (16 cores). $1: the commit. Packs $OUT/run.tgz after each step.
#
# A. Does CUPTI's tracing cost layernorm bf16 23 a block an SM? Traced, 23
# took +2.36% at 16384x4096 and +0.90% at 65536x1024
# (results/2026-12-03-h200-b71fc3b/tracecost-lab). Concurrent-kernel
# tracing instruments the kernel's machine code; 23's two hot kernels use
# all 64 registers that 1024 threads an SM allow, so if the instrumented
# code needs a few more, the SM holds one block fewer (7 of 128 threads at
# 4096, 3 of 256 at 1024). rmsnorm f32 02 also uses 64 registers at 4096
# and paid +0.03%: a thread there keeps 128 bytes of the row in flight
# against 23's 64, so one block fewer may cost f32 less. lab/tracecost.sh
# (3 rounds of 100 cold calls; off, activity, both: the API half cost
# +0.11% before) on:
#   23            16384x4096, 65536x1024, 4096x16384 (the last: its
#                 two-pass kernel at 32 registers, a control)
#   24            16384x4096, 65536x1024 (4096x16384 runs 23's code):
#                 kernels/layernorm/cuda/bf16-24-rows-of-4096.cu, rows of
#                 4096 on a kernel compiled for that length (64 registers).
#   70 occ7       16384x4096, 65536x1024: 23 held to one block an SM
#                 fewer by unused dynamic shared memory (7 x 128 at
#                 4096, 3 x 256 at 1024).
#   71 h56        16384x4096: 24 with 8 registers spare (56; 9 blocks an
#                 SM at 4096, ptxas keeps 8 bytes on the stack).
#   72 h56pad     16384x4096: 71 held to 8 blocks an SM (23's occupancy,
#                 at 56 registers).
# Measured at 3291f92, where 24 was what 71 is now and 71 what 24 is now
# (docs/kernels.md), both halves of the tracing on: 23 +2.61%; the
# 64-register kernel for rows of 4096 +0.80% (and 0.3% faster untraced);
# the 56-register ones nothing traced but 2.7% (71) and 15% (72) slower
# untraced; at 1024 the 56-register kernel +1.69% where 23 paid +1.07%.
# The driver prints, with tracing on, the largest registers a thread and
# shared bytes a block the kernel records report (tracecost-raw.txt).
#
# B. rmsnorm f32 02 against torch.compile at 16384x4096 and 4096x16384
# (0.8-1.0% behind under kproof, results/2026-12-03-h200-59c7aa2).
# lab/screen.sh (3 interleaved rounds of 100 cold calls, with a copy of the
# same bytes) at the three canonical shapes on 02 and:
#   70 w256   4096 columns on 256 threads of 16 values (32 registers, 2048
#             threads an SM, the same 8 rows in flight): -0.3..-1.0% at
#             16384x4096 (twice the warps for the same bytes, as softmax
#             f32 07 and layernorm f32 16 gained at 1024); the other shapes
#             are 02's code (their spread is the screen's noise).
#   71 w1024  16384 columns on 1024 threads of 16 values (2 rows an SM,
#             2048 threads): -0.3..-1.0% at 4096x16384.
#   72 xna    x loaded with L1::no_allocate too, so the streaming row does
#             not evict w from L1: 0..-0.5% at 4096 and 16384 columns, 0 at
#             1024 (w is 4 KiB there).
#   73 wide   70 and 71 together: both gains at their shapes.
# Then the two best of 02 and these by the screen (the sum over the shapes
# of the median against 02's) under `kproof eval` (canonical shapes, 1.5 s
# a shape, no naive baseline), and torch.compile and max-autotune on
# rmsnorm f32 timed by bench/torch_baselines.py's own code
# (lab/torch_rows.py), as time allows: eval of the best, torch, eval of the
# second.
set -u
. "$(dirname "$0")/lib.sh"; lab_run_begin normhr
lab_stamp "${1:-unknown}"
LIMIT=${LAB_LIMIT:-235}
left() { echo $((LIMIT - SECONDS)); }
# min(CAP, time left), at least 1 (timeout 0 would mean no limit)
cap() { local l; l=$(left); [ "$l" -lt 1 ] && l=1; [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
log() { echo "[$SECONDS s] $*" | tee -a "$OUT/steps.txt"; }
export LAB_DIR=/tmp/normhr.lab LAB_REUSE=1 W=/tmp/normhr.lab
rm -rf "$LAB_DIR"; mkdir -p "$LAB_DIR"
KB=${LAB_KPROOF_BUILD:-/tmp/normhr-build}
SHA=${1:-unknown}

python3 lab/gen.py >"$OUT/gen.log" 2>&1 || { log "lab/gen.py failed: $(tail -2 "$OUT/gen.log")"; pack; exit 1; }
L=kernels/layernorm/cuda R=kernels/rmsnorm/cuda
A23=$L/bf16-23-shared-wb.cu A24=$L/bf16-24-rows-of-4096.cu
AOCC=$L/bf16-70-lab-occ7.cu AF64=$L/bf16-71-lab-h56.cu APAD=$L/bf16-72-lab-h56pad.cu
B02=$R/f32-02-keep-x.cu
BV=("$R/f32-70-lab-w256.cu" "$R/f32-71-lab-w1024.cu" "$R/f32-72-lab-xna.cu" "$R/f32-73-lab-wide.cu")

# Builds: kproof (for the evals and torch's op registry) beside every driver.
log "builds"
( OUT=$OUT/build KP_COMMIT=$SHA BUILD=$KB timeout 150 bash scripts/gpu-check.sh build >"$OUT/kproof-build.log" 2>&1
  echo "kproof build exit $?" >>"$OUT/kproof-build.log" ) &
kb=$!
. lab/driver-build.sh
export -f driver_build driver_exe family_of
printf '%s\n' "$A23" "$A24" "$AOCC" "$AF64" "$APAD" "$B02" "${BV[@]}" |
  timeout 150 xargs -P 12 -I{} bash -c 'driver_build "$1"' _ {} >"$OUT/driver-build.log" 2>&1
wait "$kb"
log "builds done: $(tail -1 "$OUT/kproof-build.log"); drivers $(ls "$LAB_DIR"/drv-* 2>/dev/null | wc -l) of 10 $(cat "$OUT/driver-build.log")"
pack

# A: tracing's cost.
specs=()
for s in 16384:4096 65536:1024 4096:16384; do specs+=("$A23:$s"); done
for s in 16384:4096 65536:1024; do specs+=("$A24:$s" "$AOCC:$s"); done
specs+=("$AF64:16384:4096" "$APAD:16384:4096")
log "A: tracecost, ${#specs[@]} kernel-shapes"
LAB_MODES=${LAB_TC_MODES:-off activity both} timeout "$(cap 75)" bash lab/tracecost.sh 3 100 "${specs[@]}" >"$OUT/tracecost.log" 2>&1
log "A: tracecost exit $?"
[ -s "$OUT/tracecost.txt" ] || cp "$LAB_DIR/tracecost-raw.txt" "$OUT/tracecost-raw-partial.txt" 2>/dev/null
pack

# B: the screen.
specs=()
for f in "$B02" "${BV[@]}"; do for s in 16384:4096 65536:1024 4096:16384; do specs+=("$f:$s"); done; done
log "B: screen, ${#specs[@]} kernel-shapes"
timeout "$(cap 45)" bash lab/screen.sh 3 100 "${specs[@]}" >"$OUT/screen.log" 2>&1
log "B: screen exit $?"
[ -s "$OUT/screen.txt" ] || cp "$LAB_DIR/screen-raw.txt" "$OUT/screen-raw-partial.txt" 2>/dev/null
pack

# The two best by the screen: the sum over shapes of median / 02's median
# (from every round that ran, should the screen have been cut short).
best=$(python3 - "$LAB_DIR/screen-raw.txt" <<'PY' 2>>"$OUT/steps.txt"
import re, sys, statistics as st, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    p = line.split(maxsplit=2)
    m = re.search(r"median ([\d.]+) us", p[2] if len(p) > 2 else "")
    if m and not p[1].startswith("copy:"):
        f, r, c = p[1].rsplit(":", 2)
        t[f.split("/")[-1]][r + "x" + c].append(float(m.group(1)))
base = t.get("f32-02-keep-x.cu", {})
score = {f: sum(st.median(v[s]) / st.median(base[s]) for s in base) for f, v in t.items() if base and set(base) <= set(v)}
for f in sorted(score, key=score.get)[:2]:
    print(f)
PY
)
log "B: best by the screen: $(echo $best)"
[ -n "$best" ] || { log "B: no screen result; evals skipped"; pack; exit 0; }

ev() { # one eval stage on kernel file base names $2..., into $OUT/$1
  local d=$1 re; shift
  re="rmsnorm/cuda/($(printf '%s|' "${@%.cu}" | sed 's/|$//'))\.cu"
  log "B: eval $re ($(cap 45) s)"
  OUT=$OUT/$d KP_COMMIT=$SHA BUILD=$KB KP_KERNELS="$re" KP_BUDGET=1.5 \
  KP_EVAL_ARGS=--shape-set,canonical,--no-baseline \
    timeout "$(cap 45)" bash scripts/gpu-check.sh kernels >"$OUT/$d.log" 2>&1
  log "B: eval exit $?: $(grep -E 'exit [0-9]+ ' "$OUT/$d.log" | tr '\n' ' ')"
  pack
}
set -- $best
[ "$(left)" -gt 25 ] && ev eval-1 "$1"
if [ "$(left)" -gt 30 ]; then
  log "B: torch rmsnorm f32 ($(cap 50) s)"
  PYTHONUNBUFFERED=1 timeout "$(cap 50)" python3 lab/torch_rows.py f32 --out "$OUT/torch-f32.json" --kproof "$KB/kproof" \
    --ops rmsnorm --modes compile,max-autotune --budget 1 >"$OUT/torch.log" 2>&1
  log "B: torch exit $?"
  pack
fi
[ $# -ge 2 ] && [ "$(left)" -gt 25 ] && ev eval-2 "$2"
log "done"
pack
