#!/usr/bin/env bash
# cli_fuzz.sh: a few hundred random command lines, each under a timeout:
# kproof never dies of a signal and exits only with a documented status
# (0-4, 64, 70). The lines are drawn so that none starts a long run: an
# eval names a candidate that does not exist or ends with an unknown
# option, and calibrate and demo always get one (twice).
# Usage: cli_fuzz.sh BUILD_DIR SOURCE_DIR [RUNS]
set -u
B=$1
S=$2
N=${3:-300}
K="$B/kproof"
export KPROOF_CACHE=$(mktemp -d) KPROOF_ROOT="$S"
trap 'rm -rf "$KPROOF_CACHE"' EXIT
cmds=(eval spec init list help version calibrate demo "" x --help -h)
opts=(--op --dtype --backend --shape --shape-set --dist --protocol --flaw --time-budget --target --sets --timeout
    --seed --json --md --quiet --out --no-sandbox --correctness --no-baseline --allow-library --force --only --jobs
    -h --help -- - --op=softmax)
vals=(softmax matmul sum layernorm softmax_bf16 bf16 f32 fp32 host cuda 0 1 -1 0x10 1e9 1e-9 inf nan " 5" "5 " 5s
    "" 4096x4096 1x0 0x1 -3x4 99999999999999999999 12xq canonical,edge drawn,, rigorous naive launch,warm all ,
    /dev/null /dev/zero /nonexistent/out.json "$(printf 'a%.0s' $(seq 300))" $'\x01\xff' "%s%n" ../.. .)
bad=0
rand() { echo $((RANDOM % $1)); }
for i in $(seq "$N"); do
    c=${cmds[$(rand ${#cmds[@]})]}
    argv=("$c")
    [ "$c" = eval ] && argv+=("/nonexistent-$i.c")
    for j in $(seq $(rand 6)); do
        case $(rand 3) in
        0) argv+=("${opts[$(rand ${#opts[@]})]}") ;;
        1) argv+=("${vals[$(rand ${#vals[@]})]}") ;;
        2) argv+=("${opts[$(rand ${#opts[@]})]}" "${vals[$(rand ${#vals[@]})]}") ;;
        esac
    done
    # Twice: an option that takes a value (demo --json) takes the first
    # as its value, and would then start a whole demo.
    case $c in eval | calibrate | demo) argv+=(--fuzz-unknown-option --fuzz-unknown-option) ;; esac
    timeout 10 "$K" "${argv[@]}" >/dev/null 2>&1 </dev/null
    rc=$?
    case $rc in
    0 | 1 | 2 | 3 | 4 | 64 | 70) ;;
    *) echo "FAIL exit $rc: kproof$(printf ' %q' "${argv[@]}")"; bad=1 ;;
    esac
done
[ $bad = 0 ] && echo "ok   $N random command lines: no crash, only documented exit codes"
exit $bad
