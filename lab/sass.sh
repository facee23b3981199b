#!/usr/bin/env bash
# lab/sass.sh: where a kernel's loads sit in its machine code, for finding
# loads that wait on another load (layernorm f32 05's pivot: see f32 10).
#   lab/sass.sh KERNEL.cu MANGLED_NAME [MORE_NAMES...]
# Builds the file for sm_90a with nvcc, then prints per function the
# global loads and stores, the copies between registers, barriers and
# branches, with their addresses. Needs cuobjdump on PATH or in $CUOBJDUMP
# (not on this machine: `python3 -m pip download --no-deps
# nvidia-cuda-cuobjdump`, unzip, and point CUOBJDUMP at nvidia/cu13/bin/).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 KERNEL.cu MANGLED_NAME..." >&2; exit 64; }
CUOBJDUMP=${CUOBJDUMP:-cuobjdump}
command -v "$CUOBJDUMP" >/dev/null || { echo "$0: no cuobjdump (set CUOBJDUMP)" >&2; exit 69; }
src=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I"$root/include" -cubin -o "$tmp/k.cubin" "$src"
echo "# $src ($(nvcc --version | tail -1); $("$CUOBJDUMP" --version | tail -1))"
for fn in "$@"; do
  echo "## $fn"
  "$CUOBJDUMP" -sass -fun "$fn" "$tmp/k.cubin" | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed -E 's/ +;.*$//; s/^\s+//' |
    grep -nE 'LDG|LDGSTS|STG|MOV R[0-9]+, R|BAR|BRA|EXIT' || true
done
