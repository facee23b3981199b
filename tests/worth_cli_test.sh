#!/usr/bin/env bash
# worth_cli_test.sh: kproof worth, compare and report on committed H200
# results (tests/fixtures), as a user meets them; no device needed.
# Usage: worth_cli_test.sh BUILD_DIR SOURCE_DIR
set -u
B=$1
S=$2
K="$B/kproof"
F="$S/tests/fixtures"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { # check NAME CONDITION...
    local name=$1
    shift
    if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}
has() { grep -qF -- "$1" "$2"; }
one_line() { [ "$(wc -l <"$1")" -eq 1 ]; }
# bad NAME EXPECTED_TEXT CMD...: exit 64, one line on stderr saying EXPECTED_TEXT.
bad() {
    local name=$1 want=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    check "$name: exit 64" [ $rc -eq 64 ]
    check "$name: one line" one_line "$T/err"
    check "$name: says '$want'" has "$want" "$T/err"
}
# py FILE EXPR: a Python assertion over the JSON in FILE (as d).
# near(a, b): equal to the 9 significant digits the JSON carries.
py() { python3 -c "import json,sys
def near(a, b): return abs(a - b) <= 1e-8 * abs(b)
d=json.load(open(sys.argv[1])); $2" "$1"; }

SA="$F/softmax-f32-10-a.json"
SB="$F/softmax-f32-10-b.json"
NAIVE="$F/softmax-f32-01-naive.json"
MM="$F/matmul-bf16-03-wgmma.json"
SUM="$F/sum-f32-05.json"
TR="$F/trace-workload.json"
head -c 1500 "$SA" >"$T/truncated.json"
: >"$T/empty.json"
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]}' >"$T/nokernels.json"
sed 's/"gpu": "NVIDIA H200"/"gpu": "NVIDIA H100 80GB HBM3"/' "$SB" >"$T/h100.json"
sed 's/"schema": 1,/"schema": 2,/' "$SB" >"$T/schema2.json"
# B with intervals ten times as wide and medians 1.5% slower: cannot tell.
python3 - "$SB" "$T/wide.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["shapes"]:
    t = s["timing"]
    m = t["median_s"] * 1.015
    t["lo_s"], t["hi_s"], t["median_s"] = m * 0.95, m * 1.05, m
json.dump(d, open(sys.argv[2], "w"))
EOF

# ---- worth ------------------------------------------------------------------
"$K" worth softmax --result "$SA" >"$T/out" 2>"$T/err"
check "worth softmax: exit 0" [ $? -eq 0 ]
check "worth softmax: one sentence per shape" [ "$(grep -c '^softmax_f32 [0-9x]*: ' "$T/out")" -eq 3 ]
check "worth softmax: regime with its numbers" has "softmax_f32 8192x8192: memory-bound (0.62 FLOP/B against a ridge of 15.6)" "$T/out"
check "worth softmax: fraction of speed of light" has "f32-10-keep-x runs 125.6 us = 99.7% of speed of light" "$T/out"
check "worth softmax: headroom and decision" has "at most 1.00x left (1.12x to the datasheet's 4800 GB/s); not worth it." "$T/out"

"$K" worth softmax --result "$SA" --json >"$T/j" 2>"$T/err"
check "worth --json parses" python3 -m json.tool "$T/j" >/dev/null
# 8192x8192 fp32: 2 x 4 x 8192^2 bytes at the run's measured 4287.01 GB/s.
check "worth --json: speed of light = bytes / measured copy" py "$T/j" '
s = d["shapes"][0]
assert s["shape_text"] == "8192x8192" and s["bytes"] == 536870912, s
assert near(s["sol_time_s"], 536870912 / 4287.01e9), s["sol_time_s"]
assert near(s["sol_time_physical_s"], 536870912 / 4800e9)
assert near(s["headroom"], 0.000125551999 / s["sol_time_s"])
assert s["regime"] == "memory-bound" and s["decision"] == "not worth it"
assert near(s["ridge"], 67000 / 4287.01) and s["intensity"] == 0.625'

