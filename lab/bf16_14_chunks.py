#!/usr/bin/env python3
"""matmul bf16 14's chunk store of C, 15's bulk row stores and 18's tensor
stores through C's row-class maps, on the CPU (standard library only).

The kernel's epilogue for a row-class tile (V == 2), transcribed: each
consumer warpgroup's 64 rows of the tile go through two 8 KiB slots a
quarter (64 columns) at a time in the 128-byte swizzle; each warp writes
its fragments (slot rows 16w..16w + 15), passes a warp barrier, and stores
those same rows as aligned 16-byte chunks of C (store_chunks: lane l,
k = 0..3, slot row 16w + 4k + l / 8, chunk i = l % 8, tile columns
64q - dx + 8i ..+7 from slot chunks i - 1 and i, chunk 7 of the other slot
for i = 0), then the partial chunks at either end of each row an element
at a time (store_edges, quarters 0 and 3), then another warp barrier.

Checked for the shapes below with their row-class tiles at every edge
(the first and last unit of classes 0, 5 and 7, dead tiles included, the
first, second and last tile column) and C at 16-byte boundaries plus 0,
1, ..., 7 elements (which give every dx):
  - every element of C in the tile's rows (r < M) and columns (c < N)
    written exactly once, with the value its accumulator holds, and
    nothing else written;
  - every 16-byte store 16-byte aligned and wholly inside C's row;
  - every slot read reads what this warp wrote in this quarter (current
    slot) or the last one (the other slot's chunk 7), never another warp's
    rows, so warp barriers are enough;
  - each 16-byte shared read instruction (fixed k, 32 lanes) touches four
    rows and, in each, eight different 16-byte bank groups: four
    wavefronts;
  - dx is the same for every row of a tile (C rows 16 N bytes apart).
15 (--bulk) keeps the staging and store_edges and replaces store_chunks
with linear_chunks: for each k the lanes read as above (chunk 7 of the
last quarter, already rewritten, from the carry: lane k of the row's eight
took it from lane 7 by a shuffle a quarter ago and lends it back by
another), a chunk cut by N's edge is stored an element at a time, and
after a warp barrier each lane writes its chunk into the slot row at 16i;
then lanes 0-15 copy row g0 + lane's whole chunks [i0, i1) to C (a bulk
copy). The tiles of a shape and C offset run back to back, as a CTA's
units do; a copy reads its slot at the latest moment the waits allow
(at the next quarter but one's bulk_wait_read<1>, or the kernel's final
wait). Checked as well: every copy reads the chunks its own quarter
rewrote, no quarter restages a slot a pending copy reads, every bulk copy
is 16-byte aligned at both ends with a size a multiple of 16, and no read
sees a rewritten chunk where it wants a staged one or the reverse. Not
modelled: the proxy fence (its place is checked by reading the kernel).
18 (--tensor; 16 with its maps ending on whole chunks): each warpgroup
stages quarter q in slot q % 2; once
quarter q is staged the box image of the quarter before is written over
its slot (each warp its own rows; box chunk i of row g from staged chunks
i and i + 1, chunk 0 of the other slot for i = 7), at quarter 3 both
remaining boxes (the second from chunks i - 1 and i, chunk 7 of the
other slot for i = 0), and the copy engine stores each 64 x 64 box at
view column n0 + 8 + 64k or n0 + 192 of class j's view of C (base at the
16-byte boundary at or below row j's first element), clipped at the
map's (N + dx) & ~7 columns (whole 16-byte chunks; a chunk the clip cuts
would be written whole, as the H200 wrote it for 16) and the class's
rows; store_edges at quarters 0 and 3, store_tail (a row's elements past
its last whole chunk) at the quarter holding them; where dx = 0 (the class's rows on 16-byte boundaries) quarter q is
itself the box at n0 + 64q, stored once staged, after bulk_wait_read<0>
at quarter 0 and <1> at the others. Checked as well: every box at a view
column that is a multiple of 8,
the only element written twice is chunk 24's and with the same value, no
slot restaged while a box store may read it (boxes read at the next
quarter's bulk_wait_read<0> or at the kernel's end), box reads only of
the warp's own rows. Not modelled for 18: the proxy fence and the
barriers (all lanes' reads come before any rewrite, all warps' images
before the store, by construction), the slots' 1024-byte alignment the
swizzle needs, the tensor maps' encoding.
Exits 1 on the first mismatch. Each mutation must fail: --mutate shifts
the chunk reads by one element where dx > 0; with --bulk, --mutate-wait
lets two bulk groups stay pending (bulk_wait_read<2>), and
--mutate-wait0 leaves out quarter 0's wait (caught only in the next tile;
with --tensor, quarter 2's), and --mutate-wait1 (--tensor) lets a dx = 0
tile's quarter 0 wait as <1> (caught after a dx > 0 tile), and
--mutate-clip (--tensor) gives the maps 16's N + dx columns and no tail
stores (a box cut inside a chunk writes the next row's elements).
20 (--slots; dropped: slower than 18, git keeps it at 4049add): 18's boxes from four slots a warpgroup, quarter q staged in
slot q after one bulk_wait_read<0> a tile, the row ends stored, slots 0..2
rewritten into the boxes at n0 + 8 + 64k (each with the next slot's first
chunk) and slot 3 into the box at n0 + 192 (with slot 2's last chunk, read
before slot 2 is rewritten), the tile's boxes stored together; the same
checks as 18's. --mutate-wait0 (--slots) leaves out the tile's wait
(caught in the next tile).
21 (--direct): where dx > 0, the row ends stored from the registers, and
box k (k < 3 from tile column 64k + 8 - dx, box 3 from 192 - dx) written
straight from them into slot k % 2 after bulk_wait_read<1> (dx odd: a
word's second element by the shuffle from lane t + 1 of the quad, or from
lane t - 3's next eight columns for t = 3); dx = 0 tiles as 18. --mutate
shifts the box images one element; --mutate-wait0 leaves out box 2's
wait.
    python3 lab/bf16_14_chunks.py [--mutate] | --bulk [--mutate | --mutate-wait | --mutate-wait0]
        | --tensor [--mutate | --mutate-wait0 | --mutate-wait1 | --mutate-clip] | --slots [--mutate | --mutate-wait0]
        | --direct [--mutate | --mutate-wait0]
"""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import bf16_07_unaligned as m07  # noqa: E402  (class_of, smem_row_a, crow, slot_write_addr, funnelshift_r)

