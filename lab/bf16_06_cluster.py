#!/usr/bin/env python3
# lab/bf16_06_cluster.py: matmul bf16 06's new index arithmetic and its
# barrier protocol checked on the CPU (standard library only), before any
# GPU run:
#  1. the unit walk: for the op's shapes (canonical, edge, quick, the run
#     script's partial tiles) and any number of clusters, every 128x256
#     tile of C is taken exactly once, all CTAs of a cluster walk the same
#     units (the same k-tile count, so their rings stay in step) with the
#     same n0 and rank r's m0 r * 128 below rank 0's, and only the highest
#     ranks of the last unit row (tiles_m % CLUSTER != 0) lie below M; tile
#     origins stay ints, also at the largest M the host takes;
#  2. the B split: rank r's 4 / CLUSTER boxes from (4 / CLUSTER) r,
#     multicast to every CTA of the cluster, give each CTA all four boxes
#     once, and each full barrier the 48 KiB its producer expects;
#  3. the ring protocol, simulated with mbarrier semantics (arrival count,
#     signed transaction count, phase) under random interleavings of all
#     producers, 8 consumer warps a CTA, the copies landing late and the
#     remote arrives in flight: no copy writes a stage that a warp of any
#     CTA may still read, every warp reads the A and B of its own unit and
#     k-tile, nothing deadlocks; and the same simulation catches the
#     mistakes it is there for (empty barriers counting local warps only;
#     a full barrier expecting only its own CTA's copies, 32 KiB with 2
#     CTAs; with more than 2, also the 2-CTA multicast mask 0x3);
#  4. the epilogue: the consumers' four-byte writes of a quarter land where
#     the copy engine's 128-byte swizzle puts each element of a 64x64 box,
#     cover the 8 KiB slot once, and each warp instruction hits 32 banks;
#     the wait_group.read<1> before each quarter never lets a slot be
#     rewritten before the store that read it has read it;
#  5. shared memory: the layout fits 232448 bytes with every stage and
#     slot 1024-aligned; setmaxnreg's 40 / 232 fill ptxas's 168.
# The constants are the kernel's (W_*). --cluster C (2 or 4, default 2)
# and --group G (unit rows a group, default 8) model the kernel built with
# W_CLUSTER C, W_GROUP G (lab 48: --cluster 4 --group 4).
#   python3 lab/bf16_06_cluster.py [seeds] [--cluster C] [--group G]
#   (default 300 protocol runs)
import argparse
import random

BM, BN, BK, STAGES, CLUSTER, GROUP = 128, 256, 64, 4, 2, 8
A_BYTES, BOX_BYTES = BM * BK * 2, 64 * BK * 2
STAGE = A_BYTES + 4 * BOX_BYTES
EMPTY_ARRIVES = CLUSTER * 8
BOXES = 4 // CLUSTER  # B's 64-column boxes each CTA loads and multicasts
MASK = (1 << CLUSTER) - 1  # the multicast mask: every CTA of the cluster
SMS = 132  # the H200's SMs: 132 // CLUSTER clusters when all fit
INT32_MAX = 2**31 - 1
C_SLOT = 8192
SMEM_MAX = 232448

CANONICAL = [(4096, 4096, 4096), (8192, 8192, 8192), (4095, 4095, 4095), (8192, 1024, 8192)]
EDGE = [(1, 1, 1), (1, 1, 1000003), (1, 4097, 257), (4099, 1, 263), (127, 129, 131), (17, 19, 1048573),
        (4095, 4097, 61), (1021, 1031, 1039)]
QUICK = [(96, 80, 112), (200, 136, 256), (33, 1, 517)]
TILES = [(8, 8, 8), (128, 256, 64), (136, 264, 8), (384, 520, 72), (1000, 1032, 8192), (4104, 4112, 4096)]


def configure(cluster, group):  # --cluster, --group: the kernel's W_CLUSTER, W_GROUP
    global CLUSTER, GROUP, EMPTY_ARRIVES, BOXES, MASK
    assert cluster in (2, 4) and group >= 1, (cluster, group)
    CLUSTER, GROUP = cluster, group
    EMPTY_ARRIVES = CLUSTER * 8
    BOXES = 4 // CLUSTER
    MASK = (1 << CLUSTER) - 1


