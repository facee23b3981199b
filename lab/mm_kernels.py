#!/usr/bin/env python3
"""Where a matmul's time goes, launch by launch: kproof kernel files and
torch (eager, torch.compile, max-autotune) at one shape, each call cold,
every device kernel of the call listed with its duration (torch.profiler's
CUDA activity, i.e. CUPTI), the median over the calls.

A kernel file runs as kproof builds it (lab/torch_vs.py's build command,
ctypes entry on torch's tensors and stream). Nothing here is a verdict: the
output is checked against torch.mm only loosely (a wrong answer is printed,
not hidden), and the times carry the profiler's overhead between launches.

    python3 lab/mm_kernels.py --shape 4095x4095x4095 [--dtype bf16]
        [--kernel kernels/matmul/cuda/bf16-07-row-classes.cu ...]
        [--modes eager,compile,max-autotune] [--calls 10] [--build-dir DIR]
--modes '' leaves torch out.
"""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))

import torch_vs  # noqa: E402  (build command, entry loading)


def matmul_entry(path, build_dir, dtype):
    """A kernel file built as kproof builds it (torch_vs.build_cmd) into
    build_dir (kept there, named by the source text and the build command,
    and reused) and
    its kp_matmul_<dtype> entry loaded with ctypes; None
    (after printing the compiler's tail) where it does not build."""
    import ctypes
    import hashlib
    import subprocess
    os.makedirs(build_dir, exist_ok=True)
    tmp = os.path.join(build_dir, "lib" + os.path.basename(path)[:-3] + ".%d.so" % os.getpid())
    cmd = torch_vs.build_cmd(path, tmp)
    # One build a source text and command (several shapes, one run): the
    # library is named by both, and written under a temporary name first
    # (a build cut short leaves nothing to reuse).
    key = hashlib.sha256(open(path, "rb").read() + repr(torch_vs.build_cmd(path, "")).encode()).hexdigest()[:16]
    so = os.path.join(build_dir, "lib%s.%s.so" % (os.path.basename(path)[:-3], key))
    r = None
    if not os.path.exists(so):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if not r.returncode:
            os.replace(tmp, so)
    if r is not None and r.returncode:
        print("%s: build failed\n%s" % (path, r.stdout[-2000:] + r.stderr[-2000:]))
        return None
    f = getattr(ctypes.CDLL(so), "kp_matmul_" + dtype)
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 3 + [ctypes.c_void_p]
    return f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="4095x4095x4095", help="MxNxK")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "f32"))
    ap.add_argument("--kernel", action="append", default=[])
    ap.add_argument("--modes", default="eager,compile,max-autotune",
                    help="comma-separated, of eager, compile, max-autotune; '' for none")
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--build-dir", default="/tmp/mmk.build")
    a = ap.parse_args()
    m, n, k = (int(v) for v in a.shape.split("x"))
    wanted = [md for md in a.modes.split(",") if md]
    bad = [md for md in wanted if md not in ("eager", "compile", "max-autotune")]
    if bad:
        ap.error("unknown mode(s) %s (eager, compile, max-autotune)" % ",".join(bad))

    import torch
    from torch.profiler import ProfilerActivity, profile
    import torch_baselines as tb

    os.makedirs(a.build_dir, exist_ok=True)
    props, l2, flush, gen = tb.device_setup(torch)
    dt = torch.bfloat16 if a.dtype == "bf16" else torch.float32
    A = torch.randn((m, k), device="cuda", generator=gen).to(dt)
    B = torch.randn((k, n), device="cuda", generator=gen).to(dt)
    C = torch.empty((m, n), device="cuda", dtype=dt)
    ref = torch.mm(A.float(), B.float())

    contenders = []
    for path in a.kernel:
        f = matmul_entry(path, a.build_dir, a.dtype)
        if f is None:
            continue

        def call(f=f):
            rc = f(A.data_ptr(), B.data_ptr(), C.data_ptr(), m, n, k, torch.cuda.current_stream().cuda_stream)
            if rc:
                raise RuntimeError("entry returned %d" % rc)
            return C
        contenders.append((os.path.basename(path), call))
    fn = lambda x, y: torch.mm(x, y)  # noqa: E731
    modes = {"eager": fn, "compile": torch.compile(fn, dynamic=False),  # compiled at the first call
             "max-autotune": torch.compile(fn, mode="max-autotune-no-cudagraphs", dynamic=False)}
    for md in wanted:
        g = modes[md]
        contenders.append(("torch-" + md, lambda g=g: g(A, B)))

    for name, call in contenders:
        out = call()
        torch.cuda.synchronize()
        err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
        per = {}  # kernel name -> per call, its launches' durations (empty where it did not run)
        for c in range(a.calls):
            flush.zero_()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as p:
                call()
                torch.cuda.synchronize()
            seen = {}
            for e in p.events():
                if e.device_type.name != "CUDA":
                    continue
                seen.setdefault(e.name, []).append(e.device_time if hasattr(e, "device_time") else e.cuda_time)
            for kname in seen:
                per.setdefault(kname, [[] for _ in range(c)])
            for kname in per:
                per[kname].append(seen.get(kname, []))
        print("== %s at %dx%dx%d %s (max |err| / max |ref| %.2e)" % (name, m, n, k, a.dtype, err))
        total = 0.0
        for kname, runs in per.items():
            counts = sorted({len(r) for r in runs})
            med = statistics.median(sum(r) for r in runs)  # a call without the kernel counts 0
            total += med
            launches = "x%d" % counts[0] if len(counts) == 1 else "x%d-%d" % (counts[0], counts[-1])
            print("   %9.2f us  %-5s %s" % (med, launches, kname[:150]))
        print("   %9.2f us  total of medians" % total)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
