#!/usr/bin/env python3
# lab/bf16_07_unaligned.py: matmul bf16 07's new index arithmetic checked on
# the CPU (standard library only), before any GPU run. Memory is modelled
# as bytes at real addresses: buffers start at a 16-byte boundary plus the
# offsets the harness uses (0, one element) and any even offset.
#  1. pad_rows (B's padded copy): for every launch shape the host picks
#     (threads, grid x, grid y capped at 65535), every destination chunk is
#     written exactly once, it holds the source row's 8 elements (zeros past
#     the row's end) after the kernel's realignment (16-byte granule loads,
#     word selects, funnel shift, masks), and no load touches a 16-byte
#     granule without a byte of the source; the skipped second load is
#     never needed;
#  2. A's row classes (A 16-byte aligned, K % 8 != 0, M >= 1024): the
#     eight tensor maps (base at the 16-byte boundary at or below row j's
#     first element, dx[j], rows, columns K + dx[j], stride 16 K bytes) pass
#     the copy engine's rules and read only bytes of A; the unit walk over
#     8 U unit rows (06's unit_tile, then class_of) takes every 128-row
#     block of every class once per tile column, a unit's CLUSTER tiles of
#     one class 128 class rows apart; at every k-tile t the A box (columns
#     64t, 16-byte aligned) and B's rows from 64t - dx[j] meet every (row,
#     k) of the tile exactly once and every other product has a zero factor
#     (B's rows before 0 or past K, A's columns past the view); the leading
#     columns are earlier rows' elements of A (finite), never bytes outside
#     A; the last unit's m0 and C row indices stay ints at the largest M;
#  3. the staged C store: the consumer's four-byte writes of a quarter, the
#     barrier, the read-back of slot row g, whose C row is the A row that
#     shared row 64cw + g holds (8 (y + 64cw + g) + j for V == 2), and the
#     warp's row stores (four bytes at four-byte boundaries,
#     the lone first and last elements of odd rows) write every element of
#     C with r < M, c < N exactly once with its own value and nothing else,
#     for tiles at every edge, C at every even offset, N odd and even; each
#     read-back instruction touches 32 distinct banks; a store instruction
#     covers at most 128 + 2 bytes of one row;
#  4. the byte counts behind the header's prediction (4095^3).
# --cluster C (2 or 4, default 2) and --group G (unit rows a group,
# default 8) model the kernel built with W_CLUSTER C, W_GROUP G (lab 48:
# --cluster 4 --group 4): units of C tiles, U = ceil(ceil(rows0 / 128) / C).
# --c-classes models lab 53's host test (row classes also where A's rows
# are aligned, K % 8 == 0, and C's are not: every class at dx 0), with
# shapes that take it.
#   python3 lab/bf16_07_unaligned.py [--cluster C] [--group G] [--c-classes]
import argparse
import random

W_BM, W_BN, W_BK = 128, 256, 64
KCHUNK = 8192
CLUSTER, GROUP = 2, 8  # W_CLUSTER (CTAs a cluster: tiles a unit), W_GROUP (unit rows a group)
INT32_MAX = 2**31 - 1
CANONICAL = [(4096, 4096, 4096), (8192, 8192, 8192), (4095, 4095, 4095), (8192, 1024, 8192)]
EDGE = [(1, 1, 1), (1, 1, 1000003), (1, 4097, 257), (4099, 1, 263), (127, 129, 131), (17, 19, 1048573),
        (4095, 4097, 61), (1021, 1031, 1039)]
QUICK = [(96, 80, 112), (200, 136, 256), (33, 1, 517)]
RUN = [(8, 8, 8), (128, 256, 64), (136, 264, 8), (384, 520, 72), (1000, 1032, 8192), (4104, 4112, 4096),
       (264, 1030, 136), (4097, 4095, 4095), (9, 7, 5), (130, 300, 65)]
M32 = 0xFFFFFFFF


