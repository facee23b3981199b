#!/usr/bin/env bash
# The one-command GPU script, run on the host backend: every stage's shell
# (variables, paths, packing, summary) is exercised in CI, so a typo in it
# cannot first show up on the GPU machine, where device time is scarce.
# (KP_EVAL_ARGS is left unset on purpose: an unset optional setting once
# stopped a whole GPU run.)
#   tests/gpu_check_test.sh BUILD_DIR [PART]
# PART: main (the stages' main run and what it packs) or more (KP_CORRECT_ARGS
# and a run cut short), each a test of its own in ctest; none, both.
set -uo pipefail
BUILD=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; echo "--- log"; cat "$T/out/log.txt" 2>/dev/null | tail -40; exit 1; }

PART=${2:-all}
part() { [ "$PART" = all ] || [ "$PART" = "$1" ]; }
case $PART in all | main | more) ;; *) echo "FAIL: unknown part $PART (main, more)"; exit 1 ;; esac
if part main; then
# An unknown stage is refused before anything runs.
OUT=$T/bad KP_RUN_DIR=$T/badrun BUILD=$BUILD KP_BACKEND=host bash scripts/gpu-check.sh calibrate,nonsense >"$T/bad.txt" 2>&1
[ $? -eq 64 ] || fail "an unknown stage should exit 64"
grep -q "unknown stage 'nonsense'" "$T/bad.txt" || fail "the unknown stage is not named"
[ -e "$T/badrun/calibrate.txt" ] && fail "a stage ran although the list had an unknown one"
# A build that fails stops the run with a non-zero status.
OUT=$T/bb KP_RUN_DIR=$T/bbrun BUILD=/proc/kproof-no-such-dir KP_BACKEND=host bash scripts/gpu-check.sh build,calibrate \
  >/dev/null 2>&1 && fail "a failed build should stop the run with a non-zero status"
[ -e "$T/bbrun/calibrate.txt" ] && fail "calibrate ran after a failed build"

# The run folder is emptied at the start, so what an earlier run left there
# is not packed as this run's result; but only a folder the script marked
# as its own, or an empty one. Each refusal exits 64 and deletes nothing.
REPO=$PWD
refused() { # why, then the command's environment words; the run must exit 64
  local why=$1; shift
  (env BUILD="$BUILD" KP_BACKEND=host "$@" bash "$REPO/scripts/gpu-check.sh" calibrate >"$T/refused.txt" 2>&1)
  [ $? -eq 64 ] || fail "a run folder that $why should be refused with 64 ($(cat "$T/refused.txt"))"
  grep -q "will not use" "$T/refused.txt" || fail "the refusal of a run folder that $why does not say why"
}
mkdir -p "$T/keep" && echo precious >"$T/keep/notes.txt"
refused "has files of its own" OUT="$T/o1" KP_RUN_DIR="$T/keep"
[ -f "$T/keep/notes.txt" ] || fail "a folder of someone else's files was emptied"
# even when marked: a folder above $OUT, and one above the working tree
mkdir -p "$T/up" && : >"$T/up/.gpu-check-run"
refused "holds \$OUT" OUT="$T/up/out" KP_RUN_DIR="$T/up"
[ -e "$T/up/.gpu-check-run" ] || fail "a run folder holding \$OUT was emptied"
mkdir -p "$T/tree/wt" && : >"$T/tree/.gpu-check-run" && echo x >"$T/tree/wt/sentinel"
(cd "$T/tree/wt" && refused "holds the working tree" OUT="$T/o2" KP_RUN_DIR="$T/tree")
[ -f "$T/tree/wt/sentinel" ] || fail "a run folder holding the working tree was emptied"
mkdir -p "$T/bld/b" && : >"$T/bld/.gpu-check-run" && echo x >"$T/bld/b/sentinel"
refused "holds the build" OUT="$T/o4" KP_RUN_DIR="$T/bld" BUILD="$T/bld/b"
[ -f "$T/bld/b/sentinel" ] || fail "a run folder holding the build was emptied"
grep -q "will not use" "$T/o4/log.txt" || fail "a refusal is not in \$OUT/log.txt"
echo x >"$T/plain-file"
refused "is a file" OUT="$T/o3" KP_RUN_DIR="$T/plain-file"
[ -f "$T/plain-file" ] || fail "a file named as the run folder was deleted"
# An earlier run's folder: its left-overs are gone from this run's results.
# The init stage evaluates its starting points at their canonical (timed)
# shapes (KP_INIT_ARGS): they are the project's naive kernels byte for
# byte (checked below), which it_host evaluates on every shape of their op.
mkdir -p "$T/run/kernels" && : >"$T/run/.gpu-check-run"
echo '{"verdict": "PASS"}' >"$T/run/kernels/left-over.json"
OUT=$T/out KP_RUN_DIR=$T/run BUILD=$BUILD KP_BACKEND=host \
  KP_KERNELS='sum/host/f32-02' KP_CORRECT_KERNELS='sum/host' KP_JOBS=2 \
  KP_BUDGET=1 KP_BUDGET_sum=0.7 KP_DEMO_ARGS=--only,stale_output \
  KP_REPRO_BUDGET=0.3 KP_REPRO_TARGET=20 KP_INIT_BUDGET=0.3 KP_INIT_ARGS=--shape-set,canonical \
  bash scripts/gpu-check.sh calibrate,init,correct,kernels,exploits,torch,dobench,repro >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] || fail "gpu-check.sh exited $rc"
