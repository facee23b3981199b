#!/usr/bin/env python3
"""A kproof kernel file against torch in one process, on the same inputs,
interleaved: which is faster, with an interval on the ratio.

kproof's eval and bench/torch_baselines.py time in two processes with two
harnesses, and a 1% difference between their medians is inside what the
harnesses themselves differ by. Here every contender is timed by one
routine (bench/torch_baselines.py's cold_sample: a write and a read of
twice L2 before each call, the stream held by a ~1 ms device sleep, CUDA
events around the one call, device time), round-robin: a round takes one
sample of every contender on the same input set, in a new random order
each round, so drift, clocks, the input set and whatever one call leaves
behind for the next hit all alike, and the per-round samples pair up.

Contenders, per (dtype, shape):
  KERNEL        each --kernel file, built by kproof's own nvcc command
                (src/core/backends.c's CUDA_CFLAGS and CUDA_LIBS, -I include)
                into a shared object, loaded with ctypes, called on the
                inputs of torch's tensors with torch's stream;
  KERNEL/aa     the first kernel of the dtype again, from a second copy of
                its shared object under its own name: an A/A control (its
                ratio to KERNEL must come out 1.000 within the interval);
  eager, compile, max-autotune
                kernels/<op>/torch_baseline.py's function, eager, under
                torch.compile(dynamic=False) and under
                torch.compile(mode="max-autotune-no-cudagraphs", dynamic=False),
                one compiled function per shape (as bench/torch_baselines.py);
  copy          y.copy_(x) on the same buffers: the kernel's median as a
                percentage of a copy's rate of the same bytes.
Each kernel's output is checked once, before timing, against a float64
reference with kproof's tolerance for the op (src/ops/<op>.c: the element
error over the tolerance at most 1, its RMS at most the op's limit); a
kernel that fails is reported and not timed.

Printed per (dtype, shape): every contender's median device time with a
bootstrap 95% interval and its % of the copy's rate, then per kernel the
ratio best torch / kernel (above 1: the kernel is faster) and the A/A
ratio, each a paired bootstrap over rounds (the same rounds resampled for
both), with the median of the per-round ratios beside it. Best torch is
the torch contender with the lowest median at that shape: picking the least
of three leans a little towards torch. Each interval is 95%, so an A/A
falls outside 1 about once in twenty shapes by chance alone; one that does
at several shapes, or by more than its width, is the harness's fault. The
raw device samples go into the JSON, so --table can print the table again
from it.

    python3 lab/torch_vs.py --kernel kernels/rmsnorm/cuda/f32-02-keep-x.cu [--kernel ...]
        [--shapes 16384x4096,65536x1024,4096x16384] [--dtype f32,bf16]
        [--modes eager,compile,max-autotune] [--budget 2] [--deadline 180]
        [--out torch-vs.json] [--txt torch-vs.txt] [--build-dir DIR]
    python3 lab/torch_vs.py --print-build KERNEL.cu     # the nvcc command, nothing run
    python3 lab/torch_vs.py --build-only --kernel K.cu  # build the shared objects and stop
    python3 lab/torch_vs.py --table torch-vs.json [--out again.json]

A kernel file's op and dtype come from its path: kernels/<op>/cuda/<dtype>-NN-*.cu
(--op for files elsewhere; its dtype is the part of its name before the
first '-'). --budget is seconds of timing per contender and shape;
--deadline is the whole run's wall time in seconds: each shape gets its
share of what is left (after an allowance for the compiles still to come),
a shape that cannot start in time is skipped, and the JSON is written
after every shape. Needs torch and a GPU only to time; --print-build,
--build-only and --table run without torch.
"""
import argparse
import ctypes
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import torch_baselines as tb  # noqa: E402  (imports no torch itself)

torch = None
DEFAULT_SHAPES = "16384x4096,65536x1024,4096x16384"
MODES = ("eager", "compile", "max-autotune")
U32, U16 = 2.0 ** -24, 2.0 ** -8
TOL_FLOOR = 16.0 * 1.17549435082228751e-38


