#!/usr/bin/env bash
# cli_outputs_test.sh: what kproof writes and where it keeps its temporary
# files (host backend): an output path never names an input, a previous
# run's result never stands in for this run's, a demo cut short gives no
# verdict to a cell that never ran, TMPDIR is one rule everywhere, and a
# device lock that cannot be opened runs nothing (eval, calibrate, demo,
# worth), nor is the host run in place of a GPU whose lock it is. About
# 15 s on two cores.
# Usage: cli_outputs_test.sh BUILD_DIR SOURCE_DIR
set -u
B=$1
S=$2
K="$B/kproof"
T=$(mktemp -d /tmp/kpo.XXXXXX) # short: the lock and worker folders of the runs below go here
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
fail=0
check() { # check NAME CONDITION...
    local name=$1
    shift
    if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}
has() { grep -qF -- "$1" "$2"; }
one_line() { [ "$(wc -l <"$1")" -eq 1 ]; }
# refused NAME CODE TEXT CMD...: exit CODE, one line on stderr saying TEXT.
refused() {
    local name=$1 code=$2 want=$3
    shift 3
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    check "$name: exit $code" [ $rc -eq "$code" ]
    check "$name: one line" one_line "$T/err"
    check "$name: says '$want'" has "$want" "$T/err"
    [ $rc -eq "$code" ] && one_line "$T/err" || sed 's/^/     /' "$T/err" | head -5
}
json() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
q=(--op softmax --shape 7x3 --correctness --quiet)
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
"$K" init softmax --backend host >"$T/s.c"
cp "$T/s.c" "$T/orig.c"

# ---- an output never replaces an input --------------------------------------------
refused "eval --out the candidate" 64 "is the candidate" "$K" eval "$T/s.c" "${q[@]}" --out "$T/s.c"
check "eval --out the candidate: the source is unchanged" cmp -s "$T/s.c" "$T/orig.c"
refused "eval --out the candidate by another path" 64 "names the same file as the candidate" \
    "$K" eval "$T/s.c" "${q[@]}" --out "$T/../$(basename "$T")/./s.c"
ln "$T/s.c" "$T/hard.c"
refused "eval --out a hard link to the candidate" 64 "names the same file" "$K" eval "$T/s.c" "${q[@]}" --out "$T/hard.c"
ln -s s.c "$T/link.c"
refused "eval --out a symbolic link to the candidate" 64 "names the same file" \
    "$K" eval "$T/s.c" "${q[@]}" --out "$T/link.c"
check "eval --out: the source is still unchanged" cmp -s "$T/s.c" "$T/orig.c"
"$K" eval "$T/s.c" "${q[@]}" --json --out "$T/r.json" >/dev/null 2>&1
check "eval --out another file: PASS" [ "$(json "$T/r.json" verdict)" = PASS ]
cp "$T/r.json" "$T/r0.json"
refused "report -o one of its results" 64 "names the same file as the result" "$K" report "$T/r.json" -o "$T/./r.json"
check "report -o one of its results: the result is unchanged" cmp -s "$T/r.json" "$T/r0.json"
row="$S/exploits/host/stale_output.c"
cp "$row" "$T/row.c"
refused "demo --json a row's source" 64 "source of row stale-output" \
    "$K" demo --backend host --only stale --json "$row"
check "demo --json a row's source: unchanged" cmp -s "$row" "$T/row.c"
refused "demo --md and --json one file" 64 "names the same file as the --json file" \
    "$K" demo --backend host --only stale --json "$T/d.json" --md "$T/../$(basename "$T")/d.json"
refused "demo --jobs 2.5" 64 "--jobs expects a non-negative decimal integer" "$K" demo --backend host --jobs 2.5
refused "demo --jobs 0" 64 "--jobs expects 1 to 16" "$K" demo --backend host --jobs 0

# ---- a previous run's result never stands in for this one's -------------------------
echo '{"verdict": "PASS", "stale": true}' >"$T/stale.json"
TMPDIR="$T/missing" "$K" eval "$T/s.c" "${q[@]}" --json --out "$T/stale.json" >/dev/null 2>&1
check "eval --out, the run fails (70): no previous file is left under its name" [ ! -e "$T/stale.json" ]
echo '{"verdict": "PASS", "stale": true}' >"$T/stale.json"
set -m # its own process group, and SIGINT not ignored as in a script's background job
"$K" eval "$S/tests/candidates/softmax_hang.c" --op softmax --no-baseline --timeout 60 --quiet --json \
    --out "$T/stale.json" >/dev/null 2>&1 &
