#!/usr/bin/env bash
# cli_test.sh: the kproof command as a user meets it (host backend).
# Usage: cli_test.sh BUILD_DIR SOURCE_DIR
set -u
B=$1
S=$2
K="$B/kproof"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { # check NAME CONDITION...
    local name=$1
    shift
    if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}
has() { grep -q -- "$1" "$2"; }
lines() { [ "$(wc -l <"$2")" -le "$1" ]; }
fast="--time-budget 3 --target 10 --quiet" # correctness is what these check; a shared CI core is noisy

# The five-minute tour: init, eval, read the verdict.
"$K" init softmax --backend host >"$T/s.c"
check "init writes a candidate" has "kp_softmax_f32" "$T/s.c"
"$K" eval "$T/s.c" --op softmax $fast >"$T/out" 2>"$T/err"
rc=$?
# A correct kernel: PASS, or NOISY where the shared machine kept kproof
# from judging it (exit 4, as every test of a correct kernel takes it).
check "init'd softmax passes (exit 0, or 4 NOISY)" \
    [ $rc -eq 0 -o \( $rc -eq 4 -a "$(grep -c '^kproof NOISY' "$T/out")" -gt 0 \) ]
[ $rc -eq 0 ] || { echo "     exit $rc: $(head -c 300 "$T/out")"; tail -3 "$T/err" | sed 's/^/     /'; }
check "table says PASS (or NOISY)" grep -qE "^kproof (PASS|NOISY)" "$T/out"
check "table gives a median with its interval" grep -qE '[0-9.]+ (ns|us|ms|s) \[[0-9.]+, [0-9.]+\]' "$T/out"

# (the timed shapes and the drawn ones, which are checked and not timed:
# the run above checked every shape; the JSON's per-shape bookkeeping is
# asserted on these)
"$K" eval "$T/s.c" --op softmax $fast --shape-set canonical,drawn --json >"$T/j" 2>"$T/err"
check "--json parses" python3 -m json.tool "$T/j" >/dev/null
check "--json has the schema" has '"schema": 1' "$T/j"
check "--json says how long the device lock was held" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
l = d["device_lock"]
assert l["held_s"] > 0 and l["wait_s"] >= 0 and l["held_s"] <= d["wall_s"], l
t = [s["timing"] for s in d["shapes"] if s.get("timing")]
assert t and all("host_bound_samples" in x for x in t), t
# The held seconds by phase add up to the held seconds; each shape s seconds
# by kind of work add up to its wall time, and its phases too.
hp = l["held_phase_s"]
assert set(hp) == {"build", "start", "correctness", "audit", "timing"}, hp
assert all(v >= 0 for v in hp.values()) and abs(sum(hp.values()) - l["held_s"]) < 1e-3, hp
assert hp["correctness"] > 0 and hp["timing"] > 0, hp
for s in d["shapes"]:
    w, p = s["work_s"], s["phase_s"]
    assert set(w) == {"generate", "setup", "calls", "fetch", "check", "account", "floor", "other"}, w
    assert all(v >= 0 for v in w.values()) and abs(sum(w.values()) - s["wall_s"]) < 0.01, (s["shape_text"], w)
    assert abs(sum(p.values()) - s["wall_s"]) < 0.01, (s["shape_text"], p)
    assert 0 <= s["lock_held_s"] <= s["wall_s"] + 1e-3, s
    assert w["calls"] > 0 and w["check"] > 0, (s["shape_text"], w)
timed = [s for s in d["shapes"] if s.get("timing")]
assert timed and len(timed) < len(d["shapes"]), [s["shape_text"] for s in d["shapes"]]
assert all(s["phase_s"]["timing"] > 0 and s["work_s"]["floor"] > 0 for s in timed), timed[0]["work_s"]' "$T/j"
# (on the timed shapes alone)
"$K" eval "$T/s.c" --op softmax $fast --shape-set canonical --md >"$T/md" 2>"$T/err"
check "--md is a table" has "| " "$T/md"

# A candidate that writes nothing: not PASS, and says so.
"$K" eval "$S/tests/candidates/softmax_unwritten.c" --op softmax $fast --no-baseline >"$T/out" 2>"$T/err"
rc=$?
check "unwritten output: exit 1 (WRONG)" [ $rc -eq 1 ]
check "unwritten output: says never written" has "never written" "$T/out"

