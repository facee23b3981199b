/* correctness.c: phase 1, and the output checks every phase uses (the
 * full comparison, the sampled one of a large timed output). Part of the
 * protocol (eval.c tells the story). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/protocol/protocol_priv.h"

/* ---- checking outputs ------------------------------------------------------------- */

/* The naive loose-tol flaw's tolerance: kp_ref.loose for the op checks,
 * kp_check_begin_loose here; kp_check applies it. */
#define LOOSE_TOL 1e-2

static void keep_worst(kp_shape_result *sr, const kp_check *k) {
    if (!k->ok || sr->check.checked == 0 || k->max_ratio > sr->check.max_ratio) sr->check = *k;
}

static int judge_check(kp_shape_result *sr, const kp_check *k, const char *when) {
    keep_worst(sr, k);
    if (k->ok) return 0;
    if (k->poisoned > 0)
        return kpp_decide(sr, KP_WRONG, "poison", "%s: %s", when, k->why);
    if (k->nonfinite > 0) return kpp_decide(sr, KP_WRONG, "nonfinite", "%s: %s", when, k->why);
    return kpp_decide(sr, KP_WRONG, "tolerance", "%s: %s", when, k->why);
}

/* Full output check of the call just made on `set`. */
static int check_full_body(ctx *c, part *p, const kp_shape *sh, iset *s, int set, kp_shape_result *sr, const char *when) {
    int ob = kp_op_output_buf(c->op);
    int64_t bytes = c->op->buf_elems(sh, ob) * (int64_t)kp_dtype_size(c->op->bufs[ob].dtype);
    void *out = malloc(bytes ? (size_t)bytes : 1);
    if (!out) return kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
    if (kpp_fetch(c, p, set, ob, 0, bytes, out, sr)) {
        free(out);
        return 1;
    }
    kp_check k;
    memset(&k, 0, sizeof k);
    kp_ref r = s->ref;
    if (!GUARD(c, KPP_G_TIGHT_TOL)) r.loose = LOOSE_TOL;
    r.parallel_for = kp_parallel_for; /* a sampled op check's passes on all cores */
    kp_check_output(c->op, sh, (const void *const *)s->in, &r, out, kp_rng_next(&c->rng), &k);
    free(out);
    return judge_check(sr, &k, when);
}

/* The same, its seconds charged to checks (the fetch inside to fetches). */
static int check_full(ctx *c, part *p, const kp_shape *sh, iset *s, int set, kp_shape_result *sr, const char *when) {
    int was = kpp_work(c, KP_WORK_CHECK);
    int rc = check_full_body(c, p, sh, s, set, sr, when);
    kpp_work(c, was);
    return rc;
}

/* ---- a timed output on a lazy matmul set ------------------------------------------ */

/* Indices into [0, n), increasing: all of them when n <= k + 2, otherwise
 * 0, n - 1 and k more, one drawn uniformly in each of k equal bands of
 * [1, n - 1). Returns how many. */
static int64_t draw_lines(kp_rng *r, int64_t n, int64_t k, int64_t *out) {
    if (n <= k + 2) {
        for (int64_t i = 0; i < n; i++) out[i] = i;
        return n;
    }
    int64_t span = n - 2;
    out[0] = 0;
    for (int64_t b = 0; b < k; b++) {
        int64_t b0 = 1 + b * span / k, b1 = 1 + (b + 1) * span / k;
        out[1 + b] = b0 + (int64_t)kp_rng_below(r, (uint64_t)(b1 - b0));
    }
    out[k + 1] = n - 1;
    return k + 2;
}

typedef struct grid_job {
    const kp_op *op;
    const kp_shape *sh;
    const iset *s;
    const int64_t *rows, *cols; /* the grid's output rows and columns */
    int64_t ncols, len;         /* len: one column's data (lazy_at) */
    double *ws, *want, *tol;    /* ncols x len; rows x ncols; rows x ncols */
    int failed;
} grid_job;

static void grid_col(void *arg, int q) {
    grid_job *G = (grid_job *)arg;
    G->op->lazy_col(G->op, G->sh, G->s->dist, G->s->seed, G->cols[q], G->ws + (int64_t)q * G->len);
}

static void grid_row(void *arg, int e) {
    grid_job *G = (grid_job *)arg;
    int64_t at = (int64_t)e * G->ncols;
    if (G->op->lazy_row(G->op, G->sh, G->s->dist, G->s->seed, G->rows[e], G->ncols, G->ws, G->want + at, G->tol + at))
        G->failed = 1; /* racy but only ever set to 1 */
}