# ---- the ops the tool knows: the entry's buffers and kproof's tolerance ----
def rmsnorm_reference(x, w, eps=1e-5):
    xd = x.double()
    return xd * (xd.pow(2).mean(-1, keepdim=True) + eps).rsqrt() * w.double()


def rmsnorm_rel_tol(dtype, cols):
    """src/ops/rmsnorm.c: KP_RN_C u (4 + sqrt(n)) of |y|, plus 4 u_bf16 for bf16."""
    return 16.0 * U32 * (4.0 + math.sqrt(max(cols, 1))) + (4.0 * U16 if dtype == "bf16" else 0.0)


OPS = {
    # inputs: how many of torch_baseline.inputs()'s tensors the entry takes
    # before y; rms_limit: src/ops/<op>.c's, per dtype.
    "rmsnorm": {"inputs": 2, "reference": rmsnorm_reference, "rel_tol": rmsnorm_rel_tol,
                "rms_limit": {"f32": 0.25, "bf16": 0.5}},
}


# ---- building: kproof's own command ---------------------------------------
def c_string_array(src, name):
    """The strings of `static const char *const NAME[] = {"a", "b", NULL};` in C source."""
    m = re.search(r"\b%s\[\]\s*=\s*\{(.*?)\};" % re.escape(name), src, re.S)
    if not m:
        raise ValueError("no %s[] in src/core/backends.c" % name)
    return re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))


def kproof_cuda_flags(root=ROOT):
    """(cflags, libs) of kproof's CUDA backend, read from src/core/backends.c."""
    with open(os.path.join(root, "src", "core", "backends.c")) as f:
        src = f.read()
    return c_string_array(src, "CUDA_CFLAGS"), c_string_array(src, "CUDA_LIBS")


def cuda_lib_dir(nvcc):
    """The toolkit's library folder beside nvcc, for an rpath: the shared
    object needs the CUDA runtime it was built against (-cudart shared),
    which a Python process with torch has not loaded (kproof's worker has)."""
    exe = shutil.which(nvcc) or nvcc
    base = os.path.dirname(os.path.dirname(os.path.realpath(exe)))
    for d in ("lib64", "lib", os.path.join("targets", "x86_64-linux", "lib")):
        if os.path.isdir(os.path.join(base, d)):
            return os.path.join(base, d)
    return None


def build_cmd(src, so, nvcc=None, root=ROOT):
    """nvcc as kproof builds a candidate (src/proc/build.c: the backend's
    flags, -I<root>/include, the source, its libraries), into so. Only a
    linker rpath is added; the device code is kproof's."""
    nvcc = nvcc or os.environ.get("NVCC", "nvcc")
    cflags, libs = kproof_cuda_flags(root)
    cmd = [nvcc] + cflags + ["-I" + os.path.join(root, "include"), src, "-o", so] + libs
    lib = cuda_lib_dir(nvcc)
    if lib:
        cmd += ["-Xlinker", "-rpath=" + lib]
    return cmd


def kernel_meta(path, op=None):
    """(op, dtype, name) of a kernel file: kernels/<op>/cuda/<dtype>-NN-idea.cu."""
    base = os.path.basename(path)
    name = base[:-3] if base.endswith(".cu") else base
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    if op is None and len(parts) >= 3 and parts[-2] == "cuda":
        op = parts[-3]
    dtype = name.split("-")[0]
    if op not in OPS:
        raise ValueError("%s: op '%s' not known to this tool (known: %s; --op for files outside kernels/)"
                         % (path, op, ",".join(OPS)))
    if dtype not in ("f32", "bf16"):
        raise ValueError("%s: its name does not start with f32- or bf16-" % path)
    return op, dtype, name


def start_builds(kernels, build_dir, nvcc=None):
    """Starts nvcc on every kernel file at once; finish_builds waits."""
    os.makedirs(build_dir, exist_ok=True)
    procs = {}
    for k in kernels:
        so = os.path.join(build_dir, "lib" + kernel_meta(k["path"], k["op"])[2] + ".so")
        if os.path.exists(so):
            os.remove(so)  # a failed build must not leave an older object to be timed
        lf = open(so + ".log", "w")
        cmd = build_cmd(k["path"], so, nvcc)
        lf.write(" ".join(cmd) + "\n")
        lf.flush()
        procs[k["path"]] = (subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT), so, lf, time.time())
    return procs


