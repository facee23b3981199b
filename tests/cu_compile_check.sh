#!/usr/bin/env bash
# cu_compile_check.sh: every project .cu candidate in DIR compiles for
# sm_90a with the flags kproof builds a candidate with (src/proc/build.c:
# -O3 -std=c++17, compute_90a -> sm_90a, ptxas included), as an object
# (-c) instead of a shared library. The compiler's output is shown for the
# files that fail.
# It is a test rather than a build step so that it runs beside the
# integration tests, which spend much of their time waiting on workers,
# timeouts and the device lock; at a lower priority (nice), so that the
# timed calls of the tests beside it keep the CPU first.
#   tests/cu_compile_check.sh NVCC SOURCE_DIR DIR (DIR relative to SOURCE_DIR)
set -u
NVCC=$1
S=$2
D=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
NICE=()
nice -n 10 true 2>/dev/null && NICE=(nice -n 10)
n=0
bad=0
for f in "$S/$D"/*.cu; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    if "${NICE[@]}" "$NVCC" -std=c++17 -O3 -I"$S/include" -gencode=arch=compute_90a,code=sm_90a -Xcompiler -fPIC -x cu \
        -c "$f" -o "$T/x.o" >"$T/log" 2>&1; then
        echo "ok   $D/${f##*/}"
    else
        echo "FAIL $D/${f##*/} does not compile for sm_90a:"
        sed 's/^/     /' "$T/log" | head -40
        bad=1
    fi
done
[ "$n" -gt 0 ] || { echo "FAIL no .cu file in $D"; exit 1; }
echo "$n files in $D: $([ $bad = 0 ] && echo all compile || echo some do not compile)"
exit $bad
