"""softmax's torch baseline (bench/torch_baselines.py): torch.softmax over
the last dimension, on x ~ N(0,1) in the task's dtype."""
import torch


def fn(shape):
    return lambda x: torch.softmax(x, dim=-1)


def inputs(shape, dtype, gen):
    return (torch.randn(shape, device="cuda", dtype=torch.float32, generator=gen).to(dtype),)
