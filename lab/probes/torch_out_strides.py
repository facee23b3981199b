"""lab/probes/torch_out_strides.py: the strides of the tensor torch.mm
returns, eager and compiled, at bf16 shapes given as MxNxK: whether
torch.compile hands back a view of a padded product (rows longer than N)
where kproof asks a candidate for C packed at N a row."""
import sys
import time

import torch

modes = [("eager", None), ("compile", "default"), ("max-autotune", "max-autotune-no-cudagraphs")]
deadline = time.time() + float(sys.argv[1])
for text in sys.argv[2:]:
    m, n, k = (int(v) for v in text.split("x"))
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    for name, mode in modes:
        if time.time() > deadline:
            print(f"{text} {name}: skipped (deadline)", flush=True)
            continue
        fn = (lambda x, y: torch.mm(x, y)) if mode is None else torch.compile(lambda x, y: torch.mm(x, y), mode=mode, dynamic=False)
        out = fn(a, b)
        torch.cuda.synchronize()
        base = out.untyped_storage().nbytes() // out.element_size()
        print(f"{text} {name}: size {tuple(out.shape)} stride {out.stride()} contiguous {out.is_contiguous()} "
              f"storage elements {base} (M*N {m * n})", flush=True)
        torch._dynamo.reset()
