#!/usr/bin/env python3
"""matmul bf16 11's staged C store on the CPU: a warp's rows of a quarter,
each lane's four-byte and two-byte stores, against the row they must write.

The kernel's per-quarter arithmetic, transcribed: rows r0 + i * rstep
(rstep 1, or 8 for a row-class tile) at element p0 + i * pstep of C
(pstep = rstep * N), a row's alignment o (its first element at a four-byte
boundary, 0, or two bytes past one, 1) taken as the first row's flipped by
pstep's parity, and per o the lane's element e = 2 lane + o, its four-byte
store where both e and e + 1 exist (and lane < 31 for o = 1), its two-byte
store of v's low half where only e does, and for o = 1 lane 0's store of
element 0. Checked over C base offsets of 0 and 1 elements (two bytes),
N = 1..139 and 4095-4097, both strides, every quarter (lim = N - c0) and
rows past M: every element of every row written exactly once with its
value, every four-byte store four-byte aligned, the derived o equal to the
row's real alignment. Exits 1 on the first mismatch.
    python3 lab/bf16_11_store.py
"""
import sys


def quarter(base, N, rstep, rows, c0, M, r0):
    """Byte address -> value writes of one warp's 16 rows of the quarter at c0."""
    lim = N - c0
    pstep = rstep * N
    p0 = base + r0 * N + c0                      # element index of row r0's first element
    o0 = ((2 * p0) >> 1) & 1                     # (uintptr_t)p0 >> 1 & 1, two-byte elements
    flip = pstep & 1
    writes = {}
    for i in range(16):
        r = r0 + i * rstep
        if r >= M:
            continue
        p = p0 + i * pstep
        o = o0 ^ (i & flip)
        assert o == p & 1, ("alignment", N, rstep, i)
        row = [(r * 1000 + c0 + k) & 0xffff for k in range(64)]   # the slot row: element k of the quarter
        w = [row[2 * l] | (row[2 * l + 1] << 16) if 2 * l + 1 < 64 else row[2 * l] for l in range(32)]
        for lane in range(32):
            nx = w[lane + 1] if lane < 31 else w[lane]
            e0, e1 = 2 * lane, 2 * lane + 1
            s4_0 = e0 + 1 < lim
            s2_0 = not s4_0 and e0 < lim
            s4_1 = lane < 31 and e1 + 1 < lim
            s2_1 = not s4_1 and e1 < lim
            v = (((w[lane] >> 16) | (nx << 16)) & 0xffffffff) if o else w[lane]
            e = e1 if o else e0
            def put(k, val):
                key = (r, c0 + k)
                if key in writes:
                    raise AssertionError(("twice", N, rstep, r, c0 + k))
                writes[key] = val
            if s4_1 if o else s4_0:
                if (2 * (p + e)) % 4:
                    raise AssertionError(("four-byte store unaligned", N, rstep, r, e))
                put(e, v & 0xffff)
                put(e + 1, v >> 16)
            if s2_1 if o else s2_0:
                put(e, v & 0xffff)
            if o and lane == 0:
                put(0, w[lane] & 0xffff)
    want = {(r0 + i * rstep, c0 + k): ((r0 + i * rstep) * 1000 + c0 + k) & 0xffff
            for i in range(16) if r0 + i * rstep < M for k in range(min(lim, 64))}
    if writes != want:
        raise AssertionError(("elements", N, rstep, c0, sorted(set(writes) ^ set(want))[:4]))


def main():
    cases = 0
    for N in list(range(1, 140)) + [4095, 4096, 4097]:
        for base in (0, 1):
            for rstep in (1, 8):
                for c0 in range(0, N, 64):
                    for M in (10**9, 5):          # every row, and rows past M
                        quarter(base, N, rstep, 16, c0, M, r0=3)
                        cases += 1
    print("bf16 11 staged store: %d quarters, every element once with its value, "
          "four-byte stores aligned, row alignment as derived" % cases)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("MISMATCH", e)
        sys.exit(1)
