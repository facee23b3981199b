#!/usr/bin/env bash
# cli_outputs_test.sh: what kproof writes and where it keeps its temporary
# files (host backend): an output path never names an input.
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


exit $fail
