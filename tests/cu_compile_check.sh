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
# shown for the files that fail. A file that compiles but for which ptxas
# reports any "Potential Performance Loss" fails too (C7514/C7515: every
# wgmma of a kernel serialized, which cost a matmul step 8% on an H100
# while it stayed right; or a setmaxnreg ignored): the project's kernels
# are there to be fast.
# It is a test rather than a build step so that it runs beside the
# integration tests, which spend much of their time waiting on workers,
# timeouts and the device lock; at a lower priority (nice), so that the
# timed calls of the tests beside it keep the CPU first.
# A file whose exact bytes, with the same project headers (include/ and
# the .cuh/.h files beside it), the same flags and the same nvcc and host
# compiler (their --version; nvcc's flags from the environment) compiled
# before is not compiled again (system headers are the host compiler's
# and the toolkit's, named by their versions): tests/cu_compiled.txt
# holds one key a file that compiled (sha256 of those inputs), written by
# scripts/cu-compiled.sh, which compiles every file it lists. A changed
# file, header, flag or compiler gives a new key, so that file is compiled
# here; KP_CU_RECHECK=1 compiles every file whatever the record says.
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
FLAGS=(-std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -x cu -cubin) # and -I<tree>/include
REC="$S/tests/cu_compiled.txt"
# The key of a file: its bytes, the project headers it may include, the
# flags (the include path relative to the tree) and the compiler.
# nvcc preprocesses with the host compiler (its system headers), and reads
# flags from the environment: both are part of the key.
# (nvcc's default host compiler is gcc from PATH.)
CC=${NVCC_CCBIN:-gcc}
VERSION=$("$NVCC" --version 2>&1
    if command -v "$CC" >/dev/null 2>&1; then "$CC" --version 2>&1 | head -1; else echo "no host compiler $CC"; fi
    echo "NVCC_PREPEND_FLAGS=${NVCC_PREPEND_FLAGS:-} NVCC_APPEND_FLAGS=${NVCC_APPEND_FLAGS:-} NVCC_CCBIN=${NVCC_CCBIN:-}")
key() {
    local d=${1%/*}
    {
        echo "$VERSION"
        echo "${FLAGS[*]} -Iinclude; no ptxas performance loss"
        sha256sum <"$1"
        (cd "$S" && find include "${d#"$S"/}" -maxdepth 3 \( -name '*.h' -o -name '*.cuh' \) -type f | LC_ALL=C sort |
            while read -r h; do printf '%s ' "$h"; sha256sum <"$h"; done)
    } | sha256sum | cut -c1-64
}
n=0
i=-1
bad=0
for f in "$S/$D"/*.cu; do
    [ -e "$f" ] || continue
    i=$((i + 1))
    [ $((i % PN)) -eq "$PI" ] || continue
    n=$((n + 1))
    k=$(key "$f")
    if [ -z "${KP_CU_RECHECK:-}" ] && [ -f "$REC" ] && grep -Fqx "$k $D/${f##*/}" "$REC"; then
        echo "ok   $D/${f##*/} (these bytes compiled before with this nvcc: tests/cu_compiled.txt)"
        [ -n "${KP_CU_RECORD:-}" ] && echo "$k $D/${f##*/}" >>"$KP_CU_RECORD"
        continue
    fi
    if ! "${NICE[@]}" "$NVCC" "${FLAGS[@]}" -I"$S/include" "$f" -o "$T/x.cubin" >"$T/log" 2>&1; then
        echo "FAIL $D/${f##*/} does not compile for sm_90a:"
        sed 's/^/     /' "$T/log" | head -40
        bad=1
    elif grep -q "Potential Performance Loss" "$T/log"; then
        echo "FAIL $D/${f##*/} compiles, but ptxas reports a performance loss:"
        grep "Potential Performance Loss" "$T/log" | sed 's/^/     /' | head -10
        bad=1
    else
        echo "ok   $D/${f##*/}"
        [ -n "${KP_CU_RECORD:-}" ] && echo "$k $D/${f##*/}" >>"$KP_CU_RECORD"
    fi
done
[ "$n" -gt 0 ] || { echo "FAIL no .cu file in $D (part $PI of $PN)"; exit 1; }
echo "$n files in $D (part $PI of $PN): $([ $bad = 0 ] && echo all compile || echo some fail)"
exit $bad
