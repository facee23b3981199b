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
#  2. A's row classes: the eight tensor maps (base at the 16-byte boundary
#     at or below row j's first element, dx[j], rows, columns K + dx[j],
#     stride 16 K bytes) pass the copy engine's rules (base 16-byte aligned,
#     stride a multiple of 16); a box (x = k0 + dx[j], y = m0/8 + 8h, 64 x 8)
#     reads only bytes of A, and every in-range element is A[8y + j][x - dx];
#     for every tile (m0, k0) of the op's shapes the 16 boxes put A row
#     m0 + 64h + 8i + j (zeros past M and K) at shared row 64h + 8j + i, at
#     the 1024-byte offsets the producer uses; classes with no row (M <= j)
#     load only rows no store writes;
#  3. the staged C store: the consumer's four-byte writes of a quarter, the
#     barrier, the read-back of slot row sr(g) (g's transpose in 8x8 for
#     V == 2) and the warp's row stores (four bytes at four-byte boundaries,
#     the lone first and last elements of odd rows) write every element of
#     C with r < M, c < N exactly once with its own value and nothing else,
#     for tiles at every edge, C at every even offset, N odd and even; each
#     read-back instruction touches 32 distinct banks; a store instruction
#     covers at most 128 + 2 bytes of one row;
#  4. the byte counts behind the header's prediction (4095^3).
#   python3 lab/bf16_07_unaligned.py
import random

W_BM, W_BN, W_BK = 128, 256, 64
KCHUNK = 8192
CANONICAL = [(4096, 4096, 4096), (8192, 8192, 8192), (4095, 4095, 4095), (8192, 1024, 8192)]
EDGE = [(1, 1, 1), (1, 1, 1000003), (1, 4097, 257), (4099, 1, 263), (127, 129, 131), (17, 19, 1048573),
        (4095, 4097, 61), (1021, 1031, 1039)]
QUICK = [(96, 80, 112), (200, 136, 256), (33, 1, 517)]
RUN = [(8, 8, 8), (128, 256, 64), (136, 264, 8), (384, 520, 72), (1000, 1032, 8192), (4104, 4112, 4096),
       (264, 1030, 136), (4097, 4095, 4095), (9, 7, 5), (130, 300, 65)]
M32 = 0xFFFFFFFF


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