/* The check of a timed output on a lazy matmul set: the parent holds only
 * the seed, and draws everything below after the call returned.
 *
 *  - Whole output rows: the first, the last, and one drawn in each of
 *    LAZY_ROWS equal bands between (fewer when rows are long; every row
 *    when there are few), fetched in one request and scanned element by
 *    element for poison and NaN/Inf. A band is M / 256 rows (32 at M =
 *    8192), so a missing or unwritten tile of that height or more, at any
 *    column, lies across a scanned row on every call.
 *  - A grid of LAZY_GRID x LAZY_GRID elements of those rows (the first and
 *    last row and column among them, the others one per band), each
 *    recomputed in float64 from the generator with its own S_ij and
 *    tolerance (matmul.c, mm_lazy_row): the per-element bound and the RMS
 *    criterion of the full check, on 4096 elements, as many as the
 *    sampled correctness check compares. A band is N / 62 columns (132 at
 *    8192), so a wrong tile of 128 x 128 or more is on the grid's lines
 *    most of the time, and a wrong output (another set's inputs, a stale
 *    or cached product, a constant) on every element.
 *  - Reduced precision: tf32 inputs put RMS e near 4 at K = 4096 on the
 *    normal inputs every timing set uses (check.c), against a limit of
 *    0.25. With e_i^2 averaging ~16, an RMS under 0.25 over 4096 elements
 *    would need their mean square 256 times below its expectation; even
 *    the grid's lines sharing rows and columns (64 independent rows, 64
 *    columns) leave that beyond any probability worth naming. Honest fp32
 *    sits at RMS ~0.015, 16x under the limit, on any subset.
 * What it does not see that the full check did: an error confined to a
 * few elements off every grid line and a tile shorter than a band, when
 * no drawn row crosses it (each call draws anew). The Freivalds
 * projections need all of B (K x N generated elements, seconds of CPU per
 * set at 8192^3) and stay in the correctness phase. Cost at 8192^3: 258
 * rows (8 MiB), 128 x 8192 generated values, 4096 dot products of 8192
 * terms: tens of ms of CPU, spread over every core. */