grep -qE 'unbound variable|command not found|syntax error' "$T/out/log.txt" && fail "shell error in the log"
grep -q 'sum/f32-02-tree: timing budget 0.7 s a shape' "$T/out/log.txt" || fail "KP_BUDGET_sum did not set the sum kernel's budget"
[ -e "$T/run/.gpu-check-run" ] || fail "the run folder was not marked as one"
# $OUT holds only what the device tool can bring back.
n=$(find "$T/out" -type f | wc -l)
[ "$n" -le 8 ] || fail "$n files in \$OUT (the device tool returns 8)"
mkdir "$T/x" && tar xzf "$T/out/results.tgz" -C "$T/x" || fail "results.tgz unreadable"
[ -e "$T/x/kernels/left-over.json" ] && fail "results.tgz holds a file an earlier run left in the run folder"
[ -e "$T/x/.gpu-check-run" ] && fail "results.tgz holds the run folder's mark"
for f in env.txt calibrate.txt init/sum-f32-01-naive.json init/softmax-bf16-01-naive.json correct/sum-f32-01-naive.json correct/sum-f32-02-tree.json \
  kernels/sum-f32-02-tree.json demo.json demo.md repro/summary.txt; do
  [ -s "$T/x/$f" ] || fail "results.tgz lacks $f ($(cd "$T/x" && find . -type f | tr '\n' ' '))"
done
nops=$("$BUILD/kproof" list | awk '/^[a-z]+_(f32|bf16) / {n++} END {print n+0}')
python3 - "$T/x" "$nops" "$PWD" <<'PY' || fail "results are not what the stages should have written"
import json, sys
d, nops, root = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for name in ("correct/sum-f32-01-naive.json", "correct/sum-f32-02-tree.json"):
    r = json.load(open(f"{d}/{name}"))
    assert r["verdict"] == "PASS", (name, r["verdict"], r.get("detail"))
    assert all("timing" not in s or not s["timing"] for s in r["shapes"]), "correct stage timed something"
# every op's init starting point is correct as printed (timing may be NOISY on a shared CI machine)
import glob
inits = sorted(glob.glob(f"{d}/init/*.json"))
assert nops >= 7 and len(inits) == nops, (nops, inits)  # one per op that `kproof list` names
for name in inits:
    r = json.load(open(name))
    assert r["verdict"] in ("PASS", "NOISY"), (name, r["verdict"], r.get("detail"))
    # KP_INIT_ARGS reached the eval: the canonical shapes alone, the ones timed
    assert r["shapes"] and all(s.get("timing") for s in r["shapes"]), (name, [s["shape"] for s in r["shapes"]])
    fam, dt = name.rsplit("/", 1)[1].split("-")[:2]
    # what was evaluated is what `kproof init` printed: the project's naive kernel
    rel = f"{fam}/host/{dt}-01-naive.c"
    assert open(f"{d}/init/src/{rel}", "rb").read() == open(f"{root}/kernels/{rel}", "rb").read(), rel
assert "init args: --shape-set canonical" in open(f"{d}/env.txt").read(), "env.txt does not say KP_INIT_ARGS"
k = json.load(open(f"{d}/kernels/sum-f32-02-tree.json"))
assert k["verdict"] in ("PASS", "NOISY"), (k["verdict"], k.get("detail"))
assert any(s.get("timing") for s in k["shapes"]), "kernels stage timed nothing"
demo = json.load(open(f"{d}/demo.json"))
assert demo["complete"] and [r["name"] for r in demo["rows"]] == ["stale-output"], demo["rows"]
assert demo["rows"][0]["cells"][-1]["verdict"] == "WRONG", demo["rows"][0]["cells"][-1]
assert "medians_us" in open(f"{d}/repro/summary.txt").read()
PY
grep -q 'torch: needs a GPU, skipped' "$T/out/log.txt" || fail "the torch stage did not say it was skipped"
# The demo's progress into a file: one line per cell (7 modes of 1 row), no
# carriage returns, then the closing line.
[ "$(grep -cE '^\[demo\] +[1-7]/7  stale-output ' "$T/x/demo.err")" -eq 7 ] \
  || fail "demo progress in a file is not one line per cell: $(head -c 400 "$T/x/demo.err" | od -c | head -5)"