"$K" worth sum --result "$SUM" --share 0.5 --speedup 2 --json >"$T/j" 2>"$T/err"
check "worth sum: exit 0" [ $? -eq 0 ]
check "worth sum: Amdahl and the launch regime" py "$T/j" '
s = {x["shape_text"]: x for x in d["shapes"]}
assert near(s["1048576"]["gain_at_speedup"], 1 / (0.5 + 0.5 / 2))
assert s["1048576"]["regime"] == "launch-bound", s["1048576"]["regime"]
assert s["268435456"]["regime"] == "memory-bound"
h = s["16777216"]["headroom"]
assert near(s["16777216"]["gain_at_headroom"], 1 / (0.5 + 0.5 / h))
assert d["share"] == 0.5 and d["share_from"] == "given"'

"$K" worth matmul --dtype bf16 --result "$MM" --json >"$T/j" 2>"$T/err"
check "worth matmul bf16: compute-bound at the bf16 tensor peak" py "$T/j" '
s = d["shapes"][0]
assert s["shape_text"] == "4096x4096x4096" and s["regime"] == "compute-bound"
assert near(s["sol_time_s"], 2 * 4096**3 / 989.5e12), s["sol_time_s"]
assert s["best"]["name"] == "bf16-cublas" and near(s["best"]["median_s"], 0.000179455996)'

"$K" worth softmax --device H200 >"$T/out" 2>"$T/err"
check "worth --device H200 without a result: exit 0" [ $? -eq 0 ]
check "worth --device: the datasheet's bandwidth" has "speed of light 111.8 us (537 MB at the datasheet's 4800 GB/s)" "$T/out"
check "worth --device: says the time is unknown" has "no measured time" "$T/out"
"$K" worth matmul --dtype f32 --device "NVIDIA H100 80GB HBM3" --shape 4096x4096x4096 --json >"$T/j" 2>"$T/err"
check "worth --device H100: fp32 matmul at a third of tf32" py "$T/j" '
s = d["shapes"][0]
assert d["device"]["limits"] == "NVIDIA H100 SXM" and d["device"]["datasheet_bandwidth_gbs"] == 3350
assert near(s["sol_time_s"], 2 * 4096**3 / (494.5e12 / 3)), s'
printf 'copy_gbs 4000\ngemm_f32_gflops 51000\ngemm_tf32_gflops 400000\ngemm_bf16_gflops 780000\n' >"$T/calib"
"$K" worth softmax --device H200 --calib "$T/calib" --shape 8192x8192 --json >"$T/j" 2>"$T/err"
check "worth --calib: the calibration's copy bandwidth" py "$T/j" '
assert near(d["shapes"][0]["sol_time_s"], 536870912 / 4000e9)'

"$K" worth softmax --result "$SA" --trace "$TR" >"$T/out" 2>"$T/err"
check "worth --trace: exit 0" [ $? -eq 0 ]
check "worth --trace: the op's share from the trace" has "share of the workload: 7.7% (the trace)" "$T/out"
check "worth --trace: kernels mapped onto ops" has "by kproof op: matmul 61.5%, softmax 7.7%, layernorm 6.2%, rmsnorm 0.0%, sum 1.5%, unknown 23.1%" "$T/out"
check "worth --trace: unknown kernels listed with their share" grep -qE '^ +7\.7% .* unknown +void flash_fwd_kernel' "$T/out"
"$K" worth --trace "$TR" --json >"$T/j" 2>"$T/err"
check "worth --trace alone: the ranking as JSON" py "$T/j" '
k = d["trace"]["kernels"]
assert len(k) == 6 and k[0]["op"] == "matmul" and near(k[0]["share"], 1600 / 2600)
assert [x["op"] for x in k].count(None) == 2'

bad "worth --share 0" "--share" "$K" worth softmax --device H200 --share 0
bad "worth --share 1.5" "in (0, 1]" "$K" worth softmax --device H200 --share 1.5
bad "worth --share -0.2" "in (0, 1]" "$K" worth softmax --device H200 --share -0.2
bad "worth --share abc" "got 'abc'" "$K" worth softmax --device H200 --share abc
"$K" worth softmax --device H200 --share 1 >"$T/out" 2>"$T/err"
check "worth --share 1: accepted" [ $? -eq 0 ]
bad "worth: missing result" "nope.json: cannot open" "$K" worth --result "$T/nope.json"
bad "worth: truncated result" "truncated" "$K" worth --result "$T/truncated.json"
bad "worth: empty result" "empty" "$K" worth --result "$T/empty.json"
bad "worth: a trace as a result" "not a kproof result" "$K" worth --result "$TR"
bad "worth: a result as a trace" "not a Chrome trace" "$K" worth softmax --device H200 --trace "$SA"
bad "worth: truncated trace" "truncated" "$K" worth --trace "$T/truncated.json"
bad "worth: trace without kernels" "no GPU kernel time" "$K" worth --trace "$T/nokernels.json"
bad "worth: another op's result" "is a softmax_f32 result, not sum_f32" "$K" worth sum --result "$SA"
bad "worth: unknown device" "no limits for device" "$K" worth softmax --device "NVIDIA A100"
bad "worth: bad calibration" "not a kproof calibration" "$K" worth softmax --device H200 --calib "$SA"
bad "worth: unknown option" "unknown option" "$K" worth softmax --bogus

