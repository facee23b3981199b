#!/usr/bin/env bash
# faults_test.sh: the fault corpus (tests/faults/) and the harness faults,
# on the host backend. Each candidate's header says what kproof must
# answer; nothing any of them starts may outlive its eval, and nothing may
# change the cache, the tree or a result. A defence the machine lacks (no
# user namespaces in this container, say) must be named in the result:
# then a fault that needs it is allowed through, and says so.
# Usage: faults_test.sh BUILD_DIR SOURCE_DIR
set -u
B=$1
S=$2
K="$B/kproof"
T=$(mktemp -d /tmp/kpf.XXXXXX)
export HOME="$T/home" TMPDIR="$T/tmp" KPROOF_FAULT_TMPDIR="$T/tmp"
export KPROOF_CACHE="$HOME/.cache/kproof" KPROOF_ROOT="$S" KPROOF_BIN_DIR="$B"
mkdir -p "$KPROOF_CACHE" "$TMPDIR"
fail=0
cleanup() {
    tagged_kill "kpf-$$-"
    rm -rf "$T" ${UT:+"$UT"}
}
trap cleanup EXIT
check() { # check NAME CONDITION...
    local name=$1
    shift
    if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}
# Processes whose environment holds FAULT_TAG=PREFIX... (one grep over
# every process's environment, its variables as NUL-ended lines).
tagged() {
    local p
    for p in $(grep -lz "^FAULT_TAG=$1" /proc/[0-9]*/environ 2>/dev/null); do
        p=${p#/proc/}
        p=${p%/environ}
        [ "$p" = "$$" ] || echo "$p"
    done
}
tagged_kill() { local p; for p in $(tagged "$1"); do kill -9 "$p" 2>/dev/null; done; }
# Waits up to 2 s for every tagged process to be gone.
none_left() {
    local i
    for i in $(seq 20); do
        [ -z "$(tagged "$1")" ] && return 0
        sleep 0.1
    done
    echo "     left running: $(for p in $(tagged "$1"); do printf '%s(%s) ' "$p" "$(cat /proc/$p/comm 2>/dev/null)"; done)"
    tagged_kill "$1"
    return 1
}
field() { sed -n "s/^ \* $2: *//p" "$1" | head -1; }
json() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d = d[k] if isinstance(d, dict) else d
print(", ".join(d) if isinstance(d, list) else d)' "$@" 2>/dev/null; }

# A calibration in the cache, which cache_home tries to rewrite.
"$K" calibrate --backend host >/dev/null 2>&1
calib_sum() { cat "$KPROOF_CACHE"/calibration-* 2>/dev/null | md5sum; }
calib0=$(calib_sum)
args=(--op softmax --shape 33x100 --correctness --quiet --json --timeout 5)
t0=$(date +%s.%N)
let_through=0
for f in "$S"/tests/faults/*.c; do
    name=$(basename "$f" .c)
    want=$(field "$f" expect)
    want_rc=$(field "$f" exit)
    want_check=$(field "$f" check)
    needs=$(field "$f" needs)
    detail=$(field "$f" detail)
    envs=$(field "$f" env)
    tag="kpf-$$-$name"
    out=()
    [ -n "$(field "$f" out)" ] && out=(--out "$T/out-$name.json")
    if [ -n "$(field "$f" kill9)" ]; then
        env FAULT_TAG="$tag" $envs "$K" eval "$f" "${args[@]}" >"$T/o" 2>"$T/e" &
        kp=$!
        # wait for the worker or the compiler (a tagged process that is not kproof)
        for i in $(seq 100); do
            found=""
            for p in $(tagged "$tag"); do
                c=$(cat /proc/$p/comm 2>/dev/null)
                [ "$c" != kproof ] && [ -n "$c" ] && found=$p
            done
            [ -n "$found" ] && break
            sleep 0.1
        done
        sleep 0.3
        kill -9 "$kp"
        { wait "$kp"; } 2>/dev/null
        rc=$?
        check "$name: kproof killed with -9 (exit $rc)" [ "$rc" = "$want_rc" ]
        check "$name: nothing outlives a kill -9 of kproof" none_left "$tag"
        continue
    fi
    env FAULT_TAG="$tag" $envs timeout 120 "$K" eval "$f" "${args[@]}" "${out[@]}" >"$T/o" 2>"$T/e"
    rc=$?
    res="$T/o"
    if [ ${#out[@]} -gt 0 ]; then
        sleep 2.2 # the forged writes go on for two seconds
        res="$T/out-$name.json"
    fi
    got=$(json "$res" verdict)
    got_check=$(json "$res" check)
    missing=$(json "$res" sandbox.missing)
    [ -z "$got_check" ] && got_check=-
    ok=1
    [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ] && [ "$got_check" = "$want_check" ] || ok=0
    [ -n "$detail" ] && ! grep -q "$detail" "$res" && ok=0
    if [ $ok = 0 ] && [ -n "$needs" ] && case "$missing" in *"$needs"*) true ;; *) false ;; esac; then
        echo "ok   $name: let through, and the result names the missing defence ($needs)"
        let_through=1
    else
        check "$name: $want exit $want_rc check $want_check (got $got exit $rc check $got_check)" [ $ok = 1 ]
        [ $ok = 1 ] || sed 's/^/     /' "$T/e" | tail -5
    fi
    check "$name: nothing it started outlives the eval" none_left "$tag"
done
echo "corpus: $(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)") s"
if [ $let_through = 0 ]; then
    check "no file of a fault in the tree or the cache" \
        [ -z "$(find "$S/tests" "$S/kernels" "$KPROOF_CACHE" "$B" -maxdepth 3 -name 'kproof-fault-*' 2>/dev/null)" ]
    check "the cached calibration is unchanged" [ "$(calib_sum)" = "$calib0" ]
else
    # The cache could be written here, and the result said so: kproof must
    # then not believe it. A timed honest eval after the rewrite still
    # passes (a believed 0.5 GB/s calibration would REJECT it).
    find "$S/tests" "$KPROOF_CACHE" -maxdepth 3 -name 'kproof-fault-*' -delete 2>/dev/null
    "$K" eval "$S/kernels/softmax/host/f32-01-naive.c" --op softmax --shape 33x100 --time-budget 0.5 --target 50 \
        --no-baseline --quiet --json >"$T/o" 2>/dev/null
    check "a writable cache is not believed: a later honest eval is not REJECTED" [ "$(json "$T/o" verdict)" != REJECTED ]
fi
# ---- harness faults: exit 70 with one line naming the cause -------------------
good="$S/kernels/softmax/host/f32-01-naive.c"
q=(--op softmax --shape 33x100 --correctness --quiet)
"$K" eval "$good" "${q[@]}" >&- 2>"$T/e"
check "closed stdout: exit 70" [ $? = 70 ]
check "closed stdout: says so" grep -q "standard output is closed" "$T/e"
if [ -w /dev/full ]; then
    "$K" eval "$good" "${q[@]}" >/dev/full 2>"$T/e"
    check "full stdout: exit 70" [ $? = 70 ]
    check "full stdout: says so" grep -q "cannot write the result" "$T/e"
fi
KPROOF_ROOT="$T" "$K" eval "$good" "${q[@]}" >"$T/o" 2>"$T/e"
check "wrong KPROOF_ROOT: exit 70" [ $? = 70 ]
check "wrong KPROOF_ROOT: names it" grep -q "is not a kproof tree" "$T/o"
touch "$T/afile"
KPROOF_CACHE="$T/afile/cache" "$K" eval "$good" "${q[@]}" >"$T/o" 2>"$T/e"
check "cache that cannot be made: exit 70" [ $? = 70 ]
check "cache that cannot be made: names it" grep -q "cannot create the cache directory" "$T/o"
# A cache that others can write is refused (exit 64), not believed: a
# calibration of 0.2 GB/s written there would make an honest kernel
# REJECTED.
mkdir -p "$T/opencache"
chmod 777 "$T/opencache"
KPROOF_CACHE="$T/opencache" "$K" eval "$good" "${q[@]}" >"$T/o" 2>"$T/e"
check "cache writable by anyone: exit 64" [ $? = 64 ]
check "cache writable by anyone: says so, one line" [ "$(grep -c "writable by anyone (mode 0777" "$T/e")" = 1 ]
cp "$T/e" "$T/e.eval"
KPROOF_CACHE="$T/opencache" "$K" calibrate --backend host >"$T/o" 2>"$T/e"
check "cache writable by anyone: calibrate exit 64" [ $? = 64 ]
# worth reads this machine's calibration from the same cache, under the same rule and words.
as_eval() { [ "$(sed "s/^kproof $1:/kproof eval:/" "$2")" = "$(cat "$3")" ]; }
KPROOF_CACHE="$T/opencache" "$K" worth --op softmax --backend host >"$T/o" 2>"$T/e"
check "cache writable by anyone: worth exit 64" [ $? = 64 ]
check "cache writable by anyone: worth says what eval says" as_eval worth "$T/e" "$T/e.eval"
KPROOF_CACHE="$T/opencache/sub" "$K" eval "$good" "${q[@]}" >"$T/o" 2>"$T/e"
check "cache under a folder anyone can write: exit 64" [ $? = 64 ]
check "cache under a folder anyone can write: says so" grep -q "above the cache .* not sticky" "$T/e"
cp "$T/e" "$T/e.eval"
KPROOF_CACHE="$T/opencache/sub" "$K" worth --op softmax --backend host >"$T/o" 2>"$T/e"
check "cache under a folder anyone can write: worth exit 64" [ $? = 64 ]
check "cache under a folder anyone can write: worth says what eval says" as_eval worth "$T/e" "$T/e.eval"
chmod 2775 "$T/opencache"
KPROOF_CACHE="$T/opencache" "$K" eval "$good" "${q[@]}" >"$T/o" 2>"$T/e"
check "cache writable by its group: exit 64" [ $? = 64 ]
KPROOF_CACHE="$T/opencache" "$K" worth --op softmax --backend host >"$T/o" 2>"$T/e"
check "cache writable by its group: worth exit 64" [ $? = 64 ]
# Without HOME: a folder of this user's own in TMPDIR, made 0700.
env -u HOME -u XDG_CACHE_HOME -u KPROOF_CACHE "$K" eval "$good" "${q[@]}" >"$T/o" 2>"$T/e"
check "no HOME: exit 0" [ $? = 0 ]
check "no HOME: the cache is \$TMPDIR/kproof-<uid>, 0700" [ "$(stat -c %a "$TMPDIR/kproof-$(id -u)" 2>/dev/null)" = 700 ]
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$T/othercache"
    chown 65534 "$T/othercache"
    chmod 755 "$T/othercache"
    KPROOF_CACHE="$T/othercache" "$K" eval "$good" "${q[@]}" >"$T/o" 2>"$T/e"
    check "cache of another user: exit 64" [ $? = 64 ]
    check "cache of another user: names its owner" grep -q "belongs to uid 65534" "$T/e"
    KPROOF_CACHE="$T/othercache" "$K" worth --op softmax --backend host >"$T/o" 2>"$T/e"
    check "cache of another user: worth exit 64, names its owner" [ $? = 64 -a -n "$(grep "belongs to uid 65534" "$T/e")" ]
    # A calibration file in our cache that another user wrote is measured again.
    mkdir -p "$T/ourcache"
    KPROOF_CACHE="$T/ourcache" "$K" calibrate --backend host >/dev/null 2>&1
    for f in "$T"/ourcache/calibration-*; do echo "copy_gbs 0.2" >"$f"; chown 65534 "$f"; done
    KPROOF_CACHE="$T/ourcache" "$K" calibrate --backend host >"$T/o" 2>"$T/e"
    check "a calibration file of another user is not believed" grep -q "measured now" "$T/e"
    check "and the one measured again replaces it" [ "$(stat -c %u "$T"/ourcache/calibration-* | sort -u)" = 0 ]
fi
# Files of the cache are written 0644 whatever the umask: never writable by the group.
(umask 002; KPROOF_CACHE="$T/umaskcache" "$K" eval "$good" "${q[@]}" >/dev/null 2>&1)
check "umask 002: no file of the cache is writable by the group" \
    [ -n "$(ls "$T/umaskcache")" -a -z "$(find "$T/umaskcache" -perm /022)" ]
# A read-only cache (a bind mount in a namespace of our own, where the machine allows one).
mkdir -p "$T/rocache"
cp "$good" "$T/fresh.c"
echo "/* $$ */" >>"$T/fresh.c"
if unshare -rm true 2>/dev/null; then
    unshare -rm sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && KPROOF_CACHE="$1" "$2" eval "$3" --op softmax --shape 33x100 --correctness --quiet >"$4" 2>&1; echo $? >"$4.rc"' \
        sh "$T/rocache" "$K" "$T/fresh.c" "$T/o"
    check "read-only cache: exit 70" [ "$(cat "$T/o.rc")" = 70 ]
    check "read-only cache: says it is not writable" grep -q "is not writable" "$T/o"
else
    echo "skip read-only cache (no user namespace for the test itself)"
fi
"$K" eval "$good" --op softmax --shape 100000x100000 --correctness --quiet >"$T/o" 2>"$T/e"
check "shape beyond host memory: exit 64" [ $? = 64 ]
check "shape beyond host memory: gives the numbers" grep -q "GiB of host memory.*available" "$T/e"
# Timing's input sets sized to the memory available (KPROOF_MEM_AVAILABLE
# stands in for it): at 512x4096 the two workers (candidate, one baseline)
# and the parent need about 0.3 GiB with 2 sets, 0.7 GiB with 8.
KPROOF_MEM_AVAILABLE=200M "$K" eval "$good" --op softmax --shape 512x4096 --quiet >"$T/o" 2>"$T/e"
check "timing sets beyond host memory: exit 64" [ $? = 64 ]
check "timing sets beyond host memory: one line with the numbers" \
    [ "$(wc -l <"$T/e")" = 1 -a -n "$(grep "needs at least .* GiB of host memory to time .* available" "$T/e")" ]
KPROOF_MEM_AVAILABLE=200M "$K" eval "$good" --op softmax --shape 512x4096 --correctness --quiet >"$T/o" 2>"$T/e"
check "timing sets beyond host memory: --correctness still runs" [ $? = 0 ]
KPROOF_MEM_AVAILABLE=330M "$K" eval "$good" --op softmax --shape 512x4096 --time-budget 0.3 --json \
    >"$T/mem.json" 2>"$T/e"
check "timing sets lowered to fit: the progress says so" grep -q "timing: 2 input sets instead of 8" "$T/e"
check "timing sets lowered to fit: 2 sets in the JSON, and a warning" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["shapes"][0]
assert s["verdict"] in ("PASS", "NOISY") and s["timing"]["input_sets"] == 2, s["timing"]
assert any("input sets instead of 8" in w for w in d["warnings"]), d["warnings"]' "$T/mem.json"
"$K" eval "$good" --op softmax --shape 512x4096 --time-budget 0.3 --json --quiet >"$T/mem.json" 2>"$T/e"
check "timing sets where memory is ample: 8" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["shapes"][0]
assert s["timing"]["input_sets"] == 8, s["timing"]' "$T/mem.json"

# kproof moves the host worker's inputs and outputs in its memory itself;
# where the machine refuses that (KPROOF_DENY_PROCESS_VM stands in for it),
# the worker moves them, and the result says so.
KPROOF_DENY_PROCESS_VM=1 "$K" eval "$good" --op softmax --shape 64x256 --time-budget 0.3 --json --quiet \
    >"$T/vm.json" 2>"$T/e"
check "worker memory refused: exit 0, PASS or NOISY, and a warning" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] in ("PASS", "NOISY"), d["verdict"]
assert any("cannot write into" in w for w in d["warnings"]), d["warnings"]' "$T/vm.json"
"$K" eval "$good" --op softmax --shape 64x256 --time-budget 0.3 --json --quiet >"$T/vm.json" 2>"$T/e"
check "worker memory reached: no such warning" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert not any("cannot write into" in w for w in d["warnings"]), d["warnings"]' "$T/vm.json"