static int check_lazy_grid(ctx *c, part *p, const kp_shape *sh, iset *s, int set, kp_shape_result *sr) {
    const kp_op *op = c->op;
    int ob = kp_op_output_buf(op);
    kp_dtype t = op->bufs[ob].dtype;
    size_t es = kp_dtype_size(t);
    int64_t M = sh->d[0], N = op->buf_elems(sh, ob) / (M > 0 ? M : 1), len = op->lazy_at(sh);
    int64_t want_rows = LAZY_ROW_ELEMS / (N > 0 ? N : 1);
    if (want_rows > LAZY_ROWS) want_rows = LAZY_ROWS;
    if (want_rows < LAZY_ROWS_MIN) want_rows = LAZY_ROWS_MIN;
    int64_t rows[LAZY_ROWS + 2], pos[LAZY_GRID], grow[LAZY_GRID], cols[LAZY_GRID], off[LAZY_ROWS + 2];
    int64_t nr = draw_lines(&c->rng, M, want_rows, rows);
    int64_t ng = draw_lines(&c->rng, nr, LAZY_GRID - 2, pos); /* positions in rows[] */
    int64_t nc = draw_lines(&c->rng, N, LAZY_GRID - 2, cols);
    for (int64_t e = 0; e < ng; e++) grow[e] = rows[pos[e]];
    for (int64_t r = 0; r < nr; r++) off[r] = rows[r] * N * (int64_t)es;
    char *got = (char *)malloc((size_t)(nr * N) * es + 1);
    double *ws = (double *)malloc((size_t)(nc * len) * sizeof(double) + 1);
    double *want = (double *)malloc((size_t)(ng * nc) * sizeof(double) + 1);
    double *tol = (double *)malloc((size_t)(ng * nc) * sizeof(double) + 1);
    int bad = 0;
    if (!got || !ws || !want || !tol) bad = kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
    if (!bad) bad = kpp_fetch_ranges(c, p, set, ob, (int)nr, off, N * (int64_t)es, got, sr);
    if (!bad) {
        grid_job G = {op, sh, s, grow, cols, nc, len, ws, want, tol, 0};
        kp_parallel_for((int)nc, grid_col, &G);
        kp_parallel_for((int)ng, grid_row, &G);
        if (G.failed) bad = kpp_decide(sr, KP_ERROR, "harness", "out of host memory computing the reference");
    }
    if (!bad) {
        kp_check k;
        int loose = !GUARD(c, KPP_G_TIGHT_TOL);
        kp_check_begin_loose(&k, op->rms_limit, loose ? LOOSE_TOL : 0);
        if (!loose)
            snprintf(k.method, sizeof k.method, "%lld rows + %lld x %lld sampled", (long long)nr, (long long)ng,
                     (long long)nc);
        for (int64_t r = 0, e = 0; r < nr; r++) {
            const char *row = got + (size_t)(r * N) * es;
            int exact = e < ng && pos[e] == r;
            for (int64_t j = 0, q = 0; j < N; j++) {
                int64_t idx = rows[r] * N + j;
                double g = kp_load(row, t, j);
                int poisoned = kp_is_poison(row, t, j);
                if (exact && q < nc && cols[q] == j) {
                    kp_check_add(&k, idx, g, want[e * nc + q], tol[e * nc + q], poisoned);
                    q++;
                } else {
                    kp_check_scan(&k, idx, g, poisoned);
                }
            }
            if (exact) e++;
        }
        kp_check_finish(&k, op, sh);
        if (k.poisoned > 0 || k.nonfinite > 0) {
            /* Counted among the elements read, not the whole output. */
            char at[80], seen[80];
            snprintf(at, sizeof at, "%s[%lld,%lld]", op->bufs[ob].name, (long long)(k.first_bad / N),
                     (long long)(k.first_bad % N));
            snprintf(seen, sizeof seen, "%lld elements read (%lld whole rows of %lld)", (long long)(nr * N),
                     (long long)nr, (long long)M);
            if (k.poisoned > 0)
                snprintf(k.why, sizeof k.why, "output never written: %lld of the %s still hold the poison pattern "
                         "(first %s)", (long long)k.poisoned, seen, at);
            else
                snprintf(k.why, sizeof k.why, "%s = %g; %lld of the %s are NaN or Inf", at, k.got,
                         (long long)k.nonfinite, seen);
        }
        bad = judge_check(sr, &k, c->check_what ? c->check_what : "a timed call");
    }
    free(got);
    free(ws);
    free(want);
    free(tol);
    return bad;
}

/* Sampled check of a large timed output: 64 chunks at offsets chosen now,
 * after the call returned, so the candidate cannot know which; all fetched
 * first, then their reference: from the set's whole one, or for a lazy set
 * the rows they cover, generated and referenced on all cores. */
/* Whether a timed output of this set is checked whole (fetched at once,
 * compared with the set's reference). */
static int checks_whole(const ctx *c, const kp_shape *sh, const iset *s) {
    int64_t n = c->op->buf_elems(sh, kp_op_output_buf(c->op));
    return !s->lazy && (c->op->check || !s->ref.want || n <= FULL_CHECK_ELEMS);
}