pid=$!
set +m
for i in $(seq 300); do
    pgrep -f "softmax_f32 $TMPDIR/kproof-w-" >/dev/null && break
    sleep 0.1
done
kill -INT -- -"$pid"
wait "$pid"
rc=$?
check "eval --out interrupted: exit 130" [ $rc -eq 130 ]
check "eval --out interrupted: no previous file is left under its name" [ ! -e "$T/stale.json" ]

# A demo cut short in its second row (hang, whose calls wait out their
# timeout): the first row's cells have verdicts, the second row's none
# (they never ran), in the JSON and the markdown.
echo stale >"$T/dd.json"
set -m
"$K" demo --backend host --only crash,hang --json "$T/dd.json" --md "$T/dd.md" >/dev/null 2>"$T/dd.err" &
pid=$!
set +m
for i in $(seq 600); do
    has '"rows"' "$T/dd.json" 2>/dev/null && break
    sleep 0.05
done
kill -INT -- -"$pid"
wait "$pid"
rc=$?
check "demo interrupted in row 2: exit 130" [ $rc -eq 130 ]
check "demo interrupted: cells that never ran have no verdict" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["complete"] is False, d["complete"]
crash, hang = d["rows"]
assert crash["name"] == "crash" and hang["name"] == "hang", d["rows"]
ran = [c for c in crash["cells"] if c["state"] == "done"]
assert len(ran) == 2 and all(c["verdict"] == "ERROR" for c in ran), crash["cells"]
for row in crash, hang:
    assert all(c["verdict"] is None for c in row["cells"] if c["state"] != "done"), row["cells"]
assert [c["state"] for c in hang["cells"]] == ["not run"] + ["skipped"] * 5 + ["not run"], hang["cells"]
assert d["evaluations"] == 2, d["evaluations"]' "$T/dd.json"
check "demo interrupted: the markdown says not run" grep -q "| hang | softmax_f32 | not run | - |" "$T/dd.md"

# ---- TMPDIR: one rule, everywhere ---------------------------------------------------
long_missing="$T/a-missing-temporary-folder-of-well-over-forty-characters"
refused "TMPDIR missing and long: eval" 70 "TMPDIR=$long_missing cannot be used: No such file" \
    env TMPDIR="$long_missing" "$K" eval "$T/s.c" "${q[@]}"
refused "TMPDIR missing and short: eval" 70 "TMPDIR=/kpo-none cannot be used" \
    env TMPDIR=/kpo-none "$K" eval "$T/s.c" "${q[@]}"
refused "TMPDIR relative: eval" 70 "not an absolute path" env TMPDIR=tmp "$K" eval "$T/s.c" "${q[@]}"
refused "TMPDIR a file: eval" 70 "not a directory" env TMPDIR="$T/s.c" "$K" eval "$T/s.c" "${q[@]}"
refused "TMPDIR of 201 characters: eval" 70 "longer than 200 characters" \
    env TMPDIR="/$(printf 'x%.0s' $(seq 200))" "$K" eval "$T/s.c" "${q[@]}"
refused "TMPDIR missing: calibrate" 70 "cannot be used" env TMPDIR="$long_missing" "$K" calibrate --backend host
refused "TMPDIR missing: demo" 70 "cannot be used" env TMPDIR="$long_missing" "$K" demo --backend host --only stale
# Without HOME the cache is kproof-<uid> in the temporary folder, by the
# same rule: where TMPDIR cannot be used there is no cache, and the command
# says why TMPDIR cannot be used (70); no cache is looked for, or made, in
# a folder that rule refuses (here one that exists, over 200 characters,
# holding a cache folder anyone could write).
nohome() { env -u HOME -u XDG_CACHE_HOME -u KPROOF_CACHE "$@"; }
long_cached="$T/$(printf 'c%.0s' $(seq 200))"
mkdir -p "$long_cached/kproof-$(id -u)"
chmod 777 "$long_cached/kproof-$(id -u)"
refused "no HOME, TMPDIR of 201 characters: eval" 70 "longer than 200 characters" \
    nohome TMPDIR="$long_cached" "$K" eval "$T/s.c" "${q[@]}"
