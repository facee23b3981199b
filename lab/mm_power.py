#!/usr/bin/env python3
"""SM clock and board power while a matmul runs back to back: kproof kernel
files and torch.mm (cuBLAS, what torch eager calls) at one shape, each for a
few seconds on the same inputs, with nvidia-smi sampling every 50 ms. Tells
whether a kernel's rate is held by the power limit (the clock the driver
picks at the board's limit) rather than by the kernel. Not a timing
harness: calls run back to back on a warm L2, the time a call is the mean
over the loop (CUDA events around each batch of 20 calls). power.draw is
the driver's 1-s average, so its "max" is not a peak; the first second of
samples (the ramp, or the previous contender) is left out.

    python3 lab/mm_power.py --shape 4096x4096x4096 --kernel FILE.cu [...]
        [--seconds 4] [--build-dir DIR]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mm_kernels  # noqa: E402  (a kernel file's entry, built as kproof builds it)

FIELDS = "uuid,clocks.sm,power.draw,power.limit,temperature.gpu"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="4096x4096x4096", help="MxNxK")
    ap.add_argument("--kernel", action="append", default=[])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--build-dir", default="/tmp/mmp.build")
    a = ap.parse_args()
    m, n, k = (int(v) for v in a.shape.split("x"))
    if a.seconds <= 0:
        ap.error("--seconds must be positive")

    import torch
    uuid = str(getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "uuid", ""))
    os.makedirs(a.build_dir, exist_ok=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    A = torch.randn((m, k), device="cuda", generator=g).to(torch.bfloat16)
    B = torch.randn((k, n), device="cuda", generator=g).to(torch.bfloat16)
    C = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)

    contenders = []
    for path in a.kernel:
        f = mm_kernels.matmul_entry(path, a.build_dir, "bf16")
        if f is None:
            continue

        def call(f=f):
            if f(A.data_ptr(), B.data_ptr(), C.data_ptr(), m, n, k, torch.cuda.current_stream().cuda_stream):
                raise RuntimeError("entry returned nonzero")
        contenders.append((os.path.basename(path), call))
    contenders.append(("torch.mm (cuBLAS)", lambda: torch.mm(A, B, out=C)))

    flops = 2.0 * m * n * k
    for name, call in contenders:
        for _ in range(5):
            call()
        torch.cuda.synchronize()
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=" + FIELDS, "--format=csv,noheader,nounits", "-lms", "50"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        t0, calls, ms = time.time(), 0, 0.0
        while calls == 0 or time.time() - t0 < a.seconds:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(20):
                call()
            e1.record()
            torch.cuda.synchronize()
            ms += e0.elapsed_time(e1)
            calls += 20
        smi.terminate()
        rows, mine = [], []
        for line in smi.communicate()[0].splitlines():
            f = [v.strip() for v in line.split(",")]
            if len(f) != len(FIELDS.split(",")):
                continue  # a line cut short when the sampler stopped
            try:
                v = [float(x) for x in f[1:]]
            except ValueError:
                continue
            rows.append(v)
            if uuid and uuid in f[0]:
                mine.append(v)
        rows = mine or rows  # this device's rows where its uuid is known
        rows = rows[20:]  # the first second (50 ms a sample)
        us = ms * 1000.0 / calls
        if not rows:
            print("== %s: %.2f us a call, %.0f TFLOP/s; no nvidia-smi samples" % (name, us, flops / us / 1e6))
            continue
        med = [statistics.median(r[i] for r in rows) for i in range(4)]
        print("== %s at %dx%dx%d: %.2f us a call (%d calls), %.0f TFLOP/s; over %d samples: SM clock median %.0f MHz "
              "(min %.0f, max %.0f), power %.0f W (max %.0f) of a %.0f W limit, %.0f C"
              % (name, m, n, k, us, calls, flops / us / 1e6, len(rows), med[0], min(r[0] for r in rows),
                 max(r[0] for r in rows), med[1], max(r[1] for r in rows), med[2], med[3]))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
