# lab/calls/lib.sh: what a device call script shares (sourced). A call
# works under /tmp/<name> and packs it into one archive, $OUT/call.tgz
# (the device tool brings back at most 8 files from $OUT), after each step
# so a call cut short still returns what it did.
#   . "$(dirname "$0")/lib.sh"; lab_call_begin NAME   (sets FINAL and OUT)
#   ...; pack
lab_call_begin() {
  FINAL=${OUT:-$PWD/lab-out}
  export OUT=/tmp/$1 # lab/screen.sh and gpu-check.sh write under it
  rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
}
pack() { tar czf "$FINAL/.call.tgz" -C "$OUT" . 2>/dev/null && mv -f "$FINAL/.call.tgz" "$FINAL/call.tgz"; }
# The commit given as $1 and the GPU into $OUT/commit.txt, for a call that
# runs no gpu-check (whose env.txt says both). The device's copy has a
# stale .git, so the commit is the argument, not git log.
lab_stamp() {
  echo "commit ${1:-unknown}" >"$OUT/commit.txt"
  nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >>"$OUT/commit.txt" 2>&1
}
