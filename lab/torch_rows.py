"""bench/torch_baselines.py on some of an op's dtypes only: the same
timing (its time_cold, cold L2, the held stream, device time and enqueue
apart), its arguments, its output.

    python3 lab/torch_rows.py DTYPES [torch_baselines.py arguments]
    python3 lab/torch_rows.py f32 --out t.json --ops rmsnorm --modes compile,max-autotune --budget 1

DTYPES is a comma list (f32, bf16). A lab run that times one dtype's
kernels spends its minutes on that dtype's torch rows."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import torch_baselines as tb  # noqa: E402

keep = set(sys.argv[1].split(","))
full = tb.registry
tb.registry = lambda kproof: {f: [(dt, rows) for dt, rows in v if dt in keep] for f, v in full(kproof).items()}
sys.argv = [sys.argv[0]] + sys.argv[2:]
sys.exit(tb.main())