def configure(cluster, group):  # --cluster, --group
    global CLUSTER, GROUP
    assert cluster in (2, 4) and group >= 1, (cluster, group)
    CLUSTER, GROUP = cluster, group


def cdiv(a, b):
    return (a + b - 1) // b


class Mem:
    """Bytes at addresses; reads outside what was written give None bytes."""

    def __init__(self):
        self.b = {}

    def put16(self, addr, v):
        self.b[addr] = v & 0xFF
        self.b[addr + 1] = v >> 8

    def word(self, addr):  # a 4-byte little-endian load; unknown bytes read as 0xEE
        return sum((self.b.get(addr + i, 0xEE)) << (8 * i) for i in range(4))


def funnelshift_r(lo, hi, s):  # CUDA __funnelshift_r: (hi:lo) >> (s & 31), low 32 bits
    return (((hi << 32) | lo) >> (s & 31)) & M32


# ---- 1. pad_rows ---------------------------------------------------------


def pad_launch(rows, cols):  # the host's padded_copy
    ld = cdiv(cols, 8) * 8
    chunks = ld // 8
    threads = cdiv(chunks, 32) * 32 if chunks < 256 else 256
    bx = cdiv(chunks, threads)
    by = rows if rows < 65535 else 65535
    return ld, threads, bx, by


def pad_rows_model(mem, src, dst, rows, cols, ld, threads, bx, by, written):
    """The kernel, thread by thread; returns the granules it loaded."""
    loaded = set()
    for bxi in range(bx):
        for t in range(threads):
            c0 = (bxi * threads + t) * 8
            if c0 >= cols:
                continue
            v = cols - c0 if cols - c0 < 8 else 8
            for byi in range(by):
                for r in range(byi, rows, by):
                    a = src + 2 * (r * cols + c0)
                    g = a & ~15
                    sh = a - g
                    x = [mem.word(g + 4 * i) for i in range(4)]
                    loaded.add(g)
                    if a + 2 * v > g + 16:
                        x += [mem.word(g + 16 + 4 * i) for i in range(4)]
                        loaded.add(g + 16)
                    else:
                        x += [0, 0, 0, 0]
                    ws, hs = sh >> 2, (sh & 2) * 8
                    y = [x[k + ws] for k in range(5)]
                    o = []
                    for k in range(4):
                        w = funnelshift_r(y[k], y[k + 1], hs)
                        if 2 * k >= v:
                            w &= 0xFFFF0000
                        if 2 * k + 1 >= v:
                            w &= 0x0000FFFF
                        o.append(w)
                    d = dst + 2 * (r * ld + c0)
                    assert d % 16 == 0
                    key = (r, c0)
                    assert key not in written, ("chunk twice", key)
                    written[key] = o
    return loaded