refused "no HOME, TMPDIR of 201 characters: calibrate" 70 "longer than 200 characters" \
    nohome TMPDIR="$long_cached" "$K" calibrate --backend host
refused "no HOME, TMPDIR of 201 characters: demo" 70 "longer than 200 characters" \
    nohome TMPDIR="$long_cached" "$K" demo --backend host --only stale
refused "no HOME, TMPDIR of 201 characters: worth" 70 "longer than 200 characters" \
    nohome TMPDIR="$long_cached" "$K" worth --op softmax --backend host
check "no HOME, TMPDIR of 201 characters: nothing written in its cache folder" \
    [ -z "$(ls -A "$long_cached/kproof-$(id -u)")" ]
refused "no HOME, TMPDIR missing: worth" 70 "TMPDIR=$long_missing cannot be used" \
    nohome TMPDIR="$long_missing" "$K" worth --op softmax --backend host
check "no HOME, TMPDIR missing: no folder made there" [ ! -e "$long_missing" ]
long="$T/an-existing-temporary-folder-of-well-over-forty-characters"
mkdir -p "$long"
TMPDIR="$long" "$K" eval "$T/s.c" "${q[@]}" >"$T/out" 2>"$T/err"
check "TMPDIR existing and long: PASS" [ $? -eq 0 ]
check "TMPDIR existing and long: the device lock is there" [ -e "$long/kproof-device-host.lock" ]
check "TMPDIR existing and long: no folder is left there" [ -z "$(ls -d "$long"/kproof-* 2>/dev/null | grep -v lock)" ]

# ---- the device lock ----------------------------------------------------------------
# One that cannot be opened runs nothing (and measures no calibration); one
# that can only be read serves (flock needs no write access).
lk="$T/lk"
mkdir -p "$lk" "$T/home"
chmod 1777 "$lk"
chmod 700 "$T/home" # a cache folder of the user's own (kproof refuses one others can write)
"$K" eval "$T/s.c" "${q[@]}" >/dev/null 2>&1 # the lock file of $TMPDIR exists
TMPDIR="$lk" "$K" eval "$T/s.c" "${q[@]}" >/dev/null 2>&1
as_other=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    chown 65534:65534 "$T/home"
    chmod 600 "$lk/kproof-device-host.lock" # root's file, unreadable to the other user
else
    chmod 000 "$lk/kproof-device-host.lock" # the user's own file, unreadable
fi
chmod 644 "$T/s.c"
other() { "${as_other[@]}" env HOME="$T/home" KPROOF_CACHE="$T/home/cache" TMPDIR="$lk" "$@"; }
refused "lock file unreadable: eval" 70 "cannot open the device lock $lk/kproof-device-host.lock" \
    other "$K" eval "$T/s.c" --op softmax --shape 257x1000 --json --no-sandbox --quiet
check "lock file unreadable: no result on stdout" [ ! -s "$T/out" ]
check "lock file unreadable: no calibration measured" [ -z "$(find "$T/home" -name 'calibration-*' 2>/dev/null)" ]
refused "lock file unreadable: calibrate" 70 "cannot open the device lock" other "$K" calibrate --backend host
refused "lock file unreadable: demo" 70 "cannot open the device lock" other "$K" demo --backend host --only stale
refused "lock file unreadable: worth" 70 "cannot open the device lock $lk/kproof-device-host.lock" \
    other "$K" worth --op softmax --backend host
check "lock file unreadable: worth gives the whole reason" has "set TMPDIR to a folder every kproof on this machine uses)" \
    "$T/err"