static int check_sampled(ctx *c, part *p, const kp_shape *sh, iset *s, int set, kp_shape_result *sr) {
    int ob = kp_op_output_buf(c->op);
    int64_t n = c->op->buf_elems(sh, ob);
    if (s->lazy && c->op->lazy_at) return check_lazy_grid(c, p, sh, s, set, sr);
    if (checks_whole(c, sh, s)) return check_full(c, p, sh, s, set, sr, c->check_what ? c->check_what : "a timed call");
    kp_dtype t = c->op->bufs[ob].dtype;
    size_t es = kp_dtype_size(t);
    const int64_t total = (int64_t)SAMPLE_CHUNKS * CHUNK_ELEMS;
    int64_t start[SAMPLE_CHUNKS];
    char *chunks = (char *)malloc((size_t)total * es);
    double *want = (double *)malloc((size_t)total * sizeof(double));
    double *tol = (double *)malloc((size_t)total * sizeof(double));
    int bad = 0;
    if (!chunks || !want || !tol) bad = kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
    /* Every offset drawn now, after the call; all chunks in one request. */
    int64_t off[SAMPLE_CHUNKS];
    for (int j = 0; j < SAMPLE_CHUNKS; j++) {
        start[j] = (int64_t)kp_rng_below(&c->rng, (uint64_t)(n - CHUNK_ELEMS + 1));
        off[j] = start[j] * (int64_t)es;
    }
    if (!bad) bad = kpp_fetch_ranges(c, p, set, ob, SAMPLE_CHUNKS, off, CHUNK_ELEMS * (int64_t)es, chunks, sr);
    if (!bad && s->lazy) {
        lazy_job L = {c, sh, s, start, want, tol, 0};
        kp_parallel_for(SAMPLE_CHUNKS, kpp_lazy_chunk_ref, &L);
        if (L.failed) bad = kpp_decide(sr, KP_ERROR, "harness", "out of host memory computing the reference");
    } else if (!bad) {
        for (int j = 0; j < SAMPLE_CHUNKS; j++) {
            memcpy(want + (int64_t)j * CHUNK_ELEMS, s->ref.want + start[j], CHUNK_ELEMS * sizeof(double));
            memcpy(tol + (int64_t)j * CHUNK_ELEMS, s->ref.tol + start[j], CHUNK_ELEMS * sizeof(double));
        }
    }
    if (!bad) {
        kp_check k;
        kp_check_begin_loose(&k, c->op->rms_limit, GUARD(c, KPP_G_TIGHT_TOL) ? 0 : LOOSE_TOL);
        for (int j = 0; j < SAMPLE_CHUNKS; j++)
            kp_check_add_n(&k, start[j], chunks + (size_t)j * CHUNK_ELEMS * es, t, want + (int64_t)j * CHUNK_ELEMS,
                           tol + (int64_t)j * CHUNK_ELEMS, CHUNK_ELEMS);
        kp_check_finish(&k, c->op, sh);
        snprintf(k.method, sizeof k.method, "sampled %d x %d", SAMPLE_CHUNKS, CHUNK_ELEMS);
        bad = judge_check(sr, &k, c->check_what ? c->check_what : "a timed call");
    }
    free(chunks);
    free(want);
    free(tol);
    return bad;
}

/* The same, its seconds charged to checks. */
int kpp_check_sampled(ctx *c, part *p, const kp_shape *sh, iset *s, int set, kp_shape_result *sr) {
    int was = kpp_work(c, KP_WORK_CHECK);
    int rc = check_sampled(c, p, sh, s, set, sr);
    kpp_work(c, was);
    return rc;
}

/* ---- phase 1: correctness --------------------------------------------------------- */

int kpp_rigorous_flags(const ctx *c) {
    int f = KP_RUN_POISON | KP_RUN_GUARDS;
    if (GUARD(c, KPP_G_SYNC)) f |= KP_RUN_SYNC | KP_RUN_THREADS | KP_RUN_SNAPSHOT;
    if (!GUARD(c, KPP_G_POISON)) f &= ~(KP_RUN_POISON | KP_RUN_GUARDS);
    return f;
}

/* Evidence for a call whose pointers were not all 16-byte aligned:
 * "pointers not 16-byte aligned (w, b, y start one element, 2 bytes, past
 * a 16-byte boundary; x is aligned)". */
static void misalign_note(const kp_op *op, uint32_t mask, char *buf, size_t len) {
    char list[2][96] = {"", ""};
    size_t used[2] = {0, 0}, es = 0;
    int count[2] = {0, 0};
    for (int b = 0; b < op->nbufs; b++) {
        int k = (mask >> b) & 1u; /* 1: moved off the boundary */
        if (k && !es) es = kp_dtype_size(op->bufs[b].dtype);
        if (used[k] < sizeof list[k])
            used[k] += (size_t)snprintf(list[k] + used[k], sizeof list[k] - used[k], "%s%s", count[k] ? ", " : "",
                                        op->bufs[b].name);
        count[k]++;
    }
    char rest[120] = "";
    if (count[0]) snprintf(rest, sizeof rest, "; %s %s aligned", list[0], count[0] > 1 ? "are" : "is");
    snprintf(buf, len, "pointers not 16-byte aligned (%s start%s one element, %zu bytes, past a 16-byte boundary%s)",
             list[1], count[1] > 1 ? "" : "s", es, rest);
}