def class_maps(A, M, K):  # the host's make_class_maps: (base, dx, rows, cols, stride bytes)
    maps = []
    for j in range(8):
        if M <= j:
            maps.append(maps[0])
            continue
        first = A + 2 * j * K
        base = first & ~15
        dx = (first - base) // 2
        maps.append((base, dx, (M - 1 - j) // 8 + 1, K + dx, 16 * K))
    return maps


def check_classes():
    n = 0
    shapes = [(M, N, K) for (M, N, K) in CANONICAL + EDGE + QUICK + RUN if K <= KCHUNK]
    for (M, N, K) in shapes:
        for off in (0, 2, 6, 14):
            A = 0x100000 + off
            if off == 0 and K % 8 == 0:
                continue  # A read by one map (V < 2)
            lo_a, hi_a = A, A + 2 * M * K
            maps = class_maps(A, M, K)
            for (base, dx, rows, cols, stride) in maps:
                assert base % 16 == 0 and stride % 16 == 0 and 0 <= dx < 8
                assert rows >= 1 and cols >= 1 and stride >= 2 * cols
                # every in-range element of the view is a byte of A
                last = base + (rows - 1) * stride + 2 * (cols - 1)
                assert lo_a <= base + 2 * dx and last + 2 <= hi_a, "view past A"
            tiles_m = cdiv(M, W_BM)
            big = M * K > 4 * 10**6
            m_list = range(0, cdiv(tiles_m, 2) * 2 * W_BM, W_BM)  # dead rank-1 tiles included
            if big:
                m_list = [m for m in m_list if m < 2 * W_BM or m >= M - 2 * W_BM]
            k_list = list(range(0, cdiv(K, W_BK) * W_BK, W_BK))
            if big:
                k_list = k_list[:1] + k_list[-2:]
            for m0 in m_list:
                for k0 in k_list:
                    for h in range(2):
                        for j in range(8):
                            base, dx, rows, cols, stride = maps[j]
                            x0, y0 = k0 + dx, m0 // 8 + 8 * h
                            assert x0 >= dx  # the garbage columns before dx are never in a box
                            smem_off = (8 * h + j) * 1024
                            assert smem_off % 1024 == 0 and smem_off + 1024 <= W_BM * W_BK * 2
                            for i in range(8):
                                srow = smem_off // 128 + i
                                assert srow == 64 * h + 8 * j + i
                                y = y0 + i
                                grow = m0 + 64 * h + 8 * i + j
                                for c in (0, 1, 31, 62, 63):
                                    x = x0 + c
                                    inr = 0 <= y < rows and 0 <= x < cols
                                    if M > j:
                                        want = (grow, k0 + c) if grow < M and k0 + c < K else None
                                        got = None
                                        if inr:
                                            addr = base + y * stride + 2 * x
                                            assert lo_a <= addr < hi_a
                                            e = (addr - A) // 2
                                            got = divmod(e, K)
                                        assert got == want, (M, K, off, m0, k0, h, j, i, c, got, want)
                                    else:  # class 0's rows in the place of an empty class: never stored
                                        assert grow >= M
                    n += 1
    # the consumer's rows: slot row sr(g) holds C row g of its 64 (V == 2)
    for g in range(64):
        sr = ((g & 7) << 3) | (g >> 3)
        i, j = sr % 8, sr // 8  # slot row 8j + i
        assert 8 * i + j == g and (((sr & 7) << 3) | (sr >> 3)) == g
    return n


# ---- 3. the staged C store ----------------------------------------------


def slot_write_addr(warp, lane, jj, h):  # 06's quarter write: (byte in slot, slot row, column in quarter)
    r = warp * 16 + lane // 4 + 8 * h
    return r * 128 + ((jj ^ (r & 7)) << 4) + (lane % 4) * 4, r, 8 * jj + 2 * (lane % 4)


def epilogue_tile(V, M, N, C, m0, n0, cw, value, out):
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
                        grow_local = ((r & 7) << 3) | (r >> 3) if V == 2 else r  # the A row it multiplied
                        col = n0 + 64 * q + c
                        v0 = value(m0 + 64 * cw + grow_local, col)
                        v1 = value(m0 + 64 * cw + grow_local, col + 1)
                        slot[addr] = v0 | (v1 << 16)
        c0 = n0 + 64 * q
        lim = N - c0
        if lim <= 0:
            continue
        for warp in range(4):
            for i in range(16):
                g = warp * 16 + i
                r = m0 + cw * 64 + g
                if r >= M:
                    break
                sr = ((g & 7) << 3) | (g >> 3) if V == 2 else g
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
        # the tiles at the edges (last row and column of tiles, the dead
        # rank-1 tile of an odd tiles_m) and the first
        ms = sorted({0, (tiles_m - 1) * W_BM, tiles_m * W_BM if tiles_m % 2 else 0})
        ns = sorted({0, (tiles_n - 1) * W_BN})
        for V in (1, 2):
            for off in (0, 2, 4, 6, 8, 14):
                C = 0x200000 + off
                for m0 in ms:
                    for n0 in ns:
                        out = {}
                        for cw in range(2):
                            epilogue_tile(V, M, N, C, m0, n0, cw, value, out)
                        want = {(r, c) for r in range(m0, min(m0 + W_BM, M)) for c in range(n0, min(n0 + W_BN, N))}
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
    # a 128-byte box row at a 2-byte offset: sectors (32 bytes) it touches, averaged over the offsets
    sectors = sum(cdiv(o + 128, 32) for o in range(0, 32, 2)) / 16
    copy_rate = 4.26e12
    print("4. 4095^3: B's padded copy %.1f MB read + %.1f MB written = %.1f us at 4.26 TB/s (06: %.1f us more for A);"
          " A's box rows touch %.2f sectors for 4 (%.0f%% more A bytes from L2)"
          % (b_read / 1e6, b_write / 1e6, (b_read + b_write) / copy_rate * 1e6, a_06 / copy_rate * 1e6, sectors,
             (sectors / 4 - 1) * 100))


def main():
    rng = random.Random(7)
    print("1. pad_rows: %d (rows, cols, offset) cases, every chunk once, realigned, zero-padded" % check_pad(rng))
    print("2. row classes: %d (shape, offset, tile) cases, every A element where wgmma reads it" % check_classes())
    print("3. staged C store: %d (variant, shape, offset, tile) cases, every element of C once" % check_epilogue())
    bytes_4095()
    print("ok")


if __name__ == "__main__":
    main()