# Bad input: one clear line and a non-zero exit.
"$K" eval "$T/nope.c" --op softmax >"$T/out" 2>"$T/err"
rc=$?
check "missing file: exit 64" [ $rc -eq 64 ]
check "missing file: one line naming it" lines 1 "$T/err"
check "missing file: message" has "nope.c" "$T/err"
"$K" eval "$T/s.c" --op softmaxx >"$T/out" 2>"$T/err"
rc=$?
check "unknown op: exit 64" [ $rc -eq 64 ]
check "unknown op: one line" lines 1 "$T/err"
"$K" eval "$T/s.c" --op softmax --shape 12xq >"$T/out" 2>"$T/err"
rc=$?
check "malformed shape: exit 64" [ $rc -eq 64 ]
check "malformed shape: one line" lines 1 "$T/err"
"$K" eval "$T/s.c" --op softmax --shape 0x5 >"$T/out" 2>"$T/err"
check "zero dim: exit 64" [ $? -eq 64 ]
"$K" eval "$S/tests/candidates/softmax_nosym.c" --op softmax $fast >"$T/out" 2>"$T/err"
rc=$?
check "missing entry point: exit 3 (ERROR)" [ $rc -eq 3 ]
check "missing entry point: names it" has "kp_softmax_f32" "$T/out"
"$K" eval "$S/tests/candidates/softmax_syntax.c" --op softmax $fast >"$T/out" 2>"$T/err"
rc=$?
check "does not compile: exit 3 (ERROR)" [ $rc -eq 3 ]
check "does not compile: compiler message shown" has "error" "$T/out"
"$K" frobnicate >"$T/out" 2>"$T/err"
check "unknown command: exit 64" [ $? -eq 64 ]
"$K" help eval >"$T/out" 2>&1
check "help eval documents exit codes" has "Exit status" "$T/out"
"$K" list >"$T/out" 2>&1
check "list names every op" has "layernorm_bf16" "$T/out"
"$K" spec matmul --dtype bf16 >"$T/out" 2>&1
check "spec shows the prototype" has "kp_matmul_bf16" "$T/out"
# The op table as JSON: what scripts read instead of a list of their own.
"$K" list --json >"$T/ops.json" 2>&1
check "list --json: every op of the table, with its benchmark shapes and bytes" python3 - "$T/ops.json" "$K" <<'PY'
import json, subprocess, sys
ops = json.load(open(sys.argv[1]))["ops"]
table = subprocess.run([sys.argv[2], "list"], capture_output=True, text=True).stdout.split("\n")[1:]
assert [o["name"] for o in ops] == [l.split()[0] for l in table if l.strip()], ops
for o in ops:
    assert o["name"] == o["family"] + "_" + o["dtype"] and o["entry"] == "kp_" + o["name"], o
    assert o["canonical"] and all(c["shape"] and c["min_bytes"] > 0 and c["flops"] > 0 for c in o["canonical"]), o
PY
"$K" list --frob >/dev/null 2>&1
check "list with an unknown argument: exit 64" [ $? -eq 64 ]
# Every op has a torch baseline (kernels/<op>/torch_baseline.py), and the
# torch script's plan, read from the registry, times every op's
# benchmark shapes in every dtype (no torch needed for the plan).
python3 "$S/bench/torch_baselines.py" --plan --kproof "$K" >"$T/plan" 2>&1
check "torch baselines: a plan row per op, dtype and benchmark shape" python3 - "$T/ops.json" "$T/plan" <<'PY'
import json, sys
ops = json.load(open(sys.argv[1]))["ops"]
plan = [json.loads(l) for l in open(sys.argv[2])]
want = sorted((o["family"], o["dtype"], c["shape"], c["min_bytes"]) for o in ops for c in o["canonical"])
got = sorted((r["op"], r["dtype"], r["shape"], r["min_bytes"]) for r in plan)
assert got == want, (got, want)
PY
# A numbered kernel whose header says "kproof-best: no" is never the
# project's best: the baseline is the highest number without it.
mkdir -p "$T/root/kernels/sum/host" "$T/root/include"
cp -r "$S/include/kproof" "$T/root/include/"
cp "$S/kernels/sum/host/f32-01-naive.c" "$S/kernels/sum/host/f32-02-tree.c" "$T/root/kernels/sum/host/"
{ echo "/* a slower step: kproof-best: no */"; cat "$S/kernels/sum/host/f32-01-naive.c"; } >"$T/root/kernels/sum/host/f32-03-slower.c"
cp "$S/kernels/sum/host/f32-01-naive.c" "$T/cand.c"
KPROOF_ROOT="$T/root" "$K" eval "$T/cand.c" --op sum --shape 4099 $fast --json >"$T/best.json" 2>"$T/err"
check "kproof-best: no is skipped for the best baseline" has '"name": "f32-02-tree"' "$T/best.json"
# ... however long the header before the marker (the real ones reach 3 KB).
{ echo "/* a slower step with a long story:"; for i in $(seq 200); do echo " * measured line $i of the header"; done
  echo " * kproof-best: no */"; cat "$S/kernels/sum/host/f32-01-naive.c"; } >"$T/root/kernels/sum/host/f32-04-long.c"