def cdiv(a, b):
    return (a + b - 1) // b


def unit_tile(u, units_m, tiles_n, rank):  # the kernel's unit_tile, C integer division (all >= 0)
    per_group = GROUP * tiles_n
    first = u // per_group * GROUP
    rows = units_m - first if units_m - first < GROUP else GROUP
    m0 = (CLUSTER * (first + u % per_group % rows) + rank) * BM
    n0 = u % per_group // rows * BN
    return m0, n0


def walk(M, N, clusters):
    """Per cluster, per rank: the list of (m0, n0) the CTA takes."""
    tiles_m, tiles_n = cdiv(M, BM), cdiv(N, BN)
    units_m = cdiv(tiles_m, CLUSTER)
    units = units_m * tiles_n
    return [[[unit_tile(u, units_m, tiles_n, r) for u in range(c, units, clusters)] for r in range(CLUSTER)]
            for c in range(clusters)]


def launch_clusters(M, N, fit):  # the host: min(units, clusters that fit)
    units = cdiv(cdiv(M, BM), CLUSTER) * cdiv(N, BN)
    return min(units, fit)


def check_walk():
    n = 0
    for (M, N, K) in CANONICAL + EDGE + QUICK + TILES:
        if K > 8192:
            continue  # 02's path
        fits = [66, 64, 1, 2, 3, 7, 65, 132]
        fits += [f for f in (SMS // CLUSTER, SMS // CLUSTER - 1) if f not in fits]
        for fit in fits:
            clusters = launch_clusters(M, N, fit)
            tiles_m, tiles_n = cdiv(M, BM), cdiv(N, BN)
            units_m = cdiv(tiles_m, CLUSTER)
            seen = {}
            w = walk(M, N, clusters)
            for c, ranks in enumerate(w):
                for r in range(1, CLUSTER):
                    assert len(ranks[r]) == len(ranks[0]), "ranks walk different unit counts"
                assert len(ranks[0]) > 0, "an idle cluster (the grid is min(units, fit))"
                for tl in zip(*ranks):  # one unit, rank by rank
                    for r, b in enumerate(tl):
                        assert b[1] == tl[0][1] and b[0] == tl[0][0] + r * BM, tl
                for r, tl in enumerate(ranks):
                    for (m0, n0) in tl:
                        assert m0 + CLUSTER * BM <= INT32_MAX and n0 + BN <= INT32_MAX
                        assert 0 <= n0 < N and m0 % BM == 0 and n0 % BN == 0
                        if m0 >= M:  # dead: the highest ranks of the last unit row, tiles_m % CLUSTER != 0
                            live = tiles_m % CLUSTER
                            assert live != 0 and r >= live and m0 // (CLUSTER * BM) == units_m - 1, (M, N, m0, r)
                            assert m0 == (tiles_m - live + r) * BM, (M, N, m0, r)
                            continue
                        key = (m0 // BM, n0 // BN)
                        assert key not in seen, ("tile twice", M, N, key)
                        seen[key] = c
            assert len(seen) == tiles_m * tiles_n, ("tiles missed", M, N, fit)
            n += 1
    # the grouped order: at 4096^3 the 66 clusters of the first round take
    # 8 pair rows (2048 rows of A) x 8-9 tile columns of B; in general the
    # SMS // CLUSTER clusters of one round, if one group holds them, take
    # min(GROUP, units_m) unit rows x cdiv(clusters, those) tile columns
    clusters = launch_clusters(4096, 4096, SMS // CLUSTER)
    first = [w[0][0] for w in walk(4096, 4096, clusters)]
    rows = {m0 for m0, _ in first}
    cols = {n0 for _, n0 in first}
    if (CLUSTER, GROUP) == (2, 8):
        assert len(rows) == 8 and len(cols) == 9, (len(rows), len(cols))
    else:
        units_m, tiles_n = cdiv(cdiv(4096, BM), CLUSTER), cdiv(4096, BN)
        urows = min(GROUP, units_m)
        if clusters <= GROUP * tiles_n:
            assert len(rows) == urows and len(cols) == cdiv(clusters, urows), (len(rows), len(cols))
            print("  first round at 4096^3, %d clusters: %d unit rows (%d rows of A) x %d tile columns of B"
                  " (clusters of 2, groups of 8: 8 pair rows, 2048 rows of A, x 9)"
                  % (clusters, urows, urows * CLUSTER * BM, len(cols)))
        else:
            print("  first round at 4096^3: %d clusters span more than one group of %d unit rows; the 2-CTA, 8-row"
                  " footprint check (8 pair rows x 9 columns) skipped" % (clusters, GROUP))
    # the host's bound (M <= INT32_MAX - CLUSTER * BM) keeps every tile's
    # origin and last row an int, dead tiles included, at the largest M
    for M in (INT32_MAX - CLUSTER * BM - d for d in (0, 1, 127, 128, 129, 255, 1000)):
        for N in (1, 256, 257, 4096):
            tiles_m, tiles_n = cdiv(M, BM), cdiv(N, BN)
            units_m = cdiv(tiles_m, CLUSTER)
            units = units_m * tiles_n
            top = 0
            last = range(max(0, units - 2 * GROUP * tiles_n), units)  # the last group whole
            for u in list(range(min(units, GROUP * tiles_n))) + list(last):
                for r in range(CLUSTER):
                    m0, n0 = unit_tile(u, units_m, tiles_n, r)
                    top = max(top, m0)
                    assert 0 <= m0 and m0 + BM - 1 <= INT32_MAX, (M, N, u, r, m0)
            assert top == (CLUSTER * units_m - 1) * BM, (M, N, top)
    return n


def check_b_split():
    for dst in range(CLUSTER):
        got = {}
        bytes_in = A_BYTES  # its own A, not multicast
        for issuer in range(CLUSTER):
            mask = MASK
            for j in range(BOXES):
                box = BOXES * issuer + j
                if mask >> dst & 1:
                    got[box] = got.get(box, 0) + 1
                    bytes_in += BOX_BYTES
        assert got == {0: 1, 1: 1, 2: 1, 3: 1}, got
        assert bytes_in == STAGE == 48 * 1024  # the producer's expect_tx


# ---- 3. the ring protocol ------------------------------------------------


class Bar:
    def __init__(self, count):
        self.count, self.pending, self.tx, self.done = count, count, 0, 0  # done: completed phases

    def _check(self):
        if self.pending == 0 and self.tx == 0:
            self.done += 1
            self.pending = self.count
        assert self.pending >= 0

    def arrive(self, tx=0):
        assert self.pending > 0, "arrive on a barrier with no arrival pending"
        self.tx += tx
        self.pending -= 1
        self._check()

    def complete_tx(self, b):
        self.tx -= b
        assert self.tx > -(1 << 20)
        self._check()


class Hazard(Exception):
    pass


def simulate(seed, ktiles, units_per_cluster, empty_local_only=False, expect=STAGE, mask=None):
    rng = random.Random(seed)
    mask = MASK if mask is None else mask
    full = [[Bar(1) for _ in range(STAGES)] for _ in range(CLUSTER)]
    empty = [[Bar(8 if empty_local_only else EMPTY_ARRIVES) for _ in range(STAGES)] for _ in range(CLUSTER)]
    data = [[{} for _ in range(STAGES)] for _ in range(CLUSTER)]
    readers = [[set() for _ in range(STAGES)] for _ in range(CLUSTER)]
    units = [(u * 7 + 3, u * 5 + 1) for u in range(units_per_cluster)]  # (unit row, tile column) stand-ins
    total = units_per_cluster * ktiles
    inflight = []  # copies issued, not landed: (dst, stage, part, tag, bytes)
    arrives = []  # remote arrives in flight: (cta, stage)

    def a_tag(x, it):
        u, t = divmod(it, ktiles)
        return ("A", units[u][0] * CLUSTER + x, t)

    def b_tag(it):
        u, t = divmod(it, ktiles)
        return ("B", units[u][1], t)

    def producer(x):
        it = 0
        while it < total:
            s = it % STAGES
            if it >= STAGES:
                while empty[x][s].done < it // STAGES:  # phase (it/S - 1) not yet complete
                    yield False
            full[x][s].arrive(tx=expect)
            yield True
            issue(x, s, "A", a_tag(x, it), A_BYTES, [x])
            yield True
            for j in range(BOXES):
                box = BOXES * x + j
                issue(x, s, "B%d" % box, b_tag(it), BOX_BYTES, [y for y in range(CLUSTER) if mask >> y & 1])
                yield True
            it += 1

    def issue(x, s, part, tag, nbytes, dsts):
        for y in dsts:
            if readers[y][s]:
                raise Hazard("CTA %d's copy into CTA %d stage %d while %s read it" % (x, y, s, sorted(readers[y][s])))
            inflight.append((y, s, part, tag, nbytes))

    def consumer(x, w):
        it = 0
        for u in range(units_per_cluster):
            prev = None
            for t in range(ktiles):
                s = it % STAGES
                while full[x][s].done < it // STAGES + 1:
                    yield False
                d = data[x][s]
                want = {"A": a_tag(x, it), "B0": b_tag(it), "B1": b_tag(it), "B2": b_tag(it), "B3": b_tag(it)}
                if d != want:
                    raise Hazard("CTA %d warp %d it %d read %s, wanted %s" % (x, w, it, d, want))
                readers[x][s].add(w)  # the wgmma group of this k-tile reads it until retired
                yield True
                if prev is not None:  # wait_group<1>: the previous group retired
                    readers[x][prev].discard(w)
                    for y in ([x] if empty_local_only else range(CLUSTER)):  # lane y arrives on CTA y
                        arrives.append((y, prev))
                        yield True
                prev = s
                it += 1
            readers[x][prev].discard(w)  # wait_group<0>
            for y in ([x] if empty_local_only else range(CLUSTER)):
                arrives.append((y, prev))
                yield True
            yield True  # the epilogue

    procs = [producer(x) for x in range(CLUSTER)] + [consumer(x, w) for x in range(CLUSTER) for w in range(8)]
    live = list(procs)
    stuck = 0
    while live or inflight or arrives:
        choices = ["p"] * len(live) + ["c"] * len(inflight) + ["a"] * len(arrives)
        k = rng.randrange(len(choices))
        kind = choices[k]
        if kind == "p":
            p = live[k]
            try:
                progressed = next(p)
            except StopIteration:
                live.remove(p)
                progressed = True
        elif kind == "c":
            y, s, part, tag, nbytes = inflight.pop(k - len(live))
            if readers[y][s]:
                raise Hazard("copy landed in CTA %d stage %d while %s read it" % (y, s, sorted(readers[y][s])))
            data[y][s][part] = tag
            full[y][s].complete_tx(nbytes)
            progressed = True
        else:
            y, s = arrives.pop(k - len(live) - len(inflight))
            empty[y][s].arrive()
            progressed = True
        stuck = 0 if progressed else stuck + 1
        if stuck > 20000:
            raise Hazard("deadlock")
    for x in range(CLUSTER):
        for s in range(STAGES):
            assert full[x][s].tx == 0 and full[x][s].pending == 1
    return True


def check_protocol(seeds):
    runs = 0
    cases = [(1, 1), (1, 3), (2, 2), (3, 2), (4, 1), (5, 3), (9, 2), (16, 2)]
    for seed in range(seeds):
        kt, up = cases[seed % len(cases)]
        simulate(seed, kt, up)
        runs += 1
    # the model's teeth: each mistake is caught on some interleaving
    own = A_BYTES + BOXES * BOX_BYTES  # only the copies its own producer issues
    mistakes = [("empty barriers counting local warps only", {"empty_local_only": True}),
                ("a full barrier expecting %d KiB" % (own // 1024), {"expect": own})]
    if CLUSTER > 2:
        mistakes.append(("the 2-CTA multicast mask 0x3", {"mask": 0x3}))
    for name, kw in mistakes:
        caught = 0
        for seed in range(200):
            try:
                simulate(seed, 5, 2, **kw)
            except (Hazard, AssertionError):
                caught += 1
        assert caught > 0, "the simulation does not catch: " + name
        print("  mistake caught in %d of 200 runs: %s" % (caught, name))
    return runs


# ---- 4. the epilogue ----------------------------------------------------


def tma_sw128(r, c):  # byte of element (r, c) of a 64x64 bf16 box, 128-byte swizzle, 1024-aligned base
    off = r * 128 + 2 * c
    return off ^ (((off >> 7) & 7) << 4)


def kernel_st(warp, lane, jj, h):  # the kernel's st.shared address (slot offset) and the element it holds
    r = warp * 16 + lane // 4 + 8 * h
    addr = r * 128 + ((jj ^ (r & 7)) << 4) + (lane % 4) * 4
    c = 8 * jj + 2 * (lane % 4)  # the pair (c, c + 1) of the fragment's register 4j + 2h
    return addr, r, c


def check_epilogue():
    cover = set()
    for warp in range(4):
        for jj in range(8):
            for h in range(2):
                banks = set()
                for lane in range(32):
                    addr, r, c = kernel_st(warp, lane, jj, h)
                    assert addr == tma_sw128(r, c) and addr + 2 == tma_sw128(r, c + 1), (warp, lane, jj, h)
                    assert addr % 4 == 0 and 0 <= addr < C_SLOT
                    assert addr not in cover
                    cover.add(addr)
                    banks.add(addr // 4 % 32)
                assert len(banks) == 32, "bank conflict"
    assert len(cover) == C_SLOT // 4
    # the fragment: register 4j + 2h (+1) of warp w, lane l is row 16w + l/4 + 8h,
    # columns 8j + 2(l%4) (+1) of the warpgroup's 64x256; quarter q holds j = 8q..8q+7
    owner = {}
    for warp in range(4):
        for lane in range(32):
            for j in range(32):
                for h in range(2):
                    for e in range(2):
                        q, jj = divmod(j, 8)
                        _, r, c = kernel_st(warp, lane, jj, h)
                        key = (r, 64 * q + c + e)
                        assert key not in owner
                        owner[key] = (warp, lane, 4 * j + 2 * h + e)
    assert len(owner) == 64 * 256
    # slot reuse under wait_group.read<1>: quarters across three tiles, each
    # store's read finishing as late as the waits allow
    groups = []  # (slot) of committed groups, oldest first; read-complete ones are dropped
    for tile in range(3):
        for q in range(4):
            slot = q & 1
            while len(groups) > 1:  # wait_group.read<1>: all but the newest have read
                groups.pop(0)
            assert all(g != slot for g in groups), "slot %d rewritten before its store read it" % slot
            groups.append(slot)
    # stores: box (x = n0 + 64q, y = m0 + 64cw) in bounds of the tile's quarter
    return len(owner)


def check_smem():
    stages = STAGES * STAGE
    cbuf = 2 * 2 * C_SLOT
    total = stages + cbuf + 1024 + 2 * STAGES * 8
    assert total == 230464 and total <= SMEM_MAX, total
    for s in range(STAGES):
        assert (s * STAGE) % 1024 == 0 and (s * STAGE + A_BYTES) % 1024 == 0
    for cw in range(2):
        for q in range(2):
            assert (stages + cw * 2 * C_SLOT + q * C_SLOT) % 1024 == 0
    # the barriers 8-byte aligned after the slots; the 1 KiB slack covers aligning the base
    assert (stages + cbuf) % 8 == 0
    assert 128 * 40 + 256 * 232 == 384 * 168  # setmaxnreg against ptxas's 168 registers
    return total


def main():
    ap = argparse.ArgumentParser(description="matmul bf16 06's cluster arithmetic and ring protocol on the CPU")
    ap.add_argument("seeds", nargs="?", type=int, default=300, help="protocol runs (default 300)")
    ap.add_argument("--cluster", type=int, choices=(2, 4), default=2, help="CTAs a cluster, W_CLUSTER (default 2)")
    ap.add_argument("--group", type=int, default=8, help="unit rows a group, W_GROUP (default 8)")
    args = ap.parse_args()
    if args.group < 1:
        ap.error("--group must be at least 1")
    configure(args.cluster, args.group)
    seeds = args.seeds
    if (CLUSTER, GROUP) != (2, 8):
        print("cluster %d, group %d" % (CLUSTER, GROUP))
    print("1. walk: %d (shape, clusters) cases, every tile once" % check_walk())
    check_b_split()
    print("2. B split: four boxes per CTA once, 48 KiB per stage")
    print("3. protocol: %d random interleavings, no hazard, no deadlock" % check_protocol(seeds))
    print("4. epilogue: %d elements, swizzle and banks as the copy engine's" % check_epilogue())
    print("5. shared memory: %d bytes" % check_smem())
    print("ok")


if __name__ == "__main__":
    main()
