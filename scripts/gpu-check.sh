#!/usr/bin/env bash
# gpu-check.sh: everything GPU-side in one go, on a machine with an NVIDIA GPU.
#
#   scripts/gpu-check.sh [STAGES]     STAGES: comma list, run in that order;
#       "all" = build,device,calibrate,init,correct,kernels,exploits,torch,dobench,repro,tracecost
#
# correct: every project CUDA kernel, correctness only (every shape of its
# op unless KP_CORRECT_ARGS names others, no timing), KP_JOBS at a time (default 4): parallel is fine there
# since nothing is timed. kernels: the same kernels timed, one at a time.
# CUDA_VISIBLE_DEVICES picks the GPU; scripts/gpu-check-2.sh splits the
# stages over two GPUs.
#
# One device call may run 10 minutes, and "all" takes longer: run it in
# pieces (a stage list that fits a 10-minute call: results/README.md).
# KP_KERNELS (regex on the file path) and KP_BUDGET (seconds of timing per
# shape, default 3; KP_BUDGET_<family> for one op) narrow the kernels stage, KP_EVAL_ARGS adds eval
# arguments (commas for spaces: --shape-set,canonical,--dist,normal);
# KP_CORRECT_KERNELS (default KP_KERNELS) narrows the correct stage and
# KP_CORRECT_ARGS adds its eval arguments (e.g. --shape,2x20480: shapes
# added to an op after its older kernels were checked);
# KP_DEMO_ARGS, KP_DEMO_TIMEOUT, KP_TORCH_OPS (default: every op with a torch
# baseline, bench/torch_baselines.py), KP_TORCH_DTYPES (default: all, in the
# registry's order; a list also sets the order), KP_TORCH_BUDGET (seconds per
# mode and shape), KP_TORCH_SHAPES (shapes instead of the benchmark ones,
# commas between them, with KP_TORCH_OPS naming one op: 1021x1031x1039,8192x50257x768),
# KP_TORCH_TIMEOUT, KP_TORCH_KERNELS (non-empty: record the
# kernels each torch mode launched; such a run's torch times explain, they
# are not a table of record), KP_INIT_BUDGET, KP_INIT_ARGS (init's eval
# arguments, e.g. --shape-set,canonical: the starting points timed without
# the edge and drawn shapes),
# KP_REPRO_FILE/SHAPE/BUDGET/TARGET the others. Measured on the H200
# (run c86ae76 of 2026-11-30): build ~20 s, device test ~17 s,
# calibrate ~4 s; init of all 7 ops at 2 s a shape 400 s (naive matmul at
# 8192^3 is most of it); one softmax/layernorm/sum
# kernel at its canonical shapes, 1.5 s each, 18-60 s; torch for softmax,
# layernorm and sum at 1 s per mode and shape 152 s; the demo 292 s with 4
# rows in flight on 16 cores (run 2452726 of 2026-11-30).
# Writes into $OUT (default ./gpu-out): log.txt, summary.md and results.tgz
# holding every JSON/markdown result; scripts/collect-results.sh unpacks one
# into a results folder for committing. Each stage has its own time
# limit so one stuck stage cannot eat the whole run.
set -uo pipefail
STAGES=${1:-all}
[ "$STAGES" = all ] && STAGES=build,device,calibrate,init,correct,kernels,exploits,torch,dobench,repro,tracecost
KNOWN=",build,device,calibrate,init,correct,kernels,exploits,torch,dobench,repro,tracecost,"
for st in ${STAGES//,/ }; do
  case "$KNOWN" in *",$st,"*) ;; *) echo "gpu-check.sh: unknown stage '$st' (${KNOWN:1:-1})" >&2; exit 64 ;; esac
