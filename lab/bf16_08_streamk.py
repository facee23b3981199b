#!/usr/bin/env python3
# lab/bf16_08_streamk.py: matmul bf16 08's split of the last partial round
# (stream-K) checked on the CPU (standard library only), before any GPU
# run. The functions below are the kernel's (work_item, the finisher's
# writer loop, the host's rule), transcribed with C integer division (all
# operands >= 0):
#  1. the items: for the op's shapes, the run script's extras and a sweep of
#     (units, k-tiles, clusters), every (tile, k-tile) of C is computed
#     exactly once; each cluster has at most one writer item (a segment
#     that ends before the unit's last k-tile), and it is the cluster's
#     first tail item; every split unit has exactly one finisher (the
#     segment holding its last k-tile), whose writer loop finds exactly the
#     unit's other segments, each once, in a fixed order; slots are unique;
#     both CTAs of a cluster walk the same items; values stay ints;
#  2. progress: clusters run their items in order with random durations,
#     a finisher waiting for its writers' flags; with every cluster
#     resident, and with only the first r resident (the rest starting as
#     earlier ones exit), everything completes: writers wait on nothing,
#     and a finisher waits only on clusters below it;
#  3. the ring protocol (bf16_06_cluster.py's mbarrier model) under random
#     interleavings with items of different k-tile counts, the finisher's
#     consumers spinning on a flag set at a random time after they have
#     released their stages: no copy writes a stage a warp may read, every
#     warp reads its own item's k-tile, nothing deadlocks;
#  4. the workspace layout: thread (cw, wt)'s float4 c at (32 cw + c) 128 +
#     wt covers the 128x256 partial tile once, a warp's 32 float4 are 512
#     contiguous bytes; writer and finisher threads pair up (the same map);
#  5. the host's rule at the canonical shapes on 66 clusters: which shapes
#     split and the k-tiles the busiest cluster saves (the prediction's
#     input).
#   python3 lab/bf16_08_streamk.py [seeds]   (default 300 protocol runs)
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bf16_06_cluster as c06  # noqa: E402  (the 06 model: unit_tile, Bar, Hazard, shapes)

BM, BN, BK, STAGES, CLUSTER = c06.BM, c06.BN, c06.BK, c06.STAGES, c06.CLUSTER
SPLIT_MIN = 16  # W_SPLIT_MIN
EXTRAS = [(4104, 4112, 4096), (2304, 4352, 1024), (4352, 4608, 512), (1280, 8704, 64), (8200, 8200, 8192),
          (8192, 4096, 8192)]


def cdiv(a, b):
    return (a + b - 1) // b


def host_split(M, N, K, fit, v=0):
    """launch_wgmma: clusters, full_units, tail_t, kt."""
    units_m = (cdiv(M, BM) + 1) // 2
    units = units_m * cdiv(N, BN)
    clusters = min(units, fit)
    kt = cdiv(K, BK)
    rest = units % clusters
    full_units, tail_t = units, 0
    if v == 0 and SPLIT_MIN > 0 and rest > 0 and kt - cdiv(rest * kt, clusters) >= SPLIT_MIN:
        full_units = units - rest
        tail_t = rest * kt
    return units_m, units, clusters, full_units, tail_t, kt


def work_item(i, g, G, full_units, tail_t, kt):
    nf = (full_units - 1 - g) // G + 1 if g < full_units else 0
    if i < nf:
        return g + i * G, 0, kt
    if tail_t == 0:
        return None
    s = g * tail_t // G
    c = (g + 1) * tail_t // G
    j = nf
    while j < i and c > s:
        lo = (c - 1) // kt * kt
        c = lo if lo > s else s
        j += 1
    if c <= s:
        return None
    tu = (c - 1) // kt
    lo = tu * kt if tu * kt > s else s
    return full_units + tu, lo - tu * kt, c - tu * kt


def items_of(g, G, full_units, tail_t, kt):
    out = []
    i = 0
    while True:
        w = work_item(i, g, G, full_units, tail_t, kt)
        if w is None:
            return out
        out.append(w)
        i += 1


def writers_of(g, G, u, full_units, tail_t, kt):
    """The finisher's loop: the clusters whose partial sums it adds, in order."""
    start = (u - full_units) * kt
    out = []
    h = g - 1
    while h >= 0:
        eh = (h + 1) * tail_t // G
        sh = h * tail_t // G
        if eh <= start:
            break
        if sh != eh:
            out.append(h)
        h -= 1
    return out