# ---- compare ----------------------------------------------------------------
"$K" compare "$SA" "$SB" >"$T/out" 2>"$T/err"
check "compare: two runs of one kernel: exit 0" [ $? -eq 0 ]
check "compare: two runs of one kernel are SAME" has "3 compared: 3 SAME, 0 FASTER, 0 SLOWER, 0 AMBIGUOUS" "$T/out"
"$K" compare "$SA" "$NAIVE" >"$T/out" 2>"$T/err"
check "compare: naive after the best is SLOWER" has "3 compared: 0 SAME, 0 FASTER, 3 SLOWER, 0 AMBIGUOUS" "$T/out"
check "compare: shapes only in one run are listed" has "only in B" "$T/out"
"$K" compare "$NAIVE" "$SA" >"$T/out" 2>"$T/err"
check "compare: the best after naive is FASTER" has "3 compared: 0 SAME, 3 FASTER, 0 SLOWER, 0 AMBIGUOUS" "$T/out"
"$K" compare "$SA" "$T/wide.json" >"$T/out" 2>"$T/err"
check "compare: wide intervals are AMBIGUOUS" has "3 compared: 0 SAME, 0 FASTER, 0 SLOWER, 3 AMBIGUOUS" "$T/out"
"$K" compare "$SA" "$NAIVE" --fail-on-regression 5 >"$T/out" 2>"$T/err"
check "compare --fail-on-regression: a regression exits 1" [ $? -eq 1 ]
check "compare --fail-on-regression: says so" has "3 regressions beyond 5%" "$T/out"
"$K" compare "$NAIVE" "$SA" --fail-on-regression 5 >"$T/out" 2>"$T/err"
check "compare --fail-on-regression: an improvement exits 0" [ $? -eq 0 ]
"$K" compare "$SA" "$SB" --fail-on-regression 0 >"$T/out" 2>"$T/err"
check "compare --fail-on-regression: SAME exits 0" [ $? -eq 0 ]
"$K" compare "$SA" "$NAIVE" --json >"$T/j" 2>"$T/err"
check "compare --json" py "$T/j" '
s = [x for x in d["shapes"] if x["status"]]
assert [x["status"] for x in s] == ["SLOWER"] * 3, s
assert s[0]["ratio_lo"] < s[0]["ratio"] < s[0]["ratio_hi"]
assert s[0]["interval_from"] == "stored intervals"
assert d["counts"]["SLOWER"] == 3 and d["a"]["schema"] == 1'
"$K" compare "$SA" "$SB" --md >"$T/out" 2>"$T/err"
check "compare --md: a table" has "| shape | A median [95% CI] | B median [95% CI] | B/A [95% CI] | status |" "$T/out"
check "compare --md: rows" has "| 8192x8192 | 125.6 us" "$T/out"
bad "compare: different ops" "refused: different ops: A is softmax_f32, B is sum_f32" "$K" compare "$SA" "$SUM"
bad "compare: different devices" "refused: different devices" "$K" compare "$SA" "$T/h100.json"
bad "compare: different schemas" "refused: different schema versions" "$K" compare "$SA" "$T/schema2.json"
"$K" compare "$SA" "$T/h100.json" --force >"$T/out" 2>"$T/err"
check "compare --force: compares anyway" [ $? -eq 0 ]
bad "compare: missing file" "nope.json: cannot open" "$K" compare "$SA" "$T/nope.json"
bad "compare: truncated file" "truncated" "$K" compare "$T/truncated.json" "$SA"
bad "compare: one file" "needs two result files" "$K" compare "$SA"