# ---- malformed option values: exit 64 ----------------------------------------
for bad in "--dtype=" "--time-budget=0x10" "--time-budget=-1" "--time-budget= 5" "--time-budget=5s" \
    "--timeout=inf" "--timeout=nan" "--target=1e999" "--sets=8x" "--sets=-3" "--seed=-5" "--seed=0x10" \
    "--shape=" "--backend=" "--out="; do
    "$K" eval "$good" --op softmax "${bad%%=*}" "${bad#*=}" >"$T/o" 2>"$T/e"
    rc=$?
    check "eval ${bad%%=*} '${bad#*=}': exit 64, one line" [ $rc = 64 -a "$(wc -l <"$T/e")" = 1 ]
done

# ---- results and the device lock --------------------------------------------------
"$K" eval "$good" "${q[@]}" --json --out "$T/r.json" >"$T/o" 2>"$T/e"
check "--out: exit 0, nothing on stdout" [ $? = 0 -a ! -s "$T/o" ]
check "--out: the file is the result" [ "$(json "$T/r.json" verdict)" = PASS ]
check "--out: no temporary file left" [ -z "$(ls -A "$T" | grep '^\.kproof-out')" ]
"$K" eval "$good" "${q[@]}" --out "$T/nodir/r.json" >"$T/o" 2>"$T/e"
check "--out into a missing folder: exit 64" [ $? = 64 ]
lock="$TMPDIR/kproof-device-host.lock"
if command -v flock >/dev/null; then
    # --no-fork: the process holding the lock is the one killed below (a
    # forked sleep would hold it on, and the eval further down would wait
    # for it instead of holding the device)
    flock --no-fork "$lock" sleep 5 &
    fl=$!
    sleep 0.3
    KPROOF_LOCK_TIMEOUT=1 "$K" eval "$good" "${q[@]}" >"$T/o" 2>"$T/e"
    rc=$?
    check "device lock held elsewhere: exit 70 after KPROOF_LOCK_TIMEOUT" [ $rc = 70 ]
    check "device lock held elsewhere: names the holder's pid" grep -q "held by process $fl" "$T/o" "$T/e"
    kill "$fl" 2>/dev/null
    wait "$fl" 2>/dev/null