def finish_builds(procs, log=print):
    """{path: shared object, or None where its build failed}; the logs beside the objects."""
    out = {}
    for path, (p, so, lf, t0) in procs.items():
        rc = p.wait()
        lf.close()
        ok = rc == 0 and os.path.exists(so)
        log("build %s: %s%s" % (path, "ok" if ok else "FAILED",
                                "" if ok else " (" + open(so + ".log").read()[-400:].strip() + ")"))
        out[path] = so if ok else None
    return out


# ---- statistics (numpy where present; the table runs without it) ---------
def median(xs):
    return tb.median(xs)


_RESAMPLES = {}


def _resamples(n, reps, seed):
    """reps index sets of n rounds, drawn once per (n, reps, seed)."""
    key = (n, reps, seed)
    if key not in _RESAMPLES:
        _RESAMPLES.clear()
        _RESAMPLES[key] = _draw(n, reps, seed)
    return _RESAMPLES[key]


def _draw(n, reps, seed):
    try:
        import numpy as np
        return np.random.default_rng(seed).integers(0, n, size=(reps, n))
    except ImportError:
        rnd = random.Random(seed)
        return [[rnd.randrange(n) for _ in range(n)] for _ in range(reps)]


def _med_rows(xs, idx):
    try:
        import numpy as np
        return list(np.median(np.asarray(xs)[idx], axis=1))
    except ImportError:
        return [median([xs[i] for i in row]) for row in idx]


def _pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(q * len(v))))]


def boot_median(xs, reps=2000, seed=1):
    """Median and its bootstrap 95% interval."""
    meds = _med_rows(xs, _resamples(len(xs), reps, seed))
    return median(xs), _pct(meds, 0.025), _pct(meds, 0.975)


def paired_ratio(num, den, reps=2000, seed=2):
    """median(num) / median(den) over paired rounds, its 95% interval from
    resampling the rounds (one index set for both), and the median of the
    per-round ratios."""
    idx = _resamples(len(num), reps, seed)
    r = [a / b for a, b in zip(_med_rows(num, idx), _med_rows(den, idx))]
    return median(num) / median(den), _pct(r, 0.025), _pct(r, 0.975), median([a / b for a, b in zip(num, den)])


def summarize(block, reps=2000):
    """Statistics of one (dtype, shape) block from its samples (device
    seconds per round per contender): per contender median and interval,
    % of the copy's rate; per kernel best torch / kernel, and the A/A."""
    s = block.get("samples", {})
    n = min((len(v) for v in s.values()), default=0)
    stats, ratios = {}, []
    if n < 3:
        return {"rounds": n, "contenders": stats, "ratios": ratios}
    s = {k: v[:n] for k, v in s.items()}
    for name, xs in s.items():
        m, lo, hi = boot_median(xs, reps)
        stats[name] = {"median_s": m, "lo_s": lo, "hi_s": hi}
    if "copy" in s:
        for name in s:
            stats[name]["pct_of_copy"] = 100.0 * stats["copy"]["median_s"] / stats[name]["median_s"]
    torch_modes = [m for m in MODES if m in s]
    best = min(torch_modes, key=lambda m: stats[m]["median_s"]) if torch_modes else None
    for k in block.get("kernels", []):
        if k not in s:
            continue
        if best:
            r, lo, hi, pr = paired_ratio(s[best], s[k], reps)
            ratios.append({"kind": "best torch / kernel", "num": best, "den": k, "ratio": r, "lo": lo, "hi": hi,
                           "per_round_median": pr})
        if k + "/aa" in s:
            r, lo, hi, pr = paired_ratio(s[k + "/aa"], s[k], reps)
            ratios.append({"kind": "A/A", "num": k + "/aa", "den": k, "ratio": r, "lo": lo, "hi": hi,
                           "per_round_median": pr})
    return {"rounds": n, "best_torch": best, "contenders": stats, "ratios": ratios}


