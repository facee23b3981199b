#!/usr/bin/env bash
# scripts/cu-compiled.sh: writes tests/cu_compiled.txt, the record of the
# project .cu candidates (kernels/, exploits/) that compile for sm_90a:
# one key a file (tests/cu_compile_check.sh says what goes into it). A
# file whose key is recorded already is not compiled again; every other
# file is, and only those that pass the check are recorded (they compile,
# and ptxas reports no performance loss; --all: every file compiled). Run
# it after changing a .cu file so that `make test` need not compile what
# is unchanged; exits 1 when a file fails.
#   scripts/cu-compiled.sh [--all]
set -u
cd "$(dirname "$0")/.."
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "cu-compiled: no nvcc (set NVCC)" >&2; exit 2; }
case "${1:-}" in
    --all) export KP_CU_RECHECK=1 ;;
    "") ;;
    *) echo "usage: scripts/cu-compiled.sh [--all]" >&2; exit 2 ;;
esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
: >"$T/rec"
bad=0
# One folder a job, as many jobs as cores.
find kernels exploits -name '*.cu' -printf '%h\n' | LC_ALL=C sort -u |
    xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} env KP_CU_RECORD="$T/rec" \
        bash tests/cu_compile_check.sh "$NVCC" "$PWD" {} >"$T/log" 2>&1 || bad=1
grep -v '^ok ' "$T/log" | grep -v ' files in ' || true
LC_ALL=C sort -k2 "$T/rec" >tests/cu_compiled.txt
echo "cu-compiled: $(wc -l <tests/cu_compiled.txt) files recorded in tests/cu_compiled.txt$([ $bad = 0 ] || echo '; some fail the check (above)')"
exit $bad
