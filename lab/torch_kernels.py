"""lab/torch_kernels.py: which kernels torch.compile runs for a row op
(softmax, layernorm, rmsnorm: the formula and inputs of the op's
kernels/<op>/torch_baseline.py) at one shape, with their launch shape (grid, block, registers,
shared memory) from the profiler's trace, and their Triton source. For
learning what a baseline does, not for timing it (bench/torch_baselines.py
times torch under kproof's protocol).
  python3 lab/torch_kernels.py OUTDIR OP:DTYPE:ROWS:COLS ...
Writes OUTDIR/torch-kernels.txt and OUTDIR/inductor-*.py."""
import json, os, sys, tempfile
import torch
from torch._inductor.utils import run_and_get_code
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from torch_baselines import launches_from_trace, load_baseline  # noqa: E402 - one reader of the trace

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
report = open(os.path.join(out, "torch-kernels.txt"), "w")
def say(*a):
    print(*a); print(*a, file=report); report.flush()
for spec in sys.argv[2:]:
    op, dt, rows, cols = spec.split(":")
    rows, cols = int(rows), int(cols)
    dtype = torch.float32 if dt == "f32" else torch.bfloat16
    mod = load_baseline(op)
    args = mod.inputs((rows, cols), dtype, torch.Generator(device="cuda").manual_seed(1))
    f = mod.fn((rows, cols))
    for mode in ("default", "max-autotune-no-cudagraphs"):
        torch._dynamo.reset()
        g = torch.compile(f, dynamic=False, mode=None if mode == "default" else mode)
        try:
            _, codes = run_and_get_code(g, *args)
        except Exception as e:  # noqa: BLE001 - report and go on
            say(f"{spec} {mode}: compile failed: {e}")
            continue
        name = f"inductor-{op}-{dt}-{rows}x{cols}-{mode}.py"
        open(os.path.join(out, name), "w").write("\n\n# ----\n".join(codes))
        for _ in range(5):
            g(*args)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                g(*args)
            torch.cuda.synchronize()
        tf = tempfile.mktemp(suffix=".json")
        prof.export_chrome_trace(tf)
        for k in launches_from_trace(json.load(open(tf))):
            say(f"{spec} {mode}: {k['name'][:80]} grid {k['grid']} block {k['block']} "
                f"regs {k['registers']} smem {k['smem']} blocks/SM {k['blocks_per_sm']} dur {k['us']} us")