def verdict(r):
    if r["kind"] == "A/A":
        return "ok" if r["lo"] <= 1.0 <= r["hi"] else "A/A OFF: the harness favours a position or a copy"
    if r["lo"] > 1.0:
        return "kernel faster"
    if r["hi"] < 1.0:
        return "kernel SLOWER"
    return "tie (1 inside the interval)"


def format_block(block, summ):
    shape = "x".join(str(d) for d in block["shape"])
    head = "%s %s %s: %d rounds, %s input sets" % (block["op"], block["dtype"], shape, summ["rounds"],
                                                   block.get("sets", "?"))
    lines = [head]
    if block.get("skipped"):
        return lines + ["  skipped: " + block["skipped"]]
    for name, err in sorted(block.get("errors", {}).items()):
        lines.append("  %-28s %s" % (name, err))
    for name, c in sorted(block.get("checks", {}).items()):
        lines.append("  check %-22s %s (max e %.3g, RMS e %.3g)" % (name, "PASS" if c["pass"] else "FAIL",
                                                                     c["max_e"], c["rms_e"]))
    if not summ["contenders"]:
        return lines + ["  (too few rounds to report)"]
    lines.append("  %-28s %10s  %-20s %8s" % ("contender", "median us", "95% interval", "% copy"))
    for name, c in sorted(summ["contenders"].items(), key=lambda kv: kv[1]["median_s"]):
        pc = "%.1f%%" % c["pct_of_copy"] if "pct_of_copy" in c else "-"
        lines.append("  %-28s %10.2f  [%7.2f, %7.2f]   %8s" % (name, c["median_s"] * 1e6, c["lo_s"] * 1e6,
                                                             c["hi_s"] * 1e6, pc))
    for r in summ["ratios"]:
        lines.append("  %-10s %s / %s = %.4f [%.4f, %.4f] (per-round median %.4f): %s" % (
            r["kind"] if r["kind"] == "A/A" else "ratio", r["num"], r["den"], r["ratio"], r["lo"], r["hi"],
            r["per_round_median"], verdict(r)))
    return lines


def report(doc, reps=2000, fresh=False):
    """Summaries into doc's blocks (those without one, or all if fresh);
    the table's text."""
    out = []
    for b in doc["blocks"]:
        if fresh or "summary" not in b:
            b["summary"] = summarize(b, reps)
        out += format_block(b, b["summary"]) + [""]
    return "\n".join(out)


# ---- timing ----------------------------------------------------------------
def parse_shapes(text):
    shapes = []
    for t in text.split(","):
        m = re.fullmatch(r"\s*(\d+)x(\d+)\s*", t)
        if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
            raise ValueError("shape '%s' is not ROWSxCOLS" % t)
        shapes.append((int(m.group(1)), int(m.group(2))))
    return shapes


