#!/usr/bin/env python3
# lab/bf16_09_realign.py: the index arithmetic of B's realigned stage write
# (the producer warps' replacement for 07's padded copy of B) checked on the
# CPU, standard library only. B is K x N bf16 at a 16-byte boundary plus an
# even offset, rows N elements apart (not 16-byte aligned). A stage's B is
# 64 rows (k0 .. k0 + 63, k0 = 64t - dx, possibly negative with row classes)
# by 256 columns (n0 ..), four 64x64 boxes of 8 KiB.
#  - reference: the image the copy engine writes from a padded B through a
#    64x64 box in the 128-byte swizzle (row r at 128 r, 16-byte chunk c at
#    16 (c ^ (r & 7))), zeros for rows outside [0, K) and columns >= N;
#  - model: 128 producer threads, 16 chunks each: chunk q = 128 i + tid,
#    box q / 512, row (q % 512) / 8, chunk q % 8 (eight lanes a row). A lane
#    loads the aligned 16-byte granule holding its chunk's first byte and
#    the following one (the next lane's too: an L1 hit) where needed;
#    a load is made only where the granule holds a byte of the row's needed
#    elements. Then the funnel shift by the byte offset, masks past N, and
#    the swizzled store.
# Checked: the images are equal, every stage byte written once, no load of a
# granule without a needed byte of B, each quarter-warp store covers one
# 128-byte row (the 32 banks once: conflict-free). python3 lab/bf16_09_realign.py
import random

BOX, ROWS, COLS = 64, 64, 256


def reference(Bvals, K, N, k0, n0):
    img = bytearray(ROWS * COLS * 2)
    for box in range(COLS // BOX):
        for r in range(ROWS):
            k = k0 + r
            for c in range(8):
                for e in range(8):
                    n = n0 + BOX * box + 8 * c + e
                    v = Bvals[k * N + n] if 0 <= k < K and n < N else 0
                    a = box * 8192 + 128 * r + 16 * (c ^ (r & 7)) + 2 * e
                    img[a:a + 2] = v.to_bytes(2, "little")
    return img


def model(mem, base, K, N, k0, n0):
    img = bytearray(ROWS * COLS * 2)
    written = [0] * (ROWS * COLS * 2 // 16)
    loads = []
    for i in range(16):
        for warp in range(4):
            quarter_rows = []
            for lane in range(32):
                q = 128 * i + 32 * warp + lane
                box, r, c = q // 512, (q % 512) // 8, q % 8
                k = k0 + r
                n = n0 + BOX * box + 8 * c
                chunk = bytearray(16)
                if 0 <= k < K and n < N:
                    addr = base + 2 * (k * N + n)
                    g0, o = addr & ~15, addr & 15
                    last = base + 2 * (k * N + min(n + 8, N)) - 1  # last needed byte
                    lo = bytes(mem[g0:g0 + 16])
                    loads.append((g0, addr, last))
                    hi = bytes(16)
                    if o and last >= g0 + 16:  # the next granule: the next lane's, or its own for lane 7
                        hi = bytes(mem[g0 + 16:g0 + 32])
                        loads.append((g0 + 16, addr, last))
                    chunk = bytearray((lo + hi)[o:o + 16])
                    for e in range(8):
                        if n + e >= N:
                            chunk[2 * e:2 * e + 2] = b"\0\0"
                a = box * 8192 + 128 * r + 16 * (c ^ (r & 7))
                img[a:a + 16] = chunk
                written[a // 16] += 1
                quarter_rows.append((lane // 8, a // 128))
            for qq in range(4):  # each quarter-warp: one 128-byte row, 8 distinct chunks
                rows = {row for (g, row) in quarter_rows if g == qq}
                assert len(rows) == 1
    assert all(w == 1 for w in written)
    for g, first, last in loads:  # a granule loaded holds a needed byte
        assert g <= last and g + 15 >= first, (g, first, last)
    return img


def check(rng, K, N, off, k0, n0):
    base = 64 + off
    Bvals = [rng.randrange(1, 65536) for _ in range(K * N)]
    mem = bytearray(base + 2 * K * N + 64)
    for i, v in enumerate(Bvals):
        mem[base + 2 * i:base + 2 * i + 2] = v.to_bytes(2, "little")
    assert model(mem, base, K, N, k0, n0) == reference(Bvals, K, N, k0, n0)


def main():
    rng = random.Random(9)
    n = 0
    for K, N in [(70, 263), (65, 257), (9, 7), (3, 5), (130, 300)]:
        for off in (0, 2, 14) if N % 8 else (2,):
            for k0 in (-7, K - 64, K - 3):
                for n0 in sorted({0, max(0, N - 256), max(0, N - 70)}):
                    check(rng, K, N, off, k0, n0)
                    n += 1
    print(f"bf16_09_realign: {n} stage images equal to the copy engine's; loads, writes, banks OK")


if __name__ == "__main__":
    main()