# ---- report -----------------------------------------------------------------
"$K" report "$MM" "$SA" -o "$T/r.html" >"$T/out" 2>"$T/err"
check "report: exit 0" [ $? -eq 0 ]
check "report: a page with a roofline" has '<svg class="roofline"' "$T/r.html"
check "report: the worth sentences" has "bf16-cublas runs 179.5 us = 77% of speed of light" "$T/r.html"
bad "report: missing file" "nope.json: cannot open" "$K" report "$T/nope.json" -o "$T/x.html"
bad "report: truncated file" "truncated" "$K" report "$T/truncated.json" -o "$T/x.html"
bad "report: nothing to report" "which results" "$K" report -o "$T/x.html"

# ---- verdicts: only times a verdict stands behind ----------------------------
# B as a timer tamper leaves it (timed, then REJECTED at its first shape),
# as a WRONG kernel (stopped at its first shape, never timed), with no
# shapes, and NOISY at one shape.
python3 - "$SB" "$T" <<'EOF'
import json, sys
src, t = sys.argv[1], sys.argv[2]
def load(): return json.load(open(src))
d = load()
d["verdict"], d["check"] = "REJECTED", "timer"
d["detail"] = "at 8192x8192: the reported median is below half of what the parent's own clock measured"
d["shapes"][0].update(verdict="REJECTED", check="timer", detail="the reported median is below half")
d["shapes"][0]["timing"]["median_s"] /= 4
json.dump(d, open(t + "/rejected.json", "w"))
d = load()
d["verdict"], d["check"] = "WRONG", "tolerance"
d["shapes"] = d["shapes"][:1]
d["shapes"][0].update(verdict="WRONG", check="tolerance", timing=None, baseline=None)
json.dump(d, open(t + "/wrong.json", "w"))
d = load()
d["shapes"] = []
json.dump(d, open(t + "/noshapes.json", "w"))
d = load()
d["verdict"] = "NOISY"
d["shapes"][1]["verdict"] = "NOISY"
json.dump(d, open(t + "/noisy.json", "w"))
EOF
"$K" compare "$SA" "$T/rejected.json" --fail-on-regression 1 >"$T/out" 2>"$T/err"
check "compare: a REJECTED B fails --fail-on-regression" [ $? -eq 1 ]
check "compare: the REJECTED shape is named, not compared" grep -qE '^8192x8192 .* B REJECTED \(timer\)$' "$T/out"
check "compare: no FASTER from a rejected time" has "2 compared: 2 SAME, 0 FASTER" "$T/out"
check "compare: B's verdict in the header" has "2026-12-01T03:38:56Z, REJECTED" "$T/out"
check "compare: says why it fails" has "B ($T/rejected.json) is REJECTED at 8192x8192 (timer check)" "$T/err"
"$K" compare "$SA" "$T/rejected.json" >"$T/out" 2>"$T/err"
check "compare: without --fail-on-regression a REJECTED B exits 0" [ $? -eq 0 ]
"$K" compare "$T/rejected.json" "$SA" --fail-on-regression 1 >"$T/out" 2>"$T/err"
check "compare: an honest B after a cheating A: exit 0" [ $? -eq 0 ]
check "compare: an honest B is no regression against a rejected A" grep -qE '^8192x8192 .* A REJECTED \(timer\)$' "$T/out"
check "compare: ... and nothing is a regression" has "0 regressions beyond 1%" "$T/out"
"$K" compare "$SA" "$T/wrong.json" --fail-on-regression 1 >"$T/out" 2>"$T/err"
check "compare: a WRONG B fails --fail-on-regression" [ $? -eq 1 ]
check "compare: the WRONG shape is named" grep -qE '^8192x8192 .* B WRONG \(tolerance\)$' "$T/out"
check "compare: nothing compared says so" has "no shape could be compared" "$T/err"
"$K" compare "$SA" "$T/noshapes.json" --fail-on-regression 1 >"$T/out" 2>"$T/err"
check "compare: a B without shapes fails --fail-on-regression" [ $? -eq 1 ]
check "compare: a B without shapes: nothing compared" has "fails --fail-on-regression: nothing compared" "$T/out"
"$K" compare "$SA" "$T/noisy.json" --fail-on-regression 1 >"$T/out" 2>"$T/err"
check "compare: a NOISY shape does not fail --fail-on-regression" [ $? -eq 0 ]
check "compare: a NOISY shape is shown, marked, not counted" grep -qE '^65536x1024 .* \(B NOISY, not counted\)$' "$T/out"
check "compare: NOISY counted apart" has "2 compared: 2 SAME, 0 FASTER, 0 SLOWER, 0 AMBIGUOUS (1 NOISY not counted)" "$T/out"
"$K" compare "$SA" "$T/rejected.json" --fail-on-regression 1 --json >"$T/j" 2>"$T/err"
check "compare --json: verdicts, counted, failed" py "$T/j" '
s = d["shapes"]
assert s[0]["a_verdict"] == "PASS" and s[0]["b_verdict"] == "REJECTED" and s[0]["status"] is None, s[0]
assert s[0]["why"] == "B REJECTED (timer)" and s[1]["counted"] is True
assert d["b"]["verdict"] == "REJECTED" and d["compared"] == 2 and d["failed"] is True'
"$K" worth softmax --result "$SA" --json >"$T/worth.json" 2>"$T/err"
"$K" compare "$SA" "$T/j" >"$T/out" 2>"$T/err"
bad "compare: compare --json is not an eval result" "not an eval result: this is the output of kproof compare --json" "$K" compare "$SA" "$T/j"
bad "compare: worth --json is not an eval result" "not an eval result: this is the output of kproof worth --json" "$K" compare "$T/worth.json" "$SA"