fi
# An eval that holds the device (a call that hangs for 5 s), its lock file
# removed under it: a second eval still waits for it.
FAULT_TAG="kpf-$$-hang" "$K" eval "$S/exploits/host/hang.c" --op softmax --shape 33x100 --correctness --quiet \
    --timeout 5 >/dev/null 2>&1 &
hp=$!
# The device is held through the hanging call once the lock has been held
# for a second without a break: the eval takes and gives it back around
# each piece of device work (its worker's start, each call), and between
# them builds inputs without it, so a lock seen held once may be free
# again a moment later, and a second eval would then take it.
held() { ! command -v flock >/dev/null || ! flock -n "$lock" true 2>/dev/null; }
run=0
for i in $(seq 400); do
    if held && [ -n "$(tagged "kpf-$$-hang")" ]; then run=$((run + 1)); else run=0; fi
    [ $run -ge 20 ] && break
    sleep 0.05
done
check "removed lock file: the hanging eval held the device a second without a break" [ $run -ge 20 ]
rm -f "$lock"
KPROOF_LOCK_TIMEOUT=1 "$K" eval "$good" "${q[@]}" >"$T/o" 2>"$T/e"
rc=$?
check "removed lock file: the second eval still waits (exit 70 after its bound)" [ $rc = 70 ]
check "removed lock file: and says another kproof holds the device" grep -q "held by another kproof" "$T/o" "$T/e"
wait "$hp"