int kpp_correctness(ctx *c, part *p, const kp_shape *sh, kp_shape_result *sr) {
    int d0 = c->o->dist >= 0 ? c->o->dist : 0;
    int d1 = c->o->dist >= 0 ? c->o->dist : c->op->ndists - 1;
    int flags = kpp_rigorous_flags(c);
    if (d1 - d0 + 2 > 16)
        return kpp_decide(sr, KP_ERROR, "harness", "%s has more distributions than kproof handles", c->op->name);
    /* Each distribution on 2 fresh sets, then one more round of the first
     * distribution with new seeds on the same (pooled) pointers: a cache
     * keyed on pointers serves it the answer of an earlier round.
     *
     * kernel.h promises pointers aligned to their element type, no more,
     * but the pool's blocks are 256-byte aligned: without help a candidate
     * would never be called on anything else, and a 16-byte vector access
     * that does not check, or a scalar fallback that is never taken, would
     * pass unseen. So in the rigorous mode set 0 of every round between the
     * first and the last sits one element past a 16-byte boundary (every
     * buffer in odd rounds; all but the first in even ones, which catches a
     * kernel that decides on its first pointer alone; an op with two
     * distributions, or a --dist run, has only the first kind); with one
     * distribution there is no round between, and one is added (the only
     * calls added). Set 1, and the first and last rounds, keep the pooled
     * aligned pointers: set 1's are seen in every round, so the last round
     * is at least their third sighting (a cache that stores a pointer's
     * second answer serves it stale there). The naive modes keep their
     * aligned rounds: misaligned calls test the kernel, not the
     * measurement, and a flaw's column shows only what that flaw lets
     * through. */
    int misalign = GUARD(c, KPP_G_MISALIGN);
    int round_dist[16], rounds = 0;
    uint32_t mis_of[16];
    for (int d = d0; d <= d1; d++) round_dist[rounds++] = d;
    if (misalign && d1 == d0) round_dist[rounds++] = d0;
    round_dist[rounds++] = d0;
    uint32_t every = (1u << c->op->nbufs) - 1;
    for (int k = 0; k < rounds; k++)
        mis_of[k] = !misalign || k == 0 || k == rounds - 1 ? 0 : k % 2 ? every : every & ~1u;
    /* The sets of as many rounds as a quarter of the host's memory holds,
     * and as the cores build at once (two sets a round, a set a core), are
     * built together: on a many-core GPU host the float64 references are
     * most of a correctness phase. A batch's references go back to the
     * reference pool for the next batch (inputs.c), so fewer rounds at once
     * on fewer cores fault fewer fresh pages in. */
    int64_t per = kpp_iset_host_bytes(c->op, sh), cap = kp_host_mem_bytes() / 4;
    int64_t fit = per > 0 ? cap / (2 * per) : rounds;
    int cores_fit = kp_cores() / 2 > 1 ? kp_cores() / 2 : 1;
    if (fit > cores_fit) fit = cores_fit;
    int batch = fit < 1 ? 1 : fit > rounds ? rounds : (int)fit;
    /* Every set's seed first, in round order: the inputs (and the checks'
     * draws after them) do not depend on how many sets fit in memory. */
    uint64_t seeds[2 * 16];
    for (int i = 0; i < 2 * rounds; i++) seeds[i] = kp_rng_next(&c->rng);
    iset sets[2 * 16];
    int bad = 0;
    for (int r0 = 0; r0 < rounds && !bad; r0 += batch) {
        int nb = rounds - r0 < batch ? rounds - r0 : batch;
        char err[200];
        if (kpp_iset_make_rounds(c, sh, round_dist + r0, nb, seeds + 2 * r0, sets, err, sizeof err))
            return kpp_decide(sr, KP_ERROR, "harness", "%s", err);
        for (int k = 0; k < nb && !bad; k++) {
            iset *two = &sets[2 * k];
            uint32_t mis[2] = {mis_of[r0 + k], 0};
            bad = kpp_part_setup(c, p, sh, round_dist[r0 + k], two, 2, 1, mis, sr);
            for (int i = 0; i < 2 && !bad; i++) {
                char when[240], note[200] = "";
                if (mis[i]) misalign_note(c->op, mis[i], note, sizeof note);
                snprintf(when, sizeof when, "distribution '%s'%s%s", c->op->dists[round_dist[r0 + k]].name,
                         mis[i] ? ", " : "", note);
                run_out ro;
                bad = kpp_part_run(c, p, i, flags, &ro, sr) || kpp_judge_run(c, p, &ro, flags, sr);
                if (bad && mis[i]) {
                    /* A fault or an error here most likely comes from a
                     * vector access that assumed alignment: say so first. */
                    char d[sizeof sr->detail];
                    snprintf(d, sizeof d, "%s: %s", when, sr->detail);
                    memcpy(sr->detail, d, sizeof d);
                }
                if (!bad) bad = check_full(c, p, sh, &two[i], i, sr, when);
            }
        }
        for (int i = 0; i < 2 * nb; i++) kpp_iset_free(c->op, &sets[i]);
    }
    return bad;
}