"$K" report "$T/rejected.json" -o "$T/rej.html" >"$T/out" 2>"$T/err"
check "report: a REJECTED result: exit 0" [ $? -eq 0 ]
check "report: the rejected shape shows its check, not a time" has "no time (timer check)" "$T/rej.html"
check "report: the rejected shape's sentence is its verdict" has "softmax_f32 8192x8192: REJECTED by the timer check" "$T/rej.html"
check "report: a point per passing shape, none for the rejected one" [ "$(grep -o 'class="pt cand"' "$T/rej.html" | wc -l)" -eq 2 ]
"$K" worth softmax --result "$T/rejected.json" >"$T/out" 2>"$T/err"
check "worth --result: a rejected shape's times are not used" has "$T/rejected.json at 8192x8192: REJECTED by the timer check: no time of it is used" "$T/out"
check "worth --result: its best time is unknown" grep -qE '^8192x8192 .* unknown +- +- +unknown$' "$T/out"
"$K" worth softmax --result "$T/rejected.json" --json >"$T/j" 2>"$T/err"
check "worth --json: not_used" py "$T/j" '
assert d["not_used"] == [{"file": sys.argv[1].replace("/j", "/rejected.json"), "shape_text": "8192x8192", "verdict": "REJECTED", "check": "timer"}], d["not_used"]
assert d["shapes"][0]["best"] is None'

# ---- numbers out of their fields' range ---------------------------------------
edit() { # edit OUT PYTHON: SB with d edited
    python3 -c "import json,sys
d=json.load(open(sys.argv[1])); $2
json.dump(d, open(sys.argv[2], 'w'))" "$SB" "$1"
}
edit "$T/n1.json" 'd["shapes"][0]["timing"]["samples"] = 1e300; d["shapes"][0]["timing"].pop("samples_s", None)'
bad "report: samples 1e300" "shape 0: timing.samples is 1e+300, outside 0 to 2147483647" "$K" report "$T/n1.json"
edit "$T/n2.json" 'd["env"]["throttle_before"] = -1'
bad "compare: a negative throttle mask" "env.throttle_before is -1" "$K" compare "$SA" "$T/n2.json"
edit "$T/n3.json" 'd["shapes"][1]["audit"] = [{"name": "k", "stream": 1e300}]'
bad "worth: an audit stream past 2^32" "shape 1: audit[0].stream is 1e+300" "$K" worth --result "$T/n3.json"
edit "$T/n4.json" 'd["schema"] = 1e300'
bad "report: schema 1e300" "schema 1e+300 is not a schema version" "$K" report "$T/n4.json"
edit "$T/n5.json" 'd["env"]["gpu"] = "NVIDIA H100 SXM"; d["env"]["peak_gbs"] = 1e300'
timeout 20 "$K" report "$T/n5.json" >"$T/out" 2>"$T/err"
check "report: a bandwidth of 1e300 GB/s is refused, at once" [ $? -eq 64 ]
check "report: ... naming the field" has "env.peak_gbs is 1e+300" "$T/err"
edit "$T/n6.json" 'd["env"]["gpu"] = "NVIDIA H100 SXM"; d["env"]["peak_gbs"] = None; t = d["shapes"][0]["timing"]; t["median_s"] = 5e-324; t.pop("samples_s", None)'
timeout 20 "$K" report "$T/n6.json" -o "$T/n6.html" >"$T/out" 2>"$T/err"
check "report: a median too small to plot: exit 0" [ $? -eq 0 ]
check "report: ... the point is left out with a note" has "point outside the plot's range left out" "$T/n6.html"
check "report: ... and the page stays small" [ "$(wc -c <"$T/n6.html")" -lt 100000 ]