KPROOF_ROOT="$T/root" "$K" eval "$T/cand.c" --op sum --shape 4099 $fast --json >"$T/best.json" 2>"$T/err"
check "kproof-best: no after 6 KB of header is skipped too" has '"name": "f32-02-tree"' "$T/best.json"
# An exploit's header fields count however long its header (the demo once
# read 4 KB of it and dropped the row without a word).
mkdir -p "$T/xroot/exploits/host"
cp -r "$S/include" "$S/kernels" "$T/xroot/"
{ head -1 "$S/exploits/host/stale_output.c"; for i in $(seq 200); do echo " * a longer story, line $i"; done
  tail -n +2 "$S/exploits/host/stale_output.c"; } >"$T/xroot/exploits/host/stale_output.c"
KPROOF_ROOT="$T/xroot" "$K" demo --backend host --only stale --json "$T/xdemo.json" >"$T/out" 2>"$T/err"
check "demo: an exploit with a 5 KB header is a row" has '"name": "stale-output"' "$T/xdemo.json"
check "demo: each cell says where its held seconds went" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
cells = [c for r in d["rows"] for c in r["cells"] if c["verdict"]]
assert cells
for c in cells:
    l = c["device_lock"]
    assert abs(sum(l["held_phase_s"].values()) - l["held_s"]) < 0.01, l' "$T/xdemo.json"
check "demo: the JSON counts its evaluations and its wall time" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
cells = [c for r in d["rows"] for c in r["cells"] if c["verdict"]]
assert d["evaluations"] == len(cells) and d["wall_s"] >= max(c["wall_s"] for c in cells), d' "$T/xdemo.json"
# A baseline over twice as slow as another (the naive matmul against the
# blocked one) stops being called once each has three samples: the blocked
# one is still the strongest, the naive one is named as retired.
{ echo "/* the naive matmul, under another name */"; "$K" init matmul --dtype f32 --backend host; } >"$T/mmc.c"
"$K" eval "$T/mmc.c" --op matmul --dtype f32 --backend host --shape 256x256x256 --time-budget 0.3 --target 10 --quiet \
    --json >"$T/mm.json" 2>"$T/err"
check "a slow baseline is retired, the strongest kept" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["shapes"][0]
b = s["baseline"]
assert s["verdict"] in ("PASS", "NOISY") and b["name"] == "f32-02-blocked" and b["others_retired"] == "f32-01-naive", s' "$T/mm.json"
# ... and found among any number of other files (a folder of kernels grows
# with generated lab variants; the listing once stopped at 64 names).
for i in $(seq 1500); do : >"$T/root/kernels/sum/host/notes-$i.txt"; done
KPROOF_ROOT="$T/root" "$K" eval "$T/cand.c" --op sum --shape 4099 $fast --json >"$T/best.json" 2>"$T/err"
check "the best baseline is found among 1500 other files" has '"name": "f32-02-tree"' "$T/best.json"
rm -f "$T"/root/kernels/sum/host/notes-*.txt

# The one-input flaw at a matmul size the parent only samples: the worker
# computes the reference itself (as the Sakana harness did), so the
# harness-memory exploit finds it there and is believed; rigorous: WRONG.
"$K" eval "$S/exploits/host/harness_memory.c" --op matmul --shape 1024x1024x1025 --flaw one-input --no-baseline \
    --time-budget 0.5 --target 20 --quiet --json >"$T/hm.json" 2>"$T/err"
check "one-input at a sampled size: harness-memory believed" has '"verdict": "PASS"' "$T/hm.json"

