#!/usr/bin/env python3
# lab/bf16x3_layout.py: matmul f32 05's index arithmetic checked on the CPU
# (standard library only), before any GPU run:
#  1. the 64-byte swizzle: where the copy engine puts element (piece, row,
#     k) of a stage and where a wgmma descriptor (K-major, SBO 512, start
#     advanced 32 bytes a k16 step) reads it are the same byte, for both
#     consumers' rows of A and all 176 rows of B, and A's and B's pieces
#     tile the stage without overlap;
#  2. the persistent grid's grouped walk takes every tile exactly once;
#  3. the wgmma m64nN fragment layout puts each of a 128 x 176 tile's
#     elements in exactly one (thread, register);
#  4. the fold schedule: each consumer's chains cover every stage of a tile
#     once, none longer than 4 stages, the last ending with the tile;
#  5. the six products are the six (p, q) with p + q <= 2, smallest first.
# The constants are the kernel's (G_BM, G_BN, G_BK, G_STAGES, G_FOLD).
#   python3 lab/bf16x3_layout.py
BM, BN, BK, STAGES, FOLD, GROUP_M = 128, 176, 32, 3, 4, 8
A_PIECE, B_PIECE = BM * BK * 2, BN * BK * 2
A_BYTES, STAGE = 3 * A_PIECE, 3 * A_PIECE + 3 * B_PIECE


def sw64(addr):  # bits [5:4] ^= bits [8:7] of the shared-memory address
    return addr ^ (((addr >> 7) & 3) << 4)


def tma_addr(box_base, rows, piece, row, k):  # box (32, rows, 3), 64-byte rows
    return sw64(box_base + (piece * rows + row) * 64 + 2 * k)


def wgmma_addr(start, i, kl):  # K-major, 64-byte swizzle: 8-row groups SBO 512 apart
    return sw64(start + (i // 8) * 512 + (i % 8) * 64 + 2 * kl)


def check_swizzle():
    for base in (0, 1024 * 7, 1024 * 57 * 2):  # 1024-aligned stage bases
        seen = {}
        for p in range(3):
            for r in range(BM):
                for k in range(BK):
                    seen.setdefault(tma_addr(base, BM, p, r, k) // 2 * 2, []).append(("A", p, r, k))
            for r in range(BN):
                for k in range(BK):
                    seen.setdefault(tma_addr(base + A_BYTES, BN, p, r, k) // 2 * 2, []).append(("B", p, r, k))
        assert len(seen) == STAGE // 2 and all(len(v) == 1 for v in seen.values()), "pieces overlap"
        assert min(seen) == base and max(seen) == base + STAGE - 2
        for p in range(3):
            for wg in (1, 2):
                for kk in range(2):
                    start = base + p * A_PIECE + (wg - 1) * 64 * 64 + 32 * kk
                    for i in range(64):
                        for kl in range(16):
                            m, k = (wg - 1) * 64 + i, 16 * kk + kl
                            assert wgmma_addr(start, i, kl) == tma_addr(base, BM, p, m, k), (p, wg, kk, i, kl)
            for kk in range(2):
                start = base + A_BYTES + p * B_PIECE + 32 * kk
                for n in range(BN):
                    for kl in range(16):
                        assert wgmma_addr(start, n, kl) == tma_addr(base + A_BYTES, BN, p, n, 16 * kk + kl)
    # every piece on a 512-byte boundary (the swizzle's period)
    assert all((x % 512) == 0 for x in (A_PIECE, B_PIECE, A_BYTES, STAGE, 64 * 64))


def tile_of(pid, tiles_m, tiles_n):
    per_group = GROUP_M * tiles_n
    first_m = pid // per_group * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    return first_m + pid % per_group % group_rows, pid % per_group // group_rows


def check_walk():
    for M, N in ((4096, 4096), (8192, 8192), (4095, 4095), (8192, 1024), (1, 1), (17, 19), (4099, 1), (1, 4097),
                 (1021, 1031), (127, 129)):
        tm, tn = -(-M // BM), -(-N // BN)
        tiles = tm * tn
        blocks = min(tiles, 132)
        got = [tile_of(pid, tm, tn) for b in range(blocks) for pid in range(b, tiles, blocks)]
        assert sorted(got) == [(i, j) for i in range(tm) for j in range(tn)], (M, N)


def check_fragments():
    cells = set()
    for wg in (1, 2):
        for t in range(128):
            warp, lane = t // 32, t % 32
            r0, c0 = (wg - 1) * 64 + warp * 16 + lane // 4, 2 * (lane % 4)
            for j in range(BN // 8):
                for h in range(2):
                    for e in range(2):
                        cells.add((r0 + 8 * h, c0 + 8 * j + e))
    assert cells == {(r, c) for r in range(BM) for c in range(BN)}
    assert 4 * (BN // 8) == 88


def check_folds():
    for nst in range(1, 40):
        for off in (0, FOLD // 2):
            chains, cur = [], []
            for st in range(nst):
                cur.append(st)
                if (st + 1 + off) % FOLD == 0 or st + 1 == nst:
                    chains.append(cur)
                    cur = []
            assert not cur and sum(chains, []) == list(range(nst))
            assert max(len(c) for c in chains) <= FOLD


def check_products():
    order = []
    for j in range(6):  # the kernel's expressions
        pa = 2 if j == 0 else 1 if j in (2, 3) else 0
        pb = 2 if j == 1 else 1 if j in (2, 4) else 0
        order.append((pa, pb))
    assert sorted(order) == sorted((p, q) for p in range(3) for q in range(3) if p + q <= 2)
    assert [p + q for p, q in order] == sorted((p + q for p, q in order), reverse=True)


check_swizzle()
check_walk()
check_fragments()
check_folds()
check_products()
print("bf16x3 layout: swizzle, tile walk, fragments, folds, products: all consistent")