# ---- report -o: whole or not at all, never an input -----------------------------
"$K" report "$SA" -o "$T/page.html" >"$T/out" 2>"$T/err"
cp "$T/page.html" "$T/page0.html"
# A full disk, as the file-size limit makes it (EFBIG where ENOSPC would be).
( trap '' XFSZ; ulimit -f 8; "$K" report "$SA" "$SB" "$MM" "$NAIVE" -o "$T/page.html" ) >"$T/out" 2>"$T/err"
check "report -o on a full disk: exit 64" [ $? -eq 64 ]
check "report -o on a full disk: says so" has "cannot write $T/page.html" "$T/err"
check "report -o on a full disk: the previous page is kept" cmp -s "$T/page.html" "$T/page0.html"
check "report -o on a full disk: no temporary file left" [ -z "$(ls -A "$T" | grep kproof-out)" ]
bad "report -o into a missing folder" "cannot write" "$K" report "$SA" -o "$T/nope/page.html"
cp "$SB" "$T/input.json"
ln -s "$T/input.json" "$T/link.json"
bad "report -o an input" "writing it would destroy it" "$K" report "$SA" "$T/input.json" -o "$T/input.json"
bad "report -o an input by another name" "writing it would destroy it" "$K" report "$T/link.json" -o "$T/./input.json"
check "report -o an input: the input is untouched" cmp -s "$T/input.json" "$SB"

# ---- options once, closed pipes, calibrations -------------------------------------
bad "report: -o twice" "--output given twice" "$K" report "$SA" -o "$T/a.html" --output "$T/b.html"
bad "compare: --margin twice" "--margin given twice" "$K" compare "$SA" "$SB" --margin 1 --margin 5
bad "compare: --fail-on-regression twice" "--fail-on-regression given twice" "$K" compare "$SA" "$SB" --fail-on-regression 5 --fail-on-regression 1
bad "worth: --device twice" "--device given twice" "$K" worth softmax --device H200 --device H100
bad "worth: --op twice" "--op given twice" "$K" worth --op softmax --op sum --device H200
for c in "report $SA" "compare $SA $SB" "worth softmax --result $SA"; do
    # shellcheck disable=SC2086
    ( sleep 0.3; "$K" $c 2>"$T/err"; echo $? >"$T/rc" ) | true
    check "${c%% *} into a closed pipe: exit 70, not SIGPIPE" [ "$(cat "$T/rc")" -eq 70 ]
done
for g in "inf" "-5" "1e-300" "1e300"; do
    printf 'copy_gbs 4000\ngemm_f32_gflops %s\ngemm_bf16_gflops 780000\n' "$g" >"$T/calib2"
    bad "worth --calib: a GEMM rate of $g" "not a kproof calibration" "$K" worth softmax --device H200 --calib "$T/calib2"
done

# ---- traces: rmsnorm is an op --------------------------------------------------
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"vectorized_rms_norm_kernel<float>","dur":300},{"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16","dur":700}]}' >"$T/tr1.json"
"$K" worth rmsnorm --trace "$T/tr1.json" --device H200 >"$T/out" 2>"$T/err"
check "worth rmsnorm --trace: exit 0" [ $? -eq 0 ]
check "worth rmsnorm --trace: the rms norm kernel is rmsnorm's share" has "share of the workload: 30.0% (the trace)" "$T/out"
check "worth rmsnorm --trace: by op" has "matmul 70.0%, softmax 0.0%, layernorm 0.0%, rmsnorm 30.0%" "$T/out"
check "worth rmsnorm --trace: no 'no kernel maps' warning" [ ! -s "$T/err" ]

[ $fail -eq 0 ] && echo "worth_cli: all ok" || echo "worth_cli: FAILED"
exit $fail
