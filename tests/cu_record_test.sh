#!/usr/bin/env bash
# The compile checks' record (tests/cu_compiled.txt, written by
# scripts/cu-compiled.sh): on a scratch tree with one file that compiles
# and one that does not, only the first is recorded; with the record a
# second check skips it; a change to its bytes, to a project header (in
# include/ or beside it), to the compiler's version or to nvcc's flags
# from the environment compiles it again; KP_CU_RECHECK=1 ignores the
# record; a file for which ptxas reports a performance loss (serialized
# wgmma) fails and is not recorded.
#   tests/cu_record_test.sh NVCC SOURCE_DIR
set -u
NVCC=$1
S=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$T/include/kproof" "$T/kernels/x/cuda" "$T/tests"
cp "$S/include/kproof/"*.h "$T/include/kproof/"
printf '#include <kproof/kernel.h>\n__global__ void k(float *x) { x[0] = 1.0f; }\n' >"$T/kernels/x/cuda/a.cu"
printf '__global__ void k(float *x) { x[0] = undeclared; }\n' >"$T/kernels/x/cuda/b.cu"
check() { bash "$S/tests/cu_compile_check.sh" "$NVCC" "$T" kernels/x/cuda >"$T/out" 2>&1; }
KP_CU_RECORD="$T/tests/cu_compiled.txt" check && fail "b.cu does not compile and the check passed"
grep -q '^ok   kernels/x/cuda/a.cu$' "$T/out" || fail "a.cu not compiled: $(cat "$T/out")"
grep -q '^FAIL kernels/x/cuda/b.cu' "$T/out" || fail "b.cu not reported"
[ "$(wc -l <"$T/tests/cu_compiled.txt")" = 1 ] && grep -q ' kernels/x/cuda/a.cu$' "$T/tests/cu_compiled.txt" ||
    fail "the record is not a.cu alone: $(cat "$T/tests/cu_compiled.txt")"
check
grep -q '^ok   kernels/x/cuda/a.cu (these bytes compiled before' "$T/out" || fail "a.cu compiled again: $(cat "$T/out")"
grep -q '^FAIL kernels/x/cuda/b.cu' "$T/out" || fail "b.cu not compiled with the record"
rm "$T/kernels/x/cuda/b.cu"
check || fail "a.cu alone: $(cat "$T/out")"
KP_CU_RECHECK=1 check
grep -q '^ok   kernels/x/cuda/a.cu$' "$T/out" || fail "KP_CU_RECHECK=1 did not compile a.cu"
echo '/* changed */' >>"$T/include/kproof/kernel.h"
check
grep -q '^ok   kernels/x/cuda/a.cu$' "$T/out" || fail "a header changed and a.cu was not compiled again"
cp "$S/include/kproof/kernel.h" "$T/include/kproof/kernel.h"
# A header beside the file (.cuh): added, then changed.
KP_CU_RECORD="$T/tests/cu_compiled.txt.new" check
mv "$T/tests/cu_compiled.txt.new" "$T/tests/cu_compiled.txt"
echo '#define KP_BESIDE 1' >"$T/kernels/x/cuda/beside.cuh"
check
grep -q '^ok   kernels/x/cuda/a.cu$' "$T/out" || fail "a .cuh added beside a.cu and a.cu was not compiled again"
KP_CU_RECORD="$T/tests/cu_compiled.txt.new" check
mv "$T/tests/cu_compiled.txt.new" "$T/tests/cu_compiled.txt"
check
grep -q '^ok   kernels/x/cuda/a.cu (these bytes compiled before' "$T/out" || fail "a.cu compiled again with its .cuh unchanged"
echo '#define KP_BESIDE 2' >"$T/kernels/x/cuda/beside.cuh"
check
grep -q '^ok   kernels/x/cuda/a.cu$' "$T/out" || fail "the .cuh beside a.cu changed and a.cu was not compiled again"
rm "$T/kernels/x/cuda/beside.cuh"
echo '/* changed */' >>"$T/kernels/x/cuda/a.cu"
check
grep -q '^ok   kernels/x/cuda/a.cu$' "$T/out" || fail "a.cu changed and was not compiled again"
# Another compiler: a wrapper whose --version differs.
printf '#!/bin/sh\n[ "$1" = --version ] && { "%s" --version; echo other; exit 0; }\nexec "%s" "$@"\n' "$NVCC" "$NVCC" >"$T/nvcc2"
chmod +x "$T/nvcc2"
KP_CU_RECORD="$T/tests/cu_compiled.txt.new" check
mv "$T/tests/cu_compiled.txt.new" "$T/tests/cu_compiled.txt"
check
grep -q '^ok   kernels/x/cuda/a.cu (these bytes compiled before' "$T/out" || fail "the new record is not used"
bash "$S/tests/cu_compile_check.sh" "$T/nvcc2" "$T" kernels/x/cuda >"$T/out" 2>&1
grep -q '^ok   kernels/x/cuda/a.cu$' "$T/out" || fail "another nvcc version and a.cu was not compiled again"
NVCC_APPEND_FLAGS=-DKP_RECORD_TEST check
grep -q '^ok   kernels/x/cuda/a.cu$' "$T/out" || fail "other flags from the environment and a.cu was not compiled again"
# A kernel ptxas compiles with every wgmma serialized (an accumulator
# register used by another instruction while its wgmma may be in flight)
# fails, and is not recorded.
cat >"$T/kernels/x/cuda/c.cu" <<'EOF'
#include <stdint.h>
__global__ void k(float *o, uint64_t da, uint64_t db, int n) {
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    for (int i = 0; i < n; i++) {
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, 1, 0;\n\t"
                     "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 1;\n}"
                     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(da), "l"(db));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        if (i == 3) d0 = 0.0f;
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
    o[threadIdx.x] = d0 + d1 + d2 + d3;
}
EOF
KP_CU_RECORD="$T/tests/cu_compiled.txt" check && fail "c.cu has its wgmma serialized and the check passed"
grep -q '^FAIL kernels/x/cuda/c.cu compiles, but ptxas reports a performance loss' "$T/out" ||
    fail "c.cu's performance loss not reported: $(cat "$T/out")"
grep -q ' kernels/x/cuda/c.cu$' "$T/tests/cu_compiled.txt" && fail "c.cu recorded"
echo "ok: the record skips only unchanged files that compiled"