# ---- builds ------------------------------------------------------------------------
mkdir -p "$T/hdr"
sed 's/^#include <kproof\/kernel.h>/#include <kproof\/kernel.h>\n#include "scale.h"/; s/b\[j\] = (float)/b[j] = SCALE * (float)/' \
    "$S/tests/faults/fault.h" >"$T/hdr/fault.h"
printf '#include "fault.h"\nstatic void fault_attempt(void) {}\n' >"$T/hdr/c.c"
echo '#define SCALE 1.0f' >"$T/hdr/scale.h"
"$K" eval "$T/hdr/c.c" "${q[@]}" >/dev/null 2>&1
check "included header: PASS first" [ $? = 0 ]
echo '#define SCALE 2.0f' >"$T/hdr/scale.h"
"$K" eval "$T/hdr/c.c" "${q[@]}" >/dev/null 2>&1
check "included header edited: a fresh build, WRONG (no stale build)" [ $? = 1 ]

# ---- the sandbox in the report -------------------------------------------------------
"$K" eval "$good" "${q[@]}" --json >"$T/o" 2>/dev/null
st=$(json "$T/o" sandbox.state)
check "the result says where it ran (sandbox: $st)" [ "$st" = complete -o "$st" = partial ]
if [ "$st" = partial ]; then echo "     missing here: $(json "$T/o" sandbox.missing)"; fi
"$K" eval "$good" "${q[@]}" --no-sandbox >"$T/o" 2>/dev/null
check "--no-sandbox: PASS says not sandboxed" grep -q "^kproof PASS (not sandboxed)" "$T/o"
check "--no-sandbox: the sandbox line says so" grep -q "NOT SANDBOXED (--no-sandbox)" "$T/o"
KPROOF_SANDBOX_SKIP=pid,mount "$K" eval "$good" "${q[@]}" --json >"$T/o" 2>/dev/null
check "a missing pid namespace is named" grep -q '"pid namespace: ' "$T/o"
check "a missing mount namespace is named" grep -q '"mount namespace: ' "$T/o"
check "partial sandbox: state partial" [ "$(json "$T/o" sandbox.state)" = partial ]
# ---- a user other than root -----------------------------------------------------------
# kproof is not dumpable, and its children inherit that: the maps of a user
# namespace must still be written by a user who is not root. The tests run
# as root here: setpriv runs kproof as nobody (65534), from a copy of what
# it needs that nobody can read.
maps_missing() { json "$1" sandbox.missing | grep -q "user namespace"; }
lacks() { ! grep -q "$@"; } # lacks PATTERN FILE
KPROOF_SANDBOX_SKIP=maps "$K" eval "$good" "${q[@]}" --json >"$T/o" 2>/dev/null
rc=$?
check "user namespace maps refused (root): exit 0, PASS" [ $rc = 0 -a "$(json "$T/o" verdict)" = PASS ]
check "user namespace maps refused (root): the user namespace is named" maps_missing "$T/o"
if [ "$(id -u)" = 0 ]; then
    check "user namespace maps refused (root): the other namespaces still made" \
        lacks '"pid namespace: \|"mount namespace: \|"seccomp filter: ' "$T/o"
