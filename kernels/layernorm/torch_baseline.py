"""layernorm's torch baseline (bench/torch_baselines.py):
torch.nn.functional.layer_norm with weight and bias, eps 1e-5, on x ~ N(0,1),
w ~ 1 + N(0,1)/10 and b ~ N(0,1)/10 in the task's dtype."""
import torch


def fn(shape):
    cols = shape[1]
    return lambda x, w, b: torch.nn.functional.layer_norm(x, (cols,), w, b, 1e-5)


def inputs(shape, dtype, gen):
    r, c = shape
    x = torch.randn((r, c), device="cuda", generator=gen).to(dtype)
    w = (1 + 0.1 * torch.randn((c,), device="cuda", generator=gen)).to(dtype)
    b = (0.1 * torch.randn((c,), device="cuda", generator=gen)).to(dtype)
    return (x, w, b)