/* The naive one-input flaw: the reference is computed first in memory that
 * the candidate's output then reuses (the Sakana bug), nothing is poisoned,
 * and the reference comes from the inputs as read back after the call. */
int kpp_correctness_one_input(ctx *c, part *p, const kp_shape *sh, kp_shape_result *sr) {
    iset s;
    char err[200];
    if (kpp_iset_make(c, sh, 0, kp_rng_next(&c->rng), &s, 0, err, sizeof err))
        return kpp_decide(sr, KP_ERROR, "harness", "%s", err);
    int bad = kpp_part_setup(c, p, sh, 0, &s, 1, 0, NULL, sr);
    /* The stale reference moves the output to another block: from here on
     * this worker's outputs are read back through it, as a naive harness
     * reads them. */
    p->direct = 0;
    int ob = kp_op_output_buf(c->op);
    kp_dtype t = c->op->bufs[ob].dtype;
    int64_t n = c->op->buf_elems(sh, ob), bytes = n * (int64_t)kp_dtype_size(t);
    if (!bad && !s.ref.want) {
        /* No full reference here (large matmul is checked by sampling): the
         * worker computes one itself, as a naive harness would. */
        kp_stale_req q = {0, 0, 0};
        char e2[300];
        int rc = kp_wk_call(p->w, KP_MSG_STALE, &q, sizeof q, NULL, 0, NULL, 0, NULL, c->o->timeout_s, e2, sizeof e2);
        if (rc) bad = kpp_worker_failed(c, p, sr, rc, "preparing the naive check", e2);
    } else if (!bad && (uint64_t)bytes + sizeof(kp_stale_req) > KP_FRAME_MAX)
        kp_result_warn(c->r, "output too large to stage the stale reference (%lld bytes): one-input runs without it",
                       (long long)bytes);
    else if (!bad) {
        char *payload = (char *)malloc(sizeof(kp_stale_req) + (size_t)bytes);
        if (!payload) bad = kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
        else {
            kp_stale_req q = {0, 0, bytes};
            memcpy(payload, &q, sizeof q);
            for (int64_t i = 0; i < n; i++) {
                if (t == KP_F32) {
                    float v = (float)s.ref.want[i];
                    memcpy(payload + sizeof q + i * 4, &v, 4);
                } else {
                    uint16_t v = kp_f32_to_bf16_bits((float)s.ref.want[i]);
                    memcpy(payload + sizeof q + i * 2, &v, 2);
                }
            }
            char e2[300];
            int rc = kp_wk_call(p->w, KP_MSG_STALE, payload, sizeof q + (size_t)bytes, NULL, 0, NULL, 0, NULL,
                                c->o->timeout_s, e2, sizeof e2);
            free(payload);
            if (rc) bad = kpp_worker_failed(c, p, sr, rc, "preparing the naive check", e2);
        }
    }
    run_out ro;
    int flags = kpp_rigorous_flags(c);
    if (!bad) bad = kpp_part_run(c, p, 0, flags, &ro, sr) || kpp_judge_run(c, p, &ro, flags, sr);
    if (!bad) {
        /* Read the inputs back and compute the reference from them. */
        iset after;
        memset(&after, 0, sizeof after);
        for (int b = 0; b < c->op->nbufs && !bad; b++) {
            if (c->op->bufs[b].output) continue;
            int64_t ib = c->op->buf_elems(sh, b) * (int64_t)kp_dtype_size(c->op->bufs[b].dtype);
            after.in[b] = malloc(ib ? (size_t)ib : 1);
            if (!after.in[b]) bad = kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
            else bad = kpp_fetch(c, p, 0, b, 0, ib, after.in[b], sr);
        }
        if (!bad) {
            if (c->op->reference(c->op, sh, (const void *const *)after.in, &after.ref) == 0) {
                after.have_ref = 1;
                bad = check_full(c, p, sh, &after, 0, sr, "the one checked call");
            } else {
                bad = kpp_decide(sr, KP_ERROR, "harness", "out of host memory computing the reference");
            }
        }
        kpp_iset_free(c->op, &after);
    }
    kpp_iset_free(c->op, &s);
    return bad;
}
