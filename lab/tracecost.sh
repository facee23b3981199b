#!/usr/bin/env bash
# lab/tracecost.sh: what kproof's device tracing costs a kernel, with
# nothing else of the harness around it. Each kernel file is built once
# into lab/driver.cu; every round runs it at each shape in four processes,
# in a turning order: no tracing, the activity records alone, the API
# callbacks alone, and both (what kproof's worker switches on). Per mode:
# the median over rounds of each process's median of CALLS cold calls, the
# spread of those, and the change against no tracing.
#   lab/tracecost.sh ROUNDS CALLS KERNEL.cu:ROWS:COLS ...
# LAB_MODES (default "off activity api both") picks the modes; off must be
# among them. LAB_REUSE=1 keeps a driver already built in $W from this
# source (lab/driver-build.sh). $OUT/tracecost-raw.txt keeps every process's
# line with what the kernel records said (registers a thread, shared bytes).
# Not a result of record (no checks, no held stream, the driver's own
# inputs); it says whether a difference kproof's tracecost stage shows
# comes from CUPTI itself, and from which half.
set -uo pipefail
OUT=${OUT:-$PWD/lab-out}
W=${LAB_DIR:-$OUT.lab}
mkdir -p "$OUT" "$W"
rounds=$1 calls=$2; shift 2
specs=("$@")
. "$(dirname "$0")/driver-build.sh"
export -f driver_build driver_exe family_of; export W
printf '%s\n' "${specs[@]}" | cut -d: -f1 | sort -u | xargs -P "${LAB_JOBS:-12}" -I{} bash -c 'driver_build "$1"' _ {}
raw=$W/tracecost-raw.txt; : >"$raw"
read -r -a modes <<<"${LAB_MODES:-off activity api both}"
nm=${#modes[@]}
for r in $(seq 1 "$rounds"); do
  for s in "${specs[@]}"; do
    IFS=: read -r f rows cols <<<"$s"
    exe=$(driver_exe "$f")
    [ -x "$exe" ] || { echo "$r off $s not built" >>"$raw"; continue; }
    for i in $(seq 0 $((nm - 1))); do
      m=${modes[$(( (i + r) % nm ))]}
      o=$(LAB_TRACE=$m "$exe" "$rows" "$cols" "$calls" 2>&1)
      echo "$r $m $s $(tail -1 <<<"$o")$(grep -m1 '^trace' <<<"$o" | sed 's/.*kernel records:/ | kernel records:/')" >>"$raw"
    done
  done
done
cp "$raw" "$OUT/tracecost-raw.txt"
python3 - "$raw" >"$OUT/tracecost.txt" <<'PY'
import re, sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    parts = line.split(maxsplit=3)
    m = re.search(r"median ([\d.]+) us", parts[3] if len(parts) > 3 else "")
    rows.setdefault(parts[2], {}).setdefault(parts[1], []).append(float(m.group(1)) if m else None)
print("kernel shape | mode | median of round medians (us) | min..max over rounds | against off")
for spec, by in rows.items():
    f, r, c = spec.split(":")
    name = f.split("/")[-3] + "-" + f.split("/")[-1].rsplit(".", 1)[0]
    good = {m: [x for x in v if x is not None] for m, v in by.items()}
    base = st.median(good["off"]) if good.get("off") else None
    for m in [m for m in ("off", "activity", "api", "both") if m in by]:
        g = good.get(m) or []
        if not g:
            print(f"{name} {r}x{c} | {m} | failed"); continue
        med = st.median(g)
        rel = f"{100 * (med / base - 1):+.2f}%" if base else "-"
        print(f"{name} {r}x{c} | {m} | {med:.2f} | {min(g):.2f}..{max(g):.2f} | {rel}")
PY
cat "$OUT/tracecost.txt"
