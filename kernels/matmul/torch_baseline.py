"""matmul's torch baseline (bench/torch_baselines.py): torch.mm of A[M,K]
and B[K,N] ~ N(0,1) in the task's dtype (the caller turns TF32 off)."""
import torch


def fn(shape):
    return lambda a, b: torch.mm(a, b)


def inputs(shape, dtype, gen):
    m, n, k = shape
    return (torch.randn((m, k), device="cuda", generator=gen).to(dtype),
            torch.randn((k, n), device="cuda", generator=gen).to(dtype))
