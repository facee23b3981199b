#!/usr/bin/env python3
"""matmul bf16 19's ring protocol (ping-pong halves) on the CPU.

    python3 lab/bf16_19_pingpong.py [SEEDS]

A random-interleaving simulation of one 2-CTA cluster as
kernels/matmul/cuda/bf16-19-ping-pong.cu runs it: each CTA's producer
fills a 4-stage ring with every unit's top half (consumer 0's k-tiles),
then its bottom half (consumer 1's), A from its own CTA and B's boxes
multicast to both; each consumer warpgroup (its four warps modelled apart,
as each thread waits on its own) skips the other half's stages, waits on
its turn barrier, then on each stage's full barrier, and releases every
stage to both CTAs' empty barriers; warp 0 arrives on the other
consumer's turn barrier once the last stage of its half has arrived, and a warpgroup barrier after the turn wait
keeps a slow warp from missing a turn (the model lets warps drift apart
further than wgmma's collective issue lets them: it is stricter).
Units have different k-tile counts (18's row classes shift K by dx).

Barrier waits are modelled as the hardware does them, by phase parity
(mbarrier.try_wait.parity passes while the barrier's current phase has
the other parity), and a wait that passes on a phase other than the one
it meant (a barrier two phases behind, or ahead) is a hazard, as is a
copy landing in a stage still read, a read of the wrong k-tile, and a
deadlock. The model's teeth: without the turn barriers, with the turn
signalled at a half's first stage, with 18's empty count (16 arrives) and
without the warpgroup barrier, some interleaving fails.
"""
import argparse
import random
import sys

CLUSTER, STAGES, WARPS = 2, 4, 4
EMPTY_ARRIVES = CLUSTER * WARPS  # the kernel's W_EMPTY_ARRIVES
A_BYTES, BOX_BYTES, BOXES = 8192, 8192, 2  # A's half, B's boxes a CTA issues (4 in all)
STAGE = A_BYTES + CLUSTER * BOXES * BOX_BYTES  # 40 KiB: the kernel's W_STAGE_BYTES


class Hazard(Exception):
    pass


class Bar:
    def __init__(self, count):
        self.count, self.pending, self.tx, self.done = count, count, 0, 0  # done: completed phases

    def _check(self):
        if self.pending == 0 and self.tx == 0:
            self.done += 1
            self.pending = self.count
        assert self.pending >= 0

    def arrive(self, tx=0):
        if self.pending <= 0:
            raise Hazard("arrive on a barrier with no arrival pending")
        self.tx += tx
        self.pending -= 1
        self._check()

    def complete_tx(self, b):
        self.tx -= b
        self._check()

    def passes(self, phase, what):
        """try_wait.parity for `phase` (its parity only): passes while the
        current phase's parity differs; a pass on any phase but `phase`'s
        completion is a hazard."""
        if (self.done & 1) == (phase & 1):
            return False
        if self.done != phase + 1:
            raise Hazard("%s: parity wait for phase %d passed with %d phases complete" % (what, phase, self.done))
        return True