check "lock file unreadable: nothing was built" [ -z "$(find "$T/home" -name '*.so' 2>/dev/null)" ]
check "lock file unreadable: still no calibration" [ -z "$(find "$T/home" -name 'calibration-*' 2>/dev/null)" ]
if [ ${#as_other[@]} -gt 0 ]; then
    chmod 644 "$lk/kproof-device-host.lock"
    other "$K" eval "$T/s.c" --op softmax --shape 257x1000 --json --no-sandbox --quiet --correctness \
        >"$T/ro.json" 2>"$T/err"
    rc=$?
    check "another user's readable lock file: PASS" [ $rc -eq 0 ]
    [ $rc -eq 0 ] || { echo "     exit $rc"; tail -3 "$T/err" | sed "s/^/     /"; }
    check "another user's readable lock file: the lock was held" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["device_lock"]["held_s"] > 0, d["device_lock"]' "$T/ro.json"
fi
# No --backend (calibrate, demo, worth): cuda where a GPU answers, asked
# under the GPU's device lock. One that cannot be opened is exit 70, never
# a host run in the GPU's place; where no cuda worker is built no GPU is
# asked, and where none answers the host runs.
lg="$T/lg"
mkdir -p "$lg" "$T/home2"
chmod 1777 "$lg"
chmod 700 "$T/home2"
: >"$lg/kproof-device-cuda-0.lock"
if [ ${#as_other[@]} -gt 0 ]; then
    chown 65534:65534 "$T/home2"
    chmod 600 "$lg/kproof-device-cuda-0.lock"
else
    chmod 000 "$lg/kproof-device-cuda-0.lock"
fi
other_gpu() { "${as_other[@]}" env -u CUDA_VISIBLE_DEVICES HOME="$T/home2" KPROOF_CACHE="$T/home2/cache" TMPDIR="$lg" "$@"; }
no_calibration() { [ -z "$(find "$T/home2" -name 'calibration-*' 2>/dev/null)" ]; }
if [ -x "$B/kproof-worker-cuda" ]; then
    want="cannot open the device lock $lg/kproof-device-cuda-0.lock"
    refused "GPU's lock file unreadable, no --backend: calibrate" 70 "$want" other_gpu "$K" calibrate
    check "GPU's lock file unreadable, no --backend: calibrate says --backend host" has "--backend host" "$T/err"
    check "GPU's lock file unreadable, no --backend: calibrate measures nothing" no_calibration
    refused "GPU's lock file unreadable, no --backend: demo" 70 "$want" other_gpu "$K" demo --only stale
    check "GPU's lock file unreadable, no --backend: demo runs no row" [ ! -s "$T/out" ]
    refused "GPU's lock file unreadable, no --backend: worth" 70 "$want" other_gpu "$K" worth --op softmax
    check "GPU's lock file unreadable, no --backend: still no calibration" no_calibration
    if command -v flock >/dev/null; then
        chmod 666 "$lg/kproof-device-cuda-0.lock"
        flock --no-fork "$lg/kproof-device-cuda-0.lock" sleep 120 & # killed below, after the probe's build
        fl=$!
        sleep 0.3
        refused "GPU's lock held past KPROOF_LOCK_TIMEOUT, no --backend: calibrate" 70 "for over 0.5 s" \
            other_gpu env KPROOF_LOCK_TIMEOUT=0.5 "$K" calibrate
        check "GPU's lock held past KPROOF_LOCK_TIMEOUT, no --backend: names the holder" has "process $fl" "$T/err"
        kill "$fl" 2>/dev/null
        wait "$fl" 2>/dev/null
    fi
else
    other_gpu "$K" calibrate >"$T/out" 2>"$T/err"
    check "no cuda worker built, no --backend: calibrate runs on the host (no GPU lock asked for)" \
        [ $? -eq 0 -a -n "$(grep "^device .*(host)" "$T/out")" ]
fi
other_gpu "$K" calibrate --backend host >"$T/out" 2>"$T/err"
check "GPU's lock file unreadable, --backend host: calibrate runs" [ $? -eq 0 ]
if ! nvidia-smi -L >/dev/null 2>&1; then
    chmod 666 "$lg/kproof-device-cuda-0.lock"
    other_gpu "$K" calibrate >"$T/out" 2>"$T/err"
    rc=$?
    check "no GPU answers, no --backend: calibrate runs on the host" [ $rc -eq 0 -a -n "$(grep "^device .*(host)" "$T/out")" ]
    [ $rc -eq 0 ] || sed 's/^/     /' "$T/err" | tail -3
fi
if command -v flock >/dev/null; then
    flock --no-fork "$TMPDIR/kproof-device-host.lock" sleep 4 &
    fl=$!
    sleep 0.3
    KPROOF_LOCK_TIMEOUT=0.5 "$K" eval "$T/s.c" "${q[@]}" >"$T/out" 2>"$T/err"
    check "KPROOF_LOCK_TIMEOUT=0.5: exit 70" [ $? -eq 70 ]
    check "KPROOF_LOCK_TIMEOUT=0.5: says 0.5 s" has "for over 0.5 s" "$T/err"
    kill "$fl" 2>/dev/null
    wait "$fl" 2>/dev/null
fi

exit $fail