def load_entry(so, op, dtype):
    lib = ctypes.CDLL(so)
    f = getattr(lib, "kp_%s_%s" % (op, dtype))
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p] * (OPS[op]["inputs"] + 1) + [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    return f


def kernel_call(f, rows, cols):
    stream = torch.cuda.current_stream().cuda_stream

    def call(*args):  # the op's inputs, then y
        rc = f(*[a.data_ptr() for a in args], rows, cols, stream)
        if rc:
            raise RuntimeError("the entry point returned %d" % rc)
    return call


def check(op, dtype, got, ins):
    """kproof's criterion: max over elements of |got - want| / tol <= 1 and
    its RMS <= the op's limit, tol = rel |want| + floor."""
    want = OPS[op]["reference"](*ins)
    tol = OPS[op]["rel_tol"](dtype, want.shape[-1]) * want.abs() + TOL_FLOOR
    e = ((got.double() - want).abs() / tol)
    bad = ~torch.isfinite(got.double())
    max_e, rms_e = e.max().item(), e.pow(2).mean().sqrt().item()
    ok = not bad.any().item() and max_e <= 1.0 and rms_e <= OPS[op]["rms_limit"][dtype]
    return {"pass": bool(ok), "max_e": max_e, "rms_e": rms_e, "nonfinite": int(bad.sum().item())}


def own_code(f, tag):
    """f behind a function with a code object of its own. Dynamo keeps what
    it compiled per code object, and every shape's and mode's function from
    torch_baseline.fn is one code object: compiled side by side, one mode
    could run the other's code, and past torch._dynamo's cache limit run
    eager. One code object each, nothing is shared."""
    ns = {"_f": f}
    exec("def %s(*a):\n    return _f(*a)\n" % tag, ns)
    return ns[tag]


def run_block(op, dtype, shape, kernels, args, l2, flush, gen, timing_s, log):
    """One (dtype, shape): set up every contender, check the kernels, then
    time round-robin for timing_s seconds (at least --min-rounds rounds, at
    most --max-rounds, never past the run's deadline). Returns the block."""
    t_setup = time.time()
    mod = tb.load_baseline(op)
    td = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]
    rows, cols = shape
    one = (2 * rows * cols + cols) * (4 if dtype == "f32" else 2)
    nsets = min(max(8, math.ceil(3 * l2 / one)), 32)
    if one * nsets > 40e9:
        nsets = max(2, int(40e9 // one))
    block = {"op": op, "dtype": dtype, "shape": [rows, cols], "sets": nsets, "min_bytes": one,
             "kernels": [k["name"] for k in kernels], "errors": {}, "checks": {}, "setup_s": {}, "samples": {}}
    sets = [mod.inputs(shape, td, gen) for _ in range(nsets)]
    ys = [torch.empty_like(s[0]) for s in sets]
    nin = OPS[op]["inputs"]
    cont = {}  # name -> (fn, uses y)
    for k in kernels:
        for name, so in ((k["name"], k["so"]), (k["name"] + "/aa", k.get("so_aa"))):
            if not so:
                continue
            try:
                fn = kernel_call(load_entry(so, op, dtype), rows, cols)
                if name == k["name"]:
                    fn(*sets[0][:nin], ys[0])
                    torch.cuda.synchronize()
                    block["checks"][name] = c = check(op, dtype, ys[0], sets[0][:nin])
                    if not c["pass"]:
                        block["errors"][name] = "output check failed: not timed"
                        break
                cont[name] = (fn, True)
            except Exception as e:  # noqa: BLE001 - reported, the others still run
                block["errors"][name] = str(e)[:300]
                break
    torch._dynamo.reset()  # the last shape's compiled code is not called again
    for mode in args.modes:
        t0 = time.time()
        try:
            if mode == "eager":
                fn = mod.fn(shape)
            else:
                kw = {"mode": "max-autotune-no-cudagraphs"} if mode == "max-autotune" else {}
                tag = "%s_%s_%s_%dx%d" % (op, dtype, mode.replace("-", "_"), rows, cols)
                fn = torch.compile(own_code(mod.fn(shape), tag), dynamic=False, **kw)
            for s in sets:  # compile, autotune, allocate
                fn(*s)
            torch.cuda.synchronize()
            block["checks"][mode] = check(op, dtype, fn(*sets[0]), sets[0][:nin])
            cont[mode] = (fn, False)
        except Exception as e:  # noqa: BLE001
            block["errors"][mode] = str(e)[:300]
        block["setup_s"][mode] = time.time() - t0
    if not args.no_copy:
        cont["copy"] = (lambda x, *rest: rest[-1].copy_(x), True)
    names = list(cont)
    for name in names:  # warm-up of what has not run yet
        fn, uses_y = cont[name]
        for i, s in enumerate(sets):
            fn(*s[:nin], ys[i]) if uses_y else fn(*s)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    dev = {n: [] for n in names}
    enq = {n: [] for n in names}
    rnd, order, rng = 0, [], random.Random(12345)
    t_start = time.time()
    block["setup_total_s"] = t_start - t_setup
    until = t_start + timing_s
    while names and rnd < args.max_rounds and (time.time() < until or rnd < args.min_rounds):
        if time.time() > args.hard_deadline:
            break
        if not order:
            order = list(range(nsets))
            random.shuffle(order)
        i = order.pop()
        a = sets[i][:nin] + (ys[i],)
        turn = names[:]
        rng.shuffle(turn)  # a new order each round: no contender always follows the same one
        for n in turn:
            fn, uses_y = cont[n]
            d, h = tb.cold_sample(fn, a if uses_y else sets[i], flush, start, end, args.hold_cycles)
            dev[n].append(d)
            enq[n].append(h)
        rnd += 1
    block["timing_s"] = time.time() - t_start
    block["samples"] = dev
    block["enqueue_median_s"] = {n: median(v) for n, v in enq.items() if v}
    # the hold covers an enqueue up to ~1 ms; past that a sample times Python too
    block["enqueue_over_hold"] = {n: sum(h > 0.9e-3 for h in v) for n, v in enq.items()}
    del sets, ys, cont
    torch.cuda.empty_cache()
    log("%s %s %dx%d: %d rounds in %.1f s" % (op, dtype, rows, cols, rnd, block["timing_s"]))
    return block


def main(argv=None):
    global torch
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", action="append", default=[], help="a kproof .cu kernel file (repeatable)")
    ap.add_argument("--op", help="the op of kernel files outside kernels/<op>/cuda/")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma list of ROWSxCOLS")
    ap.add_argument("--dtype", default="", help="comma list: time only the kernels of these dtypes")
    ap.add_argument("--modes", default=",".join(MODES), help="torch contenders, from eager,compile,max-autotune")
    ap.add_argument("--budget", type=float, default=2.0, help="seconds of timing per contender and shape")
    ap.add_argument("--deadline", type=float, default=0.0, help="the run's wall-time limit in seconds (0: none)")
    ap.add_argument("--setup-guess", type=float, default=15.0,
                    help="seconds a shape's setup (inputs, compiles) is taken to need before one has run")
    ap.add_argument("--min-rounds", type=int, default=20)
    ap.add_argument("--max-rounds", type=int, default=5000)
    ap.add_argument("--hold-cycles", type=int, default=2_000_000)
    ap.add_argument("--no-aa", action="store_true", help="leave out the A/A control")
    ap.add_argument("--no-copy", action="store_true", help="leave out the copy")
    ap.add_argument("--build-dir", default=os.path.join("/tmp", "torch-vs-%d" % os.getuid()))
    ap.add_argument("--nvcc", default=None, help="the compiler (default: $NVCC, else nvcc)")
    ap.add_argument("--out", help="the JSON to write")
    ap.add_argument("--txt", help="the table's text to write as well as print")
    ap.add_argument("--print-build", metavar="KERNEL", help="print kproof's nvcc command for KERNEL and stop")
    ap.add_argument("--build-only", action="store_true", help="build the kernels' shared objects and stop")
    ap.add_argument("--table", metavar="JSON", help="print the table of a JSON this tool wrote, and stop")
    ap.add_argument("--reps", type=int, default=2000, help="bootstrap resamples")
    args = ap.parse_args(argv)
    t0 = time.time()

    def log(msg):
        print("[%5.1f s] %s" % (time.time() - t0, msg), file=sys.stderr, flush=True)

    def write(doc, text):
        if args.out:
            with open(args.out + ".tmp", "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(args.out + ".tmp", args.out)
        if args.txt:
            with open(args.txt, "w") as f:
                f.write(text + "\n")

    if args.table:
        with open(args.table) as f:
            doc = json.load(f)
        text = report(doc, args.reps, fresh=True)
        print(text)
        write(doc, text)
        return 0
    if args.print_build:
        kernel_meta(args.print_build, args.op)
        so = os.path.join(args.build_dir, "lib" + kernel_meta(args.print_build, args.op)[2] + ".so")
        print(" ".join(build_cmd(args.print_build, so, args.nvcc)))
        return 0
    try:
        shapes = parse_shapes(args.shapes)
        args.modes = [m for m in args.modes.split(",") if m]
        for m in args.modes:
            if m not in MODES:
                raise ValueError("mode '%s' is not one of %s" % (m, ",".join(MODES)))
        dts = [d for d in args.dtype.split(",") if d]
        kernels = []
        for p in args.kernel:
            if not os.path.isfile(p):
                raise ValueError("no kernel file %s" % p)
            op, dt, name = kernel_meta(p, args.op)
            if dts and dt not in dts:
                continue
            if any(k["name"] == name for k in kernels):
                raise ValueError("two kernels named %s" % name)
            kernels.append({"path": p, "op": op, "dtype": dt, "name": name})
        if not kernels:
            raise ValueError("no kernel to time (--kernel, and --dtype if given)")
    except ValueError as e:
        ap.error(str(e))
    try:
        import numpy  # noqa: F401 - the bootstrap's speed
    except ImportError:
        args.reps = min(args.reps, 300)  # pure Python resamples: fewer, so the deadline holds
    procs = start_builds(kernels, args.build_dir, args.nvcc)
    if not args.build_only:  # torch and the device start while nvcc runs
        try:
            import torch as _torch
        except ImportError:
            for p, _, lf, _ in procs.values():
                p.kill()
                p.wait()
                lf.close()
            raise
        torch = tb.torch = _torch
        props, l2, flush, gen = tb.device_setup(torch)
        log("torch %s on %s" % (torch.__version__, props.name))
    builds = finish_builds(procs, log)
    for k in kernels:
        k["so"] = builds[k["path"]]
    if args.build_only:
        return 0 if all(k["so"] for k in kernels) else 1
    aa_done = set()
    for k in kernels:  # the A/A control: the dtype's first kernel, from a copy of its object
        if not args.no_aa and k["so"] and (k["op"], k["dtype"]) not in aa_done:
            aa_done.add((k["op"], k["dtype"]))
            k["so_aa"] = k["so"][:-3] + "-aa.so"
            shutil.copyfile(k["so"], k["so_aa"])
    args.hard_deadline = t0 + args.deadline - 3 if args.deadline else float("inf")
    doc = {"schema": 1, "tool": "torch_vs.py", "torch": torch.__version__, "gpu": props.name,
           "cuda": torch.version.cuda, "commit": os.environ.get("KP_COMMIT", ""),
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "argv": sys.argv[1:] if argv is None else argv,
           "kernels": [{k2: k[k2] for k2 in ("path", "op", "dtype", "name")} for k in kernels],
           "build": [" ".join(build_cmd(kernels[0]["path"], "lib.so", args.nvcc))], "blocks": []}
    groups = []
    for k in kernels:
        if k["so"] and (k["op"], k["dtype"]) not in [g[:2] for g in groups]:
            groups.append((k["op"], k["dtype"]))
    jobs = [(op, dt, s) for op, dt in groups for s in shapes]
    setups = []
    for j, (op, dt, shape) in enumerate(jobs):
        now = time.time()
        ks = [k for k in kernels if (k["op"], k["dtype"]) == (op, dt) and k["so"]]
        ncont = len(ks) + (0 if args.no_aa else 1) + len(args.modes) + (0 if args.no_copy else 1)
        guess = median(setups) if setups else args.setup_guess
        left = args.hard_deadline - now
        if left < guess + 2:
            doc["blocks"].append({"op": op, "dtype": dt, "shape": list(shape), "skipped": "deadline",
                                  "kernels": [k["name"] for k in ks]})
            log("%s %s %dx%d: skipped (%.0f s left)" % (op, dt, shape[0], shape[1], left))
            continue
        rest = len(jobs) - j - 1
        share = (left - guess * (rest + 1) - 2) / (rest + 1)
        timing = max(1.0, min(args.budget * ncont, share))
        log("%s %s %dx%d: setup, then %.1f s of timing" % (op, dt, shape[0], shape[1], timing))
        t_block = time.time()
        try:
            b = run_block(op, dt, shape, ks, args, l2, flush, gen, timing, log)
        except Exception as e:  # noqa: BLE001 - the other shapes still run
            b = {"op": op, "dtype": dt, "shape": list(shape), "kernels": [k["name"] for k in ks],
                 "skipped": "failed: %s" % str(e)[:300]}
            log("%s %s %dx%d: %s" % (op, dt, shape[0], shape[1], b["skipped"]))
            torch.cuda.empty_cache()
        setups.append(b.get("setup_total_s", time.time() - t_block))
        doc["blocks"].append(b)
        text = report(doc, args.reps)
        write(doc, text)
    text = report(doc, args.reps)
    print(text)
    write(doc, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