def simulate(seed, kts, turns=True, signal_first=False, empty_arrives=EMPTY_ARRIVES, wg_sync=True):
    rng = random.Random(seed)
    full = [[Bar(1) for _ in range(STAGES)] for _ in range(CLUSTER)]
    empty = [[Bar(empty_arrives) for _ in range(STAGES)] for _ in range(CLUSTER)]
    turn = [[Bar(1) for _ in range(2)] for _ in range(CLUSTER)]
    data = [[{} for _ in range(STAGES)] for _ in range(CLUSTER)]
    readers = [[set() for _ in range(STAGES)] for _ in range(CLUSTER)]
    inflight, arrives = [], []
    at_sync = {}  # (CTA, consumer, half): warps past the turn wait (the warpgroup barrier after it)

    def issue(x, s, part, tag, dsts):
        for y in dsts:
            if readers[y][s]:
                raise Hazard("CTA %d's copy into CTA %d stage %d while %s read it" % (x, y, s, sorted(readers[y][s])))
            inflight.append((y, s, part, tag, A_BYTES if part == "A" else BOX_BYTES))

    def producer(x):
        it = 0
        for u, kt in enumerate(kts):
            for h in range(2):
                for t in range(kt):
                    s = it % STAGES
                    if it >= STAGES:
                        while not empty[x][s].passes(it // STAGES - 1, "CTA %d empty %d" % (x, s)):
                            yield False
                    full[x][s].arrive(tx=STAGE)
                    yield True
                    issue(x, s, "A", ("A", x, u, h, t), [x])
                    yield True
                    for j in range(BOXES):
                        issue(x, s, "B%d" % (BOXES * x + j), ("B", u, t), range(CLUSTER))
                        yield True
                    it += 1

    def consumer(x, c, w):
        it, half = 0, 0
        for u, kt in enumerate(kts):
            if c == 1:
                it += kt
            if turns:
                need = half if c == 1 else half - 1
                if need >= 0:
                    while not turn[x][c].passes(need, "CTA %d turn %d" % (x, c)):
                        yield False
                if wg_sync:  # named_sync(1 + c, 128): every warp is past the wait before any goes on
                    key = (x, c, half)
                    at_sync[key] = at_sync.get(key, 0) + 1
                    while at_sync[key] < WARPS:
                        yield False
            prev = None
            for t in range(kt):
                s = it % STAGES
                while not full[x][s].passes(it // STAGES, "CTA %d full %d" % (x, s)):
                    yield False
                if w == 0 and t == (0 if signal_first else kt - 1):
                    turn[x][1 - c].arrive()
                d = data[x][s]
                want = {"A": ("A", x, u, c, t)}
                want.update({"B%d" % b: ("B", u, t) for b in range(CLUSTER * BOXES)})
                if d != want:
                    raise Hazard("CTA %d consumer %d warp %d it %d read %s, wanted %s" % (x, c, w, it, d, want))
                readers[x][s].add((c, w))
                yield True
                if prev is not None:  # wgmma_wait<1>: the previous k-tile's group retired
                    readers[x][prev].discard((c, w))
                    for y in range(CLUSTER):
                        arrives.append((y, prev))
                    yield True
                prev = s
                it += 1
            readers[x][prev].discard((c, w))  # wgmma_wait<0>
            for y in range(CLUSTER):
                arrives.append((y, prev))
            yield True
            if c == 0:
                it += kt
            half += 1
            for _ in range(rng.randrange(1, 6)):  # the epilogue, of random length
                yield True

    live = [producer(x) for x in range(CLUSTER)]
    live += [consumer(x, c, w) for x in range(CLUSTER) for c in range(2) for w in range(WARPS)]
    stuck = 0
    while live or inflight or arrives:
        choices = ["p"] * len(live) + ["c"] * len(inflight) + ["a"] * len(arrives)
        k = rng.randrange(len(choices))
        if choices[k] == "p":
            p = live[k]
            try:
                progressed = next(p)
            except StopIteration:
                live.remove(p)
                progressed = True
        elif choices[k] == "c":
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


def cases(seed):
    rng = random.Random(seed * 7919 + 1)
    return [rng.choice((1, 2, 3, 4, 5, 6, 12)) for _ in range(rng.randrange(1, 6))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seeds", nargs="?", type=int, default=400)
    args = ap.parse_args()
    for seed in range(args.seeds):
        simulate(seed, cases(seed))
    print("ping-pong ring: %d interleavings, no hazard, no deadlock" % args.seeds)
    mistakes = [("no turn barriers", {"turns": False}),
                ("the turn signalled at a half's first stage", {"signal_first": True}),
                ("18's empty count (16 arrives)", {"empty_arrives": 16}),
                ("no warpgroup barrier after the turn wait", {"wg_sync": False})]
    for name, kw in mistakes:
        caught = 0
        for seed in range(200):
            try:  # short halves let a warp fall a whole turn behind
                simulate(seed, [12, 5, 12, 3] if seed % 2 else [1, 2, 1, 1, 2, 1], **kw)
            except (Hazard, AssertionError):
                caught += 1
        if caught == 0:
            print("FAIL: the simulation does not catch: " + name)
            return 1
        print("  mistake caught in %d of 200 runs: %s" % (caught, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