# Past 4M output elements the timed calls' checks sample chunks whose rows
# are generated and referenced on demand (lazy sets): a candidate that
# turns wrong only after its correctness phase is caught there, and an
# honest one stays correct.
"$K" eval "$S/tests/candidates/softmax_late_zero.c" --op softmax --shape 4099x1025 --no-baseline \
    --time-budget 1 --target 20 --quiet >"$T/late" 2>"$T/err"
rc=$?
check "late-wrong candidate: WRONG (exit 1)" [ $rc -eq 1 ]
check "late-wrong candidate: caught in a timed call by a sampled check" \
    grep -q "a timed call" "$T/late"
check "late-wrong candidate: sampled chunks" has "sampled 64 x 2048" "$T/late"
"$K" eval "$S/kernels/softmax/host/f32-02-fused.c" --op softmax --shape 4099x1025 --no-baseline \
    --time-budget 1 --target 20 --quiet --json >"$T/lazy.json" 2>"$T/err"
check "honest kernel at a lazily checked size: correct" grep -qE '"verdict": "(PASS|NOISY)"' "$T/lazy.json"

# What a careless user or agent types: each a clear
# line and the right exit status, never a silent different run.
q="--correctness --shape 3x5 --quiet --no-baseline"
usage() { # usage NAME MESSAGE-PART ARGS...: exit 64 and the message
    local name=$1 msg=$2; shift 2
    "$K" "$@" >"$T/u.out" 2>"$T/u.err"
    local rc=$?
    check "$name: exit 64" [ $rc -eq 64 ]
    check "$name: says '$msg'" has "$msg" "$T/u.err"
}
usage "a directory as the candidate" "not a regular file" eval "$T" --op softmax $q
usage "--seed 0" "--seed expects 1" eval "$T/s.c" --op softmax $q --seed 0
usage "--seed with a space and a sign" "decimal integer" eval "$T/s.c" --op softmax $q --seed " -1"
usage "--seed in octal" "decimal integer" eval "$T/s.c" --op softmax $q --seed 0x10
usage "--sets 1.5" "decimal integer" eval "$T/s.c" --op softmax $q --sets 1.5
usage "--op twice" "--op given twice" eval "$T/s.c" --op softmax --op sum $q
usage "--json and --md" "not both" eval "$T/s.c" --op softmax $q --json --md
usage "--flaw with --protocol" "--protocol or --flaw" eval "$T/s.c" --op softmax $q --flaw warm --protocol rigorous
usage "--shape with --shape-set" "--shape or --shape-set" eval "$T/s.c" --op softmax $q --shape-set edge
usage "a .c file on the cuda backend" "is a host candidate" eval "$T/s.c" --op softmax $q --backend cuda
usage "demo --only matching nothing" "no row matches --only" demo --backend host --only no-such-row
usage "demo --json without a value" "--json needs a value" demo --backend host --json
usage "demo --json into a missing folder" "cannot write --json" demo --backend host --only stale --json "$T/no/dir/x.json"
check "demo --json into a missing folder: said before any row ran" sh -c "! grep -q '\[demo\]' '$T/u.err'"
"$K" eval "$T/s.c" --op softmax $q --seed 12345 --json >"$T/seed.json" 2>/dev/null
check "--seed N is the run's seed" grep -q '"seed": "12345"' "$T/seed.json"
# The cache is the harness's, not the candidate's: a cache path that is a
# file is a harness failure (70), not a candidate that "does not compile".
: >"$T/cache-file"
KPROOF_CACHE="$T/cache-file" "$K" eval "$T/s.c" --op softmax $q --json >"$T/cf.json" 2>"$T/cf.err"
rc=$?
check "cache path is a file: exit 70" [ $rc -eq 70 ]
check "cache path is a file: check harness, says why" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "ERROR" and d["check"] == "harness", (d["verdict"], d["check"])
assert "cache directory" in d["detail"] and "Not a directory" in d["detail"], d["detail"]' "$T/cf.json"
# A .cu candidate where no GPU answers: 70, and the way out is named.
"$K" eval "$S/kernels/softmax/cuda/f32-01-naive.cu" --op softmax $q >"$T/u.out" 2>"$T/u.err"
rc=$?
if [ $rc -eq 70 ]; then # (a machine with a GPU runs it instead)
    check "no GPU: the message names the host backend" has "the host backend runs .c candidates" "$T/u.err"
