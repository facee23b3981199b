#!/usr/bin/env python3
# lab/bf16_22_pieces.py: matmul bf16 22's in-kernel padding of B checked on
# the CPU (standard library only), before any GPU run.
#  1. pad_b's piece order: for grids of every size against n-block counts,
#     k-block counts and first-group pair rows (rows0 = min(units_m, 8)),
#     the pieces the warps gw = 0 .. nw-1 take (q = gw, gw + nw, ...) are
#     every (n-block, k-block, 8-row piece) of B' exactly once, each n-block
#     in the wave of clusters whose units first take it in 06's unit walk
#     (unit_tile: the first group takes n-block nb first at unit rows0 nb),
#     and so each (n-block, k-block) counter reaches 8;
#  2. wait_b: the k-blocks whose counters the producer waits on cover every
#     row of B' its box reads (rows r0 .. r0 + 63 inside 0 .. K-1; r0 = 64t,
#     or 64t - dx on the row-class path, dx 0..7, t up to the last k-tile of
#     K + dx columns) and no k-block past B';
#  3. unit_tile's first use of each n-block is unit rows0 nb, as (1) takes.
# Exit 0 when every check holds; prints the first failure otherwise.
import random
import sys

W_BK, W_GROUP = 64, 8


def pieces(tiles_n, kblocks, nclusters, rows0, nw):
    """Yield (gw, q, nb, kb, sub, wave) as the kernel's pad_b walks them."""
    total = tiles_n * kblocks * 8
    for gw in range(nw):
        w = lo = hi = base = cnt = 0
        q = gw
        while q < total:
            while q - base >= cnt:
                base += cnt
                lo = hi
                nxt = ((w + 1) * nclusters + rows0 - 1) // rows0
                hi = min(nxt, tiles_n)
                cnt = (hi - lo) * kblocks * 8
                w += 1
            r = q - base
            per_kb = (hi - lo) * 8
            kb, rem = divmod(r, per_kb)
            yield gw, q, lo + rem // 8, kb, rem % 8, w - 1
            q += nw


def check_order(tiles_n, kblocks, nclusters, rows0, nw):
    seen = {}
    for _gw, q, nb, kb, sub, wave in pieces(tiles_n, kblocks, nclusters, rows0, nw):
        key = (nb, kb, sub)
        if key in seen:
            return f"piece {key} twice (q {seen[key]} and {q})"
        if rows0 * nb // nclusters != wave:
            return f"n-block {nb} in wave {wave}, first used in wave {rows0 * nb // nclusters}"
        seen[key] = q
    if len(seen) != tiles_n * kblocks * 8:
        return f"{len(seen)} pieces of {tiles_n * kblocks * 8}"
    return None


def waited(r0, K):
    last = min(r0 + W_BK - 1, K - 1)
    return set(range(max(r0, 0) // W_BK, last // W_BK + 1))


def check_waits(K):
    kblocks = (K + W_BK - 1) // W_BK
    for dx in range(8):
        for t in range((K + dx + W_BK - 1) // W_BK):
            r0 = W_BK * t - dx
            rows = [r for r in range(r0, r0 + W_BK) if 0 <= r < K]
            if not rows:
                return f"K {K} dx {dx} t {t}: a box with no row of B'"
            need = {r // W_BK for r in rows}
            got = waited(r0, K)
            if not need <= got or max(got) >= kblocks:
                return f"K {K} dx {dx} t {t}: waits on {sorted(got)}, reads k-blocks {sorted(need)}"
    return None


def unit_tile_nb(u, units_m, tiles_n):
    per_group = W_GROUP * tiles_n
    first = u // per_group * W_GROUP
    rows = min(units_m - first, W_GROUP)
    return u % per_group // rows


def check_first_use(units_m, tiles_n):
    first = {}
    for u in range(units_m * tiles_n):
        first.setdefault(unit_tile_nb(u, units_m, tiles_n), u)
    rows0 = min(units_m, W_GROUP)
    for nb in range(tiles_n):
        if first.get(nb) != rows0 * nb:
            return f"units_m {units_m} tiles_n {tiles_n}: n-block {nb} first at unit {first.get(nb)}, not {rows0 * nb}"
    return None


def main():
    rng = random.Random(22)
    cases = [(16, 64, 66, 8, 396), (197, 12, 66, 8, 396), (16, 65, 66, 8, 390), (1, 1, 1, 1, 6), (4, 2, 1, 8, 3)]
    cases += [(rng.randint(1, 40), rng.randint(1, 20), rng.randint(1, 70), rng.randint(1, 8), rng.randint(1, 60))
              for _ in range(400)]
    for c in cases:
        err = check_order(*c)
        if err:
            print(f"order {c}: {err}")
            return 1
    for K in list(range(1, 300)) + [768, 1001, 4095, 4096, 8191, 8192]:
        err = check_waits(K)
        if err:
            print(f"waits: {err}")
            return 1
    for units_m in range(1, 20):
        for tiles_n in (1, 2, 7, 16):
            err = check_first_use(units_m, tiles_n)
            if err:
                print(f"first use: {err}")
                return 1
    print(f"bf16 22 pieces: {len(cases)} piece orders, waits at 305 K, first uses: all hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
