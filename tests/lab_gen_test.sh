#!/usr/bin/env bash
# lab/gen.py writes the lab variants a GPU run screens by exact string
# swaps on the numbered kernels; an edit to a kernel can leave a swap
# matching nothing, found only on the GPU machine, in spent device time.
# Here gen.py runs on a copy of kernels/ and lab/ (every swap asserts that
# its text occurs as often as it expects), and where nvcc exists the
# variants the prepared run scripts (lab/runs/*.sh) name compile for sm_90a.
#   tests/lab_gen_test.sh SOURCE_DIR
set -uo pipefail
S=$1
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cp -r "$S/kernels" "$S/lab" "$S/include" "$T/"
python3 "$T/lab/gen.py" >"$T/gen.out" 2>&1 || { echo "FAIL: lab/gen.py: $(tail -5 "$T/gen.out")"; exit 1; }
n=$(grep -c -- '-lab-' "$T/gen.out")
[ "$n" -ge 50 ] || { echo "FAIL: lab/gen.py wrote $n variants"; exit 1; }
echo "ok: lab/gen.py wrote $n variants"
command -v nvcc >/dev/null || { echo "no nvcc: the compile step is left out"; exit 0; }
# The lab files the prepared run scripts name (lab/runs/*.sh), compiled at
# a lower priority (nice) and as device images (-cubin), as the compile
# checks are (tests/cu_compile_check.sh says what that leaves out).
NICE=()
nice -n 10 true 2>/dev/null && NICE=(nice -n 10)
files=$(grep -ho 'bf16-[0-9]*-lab-[a-z0-9]*\.cu\|f32-[0-9]*-lab-[a-z0-9]*\.cu' "$S"/lab/runs/*.sh | sort -u)
for f in $files; do
  p=$(cd "$T" && ls kernels/*/cuda/"$f" 2>/dev/null | head -1)
  [ -n "$p" ] || { echo "FAIL: $f (named in lab/runs/*.sh) was not generated"; exit 1; }
  "${NICE[@]}" nvcc -O3 -std=c++17 -I"$T/include" -gencode arch=compute_90a,code=sm_90a -cubin "$T/$p" -o "$T/x.cubin" >"$T/nvcc.out" 2>&1 \
    || { echo "FAIL: $p does not compile: $(head -5 "$T/nvcc.out")"; exit 1; }
  echo "ok: $p compiles"
done