fi
if [ "$(id -u)" != 0 ]; then
    echo "ok   unprivileged user: this whole test runs as uid $(id -u)"
elif ! command -v setpriv >/dev/null; then
    echo "skip unprivileged user: no setpriv here to run kproof as uid 65534"
else
    UT=$(mktemp -d /tmp/kpfu.XXXXXX)
    mkdir -p "$UT/root" "$UT/bin" "$UT/home" "$UT/tmp"
    cp -r "$S/include" "$S/kernels" "$UT/root/"
    cp "$K" "$B/kproof-worker-host" "$UT/bin/"
    cp "$good" "$UT/c.c"
    chmod -R a+rX "$UT"
    chown -R 65534:65534 "$UT/home" "$UT/tmp"
    chmod 755 "$UT"
    nobody() {
        setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$UT/home" TMPDIR="$UT/tmp" \
            KPROOF_CACHE="$UT/home/cache" KPROOF_ROOT="$UT/root" KPROOF_BIN_DIR="$UT/bin" "$@"
    }
    nobody "$UT/bin/kproof" eval "$UT/c.c" "${q[@]}" --json >"$T/o" 2>"$T/e"
    rc=$?
    check "unprivileged user: eval exit 0, PASS (got $rc)" [ $rc = 0 -a "$(json "$T/o" verdict)" = PASS ]
    [ $rc = 0 ] || sed 's/^/     /' "$T/e" | tail -3
    check "unprivileged user: kproof reaches the worker's memory" lacks "cannot write into" "$T/o"
    nobody "$UT/bin/kproof" eval "$UT/c.c" --op softmax --shape 33x100 --time-budget 0.3 --json --quiet \
        >"$T/o" 2>"$T/e"
    rc=$?
    v=$(json "$T/o" verdict)
    check "unprivileged user, timed: PASS (exit 0) or NOISY (exit 4) (got $v, $rc)" \
        [ \( $rc = 0 -a "$v" = PASS \) -o \( $rc = 4 -a "$v" = NOISY \) ]
    check "unprivileged user, timed: kproof reaches the worker's memory" lacks "cannot write into" "$T/o"
    if nobody unshare -U true 2>/dev/null; then
        check "unprivileged user: the sandbox is complete" [ "$(json "$T/o" sandbox.state)" = complete ]
    else
        check "unprivileged user (no user namespace here): the user namespace is named" maps_missing "$T/o"
    fi
    nobody "$UT/bin/kproof" calibrate --backend host >"$T/o" 2>"$T/e"
    check "unprivileged user: calibrate exit 0" [ $? = 0 ]
    nobody env KPROOF_SANDBOX_SKIP=maps "$UT/bin/kproof" eval "$UT/c.c" "${q[@]}" --json >"$T/o" 2>"$T/e"
    rc=$?
    check "unprivileged user, maps refused: exit 0, PASS (got $rc)" [ $rc = 0 -a "$(json "$T/o" verdict)" = PASS ]
    check "unprivileged user, maps refused: the user namespace is named" maps_missing "$T/o"
    check "unprivileged user, maps refused: the mount namespace is named" \
        grep -q '"mount namespace: ' "$T/o"
    check "unprivileged user, maps refused: seccomp still holds" lacks '"seccomp filter: ' "$T/o"
    # Without a user namespace a worker can refuse kproof its memory: from
    # load, the eval cannot be judged here (ERROR sandbox); once kproof had
    # reached it, only the worker could have (REJECTED memory).
    cp "$S/tests/faults/fault.h" "$S/tests/faults/undumpable.c" "$S/tests/faults/undumpable_late.c" "$UT/"
    chmod a+r "$UT"/*.c "$UT"/fault.h
    nobody env KPROOF_SANDBOX_SKIP=maps "$UT/bin/kproof" eval "$UT/undumpable.c" "${q[@]}" --json >"$T/o" 2>"$T/e"
    check "unprivileged user, maps refused: a worker not dumpable from load is ERROR sandbox" \
        [ "$(json "$T/o" verdict)" = ERROR -a "$(json "$T/o" check)" = sandbox ]
    nobody env KPROOF_SANDBOX_SKIP=maps "$UT/bin/kproof" eval "$UT/undumpable_late.c" "${q[@]}" --json >"$T/o" 2>"$T/e"
    check "unprivileged user, maps refused: a worker made not dumpable by its call is REJECTED memory" \
        [ "$(json "$T/o" verdict)" = REJECTED -a "$(json "$T/o" check)" = memory ]
    check "unprivileged user: no folder left in its TMPDIR" [ -z "$(ls -A "$UT/tmp" | grep '^kproof-[bw]-')" ]
    rm -rf "$UT"
fi
exit $fail
