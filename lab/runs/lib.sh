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
# matmul's 16 partial and unaligned extras for the row-class C stores (as
# KP_CORRECT_ARGS): row-class tiles with N odd and even, C's rows at every
# alignment, dead tiles, and the small shapes that take other paths.
MM_ROWCLASS_EXTRAS=--shape,768x520x72,--shape,1024x1030x1001,--shape,2048x1030x1001,--shape,4097x4095x4095,--shape,1031x300x9,--shape,4096x4096x4095,--shape,4096x4095x4096,--shape,2049x520x1,--shape,1024x7x9,--shape,1100x256x200,--shape,1024x4097x4095,--shape,1000x1032x8192,--shape,4095x4095x4095,--shape,1024x4095x4095,--shape,3000x263x1031,--shape,1030x1x17
