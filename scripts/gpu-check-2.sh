#!/usr/bin/env bash
# gpu-check-2.sh: two gpu-check.sh runs side by side, one per GPU, on a
# machine with two GPUs (nothing is timed across GPUs, and each run has the
# host's cores to itself for its references).
#
#   scripts/gpu-check-2.sh "ENV... STAGES" "ENV... STAGES"
#
# e.g. scripts/gpu-check-2.sh "device,calibrate,exploits" \
#        "KP_KERNELS=softmax calibrate,correct,kernels"
# Builds once, then runs each list with CUDA_VISIBLE_DEVICES=0 and =1 and
# OUT=$OUT/g0 and $OUT/g1.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/g0" "$OUT/g1"
OUT=$OUT/g0 KP_RUN_DIR=$PWD/gpu-run-build bash scripts/gpu-check.sh build >/dev/null 2>&1 ||
  { echo "build failed (see $OUT/g0/log.txt)"; tail -30 "$OUT/g0/log.txt"; exit 1; }
# Each run gets half of the host's cores (taskset, where there is one), so
# neither pipeline's CPU work slows the other: each sees what a one-GPU
# machine of half the cores would (the H200 kind has 16 cores per GPU).
# The CPUs this script may use (a container's cpuset need not start at 0),
# split in two halves; no pinning where taskset is missing or refuses them.
read -r CPUS0 CPUS1 < <(python3 -c 'import os
c = sorted(os.sched_getaffinity(0)); h = len(c) // 2
print(",".join(map(str, c[:h])) or "-", ",".join(map(str, c[h:])) or "-")' 2>/dev/null || echo "- -")
pin() { # gpu
  local list=$CPUS0
  [ "$1" = 0 ] || list=$CPUS1
  [ "$list" != - ] && command -v taskset >/dev/null && taskset -c "$list" true 2>/dev/null || return 0
  echo "taskset -c $list"
}
run_on() { # gpu, "ENV... STAGES"
  local gpu=$1 words=$2 stages=all envs=()
  for w in $words; do case "$w" in *=*) envs+=("$w") ;; *) stages=$w ;; esac; done
  env "${envs[@]}" CUDA_VISIBLE_DEVICES="$gpu" OUT="$OUT/g$gpu" KP_RUN_DIR="$PWD/gpu-run-g$gpu" \
    $(pin "$gpu") bash scripts/gpu-check.sh "$stages" >/dev/null 2>&1
}
run_on 0 "$1" &
P0=$!
run_on 1 "$2" &
P1=$!
wait $P0; RC0=$?
wait $P1; RC1=$?
tail -n 40 "$OUT/g0/log.txt" "$OUT/g1/log.txt"
echo "gpu-check.sh exit status: gpu0 $RC0, gpu1 $RC1"
[ $RC0 -eq 0 ] && [ $RC1 -eq 0 ]