def check_items_case(units_m, tiles_n, G, full_units, tail_t, kt, M=None, N=None):
    units = units_m * tiles_n
    cover = {}
    writer_item = {}  # cluster -> (u, k0, k1)
    finishers = {}  # u -> (g, k0, k1)
    lists = []
    for g in range(G):
        its = items_of(g, G, full_units, tail_t, kt)
        lists.append(its)
        nf = (full_units - 1 - g) // G + 1 if g < full_units else 0
        assert len(its) >= nf
        for idx, (u, k0, k1) in enumerate(its):
            assert 0 <= u < units and 0 <= k0 < k1 <= kt, (u, k0, k1)
            assert idx < nf or u >= full_units
            for t in range(k0, k1):
                assert (u, t) not in cover, ("k-tile twice", u, t)
                cover[(u, t)] = g
            if k1 < kt:
                assert g not in writer_item, "two writer items in one cluster"
                assert idx == nf, "a writer item not first among the tail items"
                writer_item[g] = (u, k0, k1)
            elif k0 > 0:
                assert u not in finishers, "two finishers"
                finishers[u] = (g, k0, k1)
    assert len(cover) == units * kt, ("k-tiles missed", len(cover), units * kt)
    # every split unit: one finisher, whose writer list is exactly the other segments
    split_units = {u for (u, _, _) in writer_item.values()}
    for u in split_units:
        assert u in finishers, ("a split unit without finisher", u)
    for u, (g, k0, k1) in finishers.items():
        ws = writers_of(g, G, u, full_units, tail_t, kt)
        assert all(h < g for h in ws) and ws == sorted(ws, reverse=True)
        got = [(k0, k1)]
        for h in ws:
            assert h in writer_item and writer_item[h][0] == u, ("writer list names a wrong slot", u, h)
            got.append(writer_item[h][1:])
        got.sort()
        assert got[0][0] == 0 and got[-1][1] == kt and all(a[1] == b[0] for a, b in zip(got, got[1:])), got
        assert len(ws) == sum(1 for h, w in writer_item.items() if w[0] == u)
    # values stay ints (the kernel's int64 products, int results)
    assert (G + 1) * tail_t < 2**62 and tail_t < 2**31 and units < 2**31
    # tiles: through 06's unit_tile, both ranks, every (tile, k-tile) once
    if M is not None:
        tiles_m = cdiv(M, BM)
        seen = {}
        for g, its in enumerate(lists):
            for (u, k0, k1) in its:
                m0a, n0a = c06.unit_tile(u, units_m, tiles_n, 0)
                m0b, n0b = c06.unit_tile(u, units_m, tiles_n, 1)
                assert n0a == n0b and m0b == m0a + BM
                for m0 in (m0a, m0b):
                    if m0 >= M:
                        assert m0 == tiles_m * BM and tiles_m % 2 == 1
                        continue
                    for t in range(k0, k1):
                        key = (m0 // BM, n0a // BN, t)
                        assert key not in seen
                        seen[key] = g
        assert len(seen) == tiles_m * cdiv(N, BN) * kt
    return lists, writer_item, finishers


def check_items():
    n = split = 0
    shapes = c06.CANONICAL + c06.EDGE + c06.QUICK + c06.TILES + EXTRAS
    for (M, N, K) in shapes:
        if K > 8192:
            continue
        for fit in (66, 64, 65, 1, 2, 3, 7, 33, 132):
            units_m, units, G, fu, tt, kt = host_split(M, N, K, fit)
            check_items_case(units_m, cdiv(N, BN), G, fu, tt, kt, M, N)
            n += 1
            split += tt > 0
    # a sweep of the line's arithmetic: every rest, several k-tile counts
    for G in (1, 2, 3, 5, 7, 16, 33, 64, 65, 66):
        for kt in (1, 2, 3, 16, 17, 31, 64, 65, 128):
            for units in sorted({G + 1, G + G // 2, 2 * G - 1, 3 * G + 1, 4 * G - 2, 5 * G + G // 3}):
                rest = units % G
                for forced in (False, True):
                    if forced:  # the split taken whatever it saves
                        if rest == 0:
                            continue
                        fu, tt = units - rest, rest * kt
                    else:
                        fu, tt = units, 0
                        if rest and kt - cdiv(rest * kt, G) >= SPLIT_MIN:
                            fu, tt = units - rest, rest * kt
                    check_items_case(units, 1, G, fu, tt, kt)
                    n += 1
                    split += tt > 0
    return n, split


def check_progress(seeds=60):
    runs = 0
    for seed in range(seeds):
        rng = random.Random(seed)
        G = rng.choice([2, 3, 7, 16, 33, 66])
        kt = rng.choice([17, 64, 128])
        units = G * rng.randint(1, 4) + rng.randint(1, G - 1) if G > 1 else 2
        rest = units % G
        if rest == 0:
            continue
        fu, tt = units - rest, rest * kt
        lists = [items_of(g, G, fu, tt, kt) for g in range(G)]
        for resident in (G, max(1, G // 2), 1):
            pos = [0] * G  # next item
            remaining = [None] * G  # time left on the current item
            flags = set()
            started = list(range(min(resident, G)))
            waiting = list(range(min(resident, G), G))
            active = set(started)
            steps = 0
            while active or waiting:
                steps += 1
                assert steps < 10**6, "no progress"
                progressed = False
                for g in sorted(active):
                    its = lists[g]
                    if pos[g] == len(its):
                        active.discard(g)
                        if waiting:
                            active.add(waiting.pop(0))
                        progressed = True
                        continue
                    u, k0, k1 = its[pos[g]]
                    if remaining[g] is None:
                        remaining[g] = (k1 - k0) * rng.randint(1, 3)
                    if remaining[g] > 0:
                        remaining[g] -= 1
                        progressed = True
                        continue
                    if k1 < kt:  # writer: partial out, flag set
                        flags.add(g)
                    elif k0 > 0 and not all(h in flags for h in writers_of(g, G, u, fu, tt, kt)):
                        continue  # the finisher spins
                    pos[g] += 1
                    remaining[g] = None
                    progressed = True
                assert progressed, ("deadlock", G, units, kt, resident)
            runs += 1
    return runs


# ---- 3. the ring protocol with items of different lengths ----------------


def simulate(seed, counts, finisher_items):
    """counts: k-tiles of each item (the same list for both CTAs); the
    consumers of an item in finisher_items spin after releasing their last
    stage until a flag, set at a random moment, is seen."""
    rng = random.Random(seed)
    Bar, Hazard = c06.Bar, c06.Hazard
    full = [[Bar(1) for _ in range(STAGES)] for _ in range(CLUSTER)]
    empty = [[Bar(c06.EMPTY_ARRIVES) for _ in range(STAGES)] for _ in range(CLUSTER)]
    data = [[{} for _ in range(STAGES)] for _ in range(CLUSTER)]
    readers = [[set() for _ in range(STAGES)] for _ in range(CLUSTER)]
    seq = [(i, t) for i, n in enumerate(counts) for t in range(n)]  # (item, k-tile) of each ring use
    inflight, arrives = [], []
    flag = {i: False for i in finisher_items}

    def tag(part, x, it):
        i, t = seq[it]
        return (part, i * 2 + x if part == "A" else i, t)

    def issue(x, s, part, tg, nbytes, dsts):
        for y in dsts:
            if readers[y][s]:
                raise Hazard("copy into CTA %d stage %d while read" % (y, s))
            inflight.append((y, s, part, tg, nbytes))

    def producer(x):
        for it in range(len(seq)):
            s = it % STAGES
            if it >= STAGES:
                while empty[x][s].done < it // STAGES:
                    yield False
            full[x][s].arrive(tx=c06.STAGE)
            yield True
            issue(x, s, "A", tag("A", x, it), c06.A_BYTES, [x])
            yield True
            for j in range(2):
                box = 2 * x + j
                issue(x, s, "B%d" % box, tag("B", x, it), c06.BOX_BYTES, list(range(CLUSTER)))
                yield True

    def consumer(x, w):
        it = 0
        for i, n in enumerate(counts):
            prev = None
            for t in range(n):
                s = it % STAGES
                while full[x][s].done < it // STAGES + 1:
                    yield False
                want = {"A": tag("A", x, it)}
                for b in range(4):
                    want["B%d" % b] = tag("B", x, it)
                if data[x][s] != want:
                    raise Hazard("CTA %d warp %d it %d read %s, wanted %s" % (x, w, it, data[x][s], want))
                readers[x][s].add(w)
                yield True
                if prev is not None:
                    readers[x][prev].discard(w)
                    for y in range(CLUSTER):
                        arrives.append((y, prev))
                        yield True
                prev = s
                it += 1
            readers[x][prev].discard(w)
            for y in range(CLUSTER):
                arrives.append((y, prev))
                yield True
            if i in flag:  # the finisher's spin, after every stage of the item is released
                while not flag[i]:
                    yield False
            yield True

    def setter():  # another cluster's writer, finishing at a random moment
        for i in sorted(flag):
            for _ in range(rng.randrange(400)):
                yield True
            flag[i] = True
            yield True

    procs = [producer(x) for x in range(CLUSTER)] + [consumer(x, w) for x in range(CLUSTER) for w in range(8)]
    procs.append(setter())
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
            y, s, part, tg, nbytes = inflight.pop(k - len(live))
            if readers[y][s]:
                raise Hazard("copy landed in CTA %d stage %d while read" % (y, s))
            data[y][s][part] = tg
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
    cases = [([3, 1, 2], [2]), ([1, 5], [1]), ([4, 4, 3, 6], [3]), ([2, 7, 1], [2]), ([5, 2, 5], [2]),
             ([1, 1, 1, 1, 1], [4]), ([6, 3], [])]
    for seed in range(seeds):
        counts, fin = cases[seed % len(cases)]
        simulate(seed, counts, fin)
    # the items of a real cluster (4104x4112x4096 on 66 clusters, scaled
    # down: a full unit of 8 k-tiles, then the writer, then the finisher)
    _, _, G, fu, tt, kt = host_split(4104, 4112, 4096, 66)
    for g in (0, 1, 30, G - 1):
        its = items_of(g, G, fu, tt, kt)
        counts = [max(1, (k1 - k0) // 8) for (_, k0, k1) in its]
        fin = [i for i, (_, k0, k1) in enumerate(its) if k1 == kt and k0 > 0]
        for seed in range(10):
            simulate(1000 + seed, counts, fin)
    return seeds + 40


def check_layout():
    seen = set()
    for cw in range(2):
        for wt in range(128):
            for c in range(32):
                idx = (32 * cw + c) * 128 + wt  # float4 index
                assert 0 <= idx < BM * BN // 4 and idx not in seen
                seen.add(idx)
        for c in range(32):
            for warp in range(4):
                addrs = [16 * ((32 * cw + c) * 128 + 32 * warp + lane) for lane in range(32)]
                assert addrs == list(range(addrs[0], addrs[0] + 512, 16)) and addrs[0] % 512 == 0
    assert len(seen) == BM * BN // 4
    return len(seen) * 4


def prediction():
    rows = []
    for (M, N, K) in c06.CANONICAL + [(4104, 4112, 4096)]:
        v = 0 if K % 8 == 0 else 2
        units_m, units, G, fu, tt, kt = host_split(M, N, K, 66, v)
        rounds = cdiv(units, G)
        before = rounds * kt
        after = before if tt == 0 else (fu // G) * kt + cdiv(tt, G)
        rows.append("  %dx%dx%d: %d units on %d clusters (%.2f rounds), kt %d: %s, busiest cluster %d -> %d k-tiles"
                    % (M, N, K, units, G, units / G, kt, "split" if tt else "not split", before, after))
    return rows


def check_teeth():
    """Each mistake is caught by the item checks."""
    global writers_of, work_item
    good_w, good_i = writers_of, work_item

    def w_off_by_one(g, G, u, full_units, tail_t, kt):  # `eh < start`: one writer too many
        start = (u - full_units) * kt
        out, h = [], g - 1
        while h >= 0:
            eh, sh = (h + 1) * tail_t // G, h * tail_t // G
            if eh < start:
                break
            if sh != eh:
                out.append(h)
            h -= 1
        return out

    def i_no_clamp(i, g, G, full_units, tail_t, kt):  # segments not clamped at the range's start
        nf = (full_units - 1 - g) // G + 1 if g < full_units else 0
        if i < nf:
            return g + i * G, 0, kt
        if tail_t == 0:
            return None
        s, c, j = g * tail_t // G, (g + 1) * tail_t // G, nf
        while j < i and c > s:
            c = (c - 1) // kt * kt
            j += 1
        if c <= s:
            return None
        tu = (c - 1) // kt
        return full_units + tu, 0, c - tu * kt

    caught = []
    for name, w, i in (("a writer list one cluster too long", w_off_by_one, good_i),
                       ("segments not clamped at the range's start", good_w, i_no_clamp)):
        writers_of, work_item = w, i
        try:
            check_items()
            ok = False
        except AssertionError:
            ok = True
        finally:
            writers_of, work_item = good_w, good_i
        assert ok, "the item checks do not catch: " + name
        caught.append(name)
    return caught


def main():
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    n, split = check_items()
    print("1. items: %d cases (%d split), every (tile, k-tile) once, writers and finishers pair up" % (n, split))
    for name in check_teeth():
        print("  mistake caught: " + name)
    print("2. progress: %d runs (all, half and one cluster resident), no deadlock" % check_progress())
    print("3. protocol: %d random interleavings with split items, no hazard, no deadlock" % check_protocol(seeds))
    print("4. workspace: %d floats a CTA, once each, 512-byte warp accesses" % check_layout())
    print("5. the split at 66 clusters:")
    print("\n".join(prediction()))
    print("ok")


if __name__ == "__main__":
    main()
