#!/usr/bin/env bash
# Session 9, device call 5: sum f32 05 and torch's sum in one run, with
# bench/torch_baselines.py now recording each mode's device time and
# Python enqueue time apart (device_median_s, enqueue_median_s,
# host_bound_samples). A sample is the larger of the two on both sides;
# at 2^20 and 2^24 torch eager's medians (25-65 us across runs) may be
# Python's dispatch, not the device: this says which.
# $1: the commit, for env.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
KP_COMMIT=${1:-unknown} KP_KERNELS='sum/cuda/f32-05' KP_BUDGET=1.5 KP_BUDGET_sum=10 \
KP_EVAL_ARGS=--shape-set,canonical,--no-baseline KP_TORCH_OPS=sum KP_TORCH_BUDGET=2 OUT=$OUT \
  timeout 400 bash scripts/gpu-check.sh build,calibrate,kernels,torch
echo "gpu-check exit $?"
python3 - "$OUT" <<'PY'
import json, sys, tarfile, io
t = tarfile.open(sys.argv[1] + "/results.tgz")
d = json.load(t.extractfile("./torch.json") if "./torch.json" in t.getnames() else t.extractfile("torch.json"))
for r in d["rows"]:
    if "error" in r: print(r); continue
    print(f'{r["mode"]:13s} {r["shape"][0]:>10d}  sample {r["median_s"]*1e6:8.2f} us  device {r["device_median_s"]*1e6:8.2f}  enqueue {r["enqueue_median_s"]*1e6:8.2f}  host-bound {r["host_bound_samples"]}/{r["samples"]}')
PY
