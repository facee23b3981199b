#!/usr/bin/env python3
# lab/tf32_emu.py: matmul f32 04's arithmetic on the CPU, before any GPU run.
# 3xtf32 splits (hi = tf32(x) to nearest, lo = tf32(x - hi)), each k8 MMA
# step as a pessimistic model of the tensor cores' accumulate (the 9
# addends truncated toward zero to 24 bits at the largest one's exponent,
# summed, truncated to fp32), the chain folded into an IEEE fp32 total
# every 128 k; P output elements, each one row of A against one column of
# B, compared with kproof's fp32 matmul tolerance 16 u (S + sqrt(K) |C|)
# (src/ops/matmul.c). Needs numpy (not a kproof dependency):
#   python3 lab/tf32_emu.py
import numpy as np, sys
u = 2.0**-24
def tf32_rna(x):
    b = x.astype(np.float32).view(np.uint32)
    b = ((b + np.uint32(0x1000)) & np.uint32(0xFFFFE000))
    return b.view(np.float32)
def trunc_to(x, e):  # truncate toward zero to a multiple of 2^(e-23)
    q = np.ldexp(1.0, (e - 23).astype(np.int64))
    return np.trunc(x / q) * q
def mma_step(acc, prods):  # acc: (P,), prods: (P,8) exact float64
    allv = np.concatenate([acc[:, None].astype(np.float64), prods], axis=1)
    mx = np.max(np.abs(allv), axis=1)
    e = np.floor(np.log2(np.where(mx > 0, mx, 1.0)))
    s = np.sum(trunc_to(allv, e[:, None]), axis=1)
    # result to fp32, toward zero
    r = s.astype(np.float32)
    over = np.abs(r.astype(np.float64)) > np.abs(s)
    r = np.where(over, np.nextafter(r, np.float32(0)), r)
    return r.astype(np.float32)
def run(K, dist, P=256, seed=1):
    g = np.random.default_rng(seed)
    if dist == "normal":
        a = g.standard_normal((P, K)).astype(np.float32); b = g.standard_normal((P, K)).astype(np.float32)
    else:
        a = g.random((P, K), dtype=np.float32); b = g.random((P, K), dtype=np.float32)
    ahi = tf32_rna(a); alo = tf32_rna((a - ahi).astype(np.float32))
    bhi = tf32_rna(b); blo = tf32_rna((b - bhi).astype(np.float32))
    acc = np.zeros(P, np.float32); tot = np.zeros(P, np.float32)
    for k0 in range(0, K, 8):
        sl = slice(k0, k0 + 8)
        for x, y in ((alo, bhi), (ahi, blo), (ahi, bhi)):
            acc = mma_step(acc, x[:, sl].astype(np.float64) * y[:, sl].astype(np.float64))
        if (k0 + 8) % 128 == 0 or k0 + 8 >= K:
            tot = (tot + acc).astype(np.float32); acc = np.zeros(P, np.float32)
    ref = np.sum(a.astype(np.float64) * b.astype(np.float64), axis=1)
    S = np.sum(np.abs(a.astype(np.float64) * b.astype(np.float64)), axis=1)
    tol = 16 * u * (S + np.sqrt(K) * np.abs(ref))
    r = np.abs(tot - ref) / tol
    return r.max(), np.sqrt(np.mean(r * r))
for K in (112, 4096, 8192):
    for d in ("normal", "positive"):
        mx, rms = run(K, d)
        print("K=%5d %-8s max err/tol %.4f  rms %.4f" % (K, d, mx, rms))
