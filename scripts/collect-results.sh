#!/usr/bin/env bash
# collect-results.sh: one gpu-check results.tgz into a results folder.
#   scripts/collect-results.sh RESULTS_TGZ DEST_DIR
# Unpacks it, writes DEST_DIR/summary.md with scripts/summarize.py, and
# leaves the README (what ran, on which commit and machine, what to read
# with care) to be written by hand: numbers in docs come from these files.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 RESULTS_TGZ DEST_DIR" >&2; exit 64; }
tgz=$1 dest=$2
[ -r "$tgz" ] || { echo "$0: cannot read $tgz" >&2; exit 64; }
mkdir -p "$dest"
tar xzf "$tgz" -C "$dest"
rm -f "$dest/summarize.err"
python3 "$(dirname "$0")/summarize.py" "$dest" >"$dest/summary.md"
echo "unpacked into $dest ($(find "$dest" -type f | wc -l) files); write $dest/README.md before committing"
