#!/usr/bin/env bash
# Session 9, device call 4: the device test and the demo (every exploit
# under the naive flaws and the rigorous protocol, and the best f32
# kernels: softmax f32 10, layernorm f32 17) with the build, at the
# session's final kernels, so the main job has a record at this commit.
# $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} KP_JOBS=4 OUT=$OUT KP_DEMO_TIMEOUT=400 \
  timeout 520 bash scripts/gpu-check.sh build,device,exploits
echo "gpu-check exit $?"
