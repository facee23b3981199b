#!/usr/bin/env bash
# lab/screen.sh: a quick screen of kernel variants on the GPU machine, to
# pick which ones kproof should time. Not a result: no checks, generated
# inputs; each call cold (lab/driver.cu). kproof eval decides.
#   lab/screen.sh ROUNDS CALLS KERNEL.cu:ROWS:COLS ...
# Builds every driver in parallel, then runs ROUNDS rounds; each round runs
# every variant once (CALLS calls, median) and a cudaMemcpy of the same
# bytes per shape, in order, so drift hits all alike. Prints and writes
# $OUT/screen.txt: per variant the median over rounds of its medians, the
# spread of those, and the ratio to the copy of its shape.
set -uo pipefail
OUT=${OUT:-$PWD/lab-out}
W=${LAB_DIR:-$OUT.lab}
mkdir -p "$OUT" "$W"
rounds=$1 calls=$2; shift 2
specs=("$@")
. "$(dirname "$0")/driver-build.sh"
export -f driver_build driver_exe family_of; export W
printf '%s\n' "${specs[@]}" | cut -d: -f1 | sort -u | xargs -P "${LAB_JOBS:-12}" -I{} bash -c 'driver_build "$1"' _ {}
raw=$W/screen-raw.txt; : >"$raw"
for r in $(seq 1 "$rounds"); do
  declare -A copied=()
  for s in "${specs[@]}"; do
    IFS=: read -r f rows cols <<<"$s"
    exe=$(driver_exe "$f")
    [ -x "$exe" ] || { echo "$r $s not built" >>"$raw"; continue; } # listed as failed
    key=$(family_of "$f")-$(basename "$f" | cut -d- -f1) # op-dtype
    if [ -z "${copied[$key:$rows:$cols]:-}" ]; then
      copied[$key:$rows:$cols]=1
      echo "$r copy:$key:$rows:$cols $("$exe" "$rows" "$cols" "$calls" copy 2>&1 | tail -1)" >>"$raw"
    fi
    echo "$r $s $("$exe" "$rows" "$cols" "$calls" 2>&1 | tail -1)" >>"$raw"
  done
  unset copied
done
python3 - "$raw" >"$OUT/screen.txt" <<'PY'
import re, sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    parts = line.split(maxsplit=2)
    m = re.search(r"median ([\d.]+) us", parts[2] if len(parts) > 2 else "")
    rows.setdefault(parts[1], []).append(float(m.group(1)) if m else None)
copy = {}
for k, v in rows.items():
    if k.startswith("copy:"):
        _, key, r, c = k.split(":")
        good = [x for x in v if x is not None]
        if good: copy[(key, r, c)] = st.median(good)
print("variant shape | median of round medians (us) | min..max over rounds | % of copy's rate")
for k, v in rows.items():
    good = [x for x in v if x is not None]
    if not good:
        print(f"{k} | failed: {len(v)} rounds"); continue
    med = st.median(good)
    if k.startswith("copy:"):
        print(f"{k} | {med:.2f} | {min(good):.2f}..{max(good):.2f} | 100.0%"); continue
    f, r, c = k.split(":")
    fam = f.split("/")[-3]; dt = f.split("/")[-1].split("-")[0]
    cp = copy.get((f"{fam}-{dt}", r, c))
    pct = f"{100 * cp / med:.1f}%" if cp else "-"
    print(f"{f.split('/')[-1]} {r}x{c} | {med:.2f} | {min(good):.2f}..{max(good):.2f} | {pct}")
PY
cat "$OUT/screen.txt"