done
OUT=${OUT:-$PWD/gpu-out}
# The run folder lives beside $OUT, not in it: the device tool brings back
# at most 8 files, so $OUT holds only log.txt, summary.md and results.tgz.
R=${KP_RUN_DIR:-$OUT.run}
B=${BUILD:-build-gpu}
case "$B" in /*) ;; *) B=$PWD/$B ;; esac
# The run folder holds this run's results only: a warm device machine keeps
# the last call's folder, and its files were once packed and summarized
# with the new run's once.
# So it is emptied first, but only a folder that is new, empty, or marked
# as one of this script's run folders, and never one that holds the
# working tree, $OUT or the build: anything else is refused untouched.
MARK=.gpu-check-run
refuse() { # also into the log, which is where gpu-check-2.sh and the device tool look
  local msg="gpu-check.sh: will not use '$R' as the run folder: $*; set KP_RUN_DIR to a folder of its own"
  echo "$msg" >&2
  mkdir -p "$OUT" 2>/dev/null && echo "$msg" >>"$OUT/log.txt"
  exit 64
}
inside() { # physical path $1 is $2 or below it ("/" holds everything)
  [ "$2" = / ] && return 0
  case "$1/" in "$2"/*) return 0 ;; esac
  return 1
}
[ ! -e "$R" ] || [ -d "$R" ] || refuse "it is not a folder"
mkdir -p "$R" "$OUT" || exit 1
RP=$(cd "$R" && pwd -P) || exit 1
inside "$(pwd -P)" "$RP" && refuse "it holds the working tree"
inside "$(cd "$OUT" && pwd -P)" "$RP" && refuse "it holds \$OUT ($OUT)"
[ -d "$B" ] && inside "$(cd "$B" && pwd -P)" "$RP" && refuse "it holds the build ($B)"
[ -z "$(ls -A "$R")" ] || [ -e "$R/$MARK" ] || refuse "it has files and no $MARK mark of an earlier run"
rm -rf "$R" && mkdir -p "$R" && : >"$R/$MARK" || { echo "gpu-check.sh: could not empty the run folder '$R'" >&2; exit 1; }
exec > >(tee -a "$OUT/log.txt") 2>&1
TEE=$!
K=$B/kproof
export KPROOF_CACHE=$B/kproof-cache
export KPROOF_ROOT=$PWD
# The backend: cuda where a GPU answers, else host (the same stages on the
# CPU, which is how CI runs this script: tests/gpu_check_test.sh). Stages
# that need a GPU (device, torch, dobench) say so and do nothing on host.
KP_BACKEND=${KP_BACKEND:-$(nvidia-smi -L >/dev/null 2>&1 && echo cuda || echo host)}
EXT=$([ "$KP_BACKEND" = cuda ] && echo cu || echo c)
# Optional settings (commas stand for spaces in the *_ARGS ones).
KP_KERNELS=${KP_KERNELS:-}
KP_CORRECT_KERNELS=${KP_CORRECT_KERNELS:-$KP_KERNELS}
export KP_CORRECT_ARGS=${KP_CORRECT_ARGS:-}
KP_INIT_ARGS=${KP_INIT_ARGS:-}
KP_EVAL_ARGS=${KP_EVAL_ARGS:-}
KP_DEMO_ARGS=${KP_DEMO_ARGS:-}
export KP_BACKEND
needs_gpu() { [ "$KP_BACKEND" = cuda ] && return 0; echo "== $1: needs a GPU, skipped on the $KP_BACKEND backend"; return 1; }
has() { case ",$STAGES," in *",$1,"*) return 0 ;; esac; return 1; }
# Pack what exists after every stage: a run cut short by its time limit
# still brings every result back in one file (the device tool returns at
# most 8 files).
pack() { # each packer its own temp file; the rename is atomic
  local tmp="$OUT/.results.$BASHPID.tgz"
  tar czf "$tmp" --exclude "./$MARK" -C "$R" . 2>/dev/null && mv -f "$tmp" "$OUT/results.tgz" || rm -f "$tmp"
}
stamp() { pack; echo "== $(date -u +%H:%M:%S) $*"; }
# And every KP_PACK_EVERY s (20) in the background: a run killed at the
# device's time limit still brings back what it had.
( while sleep "${KP_PACK_EVERY:-20}"; do pack; done ) >/dev/null 2>&1 </dev/null &
PACKER=$!
# On exit, a signal's too (timeout's TERM): stop the packer, leave the log
# pipe (tee may be gone with the signal, and a write into its pipe would
# end this trap), pack once more (results finished since the packer's last
# round are lost otherwise: a run once lost eight finished correctness
# results that way), then let tee finish writing log.txt.
trap 'kill $PACKER 2>/dev/null; exec >/dev/null 2>&1; pack; wait $TEE 2>/dev/null' EXIT

stamp "env"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  # A copy of a working tree can carry a .git whose HEAD is not what the
  # tree holds (the device tool's copies: an env.txt once named the
  # an older commit). Without KP_COMMIT, say when the tree differs
  # from HEAD (changed tracked files, or files git does not ignore and
  # HEAD lacks: a later commit's new kernels), so the record never names a
  # commit that did not run.
  if [ -n "${KP_COMMIT:-}" ]; then
    echo "commit: $KP_COMMIT"
  else
    head=$(git rev-parse HEAD 2>/dev/null || echo unknown)
    changed=$(git status --porcelain 2>/dev/null | wc -l)
    if [ "$head" != unknown ] && [ "$changed" -gt 0 ]; then
      echo "commit: $head plus $changed changed or new files (not this commit; pass KP_COMMIT)"
    else
      echo "commit: $head"
    fi
  fi
  echo "backend: $KP_BACKEND"
  # What narrows the correct stage's shapes (its summary heading says so).
  [ -n "$KP_CORRECT_ARGS" ] && echo "correct args: ${KP_CORRECT_ARGS//,/ }"
  [ -n "$KP_INIT_ARGS" ] && echo "init args: ${KP_INIT_ARGS//,/ }"
  [ -n "${KP_TORCH_SHAPES:-}" ] && echo "torch shapes: ${KP_TORCH_SHAPES//,/ }"
  if [ "$KP_BACKEND" = cuda ]; then
    nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv
    nvcc --version | tail -1
    echo "cores: $(nproc) (this run's affinity)"
  else
    grep -m1 'model name' /proc/cpuinfo; echo "cores: $(nproc)"
  fi
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>/dev/null
} | tee "$R/env.txt"

stage_build() {
  stamp "build"
  if ! { cmake -S . -B "$B" $(command -v ninja >/dev/null && echo -G Ninja) -DCMAKE_BUILD_TYPE=Release -DKP_WERROR=ON \
      >"$R/build.log" 2>&1 && cmake --build "$B" -j "$(nproc)" >>"$R/build.log" 2>&1; }; then
    tail -50 "$R/build.log"
    echo "BUILD FAILED: the later stages would run a missing or stale kproof; stopping"
    pack
    exit 1
  fi
  tail -3 "$R/build.log"
}

stage_device() {
  needs_gpu device || return 0
  stamp "device backend test"
  timeout 300 bash tests/gpu/run_dev_backend_test.sh --no-calibrate >"$R/device-test.txt" 2>&1
  echo "device test exit $?"; tail -25 "$R/device-test.txt"
}

stage_calibrate() {
  stamp "calibrate"
  timeout 300 "$K" calibrate --backend "$KP_BACKEND" --force | tee "$R/calibrate.txt"
}

# Kernel files picked by KP_KERNELS (regex on the path), one per line.
kernel_files() {
  local re=${1:-}
  for f in kernels/*/"$KP_BACKEND"/*."$EXT"; do
    [ -n "$re" ] && { echo "$f" | grep -qE "$re" || continue; }
    echo "$f"
  done
}
# The op family of a kernel file: kernels/<family>/<backend>/<file>.
family_of() { basename "$(dirname "$(dirname "$1")")"; }
# One eval of kernel file $1 into $2/<family>-<base>.{json,err}, extra args after.
eval_kernel() {
  local f=$1 dir=$2; shift 2
  local fam base dt extra=""
  fam=$(family_of "$f")
  base=$(basename "$f"); base=${base%.*}
  dt=${base%%-*}
  case "$base" in *cublas*) extra="--allow-library" ;; esac
  timeout 600 "$K" eval "$f" --op "$fam" --dtype "$dt" --backend "$KP_BACKEND" $extra --json "$@" \
    >"$dir/$fam-$base.json" 2>"$dir/$fam-$base.err"
  echo "$fam/$base: exit $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["verdict"], d.get("check",""), round(d.get("wall_s",0),1), "s", d.get("detail","")[:160])' "$dir/$fam-$base.json" 2>/dev/null || tail -2 "$dir/$fam-$base.err")"
}
export -f eval_kernel family_of
export K EXT

# What a newcomer gets: `kproof init OP` for every op and dtype, written
# out and evaluated as a user would (every shape set, rigorous, timed at the
# canonical shapes for KP_INIT_BUDGET seconds each, default 2; KP_INIT_ARGS
# adds eval arguments, commas for spaces).
stage_init() {
  stamp "init"
  mkdir -p "$R/init"
  local op fam dt src
  for op in $("$K" list 2>/dev/null | awk '/^[a-z]+_(f32|bf16) / {print $1}'); do
    fam=${op%_*} dt=${op##*_}
    # laid out like kernels/ so eval_kernel reads family and dtype from the path
    src=$R/init/src/$fam/$KP_BACKEND/$dt-01-naive.$EXT
    mkdir -p "$(dirname "$src")"
    "$K" init "$fam" --dtype "$dt" --backend "$KP_BACKEND" >"$src" || { echo "$op: kproof init failed"; continue; }
    eval_kernel "$src" "$R/init" --time-budget "${KP_INIT_BUDGET:-2}" ${KP_INIT_ARGS//,/ }
    pack
  done
}

# Correctness of every project kernel on every shape of its op, no timing.
stage_correct() {
  stamp "correct"
  mkdir -p "$R/correct"
  # KP_JOBS evaluations at once: each holds the float64 references of the
  # largest shapes in memory; 9 at once on a 128 GiB machine had one killed
  # (exit 137) once.
  kernel_files "$KP_CORRECT_KERNELS" | xargs -P "${KP_JOBS:-4}" -I{} bash -c 'eval_kernel "$1" "$2" --correctness ${KP_CORRECT_ARGS//,/ }' _ {} "$R/correct"
}

# Every project CUDA kernel, rigorous, every shape of its op.
stage_kernels() {
  stamp "kernels"
  mkdir -p "$R/kernels"
  local fam budget
  for f in $(kernel_files "$KP_KERNELS"); do
    # KP_BUDGET_<family> (e.g. KP_BUDGET_sum=10) overrides KP_BUDGET for
    # one op: a shape whose samples are a few microseconds needs more of
    # them to settle than one of a hundred.
    fam=$(family_of "$f")
    budget=KP_BUDGET_$fam
    budget=${!budget:-${KP_BUDGET:-3}}
    echo "$fam/$(basename "${f%.*}"): timing budget $budget s a shape"
    # KP_EVAL_ARGS: extra eval arguments, commas for spaces
    # (e.g. --shape-set,canonical,--dist,normal).
    eval_kernel "$f" "$R/kernels" --time-budget "$budget" ${KP_EVAL_ARGS//,/ }
    pack
  done
}

stage_exploits() {
  stamp "exploits (demo matrix)"
  timeout "${KP_DEMO_TIMEOUT:-900}" "$K" demo --backend "$KP_BACKEND" ${KP_DEMO_ARGS//,/ } --json "$R/demo.json" --md "$R/demo.md" 2>"$R/demo.err"
  echo "demo exit $?"; tail -5 "$R/demo.err"
}

stage_torch() {
  needs_gpu torch || return 0
  stamp "torch baselines"
  PYTHONUNBUFFERED=1 timeout "${KP_TORCH_TIMEOUT:-900}" python3 bench/torch_baselines.py --out "$R/torch.json" \
    --kproof "$K" ${KP_TORCH_OPS:+--ops "$KP_TORCH_OPS"} ${KP_TORCH_DTYPES:+--dtypes "$KP_TORCH_DTYPES"} --budget "${KP_TORCH_BUDGET:-3}" \
    ${KP_TORCH_KERNELS:+--kernels} $(for t in ${KP_TORCH_SHAPES:+${KP_TORCH_SHAPES//,/ }}; do printf -- '--shape %s ' "$t"; done) >"$R/torch.log" 2>&1
  echo "torch exit $?"; tail -3 "$R/torch.log"
}

stage_dobench() {
  needs_gpu dobench || return 0
  stamp "dobench"
  # An independent measurement of cuBLAS SGEMM (TF32 off) for the 3% check.
  timeout 300 python3 - >"$R/do_bench.json" 2>"$R/do_bench.err" <<'PY'
import json, torch, triton
torch.backends.cuda.matmul.allow_tf32 = False
rows = []
for n in (4096, 8192):
    a = torch.randn(n, n, device="cuda"); b = torch.randn(n, n, device="cuda")
    ms = triton.testing.do_bench(lambda: torch.mm(a, b), warmup=100, rep=1000, return_mode="median")
    rows.append({"op": "matmul_f32", "shape": [n, n, n], "median_s": ms * 1e-3, "tool": "triton.testing.do_bench"})
print(json.dumps(rows))
PY
  cat "$R/do_bench.json"
}

# Reproducibility: one PASS kernel in 5 fresh processes.
stage_repro() {
  stamp "repro"
  mkdir -p "$R/repro"
  f=${KP_REPRO_FILE:-$(ls kernels/softmax/"$KP_BACKEND"/f32-*."$EXT" | sort | tail -1)}
  local shape=${KP_REPRO_SHAPE:-$([ "$KP_BACKEND" = cuda ] && echo 8192x8192 || echo 257x1000)}
  for i in 1 2 3 4 5; do
    timeout 300 "$K" eval "$f" --op softmax --backend "$KP_BACKEND" --shape "$shape" --no-baseline \
      --time-budget "${KP_REPRO_BUDGET:-5}" --target "${KP_REPRO_TARGET:-0.5}" --json >"$R/repro/run$i.json" 2>/dev/null
  done
  python3 - "$R/repro" <<'PY' | tee "$R/repro/summary.txt"
import json, sys, glob
meds = []
for p in sorted(glob.glob(sys.argv[1] + "/run*.json")):
    try:
        d = json.load(open(p)); t = d["shapes"][0]["timing"]; meds.append(t["median_s"])
    except Exception as e:
        print(p, "unreadable", e)
if meds:
    lo, hi = min(meds), max(meds)
    print("medians_us", [round(m * 1e6, 2) for m in meds], "spread_pct", round(100 * (hi - lo) / lo, 3))
PY
}

# What device-work tracing and the sandbox cost: the best kernels at their
# canonical shapes, each timed traced (sandboxed, the default), --unaudited
# and --no-sandbox in turn (KP_TRACE_REPS rounds, default 2), no baselines;
# tracecost/summary.{md,json} compares the medians.
stage_tracecost() {
  needs_gpu tracecost || return 0
  stamp "tracecost"
  local files f rep mode
  files=${KP_TRACE_KERNELS:-$(ls kernels/layernorm/cuda/bf16-24-*.cu kernels/layernorm/cuda/f32-17-*.cu kernels/softmax/cuda/f32-10-*.cu kernels/softmax/cuda/bf16-14-*.cu kernels/sum/cuda/f32-05-*.cu 2>/dev/null)}
  for f in $files; do
    for rep in $(seq 1 "${KP_TRACE_REPS:-2}"); do
      # The order turns each round, so drift during a round does not
      # always favour the same mode.
      local modes=(traced unaudited unsandboxed) i
      for i in 0 1 2; do
        mode=${modes[$(( (i + rep) % 3 ))]}
        mkdir -p "$R/tracecost/$mode-$rep"
        eval_kernel "$f" "$R/tracecost/$mode-$rep" --shape-set canonical --no-baseline \
          --time-budget "${KP_TRACE_BUDGET:-2}" $(case $mode in unaudited) echo --unaudited ;; unsandboxed) echo --no-sandbox ;; esac)
      done
    done
    pack
  done
  python3 scripts/tracecost.py "$R/tracecost" | tee "$R/tracecost/summary.md"
}

for st in ${STAGES//,/ }; do "stage_$st"; done

stamp "summary"
python3 scripts/summarize.py "$R" >"$OUT/summary.md" 2>"$R/summarize.err" || tail -5 "$R/summarize.err"
stamp "done"
tail -60 "$OUT/summary.md"