grep -q "$(printf '\r')" "$T/x/demo.err" && fail "demo progress in a file holds carriage returns"
grep -q '^\[demo\] 7 evaluations in ' "$T/x/demo.err" || fail "the demo's closing line is missing from its log"
[ -s "$T/out/summary.md" ] || fail "no summary.md"
bash scripts/collect-results.sh "$T/out/results.tgz" "$T/collected" >/dev/null || fail "collect-results.sh failed"
grep -q "Correctness of every project kernel" "$T/collected/summary.md" || fail "collected summary lacks the correctness table"
fi
if part more; then
# KP_CORRECT_ARGS reaches the correct stage's evaluations: exactly the
# shapes it names (the way to check older kernels on shapes added to an
# op after they were written).
cafail() { tail -20 "$T/ca/log.txt" 2>/dev/null; fail "$@"; } # fail shows the main run's log
OUT=$T/ca KP_RUN_DIR=$T/carun BUILD=$BUILD KP_BACKEND=host KP_CORRECT_KERNELS='sum/host/f32-02' \
  KP_CORRECT_ARGS=--shape,1000,--shape,4097 bash scripts/gpu-check.sh correct >/dev/null 2>&1 \
  || cafail "the correct stage with KP_CORRECT_ARGS exited $?"
grep -q '^correct args: --shape 1000 --shape 4097$' "$T/carun/env.txt" || cafail "env.txt does not say KP_CORRECT_ARGS"
grep -q 'on the shapes `--shape 1000 --shape 4097` picks' "$T/ca/summary.md" \
  || cafail "the summary's correctness heading claims every shape of the op"
python3 - "$T/carun/correct/sum-f32-02-tree.json" <<'PY' || cafail "KP_CORRECT_ARGS did not pick the shapes"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "PASS", (r["verdict"], r.get("detail"))
assert [s["shape"] for s in r["shapes"]] == [[1000], [4097]], [s["shape"] for s in r["shapes"]]
PY
# A run cut short by a TERM (timeout's, at the device's limit) still packs
# a result that finished after the packer's last round (its rounds are
# turned off here): the exit trap packs once more. It runs in a copy of
# the tree holding one quick kernel and one that sleeps half a second a
# call, so the TERM lands while the slow one is still being checked. One
# job at a time (02 before 98): run side by side, the two evaluations
# take turns on the device lock, and the slow one once finished first on
# a loaded CI machine.
mkdir -p "$T/tree/kernels/sum/host"
cp -r include scripts "$T/tree/"
cp kernels/sum/host/*.c "$T/tree/kernels/sum/host/" # 01 is the baseline eval builds
cat >"$T/tree/kernels/sum/host/f32-98-slow.c" <<'C'
/* A right sum that takes half a second a call (gpu_check_test.sh). */
#define _POSIX_C_SOURCE 199309L
#include <kproof/kernel.h>
#include <time.h>
KP_ENTRY int kp_sum_f32(const float *x, float *out, int64_t n) {
    struct timespec t = {0, 500000000L};
    nanosleep(&t, NULL);
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    out[0] = (float)s;
    return 0;
}
C
(cd "$T/tree" && OUT=$T/cut KP_RUN_DIR=$T/cutrun BUILD=$BUILD KP_BACKEND=host KP_PACK_EVERY=100000 KP_JOBS=1 \
  KP_CORRECT_KERNELS='sum/host/f32-(02|98)' exec setsid bash scripts/gpu-check.sh correct >/dev/null 2>&1) &
cut=$!
trap 'kill -TERM -- -"$cut" 2>/dev/null; rm -rf "$T"' EXIT
done_json=$T/cutrun/correct/sum-f32-02-tree.json
for _ in $(seq 1 600); do { [ -s "$done_json" ] || ! kill -0 "$cut" 2>/dev/null; } && break; sleep 0.2; done
[ -s "$done_json" ] || fail "the quick kernel's correctness did not finish ($(tail -2 "$T/cutrun/correct/sum-f32-02-tree.err" 2>/dev/null))"
[ -s "$T/cutrun/correct/sum-f32-98-slow.json" ] && fail "the slow kernel finished first: nothing left to cut"
kill -0 "$cut" 2>/dev/null || fail "gpu-check.sh ended before it could be cut short"
kill -TERM -- -"$cut"
wait "$cut"
mkdir "$T/cx" && tar xzf "$T/cut/results.tgz" -C "$T/cx" || fail "a run cut short left no readable results.tgz"
[ -s "$T/cx/correct/sum-f32-02-tree.json" ] || fail "a run cut short lost a result that had finished"
fi
echo "gpu-check.sh on the host backend, part $PART: every check passed"
