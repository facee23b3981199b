#!/usr/bin/env python3
"""matmul bf16 42's wgmma descriptors on the CPU: built once from the
shared-memory base and advanced by adds, against 11's descriptor built
from each stage address for every wgmma.

11: smem_desc(addr, lbo, sbo) = (addr & 0x3FFFF) >> 4 | (lbo >> 4) << 16 |
(sbo >> 4) << 32 | 1 << 62, with A at base + s * W_STAGE_BYTES + a_off +
32 kk (lbo 16, sbo 1024) and B at base + s * W_STAGE_BYTES + W_A_BYTES +
2048 kk (lbo 8192, sbo 1024). 42: da0 = smem_desc(base + a_off, 16, 1024),
db0 = smem_desc(base + W_A_BYTES, 8192, 1024), then da0 + s * (W_STAGE_BYTES
>> 4) + 2 kk and db0 + s * (W_STAGE_BYTES >> 4) + 128 kk. Checked for every
1024-aligned base whose ring fits a block's 227 KiB of shared memory, both
consumers (a_off 0 and 8192), the 4 stages and the 4 k16 steps of a
k-tile: the same 64-bit value each time. Exits 1 on the first mismatch.
    python3 lab/bf16_42_desc.py
"""
import sys

W_BM, W_BN, W_BK, W_STAGES = 128, 256, 64, 4
W_A_BYTES = W_BM * W_BK * 2
W_STAGE_BYTES = W_A_BYTES + W_BK * W_BN * 2
SMEM = 227 * 1024


def smem_desc(addr, lbo, sbo):
    return ((addr & 0x3FFFF) >> 4) | (((lbo & 0x3FFFF) >> 4) << 16) | (((sbo & 0x3FFFF) >> 4) << 32) | (1 << 62)


def main():
    n = 0
    for base in range(0, SMEM - W_STAGES * W_STAGE_BYTES + 1, 1024):
        for a_off in (0, 64 * 128):
            da0 = smem_desc(base + a_off, 16, 1024)
            db0 = smem_desc(base + W_A_BYTES, 8192, 1024)
            for s in range(W_STAGES):
                sa = da0 + s * (W_STAGE_BYTES >> 4)
                sb = db0 + s * (W_STAGE_BYTES >> 4)
                a = base + s * W_STAGE_BYTES + a_off
                b = base + s * W_STAGE_BYTES + W_A_BYTES
                for kk in range(W_BK // 16):
                    want = (smem_desc(a + 32 * kk, 16, 1024), smem_desc(b + 2048 * kk, 8192, 1024))
                    got = ((sa + 2 * kk) & (2**64 - 1), (sb + 128 * kk) & (2**64 - 1))
                    if got != want:
                        print(f"mismatch: base {base} a_off {a_off} stage {s} kk {kk}: {got} != {want}")
                        return 1
                    n += 1
    print(f"ok: {n} descriptor pairs, 42's adds equal 11's builds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
