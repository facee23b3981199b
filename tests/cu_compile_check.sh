#!/usr/bin/env bash
# cu_compile_check.sh: every project .cu candidate in DIR compiles for
# sm_90a with the flags kproof builds a candidate with (src/core/backends.c:
# -O3 -std=c++17, compute_90a -> sm_90a), as a device image (-cubin)
# instead of a shared library. That runs the steps that judge the source:
# the CUDA front end on the whole file (host functions and their template
# instantiations included: an undeclared name or a bad call in the entry
# point fails here too), cicc and ptxas for sm_90a. What it leaves out is
# the host compiler's pass over the host half, the fat binary and the
# link: half of an object build's CPU (kernels/layernorm/cuda: 85 CPU-s
# as objects, 42 as device images on a 2-core host); gcc on the host half
# seldom rejects what the front end accepted, but what only the host
# half sees is not checked: code behind #ifndef __CUDA_ARCH__, host inline
# asm, host intrinsics. The compiler's output is
# shown for the files that fail.
# It is a test rather than a build step so that it runs beside the
# integration tests, which spend much of their time waiting on workers,
# timeouts and the device lock; at a lower priority (nice), so that the
# timed calls of the tests beside it keep the CPU first.
# A folder of many heavy files runs as parts, each a ctest test of its own
# (I N: every N-th file of DIR in name order, from the I-th), so that the
# last compiles left at the end of a run spread over the cores.
#   tests/cu_compile_check.sh NVCC SOURCE_DIR DIR [I N] (DIR relative to SOURCE_DIR)
set -u
NVCC=$1
S=$2
D=$3
PI=${4:-0}
PN=${5:-1}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
NICE=()
nice -n 10 true 2>/dev/null && NICE=(nice -n 10)
n=0
i=-1
bad=0
for f in "$S/$D"/*.cu; do
    [ -e "$f" ] || continue
    i=$((i + 1))
    [ $((i % PN)) -eq "$PI" ] || continue
    n=$((n + 1))
    if "${NICE[@]}" "$NVCC" -std=c++17 -O3 -I"$S/include" -gencode=arch=compute_90a,code=sm_90a -x cu \
        -cubin "$f" -o "$T/x.cubin" >"$T/log" 2>&1; then
        echo "ok   $D/${f##*/}"
    else
        echo "FAIL $D/${f##*/} does not compile for sm_90a:"
        sed 's/^/     /' "$T/log" | head -40
        bad=1
    fi
done
[ "$n" -gt 0 ] || { echo "FAIL no .cu file in $D (part $PI of $PN)"; exit 1; }
echo "$n files in $D (part $PI of $PN): $([ $bad = 0 ] && echo all compile || echo some do not compile)"
exit $bad