W_BM, W_BN, W_C_SLOT = 128, 256, 8192


BULK = False  # --bulk: 15's linear_chunks and bulk row copies
MUTATE_WAIT = False  # --mutate-wait: bulk_wait_read<2> instead of <1>, which must fail
MUTATE_WAIT1 = False  # --mutate-wait1 (--tensor): <1> also at a dx = 0 tile's quarter 0, which must fail
MUTATE_WAIT0 = False  # --mutate-wait0: no wait at quarter 0, caught only across tiles
MUTATE = False  # --mutate: the chunk reads one element off, which the checks must catch
MUTATE_CLIP = False  # --mutate-clip (--tensor): 16's maps, N + dx columns wide, no tail stores; must fail


def store_chunks(DX, slots, cw, cur, prv, g0, lane, q, p, rstep, r0, M, lim, out, value_of, reads):
    """One lane's store_chunks<DX>: slots[(cw, s)][byte] = (quarter, word)."""
    i = lane & 7
    c = 64 * q - DX + 8 * i
    if (DX > 0 and q == 0 and i == 0) or c >= lim:
        return
    if MUTATE and DX > 0:
        DX -= 1
    for k in range(4):
        gr = 4 * k + (lane >> 3)
        if r0 + 8 * gr >= M:
            continue
        g = g0 + gr
        sw, row = g & 7, g * 128
        x = [None] * 8
        a_hi = row + ((i ^ sw) << 4)
        reads.append((k, lane, cur, a_hi, g))
        for t in range(4):
            qq, w = slots[(cw, cur)][a_hi + 4 * t]
            assert qq == (TILE_ID, q), ("stale slot read", q, qq)
            x[4 + t] = w
        if DX > 0:
            if i:
                a_lo, s_lo, want_q = row + (((i - 1) ^ sw) << 4), cur, (TILE_ID, q)
            else:
                a_lo, s_lo, want_q = row + ((7 ^ sw) << 4), prv, (TILE_ID, q - 1)
            reads.append((k, lane, s_lo, a_lo, g))
            for t in range(4):
                qq, w = slots[(cw, s_lo)][a_lo + 4 * t]
                assert qq == want_q, ("stale slot read", q, qq, want_q)
                x[t] = w
        w = []
        for mm in range(4):
            if DX % 2 == 0:
                w.append(x[(8 - DX) // 2 + mm])
            else:
                w.append(m07.funnelshift_r(x[(7 - DX) // 2 + mm], x[(7 - DX) // 2 + mm + 1], 16))
        dst = p + gr * rstep + c  # element index
        if c + 8 <= lim:
            assert (2 * dst) % 16 == 0, ("16-byte store off a boundary", dst)
            elems = range(8)
        else:
            elems = [e for e in range(8) if c + e < lim]
        for e in elems:
            out_put(out, dst + e, (w[e // 2] >> (16 * (e % 2))) & 0xFFFF, value_of)


def store_edges(slots, cw, cur, q, g0, lane, last, dx, p, rstep, r0, M, lim, out, value_of):
    gr = lane >> 1
    if r0 + 8 * gr >= M:
        return
    g = g0 + gr
    row = g * 128 + (((7 if last else 0) ^ (g & 7)) << 4)
    dst = p + gr * rstep
    for t in range(4):
        e = 4 * (lane & 1) + t
        c = 248 + e if last else e
        if (e >= 8 - dx if last else e < 8 - dx) and c < lim:
            a = row + 2 * e
            qq, w = slots[(cw, cur)][a & ~3]
            assert qq == (TILE_ID, q), ("stale edge read", q, qq)
            out_put(out, dst + c, (w >> (16 * ((a >> 1) & 1))) & 0xFFFF, value_of)


def linear_chunks(DX, slots, cw, cur, carry, g0, q, p, rstep, r0, M, lim, out, value_of):
    """All 32 lanes of 15's linear_chunks<DX>; carry[lane] = [4 words]."""
    if MUTATE and DX > 0:
        DX -= 1
    for k in range(4):
        xs = {}
        for lane in range(32):
            i = lane & 7
            g = g0 + 4 * k + (lane >> 3)
            sw, row = g & 7, g * 128
            x = [None] * 8
            a_hi = row + ((i ^ sw) << 4)
            for t in range(4):
                qq, w = slots[(cw, cur)][a_hi + 4 * t]
                assert qq == (TILE_ID, q), ("read of a rewritten or stale chunk", q, qq)
                x[4 + t] = w
            if DX > 0 and i > 0:
                a_lo = row + (((i - 1) ^ sw) << 4)
                for t in range(4):
                    qq, w = slots[(cw, cur)][a_lo + 4 * t]
                    assert qq == (TILE_ID, q), ("read of a rewritten or stale chunk", q, qq)
                    x[t] = w
            xs[lane] = x
        if DX > 0:
            for t in range(4):
                v = [carry[(lane & ~7) | k][t] for lane in range(32)]  # shfl: the last quarter's
                nn = [xs[lane | 7][4 + t] for lane in range(32)]        # shfl: this quarter's chunk 7
                for lane in range(32):
                    if lane & 7 == 0:
                        if q > 0:
                            assert v[lane] is not None and v[lane][0] == (TILE_ID, q - 1), "carry from the wrong quarter"
                        xs[lane][t] = None if v[lane] is None else v[lane][1]
                    if lane & 7 == k:
                        carry[lane][t] = ((TILE_ID, q), nn[lane])
        for lane in range(32):
            i = lane & 7
            c = 64 * q - DX + 8 * i
            gr = 4 * k + (lane >> 3)
            x = xs[lane]
            w = []
            skip = DX > 0 and q == 0 and i == 0
            for mm in range(4):
                if skip:
                    w.append(0)
                elif DX % 2 == 0:
                    w.append(x[(8 - DX) // 2 + mm])
                else:
                    w.append(m07.funnelshift_r(x[(7 - DX) // 2 + mm], x[(7 - DX) // 2 + mm + 1], 16))
            if not skip and c < lim < c + 8 and r0 + 8 * gr < M:
                dst = p + gr * rstep + c
                for e in range(8):
                    if c + e < lim:
                        out_put(out, dst + e, (w[e // 2] >> (16 * (e % 2))) & 0xFFFF, value_of)
            xs[lane] = w
        for lane in range(32):  # after the warp barrier
            i = lane & 7
            g = g0 + 4 * k + (lane >> 3)
            for t in range(4):
                slots[(cw, cur)][g * 128 + 16 * i + 4 * t] = (("L", TILE_ID, q), xs[lane][t])


def bulk_rows(key, slots, cw, cur, g0, q, dx, p, rstep, r0, M, lim, out, value_of):
    """Lanes 0-15's bulk copies of quarter q, pending until a wait lets them be read."""
    for lane in range(16):
        i0 = 1 if (q == 0 and dx > 0) else 0
        room = lim - 64 * q + dx
        i1 = 8 if room >= 64 else (room >> 3 if room > 0 else 0)
        if r0 + 8 * lane < M and i1 > i0:
            dst = p + lane * rstep + 64 * q - dx + 8 * i0
            src = (g0 + lane) * 128 + 16 * i0
            size = 16 * (i1 - i0)
            assert (2 * dst) % 16 == 0 and src % 16 == 0 and size % 16 == 0, "bulk copy off 16 bytes"
            PENDING.setdefault(key, []).append(dict(seq=SEQ[key], slot=(cw, cur), src=src, size=size, dst=dst,
                                                    tag=("L", TILE_ID, q), out=out, value_of=value_of))


def run_copies(key, keep_seq=None, keep_two=False):
    """The waits: bulk_wait_read<1> (keep_seq: the most recent group's) or bulk_wait_all (None).
    A copy reads the slot now, the latest moment the wait allows."""
    left = []
    for c in PENDING.get(key, []):
        if keep_seq is not None and (c["seq"] == keep_seq or (keep_two and c["seq"] == keep_seq - 1)):
            left.append(c)
            continue
        for b in range(0, c["size"], 4):
            qq, w = slots_[c["slot"]][c["src"] + b]
            assert qq == c["tag"], ("bulk copy (tile, quarter %s) reads a chunk rewritten since" % (c["tag"][1:],), qq)
            out_put(c["out"], c["dst"] + b // 2, w & 0xFFFF, c["value_of"])
            out_put(c["out"], c["dst"] + b // 2 + 1, w >> 16, c["value_of"])
    PENDING[key] = left


def out_put(out, elem, v, value_of):
    assert elem in value_of, ("store outside the tile's elements of C", elem)
    assert elem not in out, ("element written twice", elem)
    out[elem] = v


slots_ = {}  # (consumer, slot) -> {byte: (quarter written, word)}


TILE_ID = 0  # the tile being stored: every slot tag and carry names it
PENDING = {}  # (consumer, warp) -> bulk copies not yet known to have read their slot
SEQ = {}  # (consumer, warp) -> the quarter count (the bulk group) of its last issue


def tile(M, N, Cbase, m0, n0, U, value):
    """Both consumer warpgroups of the tile at (m0, n0); returns (out, want).
    With --bulk, copies may still be pending: run_copies finishes them."""
    global TILE_ID
    TILE_ID += 1
    C = Cbase // 2  # element index of C[0][0]
    y, j = m07.class_of(m0, U)
    value_of = {}
    for cw in range(2):
        for g in range(64):
            r = m07.crow(2, m0, cw, g, U)
            if r < M:
                for c in range(n0, min(n0 + W_BN, N)):
                    value_of[C + r * N + c] = value(r, c)
    out = {}
    lim = N - n0
    rstep = 8 * N
    for cw in range(2):
        for warp in range(4):
            r0 = 8 * (y + cw * 64 + warp * 16) + j
            p = C + r0 * N + n0
            dx = p & 7  # ((uintptr_t)p >> 1) & 7 with p an element pointer
            for gr in range(16):
                assert (C + (r0 + 8 * gr) * N + n0) & 7 == dx, "dx differs between a tile's rows"
            g0 = warp * 16
            carry = [[None] * 4 for _ in range(32)]
            for q in range(4):
                cur, prv = q & 1, (~q) & 1
                if BULK:  # bulk_wait_read<1>: all but the last quarter's group
                    key = (cw, warp)
                    SEQ[key] = SEQ.get(key, 0) + 1
                    if not (MUTATE_WAIT0 and q == 0):
                        run_copies(key, keep_seq=SEQ[key] - 1, keep_two=MUTATE_WAIT)
                # the warp's fragment writes of quarter q
                for lane in range(32):
                    for jj in range(8):
                        for h in range(2):
                            addr, r, c = m07.slot_write_addr(warp, lane, jj, h)
                            assert g0 <= r < g0 + 16, "a fragment outside the warp's rows"
                            arow = m07.smem_row_a(2, m0, 64 * cw + r, U)
                            col = n0 + 64 * q + c
                            v0 = value(arow, col)
                            v1 = value(arow, col + 1)
                            assert not any(c["slot"] == (cw, cur) for c in PENDING.get((cw, warp), [])), \
                                "a slot restaged while a bulk copy may still read it"
                            slots_.setdefault((cw, cur), {})[addr] = ((TILE_ID, q), v0 | (v1 << 16))
                if BULK:
                    if dx > 0 and q in (0, 3):
                        for lane in range(32):
                            store_edges(slots_, cw, cur, q, g0, lane, q == 3, dx, p, rstep, r0, M, lim, out,
                                        value_of)
                    linear_chunks(dx, slots_, cw, cur, carry, g0, q, p, rstep, r0, M, lim, out, value_of)
                    bulk_rows((cw, warp), slots_, cw, cur, g0, q, dx, p, rstep, r0, M, lim, out, value_of)
                    continue
                reads = []
                for lane in range(32):
                    store_chunks(dx, slots_, cw, cur, prv, g0, lane, q, p, rstep, r0, M, lim, out, value_of,
                                 reads)
                for (_, _, _, _, g) in reads:
                    assert g0 <= g < g0 + 16, "a read of another warp's rows"
                check_banks(reads, dx, q)
                if dx > 0 and q in (0, 3):
                    for lane in range(32):
                        store_edges(slots_, cw, cur, q, g0, lane, q == 3, dx, p, rstep, r0, M, lim, out, value_of)
    return out, value_of


def check_banks(reads, dx, q):
    """The two 16-byte read instructions of each k: per row, the lanes' chunks
    fall in distinct bank groups (byte address / 16 mod 8)."""
    per = {}
    for (kk, lane, s, a, g) in reads:
        per.setdefault((kk, lane), []).append((s, a, g))
    for k in range(4):
        for which in (0, 1):
            groups = {}
            for lane in range(32):
                lst = per.get((k, lane), [])
                if len(lst) > which:
                    s, a, g = lst[which]
                    byte = s * W_C_SLOT + a
                    groups.setdefault(g, []).append((byte // 16) % 8)
            assert len(groups) <= 4, ("more than four rows in one read", k, which)
            for g, gl in groups.items():
                assert len(gl) == len(set(gl)), ("bank conflict", k, which, g, gl)


# ---- 18: tensor stores through C's row-class maps (--tensor) --------------

TENSOR = False  # --tensor: 18's boxes at aligned view columns
BOXES = {}  # consumer -> box stores issued, not yet known to have read their slot


def join(DX, lo, hi):
    x = lo + hi
    if DX % 2 == 0:
        return [x[(8 - DX) // 2 + m] for m in range(4)]
    return [m07.funnelshift_r(x[(7 - DX) // 2 + m], x[(7 - DX) // 2 + m + 1], 16) for m in range(4)]


def read_box(DX, ahead, cw, cur, other, tags, g0, lane):
    """18's read_box<DX, AHEAD>: w[k] of lane; tags[slot] = the (tile, quarter) it must hold."""
    i = lane & 7
    w = []
    for k in range(4):
        g = g0 + 4 * k + (lane >> 3)
        sw, row = g & 7, g * 128

        assert g0 <= g < g0 + 16, "a box read of another warp's rows"

        def chunk(slot, c):
            a = row + ((c ^ sw) << 4)
            words = []
            for t in range(4):
                qq, v = slots_[(cw, slot)][a + 4 * t]
                assert qq == tags[slot], ("box read of a rewritten or stale chunk", qq, tags[slot])
                words.append(v)
            return words
        if ahead:
            hi = chunk(cur, i + 1) if i < 7 else chunk(other, 0)
            lo = chunk(cur, i) if DX > 0 else [0] * 4
        else:
            hi = chunk(cur, i)
            lo = (chunk(cur, i - 1) if i > 0 else chunk(other, 7)) if DX > 0 else [0] * 4
        w.append(join(DX - (1 if MUTATE and DX > 0 else 0), lo, hi))
    return w


def write_box(cw, slot, g0, lane, w, tag):
    i = lane & 7
    for k in range(4):
        g = g0 + 4 * k + (lane >> 3)
        for t in range(4):
            slots_[(cw, slot)][g * 128 + ((i ^ (g & 7)) << 4) + 4 * t] = (tag, w[k][t])


GROUP = {}  # consumer -> the bulk group (tile, quarter) its last commit closed


def run_boxes(cw, keep_last=False):
    """The issuing thread's bulk_wait_read<0> (every box store of cw reads its
    slot now) or, keep_last, <1> (all but those of the last group)."""
    kept = []
    for b in BOXES.get(cw, []):
        if keep_last and b.get("group") == GROUP.get(cw):
            kept.append(b)
            continue
        for rho in range(64):
            yr = b["y"] + rho
            if yr >= b["rows"]:
                continue  # the copy engine clips past the class's rows
            for e in range(64):
                v = b["x"] + e
                if (v & ~7) >= b["width"]:
                    continue  # and whole 16-byte chunks past the map's columns; a chunk the
                    # clip cuts is written whole here, as the H200 wrote it (16: WRONG at 4095^3)
                byte = rho * 128 + (((e >> 3) ^ (rho & 7)) << 4) + (e & 7) * 2
                qq, word = slots_[(cw, b["slot"])][byte & ~3]
                assert qq == b["tag"], ("a box store reads a slot rewritten since", qq, b["tag"])
                elem = b["C"] + (8 * yr + b["j"]) * b["N"] + (v - b["cdx"])
                val = (word >> (16 * ((byte >> 1) & 1))) & 0xFFFF
                if elem in b["out"]:  # chunk 24, written by both of quarter 3's boxes
                    tc = v - b["cdx"] - b["n0"]
                    assert 192 - b["cdx"] <= tc < 200 - b["cdx"] and b["out"][elem] == val, \
                        ("element written twice", elem)
                    continue
                out_put(b["out"], elem, val, b["value_of"])
    BOXES[cw] = kept


def store_tail(cw, cur, q, g0, lane, tc0, dx, p, rstep, r0, M, lim, out, value_of):
    """18's store_tail: tile columns tc0 .. lim - 1 (a row's elements past its
    last whole chunk) staged in quarter q, an element at a time, but for
    those store_edges writes (dx > 0: the first 8 - dx, the last dx)."""
    gr = lane >> 1
    if r0 + 8 * gr >= M:
        return
    g = g0 + gr
    dst = p + gr * rstep
    for t in range(4):
        c = tc0 + 4 * (lane & 1) + t
        if 64 * q <= c < 64 * q + 64 and 0 <= c < lim and not (dx > 0 and (c < 8 - dx or c >= 256 - dx)):
            x = c - 64 * q
            a = g * 128 + (((x >> 3) ^ (g & 7)) << 4) + 2 * (x & 7)
            qq, w = slots_[(cw, cur)][a & ~3]
            assert qq == (TILE_ID, q), ("stale tail read", q, qq)
            out_put(out, dst + c, (w >> (16 * ((a >> 1) & 1))) & 0xFFFF, value_of)


def stage(cw, slot, q, m0, n0, U, value):
    """All four warps' fragment writes of quarter q into slot (18's staging)."""
    for warp in range(4):
        for lane in range(32):
            for jj in range(8):
                for h in range(2):
                    addr, r, c = m07.slot_write_addr(warp, lane, jj, h)
                    arow = m07.smem_row_a(2, m0, 64 * cw + r, U)
                    col = n0 + 64 * q + c
                    assert not any(b["slot"] == slot for b in BOXES.get(cw, [])), \
                        "a slot restaged while a box store may still read it"
                    slots_.setdefault((cw, slot), {})[addr] = ((TILE_ID, q), value(arow, col) | (value(arow, col + 1) << 16))


def tile_tensor(M, N, Cbase, m0, n0, U, value):
    """18's epilogue for both consumer warpgroups of the tile at (m0, n0)."""
    global TILE_ID
    TILE_ID += 1
    C = Cbase // 2
    y, j = m07.class_of(m0, U)
    first = 2 * (C + j * N)
    cdx = (first - (first & ~15)) // 2
    rows_j = (M - 1 - j) // 8 + 1
    value_of = {}
    for cw in range(2):
        for g in range(64):
            r = m07.crow(2, m0, cw, g, U)
            if r < M:
                for c in range(n0, min(n0 + W_BN, N)):
                    value_of[C + r * N + c] = value(r, c)
    out = {}
    lim, rstep = N - n0, 8 * N
    w8 = (N + cdx) & ~7  # the map's width: whole chunks
    tc0 = w8 - cdx - n0  # tile columns from tc0 on: store_tail
    tail = tc0 < lim and tc0 < 256 and not MUTATE_CLIP
    width = N + cdx if MUTATE_CLIP else w8
    for cw in range(2):
        yb = y + cw * 64
        live = 8 * yb + j < M
        if cdx == 0:  # rows on 16-byte boundaries: quarter q is the box at n0 + 64q
            for q in range(4):
                slot = q & 1
                run_boxes(cw, keep_last=q > 0 or MUTATE_WAIT1)  # bulk_wait_read<0> at quarter 0, <1> after
                stage(cw, slot, q, m0, n0, U, value)
                for warp in range(4):
                    r0 = 8 * (yb + warp * 16) + j
                    for lane in range(32):
                        if tail:
                            store_tail(cw, slot, q, warp * 16, lane, tc0, 0, C + r0 * N + n0, rstep, r0, M, lim, out,
                                       value_of)
                if live and n0 + 64 * q < width:
                    BOXES.setdefault(cw, []).append(dict(y=yb, rows=rows_j, N=N, width=width, cdx=0, C=C, j=j, n0=n0,
                                                         out=out,
                                                         value_of=value_of, x=n0 + 64 * q, slot=slot,
                                                         tag=(TILE_ID, q), group=(TILE_ID, q)))
                GROUP[cw] = (TILE_ID, q)
            continue
        tags = {}
        for q in range(4):
            slot, other = q & 1, (~q) & 1
            if not (MUTATE_WAIT0 and q == 2):
                run_boxes(cw)  # the issuing thread's bulk_wait_read<0>, then the warpgroup's barrier
            stage(cw, slot, q, m0, n0, U, value)
            tags[slot] = (TILE_ID, q)
            for warp in range(4):
                r0 = 8 * (yb + warp * 16) + j
                p = C + r0 * N + n0
                assert p & 7 == cdx, "the map's cdx is not the tile's dx"
                g0 = warp * 16
                if q in (0, 3):
                    for lane in range(32):
                        store_edges(slots_, cw, slot, q, g0, lane, q == 3, cdx, p, rstep, r0, M, lim, out, value_of)
                if tail:
                    for lane in range(32):
                        store_tail(cw, slot, q, g0, lane, tc0, cdx, p, rstep, r0, M, lim, out, value_of)
                if q == 0:
                    continue
                if q < 3:
                    ws = [read_box(cdx, True, cw, other, slot, tags, g0, lane) for lane in range(32)]
                    for lane in range(32):
                        write_box(cw, other, g0, lane, ws[lane], ("B", TILE_ID, q - 1))
                else:
                    w2 = [read_box(cdx, True, cw, 0, 1, tags, g0, lane) for lane in range(32)]
                    w3 = [read_box(cdx, False, cw, 1, 0, tags, g0, lane) for lane in range(32)]
                    for lane in range(32):
                        write_box(cw, 0, g0, lane, w2[lane], ("B", TILE_ID, 2))
                        write_box(cw, 1, g0, lane, w3[lane], ("B", TILE_ID, 3))
            if q == 0:
                continue
            common = dict(y=yb, rows=rows_j, N=N, width=width, cdx=cdx, C=C, j=j, n0=n0, out=out, value_of=value_of)
            x = n0 + 8 + 64 * (q - 1)
            assert x % 8 == 0, "a box off a 16-byte boundary"
            if live and x < width:
                BOXES.setdefault(cw, []).append(dict(common, x=x, slot=other, tag=("B", TILE_ID, q - 1),
                                                     group=(TILE_ID, q)))
            if q == 3 and live and n0 + 192 < width:
                BOXES.setdefault(cw, []).append(dict(common, x=n0 + 192, slot=1, tag=("B", TILE_ID, 3),
                                                     group=(TILE_ID, q)))
            GROUP[cw] = (TILE_ID, q)
            tags[other] = None  # rewritten: no chunk read may see it as staged
            if q == 3:
                tags[1] = None
    return out, value_of


# ---- 20: a tile's whole C in four slots a warpgroup (--slots) -------------

SLOTS = False  # --slots: 20's epilogue


def tile_slots(M, N, Cbase, m0, n0, U, value):
    """20's epilogue for both consumer warpgroups of the tile at (m0, n0): one
    bulk_wait_read<0> a tile, quarter q staged in slot q, the row ends stored,
    slots 0..2 rewritten into the boxes at n0 + 8 + 64k and slot 3 into the box
    at n0 + 192, the tile's box stores issued together."""
    global TILE_ID
    TILE_ID += 1
    C = Cbase // 2
    y, j = m07.class_of(m0, U)
    first = 2 * (C + j * N)
    cdx = (first - (first & ~15)) // 2
    rows_j = (M - 1 - j) // 8 + 1
    value_of = {}
    for cw in range(2):
        for g in range(64):
            r = m07.crow(2, m0, cw, g, U)
            if r < M:
                for c in range(n0, min(n0 + W_BN, N)):
                    value_of[C + r * N + c] = value(r, c)
    out = {}
    lim, rstep = N - n0, 8 * N
    w8 = (N + cdx) & ~7
    tc0 = w8 - cdx - n0
    tail = tc0 < lim and tc0 < 256
    for cw in range(2):
        yb = y + cw * 64
        live = 8 * yb + j < M
        if not MUTATE_WAIT0:
            run_boxes(cw)  # bulk_wait_read<0>, then the warpgroup's barrier
        tags = {}
        for q in range(4):
            stage(cw, q, q, m0, n0, U, value)
            tags[q] = (TILE_ID, q)
        common = dict(y=yb, rows=rows_j, N=N, width=w8, cdx=cdx, C=C, j=j, n0=n0, out=out, value_of=value_of)
        for warp in range(4):
            r0 = 8 * (yb + warp * 16) + j
            p = C + r0 * N + n0
            assert p & 7 == cdx, "the map's cdx is not the tile's dx"
            g0 = warp * 16
            for lane in range(32):
                if cdx > 0:
                    store_edges(slots_, cw, 0, 0, g0, lane, False, cdx, p, rstep, r0, M, lim, out, value_of)
                    store_edges(slots_, cw, 3, 3, g0, lane, True, cdx, p, rstep, r0, M, lim, out, value_of)
                if tail:
                    for q in range(4):
                        store_tail(cw, q, q, g0, lane, tc0, cdx, p, rstep, r0, M, lim, out, value_of)
            if cdx == 0:
                continue
            for k in range(2):  # box_ahead(slot k, slot k + 1)
                ws = [read_box(cdx, True, cw, k, k + 1, tags, g0, lane) for lane in range(32)]
                for lane in range(32):
                    write_box(cw, k, g0, lane, ws[lane], ("B", TILE_ID, k))
            w2 = [read_box(cdx, True, cw, 2, 3, tags, g0, lane) for lane in range(32)]  # boxes_last(2, 3)
            w3 = [read_box(cdx, False, cw, 3, 2, tags, g0, lane) for lane in range(32)]
            for lane in range(32):
                write_box(cw, 2, g0, lane, w2[lane], ("B", TILE_ID, 2))
                write_box(cw, 3, g0, lane, w3[lane], ("B", TILE_ID, 3))
        if cdx == 0:
            boxes = [(n0 + 64 * q, q, (TILE_ID, q)) for q in range(4)]
        else:
            boxes = [(n0 + 8 + 64 * k, k, ("B", TILE_ID, k)) for k in range(3)] + [(n0 + 192, 3, ("B", TILE_ID, 3))]
        for x, slot, tag in boxes:
            assert x % 8 == 0, "a box off a 16-byte boundary"
            if live and x < w8:
                BOXES.setdefault(cw, []).append(dict(common, x=x, slot=slot, tag=tag, group=(TILE_ID, 0)))
        GROUP[cw] = (TILE_ID, 0)
    return out, value_of


# ---- 21: box images written from the registers (--direct) ----------------

DIRECT = False  # --direct: 21's epilogue


def tile_direct(M, N, Cbase, m0, n0, U, value):
    """21's epilogue for both consumer warpgroups of the tile at (m0, n0):
    dx = 0 classes as 18 (tile_tensor); dx > 0: the row ends stored from the
    registers, then boxes 0..3 written straight from them into the slots in
    turn (k % 2), each after bulk_wait_read<1>, and stored."""
    C = Cbase // 2
    y, j = m07.class_of(m0, U)
    first = 2 * (C + j * N)
    cdx = (first - (first & ~15)) // 2
    if cdx == 0:
        return tile_tensor(M, N, Cbase, m0, n0, U, value)
    global TILE_ID
    TILE_ID += 1
    rows_j = (M - 1 - j) // 8 + 1
    value_of = {}
    for cw in range(2):
        for g in range(64):
            r = m07.crow(2, m0, cw, g, U)
            if r < M:
                for c in range(n0, min(n0 + W_BN, N)):
                    value_of[C + r * N + c] = value(r, c)
    out = {}
    lim, rstep = N - n0, 8 * N
    w8 = (N + cdx) & ~7
    tc0 = w8 - cdx - n0
    tail = tc0 < lim and tc0 < 256
    for cw in range(2):
        yb = y + cw * 64
        live = 8 * yb + j < M

        def reg(warp, lane, jj, h, e):  # the accumulator 4jj + 2h + e of (warp, lane), as bf16 bits
            r = warp * 16 + lane // 4 + 8 * h
            arow = m07.smem_row_a(2, m0, 64 * cw + r, U)
            return value(arow, n0 + 8 * jj + 2 * (lane % 4) + e)
        for warp in range(4):  # store_ends
            r0 = 8 * (yb + warp * 16) + j
            p = C + r0 * N + n0
            assert p & 7 == cdx, "the map's cdx is not the tile's dx"
            for lane in range(32):
                t = lane & 3
                for h in range(2):
                    gr = lane // 4 + 8 * h
                    if r0 + 8 * gr >= M:
                        continue
                    dst = p + gr * rstep
                    for e in range(2):
                        c0, c1 = 2 * t + e, 248 + 2 * t + e
                        if c0 < 8 - cdx and c0 < lim:
                            out_put(out, dst + c0, reg(warp, lane, 0, h, e), value_of)
                        if c1 >= 256 - cdx and c1 < lim:
                            out_put(out, dst + c1, reg(warp, lane, 31, h, e), value_of)
                    if tail:
                        for jj in range(32):
                            for e in range(2):
                                c = 8 * jj + 2 * t + e
                                if tc0 <= c < lim and 8 - cdx <= c < 256 - cdx:
                                    out_put(out, dst + c, reg(warp, lane, jj, h, e), value_of)
        common = dict(y=yb, rows=rows_j, N=N, width=w8, cdx=cdx, C=C, j=j, n0=n0, out=out, value_of=value_of)
        for k in range(4):
            slot = k & 1
            if not (MUTATE_WAIT0 and k == 2):
                run_boxes(cw, keep_last=True)  # bulk_wait_read<1>, then the warpgroup's barrier
            assert not any(b["slot"] == slot for b in BOXES.get(cw, [])), \
                "a slot written while a box store may still read it"
            base = 64 * k + 8 - cdx if k < 3 else 192 - cdx
            dx = cdx - (1 if MUTATE else 0)
            for warp in range(4):
                for lane in range(32):
                    t = lane & 3
                    src = (lane & ~3) | ((t + 1) & 3)
                    for h in range(2):
                        r = warp * 16 + lane // 4 + 8 * h
                        for jj in range(32):
                            if 8 * jj + 8 <= base or 8 * jj >= base + 64:
                                continue
                            if dx % 2 == 0:
                                lo, hi = reg(warp, lane, jj, h, 0), reg(warp, lane, jj, h, 1)
                                b = 8 * jj + 2 * t - base
                            else:  # the shuffle: lane src gives its low of jj (of jj + 1 where src's t is 0)
                                st = src & 3
                                lo = reg(warp, lane, jj, h, 1)
                                hi = (reg(warp, src, jj + 1, h, 0) if jj < 31 else 0) if st == 0 else \
                                    reg(warp, src, jj, h, 0)
                                b = 8 * jj + 2 * t + 1 - base
                            if 0 <= b < 64:
                                a = r * 128 + (((b >> 3) ^ (r & 7)) << 4) + (b & 7) * 2
                                slots_.setdefault((cw, slot), {})[a] = (("D", TILE_ID, k), lo | (hi << 16))
            x = n0 + 8 + 64 * k if k < 3 else n0 + 192
            assert x % 8 == 0, "a box off a 16-byte boundary"
            if live and x < w8:
                BOXES.setdefault(cw, []).append(dict(common, x=x, slot=slot, tag=("D", TILE_ID, k),
                                                     group=(TILE_ID, 10 + k)))
            GROUP[cw] = (TILE_ID, 10 + k)
    return out, value_of


def main():
    global MUTATE, BULK, MUTATE_WAIT
    args = sys.argv[1:]
    if (any(a not in ("--mutate", "--bulk", "--tensor", "--slots", "--direct", "--mutate-wait", "--mutate-wait0",
                      "--mutate-wait1", "--mutate-clip") for a in args)
            or sum(a in ("--bulk", "--tensor", "--slots", "--direct") for a in args) > 1
            or (("--mutate-wait1" in args or "--mutate-clip" in args) and "--tensor" not in args)
            or sum(a.startswith("--mutate") for a in args) > 1 or ("--bulk" in args and "--tensor" in args)
            or ("--mutate-wait" in args and "--bulk" not in args)
            or ("--mutate-wait0" in args and not any(a in args for a in ("--bulk", "--tensor", "--slots", "--direct")))):
        print("usage: bf16_14_chunks.py [--mutate] | --bulk [--mutate | --mutate-wait | --mutate-wait0]"
              " | --tensor [--mutate | --mutate-wait0 | --mutate-wait1 | --mutate-clip]"
              " | --slots [--mutate | --mutate-wait0] | --direct [--mutate | --mutate-wait0]")
        return 2
    MUTATE, BULK, MUTATE_WAIT = "--mutate" in args, "--bulk" in args, "--mutate-wait" in args
    global MUTATE_WAIT0
    MUTATE_WAIT0 = "--mutate-wait0" in args
    global TENSOR, MUTATE_WAIT1, MUTATE_CLIP
    TENSOR, MUTATE_WAIT1, MUTATE_CLIP = "--tensor" in args, "--mutate-wait1" in args, "--mutate-clip" in args
    global SLOTS, DIRECT
    SLOTS, DIRECT = "--slots" in args, "--direct" in args
    value = lambda r, c: (r * 7919 + c * 104729 + 12345) & 0xFFFF  # noqa: E731
    shapes = [(4095, 4095), (4095, 4096), (4096, 4095), (1024, 4095), (1031, 300), (2049, 520), (1100, 256),
              (4097, 4097), (1024, 1), (1024, 7), (2048, 1030), (1030, 263)]
    n = 0
    for (M, N) in shapes:
        if M < 8 * W_BM:
            continue
        U = m07.cdiv(m07.cdiv(m07.cdiv(M, 8), W_BM), m07.CLUSTER)
        tiles_n = m07.cdiv(N, W_BN)
        ns = sorted({0, (tiles_n - 1) * W_BN, min(1, tiles_n - 1) * W_BN})
        tiles = []
        for j in (0, 5, 7):  # dx runs over 0..7 with the C offsets; the last class has the fewest rows
            for pr in sorted({0, U - 1}):
                for rank in range(m07.CLUSTER):
                    tiles.append((m07.CLUSTER * (j * U + pr) + rank) * W_BM)
        for off in range(8):
            Cbase = 0x200000 + 2 * off
            results = []
            slots_.clear()
            PENDING.clear()
            SEQ.clear()
            BOXES.clear()
            GROUP.clear()
            for m0 in tiles:
                for n0 in ns:
                    if not (BULK or TENSOR or SLOTS or DIRECT):
                        slots_.clear()  # 14: no state crosses tiles
                    try:
                        out, want = (tile_direct if DIRECT else tile_slots if SLOTS else tile_tensor if TENSOR
                                     else tile)(M, N, Cbase, m0, n0, U, value)
                    except AssertionError as e:
                        print("FAIL", (M, N, off, m0, n0), e)
                        return 1
                    results.append(((m0, n0), out, want))
            try:  # bulk_wait_all at the kernel's end
                for key in list(PENDING):
                    run_copies(key)
                for cw in list(BOXES):
                    run_boxes(cw)
            except AssertionError as e:
                print("FAIL", (M, N, off), e)
                return 1
            for (m0, n0), out, want in results:
                if set(out) != set(want):
                    missing = sorted(set(want) - set(out))[:5]
                    print("FAIL", (M, N, off, m0, n0), "missing", len(set(want) - set(out)), missing)
                    return 1
                for e, v in out.items():
                    if v != want[e]:
                        print("FAIL value", (M, N, off, m0, n0, e))
                        return 1
                n += 1
    print(("21's box images from the registers" if DIRECT else "20's whole-tile slots" if SLOTS else "18's class-map tensor stores" if TENSOR else "15's bulk row stores" if BULK else "14's chunk store")
          + ": %d (shape, C offset, tile) cases, every element of C once with its value" % n)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
