# lab/runs/lib.sh: what a run script shares (sourced). A run works under
# /tmp/<name> and packs it into one archive, $OUT/run.tgz (a remote GPU
# machine may bring back only a few files from $OUT), after each step so a
# run cut short still returns what it did.
#   . "$(dirname "$0")/lib.sh"; lab_run_begin NAME   (sets FINAL and OUT)
#   ...; pack
lab_run_begin() {
  FINAL=${OUT:-$PWD/lab-out}
  export OUT=/tmp/$1 # lab/screen.sh and gpu-check.sh write under it
  rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
}
pack() { tar czf "$FINAL/.run.tgz" -C "$OUT" . 2>/dev/null && mv -f "$FINAL/.run.tgz" "$FINAL/run.tgz"; }
# The commit given as $1 and the GPU into $OUT/commit.txt, for a run that
# runs no gpu-check (whose env.txt says both). A copied tree may have a
# stale .git, so the commit is the argument, not git log.
lab_stamp() {
  echo "commit ${1:-unknown}" >"$OUT/commit.txt"
  nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >>"$OUT/commit.txt" 2>&1
}
