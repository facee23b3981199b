"""sum's torch baseline (bench/torch_baselines.py): torch.sum of a vector
x ~ N(0,1)."""
import torch


def fn(shape):
    return lambda x: torch.sum(x)


def inputs(shape, dtype, gen):
    return (torch.randn(shape, device="cuda", dtype=torch.float32, generator=gen).to(dtype),)