def check_pad(rng):
    n = 0
    cases = [(r, c) for r in (1, 2, 3, 9) for c in (1, 2, 7, 8, 9, 15, 16, 17, 61, 255, 257, 300, 2049, 4095)]
    cases += [(70000, 3)]  # rows past gridDim.y's cap
    for rows, cols in cases:
        offs = (0, 2) if rows * cols > 10000 else (0, 2, 4, 6, 8, 10, 12, 14)
        for off in offs:
            mem = Mem()
            src = 0x10000 + off
            vals = {}
            for i in range(rows * cols):
                v = rng.randrange(1, 0x10000)
                vals[i] = v
                mem.put16(src + 2 * i, v)
            ld, threads, bx, by = pad_launch(rows, cols)
            dst = 0x10000000
            written = {}
            loaded = pad_rows_model(mem, src, dst, rows, cols, ld, threads, bx, by, written)
            assert len(written) == rows * (ld // 8), "chunks missed"
            for (r, c0), o in written.items():
                for e in range(8):
                    got = o[e // 2] >> (16 * (e % 2)) & 0xFFFF
                    want = vals[r * cols + c0 + e] if c0 + e < cols else 0
                    assert got == want, (rows, cols, off, r, c0, e, got, want)
            lo, hi = src, src + 2 * rows * cols
            for g in loaded:
                assert g < hi and g + 16 > lo, ("a granule without a byte of src", g)
            n += 1
    return n


# ---- 2. A's row classes --------------------------------------------------


def class_maps(A, M, K):  # the host's make_class_maps: (base, dx, rows, cols, stride bytes), U
    maps = []
    for j in range(8):
        first = A + 2 * j * K
        base = first & ~15
        dx = (first - base) // 2
        maps.append((base, dx, (M - 1 - j) // 8 + 1, K + dx, 16 * K))
    rows0 = cdiv(M, 8)
    U = cdiv(cdiv(rows0, W_BM), CLUSTER)
    return maps, U


def unit_tile(u, units_m, tiles_n, rank):  # 06's, unchanged
    per_group = GROUP * tiles_n
    first = u // per_group * GROUP
    rows = units_m - first if units_m - first < GROUP else GROUP
    m0 = (CLUSTER * (first + u % per_group % rows) + rank) * W_BM
    n0 = u % per_group // rows * W_BN
    return m0, n0


def class_of(m0, U):  # the kernel's class_of: (class row y, class j)
    P = m0 // (CLUSTER * W_BM)
    j = P // U
    y = m0 - CLUSTER * W_BM * P + CLUSTER * W_BM * (P - j * U)
    return y, j


def smem_row_a(V, m0, srow, U):  # the A row (so the C row) shared row srow of the tile at m0 holds
    if V == 2:
        y, j = class_of(m0, U)
        return 8 * (y + srow) + j  # row y + srow of class j's view
    return m0 + srow


C_CLASSES = False  # --c-classes: lab 53's host test (classes wherever C's rows are unaligned too)


def uses_classes(M, K, off, N=8):  # the host's test (C at a 16-byte boundary)
    unaligned = not (off == 0 and K % 8 == 0) or (C_CLASSES and N % 8 != 0)
    return unaligned and off % 16 == 0 and M >= 8 * W_BM


def check_classes():
    n = 0
    shapes = [(M, N, K) for (M, N, K) in CANONICAL + EDGE + QUICK + RUN if K <= KCHUNK]
    shapes += [(1024, 256, 7), (1031, 300, 9), (2049, 520, 1), (1100, 256, 200)]
    if C_CLASSES:  # K % 8 == 0, C's rows unaligned: every class at dx 0
        shapes += [(4096, 4095, 4096), (1024, 4097, 768), (2048, 1030, 64), (1031, 9, 8), (8192, 50257, 768)]
    for (M, N, K) in shapes:
        if not uses_classes(M, K, 0, N):
            assert M < 8 * W_BM or (K % 8 == 0 and (N % 8 == 0 or not C_CLASSES))
            continue
        A = 0x100000
        lo_a, hi_a = A, A + 2 * M * K
        maps, U = class_maps(A, M, K)
        assert maps[0][1] == 0  # A 16-byte aligned: class 0 has no leading columns
        for (base, dx, rows, cols, stride) in maps:
            assert base % 16 == 0 and stride % 16 == 0 and 0 <= dx < 8 and rows >= W_BM
            last = base + (rows - 1) * stride + 2 * (cols - 1)
            assert lo_a <= base and last + 2 <= hi_a, "view past A"
        # the walk: every 128-row block of every class once per tile column;
        # a unit's CLUSTER tiles of one class, 128 class rows apart
        tiles_n = cdiv(N, W_BN)
        units_m = 8 * U
        seen = set()
        for u in range(units_m * tiles_n):
            ts = [unit_tile(u, units_m, tiles_n, r) for r in range(CLUSTER)]
            cs = [class_of(t[0], U) for t in ts]
            (y0, j0) = cs[0]
            assert 0 <= j0 < 8
            for r in range(CLUSTER):  # one class: one dx, one k-tile count
                assert ts[r][1] == ts[0][1] and cs[r] == (y0 + r * W_BM, j0), (u, r, ts, cs)
            for (y, j, n0) in ((cs[r][0], cs[r][1], ts[r][1]) for r in range(CLUSTER)):
                rows = maps[j][2]
                if y >= rows:
                    assert 8 * y + j >= M  # a dead tile: no C row
                    continue
                key = (j, y, n0)
                assert key not in seen
                seen.add(key)
        for j in range(8):
            assert sum(1 for (jj, y, n0) in seen if jj == j) == cdiv(maps[j][2], W_BM) * tiles_n
        # the operands: at k-tile t, A's box (64t, y) of class j and B's rows
        # from 64t - dx; every (row, k) of the tile met once, nothing else
        # but products with a zero
        big = M * K > 4 * 10**6
        for j in range(8):
            base, dx, rows, cols, stride = maps[j]
            kt = cdiv(K + dx, W_BK)
            assert W_BK * kt - dx >= K
            ys = range(0, CLUSTER * U * W_BM, W_BM)
            for y in (list(ys)[:2] + list(ys)[-2:]) if big else ys:
                ts = range(kt)
                if big:
                    ts = [0, 1, kt - 1]
                met = {}
                for t in ts:
                    x0 = W_BK * t
                    assert (2 * x0) % 16 == 0  # box columns 16-byte aligned, as in 06
                    for srow in ((0, 1, 63, 64, 127) if big else range(W_BM)):
                        vy = y + srow
                        for c in range(W_BK):
                            x = x0 + c
                            k = x - dx  # B's row at this column
                            b_zero = k < 0 or k >= K
                            a_in = vy < rows and x < cols
                            if a_in:
                                addr = base + vy * stride + 2 * x
                                assert lo_a <= addr < hi_a, "A read outside A"
                                e = (addr - A) // 2
                                r, kk = divmod(e, K)
                                if k >= 0:
                                    assert (r, kk) == (8 * vy + j, k), (M, K, j, y, t, srow, c)
                                    if y < CLUSTER * U * W_BM:
                                        m0 = (CLUSTER * (j * U + y // (CLUSTER * W_BM)) + y // W_BM % CLUSTER) * W_BM
                                        assert class_of(m0, U) == (y, j) and smem_row_a(2, m0, srow, U) == r
                                else:  # earlier rows' last elements (finite data of A), times zeros
                                    assert r < 8 * vy + j and b_zero
                            if a_in and not b_zero:
                                key = (8 * vy + j, k)
                                assert key not in met
                                met[key] = 1
                if not big:
                    want = {(8 * vy + j, k) for vy in range(y, min(y + W_BM, rows)) for k in range(K)}
                    assert set(met) == want, (M, K, j, y)
                n += 1
    # the host's bound M <= INT32_MAX - CLUSTER * BM: the walk's last unit
    # (its m0 the largest, (8 U CLUSTER - 1) BM) and the C row index the
    # epilogue forms before its r < M test (8 (y + 127) + j) stay ints
    for M in (INT32_MAX - CLUSTER * W_BM - d for d in (0, 1, 7, 8, 1023, 1024, 4096)):
        for tiles_n in (1, 3):
            _, U = class_maps(0x100000, M, 1)
            units_m = 8 * U
            m0s = [unit_tile(units_m * tiles_n - 1, units_m, tiles_n, r)[0] for r in range(CLUSTER)]
            assert m0s[-1] == (CLUSTER * units_m - 1) * W_BM <= INT32_MAX, (M, m0s)
            for m0 in m0s:
                assert class_of(m0, U)[1] == 7 and crow(2, m0, 1, 63, U) <= INT32_MAX, (M, m0)
    return n


# ---- 3. the staged C store ----------------------------------------------


def slot_write_addr(warp, lane, jj, h):  # 06's quarter write: (byte in slot, slot row, column in quarter)
    r = warp * 16 + lane // 4 + 8 * h
    return r * 128 + ((jj ^ (r & 7)) << 4) + (lane % 4) * 4, r, 8 * jj + 2 * (lane % 4)


def crow(V, m0, cw, g, U):  # the C row of slot row g: the kernel's r
    if V == 2:
        cy, cj = class_of(m0, U)
        return 8 * (cy + cw * 64 + g) + cj
    return m0 + cw * 64 + g


def epilogue_tile(V, M, N, C, m0, n0, cw, value, out, U=0):
    """One consumer warpgroup's 64x256 through the staged path: fills out[(r, c)]."""
    slot = {}
    for q in range(4):
        # the fragment writes: register 4j + 2h (+1) of (warp, lane) is slot row
        # r's value, the accumulator of A's shared row 64cw + r
        for warp in range(4):
            for lane in range(32):
                for jj in range(8):
                    for h in range(2):
                        addr, r, c = slot_write_addr(warp, lane, jj, h)
                        grow = smem_row_a(V, m0, 64 * cw + r, U)  # the A row slot row r multiplied
                        col = n0 + 64 * q + c
                        v0 = value(grow, col)
                        v1 = value(grow, col + 1)
                        slot[addr] = v0 | (v1 << 16)
        c0 = n0 + 64 * q
        lim = N - c0
        if lim <= 0:
            continue
        for warp in range(4):
            for i in range(16):
                g = warp * 16 + i
                r = crow(V, m0, cw, g, U)
                if r >= M:
                    break
                sr = g
                w = []
                banks = set()
                for lane in range(32):
                    a = sr * 128 + (((lane >> 2) ^ (sr & 7)) << 4) + (lane & 3) * 4
                    banks.add(a // 4 % 32)
                    w.append(slot[a])
                assert len(banks) == 32, "read-back bank conflict"
                nx = [w[lane + 1] if lane < 31 else w[lane] for lane in range(32)]  # shfl_down
                p = C + 2 * (r * N + c0)
                span = []
                for lane in range(32):
                    stores = []
                    if (p >> 1) & 1 == 0:
                        e = 2 * lane
                        if e + 1 < lim:
                            stores.append((e, 4, w[lane]))
                        elif e < lim:
                            stores.append((e, 2, w[lane] & 0xFFFF))
                    else:
                        if lane == 0:
                            stores.append((0, 2, w[lane] & 0xFFFF))
                        e = 2 * lane + 1
                        if lane < 31 and e + 1 < lim:
                            stores.append((e, 4, funnelshift_r(w[lane], nx[lane], 16)))
                        elif e < lim:
                            stores.append((e, 2, w[lane] >> 16))
                    for (e, size, val) in stores:
                        addr = p + 2 * e
                        assert addr % size == 0, "misaligned store"
                        span.append(addr)
                        for k in range(size // 2):
                            col = c0 + e + k
                            assert 0 <= col < N and r < M, "store outside C"
                            key = (r, col)
                            assert key not in out, ("element twice", key)
                            out[key] = (val >> (16 * k)) & 0xFFFF
                if span:
                    assert max(span) + 4 - min(span) <= 130


def check_epilogue():
    n = 0
    value = lambda r, c: (r * 7919 + c * 104729 + 12345) & 0xFFFF  # noqa: E731
    cases = [(4095, 4095), (264, 1030), (4099, 1), (1, 4097), (127, 129), (1021, 1031), (200, 136), (96, 80),
             (4097, 4095), (130, 300), (8, 8)]
    for (M, N) in cases:
        tiles_m, tiles_n = cdiv(M, W_BM), cdiv(N, W_BN)
        ns = sorted({0, (tiles_n - 1) * W_BN})
        for V in (1, 2):
            if V == 1:
                U = 0
                # the edges (last row and column of tiles, the dead tiles of
                # the last unit row: ranks tiles_m % CLUSTER and up) and the first
                dead = range(tiles_m, cdiv(tiles_m, CLUSTER) * CLUSTER)
                tiles = [(m0, None) for m0 in sorted({0, (tiles_m - 1) * W_BM} | {t * W_BM for t in dead})]
            else:
                if M < 8 * W_BM:
                    continue
                U = cdiv(cdiv(cdiv(M, 8), W_BM), CLUSTER)
                # per class: its first unit and its last (dead tiles included)
                tiles = []
                for j in range(8):
                    for p in (0, U - 1):
                        for rank in range(CLUSTER):
                            tiles.append(((CLUSTER * (j * U + p) + rank) * W_BM, None))
            for off in (0, 2, 4, 6, 8, 14):
                C = 0x200000 + off
                for (m0, _) in tiles:
                    for n0 in ns:
                        out = {}
                        for cw in range(2):
                            epilogue_tile(V, M, N, C, m0, n0, cw, value, out, U)
                        rows = {crow(V, m0, cw, g, U) for cw in range(2) for g in range(64)}
                        want = {(r, c) for r in rows if r < M for c in range(n0, min(n0 + W_BN, N))}
                        assert set(out) == want, (V, M, N, off, m0, n0, len(out), len(want))
                        for (r, c), v in out.items():
                            assert v == value(r, c), (V, M, N, off, r, c)
                        n += 1
    return n


# ---- 4. bytes ------------------------------------------------------------


def bytes_4095():
    M = N = K = 4095
    b_read = 2 * K * N
    b_write = 2 * K * cdiv(N, 8) * 8
    a_06 = 2 * M * K + 2 * M * cdiv(K, 8) * 8  # 06 padded A too
    # A's box rows: 128 bytes at 16-byte boundaries (class rows 16 K = 16 mod 32 bytes apart):
    # 32-byte sectors touched, over the rows of a class
    maps, U = class_maps(0x100000, M, K)
    starts = [(maps[j][0] + y * maps[j][4]) % 32 for j in range(8) for y in range(64)]
    sectors = sum(cdiv(o + 128, 32) for o in starts) / len(starts)
    kts = [cdiv(K + maps[j][1], W_BK) for j in range(8)]
    copy_rate = 4.26e12
    print("4. 4095^3: B's padded copy %.1f MB read + %.1f MB written = %.1f us at 4.26 TB/s (06: %.1f us more for A);"
          " A's box rows touch %.2f sectors for 4 (%.1f%% more A bytes from L2); k-tiles per class %s (%.2f%% more"
          " than 64)" % (b_read / 1e6, b_write / 1e6, (b_read + b_write) / copy_rate * 1e6, a_06 / copy_rate * 1e6,
                         sectors, (sectors / 4 - 1) * 100, kts, (sum(kts) / 8 / 64 - 1) * 100))


def main():
    ap = argparse.ArgumentParser(description="matmul bf16 07's index arithmetic on the CPU")
    ap.add_argument("--cluster", type=int, choices=(2, 4), default=2, help="CTAs a cluster, W_CLUSTER (default 2)")
    ap.add_argument("--group", type=int, default=8, help="unit rows a group, W_GROUP (default 8)")
    ap.add_argument("--c-classes", action="store_true",
                    help="lab 53's host test: row classes also where A's rows are aligned and C's are not")
    args = ap.parse_args()
    global C_CLASSES
    C_CLASSES = args.c_classes
    if args.group < 1:
        ap.error("--group must be at least 1")
    configure(args.cluster, args.group)
    if (CLUSTER, GROUP) != (2, 8):
        print("cluster %d, group %d" % (CLUSTER, GROUP))
    rng = random.Random(7)
    print("1. pad_rows: %d (rows, cols, offset) cases, every chunk once, realigned, zero-padded" % check_pad(rng))
    print("2. row classes: %d (shape, offset, tile) cases, every A element where wgmma reads it" % check_classes())
    print("3. staged C store: %d (variant, shape, offset, tile) cases, every element of C once" % check_epilogue())
    bytes_4095()
    print("ok")


if __name__ == "__main__":
    main()
