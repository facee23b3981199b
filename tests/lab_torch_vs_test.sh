#!/usr/bin/env bash
# lab/torch_vs.py without a GPU and without torch: a torch that fails on
# import sits first on the path, so every step here shows it is not needed.
# Checks kproof's nvcc command (read from src/core/backends.c) and, where
# nvcc exists, that it builds a small kernel file into a shared object for
# sm_90a that exports the entry point; the argument errors; and the table
# and JSON from canned samples (a kernel 0.8% slower than torch.compile, an
# A/A copy of it, a copy, a skipped shape and a failed contender).
#   tests/lab_torch_vs_test.sh SOURCE_DIR
set -uo pipefail
S=$1
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$T/poison/torch" "$T/kernels/rmsnorm/cuda"
echo 'raise ImportError("lab/torch_vs.py imported torch where it must not")' >"$T/poison/torch/__init__.py"
export PYTHONPATH=$T/poison${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1
TV=(python3 "$S/lab/torch_vs.py")

# kproof's command: the backend's flags, the tree's include folder, the libraries.
cmd=$("${TV[@]}" --print-build "$S/kernels/rmsnorm/cuda/f32-02-keep-x.cu" --build-dir "$T/b") || fail "--print-build: $cmd"
for want in " -O3 " " -shared " "-cudart shared" "-gencode arch=compute_90a,code=sm_90a" "-x cu" "-I$S/include" \
  "-o $T/b/libf32-02-keep-x.so" " -lcublas"; do
  case "$cmd" in *"$want"*) ;; *) fail "the build command lacks '$want': $cmd" ;; esac
done
echo "ok: kproof's nvcc command"

# Argument errors: exit 2 with a reason, before any build or torch.
bad() { # want-in-message, args...
  local want=$1 out; shift
  out=$("${TV[@]}" "$@" --build-dir "$T/b" 2>&1); rc=$?
  [ "$rc" = 2 ] || fail "'$*' exited $rc, want 2: $out"
  case "$out" in *"$want"*) ;; *) fail "'$*' does not say '$want': $out" ;; esac
}
K=$S/kernels/rmsnorm/cuda/f32-02-keep-x.cu
bad "is not ROWSxCOLS" --kernel "$K" --shapes 16384x4096,3x
bad "is not one of" --kernel "$K" --modes eager,fast
bad "no kernel file" --kernel "$T/none.cu"
bad "no kernel to time" --kernel "$K" --dtype bf16
bad "not known to this tool" --kernel "$S/kernels/softmax/cuda/f32-01-naive.cu"
bad "two kernels named" --kernel "$K" --kernel "$K"
[ ! -e "$T/b" ] || fail "an argument error built something"
echo "ok: argument errors"

# The build, where nvcc exists: a small entry point, for sm_90a.
if command -v "${NVCC:-nvcc}" >/dev/null; then
  cat >"$T/kernels/rmsnorm/cuda/f32-90-scale.cu" <<'EOF'
#include <kproof/kernel.h>
static __global__ void scale(const float *x, const float *w, float *y, int64_t n, int64_t cols) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * w[i % cols];
}
KP_ENTRY int kp_rmsnorm_f32(const float *x, const float *w, float *y, int64_t rows, int64_t cols, kp_stream s) {
    if (rows * cols > 0) scale<<<(unsigned)((rows * cols + 255) / 256), 256, 0, s>>>(x, w, y, rows * cols, cols);
    return cudaGetLastError() != cudaSuccess;
}
EOF
  out=$("${TV[@]}" --build-only --kernel "$T/kernels/rmsnorm/cuda/f32-90-scale.cu" --build-dir "$T/b" 2>&1) \
    || fail "--build-only: $out"
  so=$T/b/libf32-90-scale.so
  nm -D "$so" | grep -q ' T kp_rmsnorm_f32$' || fail "$so does not export kp_rmsnorm_f32"
  strings -a "$so" | grep -q 'arch sm_90a' || fail "$so holds no sm_90a code"
  echo "ok: the shared object builds for sm_90a and exports its entry point"
else
  echo "no nvcc: the build step is left out"
fi

# The table and JSON from canned samples (pure Python statistics).
python3 - "$T/canned.json" <<'EOF'
import json, random, sys
r = random.Random(7)
n = 60
drift = [1 + 0.002 * r.random() for _ in range(n)]  # shared by a round's contenders
def s(us, sd):
    return [us * 1e-6 * d + r.gauss(0, sd) * 1e-6 for d in drift]
blk = {"op": "rmsnorm", "dtype": "f32", "shape": [16384, 4096], "sets": 8, "kernels": ["f32-02-keep-x"],
       "errors": {"max-autotune": "compile failed"},
       "checks": {"f32-02-keep-x": {"pass": True, "max_e": 0.02, "rms_e": 0.004}},
       "samples": {"f32-02-keep-x": s(125.6, 0.05), "f32-02-keep-x/aa": s(125.6, 0.05),
                   "eager": s(131.0, 0.1), "compile": s(124.6, 0.05), "copy": s(126.6, 0.05)}}
skip = {"op": "rmsnorm", "dtype": "f32", "shape": [4096, 16384], "skipped": "deadline", "kernels": ["f32-02-keep-x"]}
json.dump({"schema": 1, "tool": "torch_vs.py", "blocks": [blk, skip]}, open(sys.argv[1], "w"))
EOF
out=$("${TV[@]}" --table "$T/canned.json" --out "$T/again.json" --txt "$T/again.txt" --reps 300) || fail "--table: $out"
expect() { grep -qE -- "$1" <<<"$out" || { echo "$out"; fail "the table lacks /$1/"; }; }
expect '^rmsnorm f32 16384x4096: 60 rounds, 8 input sets$'
expect '^  compile +124\.[0-9]+  \[ *124\.[0-9]+, +124\.[0-9]+\] +101\.[0-9]%$'
expect '^  f32-02-keep-x +125\.[0-9]+ .* 100\.[0-9]%$'
expect '^  copy +126\.[0-9]+ .* 100\.0%$'
expect '^  ratio +compile / f32-02-keep-x = 0\.99[0-9]+ \[0\.99[0-9]+, 0\.99[0-9]+\] \(per-round median 0\.99[0-9]+\): kernel SLOWER$'
expect '^  A/A +f32-02-keep-x/aa / f32-02-keep-x = (1\.000|0\.999)[0-9] .*: ok$'
expect '^  max-autotune +compile failed$'
expect '^  check f32-02-keep-x +PASS'
expect '^rmsnorm f32 4096x16384: 0 rounds'
expect '^  skipped: deadline$'
[ "$(cat "$T/again.txt")" = "$out" ] || fail "--txt differs from what was printed"
python3 - "$T/again.json" <<'EOF' || fail "the JSON's summary"
import json, sys
b = json.load(open(sys.argv[1]))["blocks"][0]["summary"]
assert b["rounds"] == 60 and b["best_torch"] == "compile", b
r = {x["kind"]: x for x in b["ratios"]}
assert r["best torch / kernel"]["hi"] < 1 and r["A/A"]["lo"] <= 1 <= r["A/A"]["hi"], r
assert abs(b["contenders"]["copy"]["pct_of_copy"] - 100) < 1e-9
EOF
echo "ok: the table and JSON from canned samples"