fi
# init with the cpu alias finds the host starting point.
"$K" init softmax --backend cpu >"$T/cpu.c" 2>"$T/u.err"
rc=$?
check "init --backend cpu: exit 0 and a candidate" sh -c "[ $rc -eq 0 ] && grep -q kp_softmax_f32 '$T/cpu.c'"
# Standard streams closed: the worker's pipes must not land on fds 0-2.
"$K" eval "$T/s.c" --op softmax $q --json <&- >"$T/closed.json" 2>&-
rc=$?
check "stdin and stderr closed: still PASS (exit 0)" [ $rc -eq 0 ]
check "stdin and stderr closed: the JSON says PASS" grep -q '"verdict": "PASS"' "$T/closed.json"
# A result that cannot be written is not a success.
if [ -w /dev/full ]; then
    "$K" eval "$T/s.c" --op softmax $q --json >/dev/full 2>"$T/u.err"
    rc=$?
    check "stdout full: exit 70" [ $rc -eq 70 ]
    check "stdout full: says so" has "cannot write the result" "$T/u.err"
    "$K" list >/dev/full 2>/dev/null
    rc=$?
    check "list into a full stdout: exit 70" [ $rc -eq 70 ]
fi

# An interrupted eval leaves nothing behind: not its workers (each runs in
# a process group of its own, which a terminal's Ctrl-C never reaches), not
# their kproof-w-* folders, not a compiler or its half-made output; and it
# ends as the signal says (128 + its number). Each run gets a private
# TMPDIR, so the processes and folders looked for are this run's alone.
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$s" ] && [ "${s#Z}" = "$s" ]; }
gone() { # gone PATTERN: no process's command line matches it within 5 s (SIGKILL is asynchronous)
    local i p
    for i in $(seq 50); do
        p=$(pgrep -f "$1")
        [ -z "$p" ] && return 0
        sleep 0.1
    done
    echo "     still running: $(ps -o pid=,args= -p "$(echo $p | tr ' ' ',')")"
    kill -9 $p 2>/dev/null # ours: named by the private folder
    return 1
}
died() { # died PID: it is not running within 5 s
    local i
    [ -n "$1" ] || return 1
    for i in $(seq 50); do
        alive "$1" || return 0
        sleep 0.1
    done
    kill -9 "$1" # ours: the pid our fake compiler wrote
    return 1
}
no_folders() { [ -z "$(ls -d "$1"/kproof-w-* 2>/dev/null)" ]; }
wait_worker() { # wait_worker DIR: until the candidate's worker runs (build included), then inside its call
    local i
    for i in $(seq 300); do
        if pgrep -f "softmax_f32 $1/kproof-w-" >/dev/null; then sleep 0.5; return 0; fi
        sleep 0.1
    done
    return 1
}
spin() { # spin DIR: an eval of a candidate that never returns, in the background, TMPDIR=DIR
    TMPDIR=$1 "$K" eval "$S/tests/candidates/softmax_hang.c" --op softmax --no-baseline --timeout 60 \
        --quiet >"$T/int.out" 2>"$T/int.err" &
}
interrupt() { # interrupt SIGNAL STATUS: to the eval's process group, as a terminal sends Ctrl-C
    local sig=$1 want=$2 d pid rc
    d=$(mktemp -d /tmp/kpi.XXXXXX)
    set -m # its own process group, and SIGINT not ignored as in a script's background job
    spin "$d"
    pid=$!
    set +m
    check "SIG$sig: the candidate's worker was running" wait_worker "$d"
    kill -"$sig" -- -"$pid"
    wait "$pid"
    rc=$?
    check "SIG$sig: the eval exits $want" [ $rc -eq "$want" ]
    check "SIG$sig: no worker of it survives" gone "$d/kproof-w-"
    check "SIG$sig: no kproof-w-* folder is left" no_folders "$d"
    rm -rf "$d"
}
interrupt TERM 143
interrupt INT 130
interrupt HUP 129
# SIGTERM to kproof alone, as `timeout` sends it.
d=$(mktemp -d /tmp/kpi.XXXXXX)
TMPDIR=$d timeout 4 "$K" eval "$S/tests/candidates/softmax_hang.c" --op softmax --no-baseline --timeout 60 \
    --quiet >"$T/int.out" 2>"$T/int.err"
rc=$?
check "timeout: timed out (124)" [ $rc -eq 124 ]
check "timeout: no worker survives" gone "$d/kproof-w-"
check "timeout: no kproof-w-* folder is left" no_folders "$d"
rm -rf "$d"
# SIGKILL runs no handler: the worker still dies with its parent (Linux).
if [ "$(uname -s)" = Linux ]; then
    d=$(mktemp -d /tmp/kpi.XXXXXX)
    spin "$d"
    pid=$!
    check "SIGKILL: the candidate's worker was running" wait_worker "$d"
    kill -KILL "$pid"
    wait "$pid"
    check "SIGKILL: no worker survives its parent" gone "$d/kproof-w-"
    rm -rf "$d"
fi
# A candidate that leaves files (and a folder) in its private folder: the
# folder goes all the same when its worker stops.
d=$(mktemp -d /tmp/kpi.XXXXXX)
TMPDIR=$d "$K" eval "$S/tests/candidates/softmax_tmpfile.c" --op softmax --shape 7x3 --correctness --quiet \
    >"$T/int.out" 2>"$T/int.err"
check "files left in the private folder: PASS" [ $? -eq 0 ]
check "files left in the private folder: the folder is removed" no_folders "$d"
rm -rf "$d"
# Interrupted while compiling: a compiler that makes its output and its
# temporaries (a file, and a folder with a file in it, in its TMPDIR, as
# cc's ccXXXXXX.s) and then waits, with a child of its own, is ended,
# group and all, and its folder (output and temporaries, not yet moved
# into the cache) is removed. The child is found by its unique command
# line: inside the compiler's pid namespace its pid means nothing out here.
d=$(mktemp -d /tmp/kpi.XXXXXX)
nap=$((3000 + RANDOM % 1000))
printf '%s\n' '#!/bin/sh' \
    '[ "$1" = --version ] && { echo "slowcc 1.0"; exit 0; }' \
    'out=' \
    'while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done' \
    ': >"$TMPDIR/ccTEMP.s"' \
    'mkdir "$TMPDIR/ccdir" && : >"$TMPDIR/ccdir/part.o"' \
    ': >"$out"' \
    "sleep $nap &" \
    'wait' >"$d/slowcc"
chmod +x "$d/slowcc"
set -m
CC="$d/slowcc" KPROOF_CACHE="$d/cache" TMPDIR=$d "$K" eval "$S/tests/candidates/softmax_hang.c" --op softmax \
    --no-baseline --quiet >"$T/int.out" 2>"$T/int.err" &
pid=$!
set +m
napper=""
for i in $(seq 300); do napper=$(pgrep -f "^sleep $nap\$"); [ -n "$napper" ] && break; sleep 0.1; done
check "build: the compiler was making its output" [ -n "$(ls "$d"/kproof-b-*/out.so 2>/dev/null)" ]
check "build: and had made its temporaries" [ -n "$(ls "$d"/kproof-b-*/ccdir/part.o 2>/dev/null)" ]
kill -TERM -- -"$pid"
wait "$pid"
rc=$?
check "build: the eval exits 143" [ $rc -eq 143 ]
check "build: no compiler survives" gone "$d/slowcc"
check "build: nor the compiler's child" died "$napper"
check "build: its folder is removed, temporaries and all" [ -z "$(ls -d "$d"/kproof-b-* "$d"/cache/*.tmp 2>/dev/null)" ]
rm -rf "$d"
# A demo's rows run in processes of their own (--jobs 2): SIGTERM to the
# demo alone ends them too, and each takes its workers and folders along.
d=$(mktemp -d /tmp/kpi.XXXXXX)
TMPDIR=$d "$K" demo --backend host --only hang --jobs 2 >"$T/demo.out" 2>&1 &
pid=$!
check "demo: the hang row's worker was running" wait_worker "$d"
rows=$(pgrep -P "$pid")
check "demo: a row process was running" [ -n "$rows" ]
kill -TERM "$pid"
wait "$pid"
rc=$?
check "demo: exits 143" [ $rc -eq 143 ]
for r in $rows; do check "demo: row process $r ends with it" died "$r"; done
check "demo: no worker survives" gone "$d/kproof-w-"
check "demo: no kproof-w-* folder is left" no_folders "$d"
rm -rf "$d"

exit $fail
