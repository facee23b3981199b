"""rmsnorm's torch baseline (bench/torch_baselines.py): the usual eager
formula, x * rsqrt(mean(x^2) + 1e-5) * w, computed in fp32 (bf16 inputs
widened, the result rounded back), on x ~ N(0,1) and w ~ 1 + N(0,1)/10 in
the task's dtype."""
import torch


def fn(shape):
    def rmsnorm(x, w):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5) * w.float()
        return y.to(x.dtype)
    return rmsnorm


def inputs(shape, dtype, gen):
    r, c = shape
    x = torch.randn((r, c), device="cuda", generator=gen).to(dtype)
    w = (1 + 0.1 * torch.randn((c,), device="cuda", generator=gen)).to(dtype)
    return (x, w)
