/* eval.c: the protocol. Parent side only: it picks seeds after the worker
 * has loaded the candidate, generates the same inputs on the CPU, computes
 * the float64 references, verifies every output it fetches, computes every
 * statistic and decides the verdict. Workers only run calls and report.
 *
 * Per shape:
 *   1. correctness: every distribution, 2 fresh input sets each, then a
 *      fresh round on the same pointers, some calls between on pointers
 *      that are not 16-byte aligned; poisoned outputs, canaries, input
 *      checksums, thread counts, end-of-window snapshot, full comparison.
 *   2. timing (benchmark shapes): >= 8 input sets in shuffled rotation,
 *      a cache flush before every call, events + device sync + host clock,
 *      every timed output checked (sampled when large), baselines measured
 *      interleaved with the candidate, stopping on a noise criterion.
 *   3. sanity: the parent-side clock around a batch bounds the reported time
 *      from below; the speed-of-light bound from measured peaks; the
 *      activity audit (cuda) for other streams and library kernels.
 * The naive protocol switches groups of these off (kp_flaw_*), one flaw at
 * a time or all together, to show what each lets through.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/host_api.h"
#include "kproof/limits.h"

#define MAX_PART 4         /* candidate + up to 3 baselines */
#define SAMPLE_CHUNKS 64   /* chunks fetched to check a large timed output */
#define CHUNK_ELEMS 2048
#define FULL_CHECK_ELEMS (4 << 20)

/* ---- state -------------------------------------------------------------------- */

typedef struct part {      /* a participant: the candidate or a baseline */
    char name[64];
    char path[PATH_MAX];
    char so[PATH_MAX];
    kp_wk *w;
    kp_hello hello;
    int alive;
    int threads_ref;       /* thread count a call may not exceed (-1: not yet known) */
    int64_t mem_kept;      /* memory the worker's guarded calls kept, summed since it started */
    double *t, *th;        /* samples: reported time, host time */
    int n, cap;
    int host_bound;        /* kept samples that were the host's enqueue time */
} part;

typedef struct iset {      /* one input set as the parent knows it */
    uint64_t seed;
    void *in[KP_MAX_BUFS];
    uint64_t cksum[KP_MAX_BUFS];
    kp_ref ref;
    int have_ref;
    /* Lazy (timing sets of large row-local ops): nothing held but the seed
     * and distribution; the rows a sampled check needs are generated and
     * referenced when it needs them. */
    int lazy, dist;
} iset;

typedef struct ctx {
    const kp_eval_opts *o;
    const kp_op *op;
    kp_result *r;
    kp_rng rng;
    int flaws;
    kp_calib_rep calib;
    double shape_t0;
} ctx;

#define FLAW(c, f) (((c)->flaws & (f)) != 0)

static void progress(const ctx *c, const char *fmt, ...) {
    if (!c->o->progress) return;
    va_list ap;
    va_start(ap, fmt);
    static double t0;
    if (t0 == 0) t0 = kp_wall_s();
    fprintf(stderr, "[kproof %6.1fs] ", kp_wall_s() - t0);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* Sets a shape's verdict once: the first decisive finding is the evidence. */
static int decide(kp_shape_result *sr, kp_verdict v, const char *check, const char *fmt, ...) {
    if (sr->verdict != KP_PASS) return 1;
    sr->verdict = v;
    snprintf(sr->check_name, sizeof sr->check_name, "%s", check);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sr->detail, sizeof sr->detail, fmt, ap);
    va_end(ap);
    return 1;
}

static void iset_free(const kp_op *op, iset *s) {
    kp_free_bufs(op, s->in);
    if (s->have_ref) kp_ref_free(&s->ref);
    memset(s, 0, sizeof *s);
}

/* Inputs of one set, filled and checksummed in chunks on `threads` threads
 * (the generator and the checksum are both per element, so chunks give
 * exactly the serial result). */
#define GEN_CHUNK ((int64_t)1 << 22) /* elements; even, so a bf16 chunk is whole 32-bit words */

typedef struct gen_job {
    const ctx *c;
    const kp_shape *sh;
    int dist;
    uint64_t seed;
    void **in;
    int nchunk[KP_MAX_BUFS];
    uint64_t *part; /* one checksum part per chunk, buffers in order */
} gen_job;

static void gen_chunk(void *arg, int j) {
    gen_job *g = (gen_job *)arg;
    const kp_op *op = g->c->op;
    int b = 0, k = j;
    while (k >= g->nchunk[b]) k -= g->nchunk[b++];
    int64_t n = op->buf_elems(g->sh, b), begin = (int64_t)k * GEN_CHUNK;
    int64_t len = n - begin < GEN_CHUNK ? n - begin : GEN_CHUNK;
    size_t es = kp_dtype_size(op->bufs[b].dtype);
    char *dst = (char *)g->in[b] + (size_t)begin * es;
    kp_gen_fill(op, g->sh, g->dist, b, g->seed, dst, begin, len);
    g->part[j] = kp_cksum_at(dst, (size_t)len * es, (uint64_t)begin * es / 4);
}

/* Rows [r0, r1) of buffer b of a row-local op: where they start and how
 * many elements they hold. Buffers that scale with rows are sliced;
 * the others (weights) are whole. */
static void row_slice(const kp_op *op, const kp_shape *sh, int b, int64_t r0, int64_t r1, int64_t *begin,
                      int64_t *n) {
    kp_shape one = *sh, two = *sh;
    one.d[0] = 1;
    two.d[0] = 2;
    int64_t per_row = op->buf_elems(&one, b);
    int scaled = op->buf_elems(&two, b) != per_row;
    *begin = scaled ? r0 * per_row : 0;
    *n = scaled ? (r1 - r0) * per_row : op->buf_elems(sh, b);
}

/* The full reference of a row-local op, a block of rows per job, each a
 * reference on a sub-shape over the set's own inputs (bit for bit the
 * whole one: tests/test_ops.c). */
typedef struct ref_job {
    const kp_op *op;
    const kp_shape *sh;
    void *const *in;
    kp_ref *ref;
    int64_t rows_per;
    int failed;
} ref_job;

static void ref_rows(void *arg, int j) {
    ref_job *R = (ref_job *)arg;
    const kp_op *op = R->op;
    int64_t rows = R->sh->d[0], r0 = (int64_t)j * R->rows_per;
    int64_t r1 = r0 + R->rows_per < rows ? r0 + R->rows_per : rows;
    if (r0 >= r1) return;
    kp_shape sub = *R->sh, one = *R->sh;
    sub.d[0] = r1 - r0;
    one.d[0] = 1;
    const void *in[KP_MAX_BUFS] = {0};
    for (int b = 0; b < op->nbufs; b++) {
        if (op->bufs[b].output) continue;
        int64_t begin, n;
        row_slice(op, R->sh, b, r0, r1, &begin, &n);
        in[b] = (const char *)R->in[b] + (size_t)begin * kp_dtype_size(op->bufs[b].dtype);
    }
    kp_ref piece;
    memset(&piece, 0, sizeof piece);
    int64_t out_row = op->buf_elems(&one, kp_op_output_buf(op));
    if (op->reference(op, &sub, in, &piece) || !piece.want) {
        R->failed = 1;
    } else {
        memcpy(R->ref->want + r0 * out_row, piece.want, (size_t)((r1 - r0) * out_row) * sizeof(double));
        memcpy(R->ref->tol + r0 * out_row, piece.tol, (size_t)((r1 - r0) * out_row) * sizeof(double));
    }
    kp_ref_free(&piece);
}

static int make_reference(const ctx *c, const kp_shape *sh, iset *s, int threads) {
    const kp_op *op = c->op;
    if (threads <= 0) threads = kp_cores();
    int64_t rows = sh->d[0];
    if (!op->row_local || threads < 2 || rows < 2)
        return op->reference(op, sh, (const void *const *)s->in, &s->ref);
    int64_t n = op->buf_elems(sh, kp_op_output_buf(op));
    memset(&s->ref, 0, sizeof s->ref);
    s->ref.n = n;
    s->ref.want = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    s->ref.tol = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    if (!s->ref.want || !s->ref.tol) {
        kp_ref_free(&s->ref);
        return -1;
    }
    int64_t jobs = rows < 4 * (int64_t)threads ? rows : 4 * (int64_t)threads;
    ref_job R = {op, sh, s->in, &s->ref, (rows + jobs - 1) / jobs, 0};
    kp_parallel_for_n((int)jobs, threads, ref_rows, &R);
    if (R.failed) kp_ref_free(&s->ref);
    return R.failed ? -1 : 0;
}

static int iset_make(ctx *c, const kp_shape *sh, int dist, uint64_t seed, iset *s, int threads, char *err,
                     size_t len) {
    memset(s, 0, sizeof *s);
    s->seed = seed;
    gen_job g;
    memset(&g, 0, sizeof g);
    g.c = c, g.sh = sh, g.dist = dist, g.seed = seed, g.in = s->in;
    int total = 0;
    for (int b = 0; b < c->op->nbufs; b++) {
        if (c->op->bufs[b].output) continue;
        int64_t n = c->op->buf_elems(sh, b);
        s->in[b] = malloc((size_t)(n ? n : 1) * kp_dtype_size(c->op->bufs[b].dtype));
        if (!s->in[b]) {
            kp_free_bufs(c->op, s->in);
            snprintf(err, len, "out of host memory generating inputs");
            return -1;
        }
        g.nchunk[b] = (int)((n + GEN_CHUNK - 1) / GEN_CHUNK);
        if (g.nchunk[b] == 0) g.nchunk[b] = 1;
        total += g.nchunk[b];
    }
    g.part = (uint64_t *)calloc((size_t)(total ? total : 1), sizeof *g.part);
    if (!g.part) {
        kp_free_bufs(c->op, s->in);
        snprintf(err, len, "out of host memory generating inputs");
        return -1;
    }
    kp_parallel_for_n(total, threads, gen_chunk, &g);
    for (int b = 0, j = 0; b < c->op->nbufs; b++)
        for (int k = 0; k < g.nchunk[b]; k++) s->cksum[b] += g.part[j++];
    free(g.part);
    if (make_reference(c, sh, s, threads)) {
        snprintf(err, len, "out of host memory computing the reference");
        return -1;
    }
    s->have_ref = 1;
    return 0;
}

typedef struct make_job {
    ctx *c;
    const kp_shape *sh;
    int dist;
    const int *dist_of; /* per pair of sets, when not NULL */
    int threads;        /* each set's own threads: the cores shared out */
    iset *sets;
    int failed;
    char err[200];
} make_job;

static void make_one(void *arg, int i) {
    make_job *j = (make_job *)arg;
    char err[200];
    int dist = j->dist_of ? j->dist_of[i / 2] : j->dist;
    if (iset_make(j->c, j->sh, dist, j->sets[i].seed, &j->sets[i], j->threads, err, sizeof err)) {
        j->failed = 1; /* racy but only ever set to 1 */
        snprintf(j->err, sizeof j->err, "%s", err);
    }
}

/* Timing sets may be lazy when every timed output is checked by sampled
 * chunks (large outputs) of a row-local op: the parent then builds only
 * the rows each check needs, not whole inputs and references per pass. */
static int lazy_ok(const ctx *c, const kp_shape *sh) {
    int64_t n = c->op->buf_elems(sh, kp_op_output_buf(c->op));
    if (!c->op->row_local || c->op->check || n <= FULL_CHECK_ELEMS) return 0;
    /* Each check builds the rows its 64 chunks touch (a row at least per
     * chunk); a whole set costs n per call. Lazy pays only when rows are
     * many and short next to n (a few long rows: whole sets are cheaper). */
    int64_t cols = n / sh->d[0];
    return (int64_t)SAMPLE_CHUNKS * (cols + CHUNK_ELEMS) * 4 <= n;
}

/* Builds n sets whose seeds are already in sets[i].seed, on all cores
 * (each set's own threads: the cores shared out); dist_of gives the
 * distribution of each pair of sets, or NULL for `dist`. */
static int build_sets(ctx *c, const kp_shape *sh, int dist, const int *dist_of, iset *sets, int n, char *err,
                      size_t len) {
    make_job j = {c, sh, dist, dist_of, n < kp_cores() ? kp_cores() / n : 1, sets, 0, ""};
    kp_parallel_for(n, make_one, &j);
    if (j.failed) {
        for (int i = 0; i < n; i++) iset_free(c->op, &sets[i]);
        snprintf(err, len, "%s", j.err);
        return -1;
    }
    return 0;
}

/* n fresh input sets (the timing phase's): seeds drawn here in order
 * (reproducible from the master seed), built on all cores, or lazy (see
 * lazy_ok). */
static int iset_make_many(ctx *c, const kp_shape *sh, int dist, iset *sets, int n, char *err, size_t len) {
    for (int i = 0; i < n; i++) {
        memset(&sets[i], 0, sizeof sets[i]);
        sets[i].seed = kp_rng_next(&c->rng);
        sets[i].lazy = lazy_ok(c, sh);
        sets[i].dist = dist;
    }
    return sets[0].lazy ? 0 : build_sets(c, sh, dist, NULL, sets, n, err, len);
}

/* Two sets per round, rounds of distributions dist_of[0..nr), from the
 * given seeds. */
static int iset_make_rounds(ctx *c, const kp_shape *sh, const int *dist_of, int nr, const uint64_t *seeds, iset *sets,
                            char *err, size_t len) {
    for (int i = 0; i < 2 * nr; i++) {
        memset(&sets[i], 0, sizeof sets[i]);
        sets[i].seed = seeds[i];
    }
    return build_sets(c, sh, 0, dist_of, sets, 2 * nr, err, len);
}

/* ---- talking to a participant's worker ------------------------------------------- */

static const char *buf_name(const kp_op *op, int b) { return op->bufs[b].name; }

/* Maps a worker error to a verdict on the shape. Returns 1 (decided). */
static int worker_failed(ctx *c, part *p, kp_shape_result *sr, int rc, const char *what, const char *err) {
    int64_t total = 0;
    const char *log = p->w ? kp_wk_log(p->w, &total) : "";
    char tail[160] = "";
    if (total > 0) {
        const char *t = log + strlen(log);
        int n = 0;
        while (t > log && n < 120) t--, n++;
        snprintf(tail, sizeof tail, "; its last output: \"%s\"", t);
        for (char *q = tail; *q; q++)
            if (*q == '\n' || *q == '\r') *q = ' ';
    }
    if (rc == KP_WK_TIMEOUT) return decide(sr, KP_ERROR, "timeout", "%s: %s%s", what, err, tail);
    if (rc == KP_WK_FLOOD) return decide(sr, KP_ERROR, "output", "%s: %s%s", what, err, tail);
    if (rc == KP_WK_DIED) return decide(sr, KP_ERROR, "crash", "%s: %s%s", what, err, tail);
    if (rc == KP_WK_FRAME) return decide(sr, KP_REJECTED, "frame", "%s: %s", what, err);
    if (rc == KP_WK_FAIL) return decide(sr, KP_ERROR, "device", "%s: %s", what, err);
    return decide(sr, KP_ERROR, "harness", "%s: %s", what, err);
}

static int part_start(ctx *c, part *p, char *err, size_t len) {
    kp_wk_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.backend = c->o->backend;
    wo.op = c->op->name;
    wo.so_path = p->so;
    wo.start_timeout_s = c->o->timeout_s > 30 ? c->o->timeout_s : 30;
    wo.check_token = !FLAW(c, KP_FLAW_WEAK_BASE);
    wo.mem_limit = c->o->backend == KP_BACKEND_HOST ? ((int64_t)16 << 30) : 0;
    wo.untraced = c->o->unaudited;
    int rc = kp_wk_start(&wo, &p->w, &p->hello, err, len);
    if (rc == KP_WK_OK && p->hello.status != KP_LOAD_OK) {
        snprintf(err, len, "%s", p->hello.error);
        rc = p->hello.status == KP_LOAD_DEVICE ? KP_WK_SYS : 100 + p->hello.status;
    }
    p->alive = rc == KP_WK_OK;
    p->threads_ref = c->o->backend == KP_BACKEND_HOST ? p->hello.threads : -1;
    p->mem_kept = 0;
    return rc;
}

static void part_stop(part *p) {
    if (p->w) kp_wk_stop(p->w);
    p->w = NULL;
    p->alive = 0;
    free(p->t);
    free(p->th);
    p->t = p->th = NULL;
    p->n = p->cap = 0;
}

static int lazy_input_probe(ctx *c, part *p, const kp_shape *sh, const iset *s, int set, int buf, kp_shape_result *sr);

/* The worker's inputs are not the parent's (at element `at`, or -1 for a
 * whole-buffer checksum). */
static int generator_mismatch(ctx *c, kp_shape_result *sr, int buf, int set, int64_t at) {
    char where[48] = "";
    if (at >= 0) snprintf(where, sizeof where, ", elements %lld..", (long long)at);
    return decide(sr, KP_ERROR, "generator",
                  "the worker's %s inputs differ from the parent's (buffer %s of set %d%s): the device generator and "
                  "the CPU generator disagree, or the candidate changed memory while it was loaded",
                  kp_backend_name(c->o->backend), c->op->bufs[buf].name, set, where);
}

/* misalign: per set, the buffers the worker puts one element past a
 * 16-byte boundary (kp_setup_req), or NULL for none. */
static int part_setup(ctx *c, part *p, const kp_shape *sh, int dist, iset *sets, int nsets, int guards,
                      const uint32_t *misalign, kp_shape_result *sr) {
    kp_setup_req q;
    memset(&q, 0, sizeof q);
    snprintf(q.op, sizeof q.op, "%s", c->op->name);
    q.shape = *sh;
    q.dist = dist;
    q.nsets = nsets;
    q.guards = guards;
    for (int i = 0; i < nsets; i++) q.seeds[i] = sets[i].seed;
    for (int i = 0; misalign && i < nsets; i++) q.misalign[i] = misalign[i];
    kp_setup_rep rep;
    char err[300];
    size_t got = 0;
    int rc = kp_wk_call(p->w, KP_MSG_SETUP, &q, sizeof q, NULL, 0, &rep, sizeof rep, &got, c->o->timeout_s + 60, err,
                        sizeof err);
    if (rc) return worker_failed(c, p, sr, rc, "setting up inputs", err);
    /* The device must have generated exactly the inputs the parent holds:
     * whole checksums, or for lazy sets a chunk of every input at an
     * offset drawn now, compared bit for bit with the CPU's. */
    for (int i = 0; i < nsets; i++)
        for (int b = 0; b < c->op->nbufs; b++) {
            if (c->op->bufs[b].output) continue;
            if (sets[i].lazy) {
                int bad = lazy_input_probe(c, p, sh, &sets[i], i, b, sr);
                if (bad) return bad;
                continue;
            }
            if (rep.in_cksum[i][b] != sets[i].cksum[b]) return generator_mismatch(c, sr, b, i, -1);
        }
    return 0;
}

typedef struct run_out {
    kp_run_rep rep;
    double wall;
} run_out;

static int part_run(ctx *c, part *p, int set, int flags, run_out *out, kp_shape_result *sr) {
    /* The first counted call on cuda also waits for its threads to settle
     * (judge_run says why). */
    if ((flags & KP_RUN_THREADS) && p->threads_ref < 0) flags |= KP_RUN_SETTLE;
    kp_run_req q = {set, flags};
    char err[300];
    size_t got = 0;
    memset(out, 0, sizeof *out);
    int rc = kp_wk_call(p->w, KP_MSG_RUN, &q, sizeof q, NULL, 0, &out->rep, sizeof out->rep, &got,
                        c->o->timeout_s, err, sizeof err);
    out->wall = kp_wk_last_wall(p->w);
    if (rc) {
        p->alive = 0;
        return worker_failed(c, p, sr, rc, "calling the candidate", err);
    }
    return 0;
}

/* Findings from one call's report (rigorous guards). */
static int judge_run(ctx *c, part *p, const run_out *ro, int flags, kp_shape_result *sr) {
    const kp_run_rep *r = &ro->rep;
    if (r->dev_error)
        return decide(sr, KP_ERROR, "device", "the device reported an error after the call: %s", r->dev_error_text);
    if (r->rc) return decide(sr, KP_ERROR, "rc", "the entry point %s returned %d (non-zero means failure)", c->op->entry,
                             r->rc);
    if (flags & KP_RUN_GUARDS) {
        for (int b = 0; b < c->op->nbufs; b++) {
            if (r->canary_bad & (1 << b))
                return decide(sr, KP_REJECTED, "canary",
                              "wrote outside its buffers: the guard bytes around %s changed during the call",
                              buf_name(c->op, b));
            if (r->inputs_changed & (1 << b))
                return decide(sr, KP_REJECTED, "inputs",
                              "modified its input %s (its checksum changed during the call); inputs are read-only",
                              buf_name(c->op, b));
        }
    }
    if (flags & KP_RUN_THREADS) {
        /* Against the count before this call, and on the host also against
         * the count the worker had when it loaded the candidate (a thread
         * started by an earlier call). The cuda runtime starts its own
         * threads at initialisation, before HELLO. */
        int ref = r->threads_before;
        if (p->threads_ref < 0) {
            /* cuda: the first counted call sets the reference, since a
             * library may start a thread pool on first use. A pool stays;
             * a thread that ends within the worker's wait after the return
             * was work left running past it. */
            if (r->threads_after > r->threads_before && r->threads_settled < r->threads_after)
                return decide(sr, KP_REJECTED, "threads",
                              "left %d thread(s) running after the call returned that ended soon after (%d before, "
                              "%d after, %d when they ended): work deferred to a host thread is not timed",
                              r->threads_after - r->threads_settled, r->threads_before, r->threads_after,
                              r->threads_settled);
            p->threads_ref = r->threads_settled;
            ref = r->threads_settled;
        }
        if (p->threads_ref < ref) ref = p->threads_ref;
        if (r->threads_after > ref)
            return decide(sr, KP_REJECTED, "threads",
                          "left %d more thread(s) or child process(es) running after the call returned (%d "
                          "before, %d after): work deferred to a host thread is not timed",
                          r->threads_after - ref, ref, r->threads_after);
    }
    if (flags & KP_RUN_GUARDS) {
        if (r->persist && !FLAW(c, KP_FLAW_WARM)) /* part of the cold-cache defense */
            return decide(sr, KP_REJECTED, "persist",
                          "left L2 persistence set up (a persisting-L2 limit or an access-policy window): data "
                          "pinned in L2 survives the cache flush, so the next timed call is not cold");
        /* Summed over the worker's calls: a leak of a little per call adds
         * up, and a first call's one-off workspace stays within budget.
         * (Each call's growth is taken under the device lock, so another
         * kproof worker's allocations do not count.) */
        p->mem_kept += r->mem_grown;
        if (p->mem_kept > ((int64_t)1 << 30))
            return decide(sr, KP_ERROR, "memory",
                          "kept %.2f GiB of memory after its calls returned (%.2f GiB in this one): a candidate "
                          "may use scratch memory, up to 1 GiB, not hoard the device",
                          (double)p->mem_kept / (1 << 30), (double)r->mem_grown / (1 << 30));
    }
    return 0;
}

static int fetch(ctx *c, part *p, int set, int buf, int64_t off, int64_t bytes, void *dst, kp_shape_result *sr) {
    char err[300];
    int64_t done = 0;
    while (done < bytes) {
        int64_t n = bytes - done;
        if (n > (int64_t)KP_FRAME_MAX) n = KP_FRAME_MAX;
        kp_fetch_req q = {set, buf, off + done, n};
        size_t got = 0;
        int rc = kp_wk_call(p->w, KP_MSG_FETCH, &q, sizeof q, NULL, 0, (char *)dst + done, (size_t)n, &got,
                            c->o->timeout_s, err, sizeof err);
        if (rc) {
            p->alive = 0;
            return worker_failed(c, p, sr, rc, "reading the output", err);
        }
        if ((int64_t)got != n) return decide(sr, KP_REJECTED, "frame", "a reply of the wrong size on the result channel");
        done += n;
    }
    return 0;
}

/* ---- lazy sets: a few rows at a time ------------------------------------------------ */

/* Inputs of rows [r0, r1) of a lazy set: row-scaled buffers from their
 * offset, the others whole (a row-local op's weights), all from the same
 * counters as the device used. */
static int lazy_rows_inputs(const ctx *c, const kp_shape *sh, const iset *s, int64_t r0, int64_t r1, void **in) {
    for (int b = 0; b < KP_MAX_BUFS; b++) in[b] = NULL;
    for (int b = 0; b < c->op->nbufs; b++) {
        if (c->op->bufs[b].output) continue;
        int64_t begin, n;
        row_slice(c->op, sh, b, r0, r1, &begin, &n);
        in[b] = malloc((size_t)(n ? n : 1) * kp_dtype_size(c->op->bufs[b].dtype));
        if (!in[b]) return -1;
        kp_gen_fill(c->op, sh, s->dist, b, s->seed, in[b], begin, n);
    }
    return 0;
}

/* One input chunk of a lazy set, fetched from the worker after SETUP and
 * compared bit for bit with the CPU generator at an offset drawn now. */
static int lazy_input_probe(ctx *c, part *p, const kp_shape *sh, const iset *s, int set, int buf, kp_shape_result *sr) {
    int64_t n = c->op->buf_elems(sh, buf), len = n < CHUNK_ELEMS ? n : CHUNK_ELEMS;
    size_t es = kp_dtype_size(c->op->bufs[buf].dtype);
    int64_t begin = (int64_t)kp_rng_below(&c->rng, (uint64_t)(n - len + 1));
    char *got = (char *)malloc((size_t)len * es), *want = (char *)malloc((size_t)len * es);
    int bad = 0;
    if (!got || !want) bad = decide(sr, KP_ERROR, "harness", "out of host memory");
    if (!bad) bad = fetch(c, p, set, buf, begin * (int64_t)es, len * (int64_t)es, got, sr);
    if (!bad) {
        kp_gen_fill(c->op, sh, s->dist, buf, s->seed, want, begin, len);
        if (memcmp(got, want, (size_t)len * es)) bad = generator_mismatch(c, sr, buf, set, begin);
    }
    free(got);
    free(want);
    return bad;
}

typedef struct lazy_job {
    const ctx *c;
    const kp_shape *sh;
    const iset *s;
    const int64_t *start;
    double *want, *tol; /* SAMPLE_CHUNKS x CHUNK_ELEMS */
    int failed;
} lazy_job;

/* The reference of one sampled chunk: the rows it covers, on a sub-shape. */
static void lazy_chunk_ref(void *arg, int j) {
    lazy_job *L = (lazy_job *)arg;
    const kp_shape *sh = L->sh;
    int64_t per_row = L->c->op->buf_elems(sh, kp_op_output_buf(L->c->op)) / sh->d[0];
    int64_t r0 = L->start[j] / per_row, r1 = (L->start[j] + CHUNK_ELEMS - 1) / per_row + 1;
    void *in[KP_MAX_BUFS];
    kp_ref ref;
    memset(&ref, 0, sizeof ref);
    kp_shape sub = *sh;
    sub.d[0] = r1 - r0;
    if (lazy_rows_inputs(L->c, sh, L->s, r0, r1, in) ||
        L->c->op->reference(L->c->op, &sub, (const void *const *)in, &ref) || !ref.want) {
        L->failed = 1;
    } else {
        int64_t off = L->start[j] - r0 * per_row;
        memcpy(L->want + (int64_t)j * CHUNK_ELEMS, ref.want + off, CHUNK_ELEMS * sizeof(double));
        memcpy(L->tol + (int64_t)j * CHUNK_ELEMS, ref.tol + off, CHUNK_ELEMS * sizeof(double));
    }
    kp_ref_free(&ref);
    for (int b = 0; b < KP_MAX_BUFS; b++) free(in[b]);
}

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
        return decide(sr, KP_WRONG, "poison", "%s: %s", when, k->why);
    if (k->nonfinite > 0) return decide(sr, KP_WRONG, "nonfinite", "%s: %s", when, k->why);
    return decide(sr, KP_WRONG, "tolerance", "%s: %s", when, k->why);
}

/* Full output check of the call just made on `set`. */
static int check_full(ctx *c, part *p, const kp_shape *sh, iset *s, int set, kp_shape_result *sr, const char *when) {
    int ob = kp_op_output_buf(c->op);
    int64_t bytes = c->op->buf_elems(sh, ob) * (int64_t)kp_dtype_size(c->op->bufs[ob].dtype);
    void *out = malloc(bytes ? (size_t)bytes : 1);
    if (!out) return decide(sr, KP_ERROR, "harness", "out of host memory");
    if (fetch(c, p, set, ob, 0, bytes, out, sr)) {
        free(out);
        return 1;
    }
    kp_check k;
    memset(&k, 0, sizeof k);
    kp_ref r = s->ref;
    if (FLAW(c, KP_FLAW_LOOSE_TOL)) r.loose = LOOSE_TOL;
    kp_check_output(c->op, sh, (const void *const *)s->in, &r, out, kp_rng_next(&c->rng), &k);
    free(out);
    return judge_check(sr, &k, when);
}

/* Sampled check of a large timed output: 64 chunks at offsets chosen now,
 * after the call returned, so the candidate cannot know which; all fetched
 * first, then their reference: from the set's whole one, or for a lazy set
 * the rows they cover, generated and referenced on all cores. */
static int check_sampled(ctx *c, part *p, const kp_shape *sh, iset *s, int set, kp_shape_result *sr) {
    int ob = kp_op_output_buf(c->op);
    int64_t n = c->op->buf_elems(sh, ob);
    if (!s->lazy && (c->op->check || !s->ref.want || n <= FULL_CHECK_ELEMS))
        return check_full(c, p, sh, s, set, sr, "a timed call");
    kp_dtype t = c->op->bufs[ob].dtype;
    size_t es = kp_dtype_size(t);
    const int64_t total = (int64_t)SAMPLE_CHUNKS * CHUNK_ELEMS;
    int64_t start[SAMPLE_CHUNKS];
    char *chunks = (char *)malloc((size_t)total * es);
    double *want = (double *)malloc((size_t)total * sizeof(double));
    double *tol = (double *)malloc((size_t)total * sizeof(double));
    int bad = 0;
    if (!chunks || !want || !tol) bad = decide(sr, KP_ERROR, "harness", "out of host memory");
    for (int j = 0; j < SAMPLE_CHUNKS && !bad; j++) {
        start[j] = (int64_t)kp_rng_below(&c->rng, (uint64_t)(n - CHUNK_ELEMS + 1));
        bad = fetch(c, p, set, ob, start[j] * (int64_t)es, CHUNK_ELEMS * (int64_t)es,
                    chunks + (size_t)j * CHUNK_ELEMS * es, sr);
    }
    if (!bad && s->lazy) {
        lazy_job L = {c, sh, s, start, want, tol, 0};
        kp_parallel_for(SAMPLE_CHUNKS, lazy_chunk_ref, &L);
        if (L.failed) bad = decide(sr, KP_ERROR, "harness", "out of host memory computing the reference");
    } else if (!bad) {
        for (int j = 0; j < SAMPLE_CHUNKS; j++) {
            memcpy(want + (int64_t)j * CHUNK_ELEMS, s->ref.want + start[j], CHUNK_ELEMS * sizeof(double));
            memcpy(tol + (int64_t)j * CHUNK_ELEMS, s->ref.tol + start[j], CHUNK_ELEMS * sizeof(double));
        }
    }
    if (!bad) {
        kp_check k;
        kp_check_begin_loose(&k, c->op->rms_limit, FLAW(c, KP_FLAW_LOOSE_TOL) ? LOOSE_TOL : 0);
        for (int j = 0; j < SAMPLE_CHUNKS; j++)
            for (int64_t i = 0; i < CHUNK_ELEMS; i++) {
                const char *chunk = chunks + (size_t)j * CHUNK_ELEMS * es;
                double got = kp_load(chunk, t, i), w = want[(int64_t)j * CHUNK_ELEMS + i];
                kp_check_add(&k, start[j] + i, got, w, tol[(int64_t)j * CHUNK_ELEMS + i], kp_is_poison(chunk, t, i));
            }
        kp_check_finish(&k, c->op, sh);
        snprintf(k.method, sizeof k.method, "sampled %d x %d", SAMPLE_CHUNKS, CHUNK_ELEMS);
        bad = judge_check(sr, &k, "a timed call");
    }
    free(chunks);
    free(want);
    free(tol);
    return bad;
}

/* ---- phase 1: correctness --------------------------------------------------------- */

static int rigorous_flags(const ctx *c) {
    int f = KP_RUN_POISON | KP_RUN_GUARDS;
    if (!FLAW(c, KP_FLAW_LAUNCH)) f |= KP_RUN_SYNC | KP_RUN_THREADS | KP_RUN_SNAPSHOT;
    if (FLAW(c, KP_FLAW_ONE_INPUT)) f &= ~(KP_RUN_POISON | KP_RUN_GUARDS);
    return f;
}

/* Host memory one input set takes in the parent: its inputs, and a
 * float64 value and tolerance per output element. */
static int64_t host_set_bytes(const kp_op *op, const kp_shape *sh) {
    int64_t b = 0;
    for (int i = 0; i < op->nbufs; i++)
        b += op->buf_elems(sh, i) * (op->bufs[i].output ? 16 : (int64_t)kp_dtype_size(op->bufs[i].dtype));
    return b;
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

static int correctness(ctx *c, part *p, const kp_shape *sh, kp_shape_result *sr) {
    int d0 = c->o->dist >= 0 ? c->o->dist : 0;
    int d1 = c->o->dist >= 0 ? c->o->dist : c->op->ndists - 1;
    int flags = rigorous_flags(c);
    if (d1 - d0 + 2 > 16)
        return decide(sr, KP_ERROR, "harness", "%s has more distributions than kproof handles", c->op->name);
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
    int misalign = c->flaws == 0;
    int round_dist[16], rounds = 0;
    uint32_t mis_of[16];
    for (int d = d0; d <= d1; d++) round_dist[rounds++] = d;
    if (misalign && d1 == d0) round_dist[rounds++] = d0;
    round_dist[rounds++] = d0;
    uint32_t every = (1u << c->op->nbufs) - 1;
    for (int k = 0; k < rounds; k++)
        mis_of[k] = !misalign || k == 0 || k == rounds - 1 ? 0 : k % 2 ? every : every & ~1u;
    /* The sets of as many rounds as a quarter of the host's memory holds
     * are built at once, on all cores: on a many-core GPU host the float64
     * references are most of a correctness phase. */
    int64_t per = host_set_bytes(c->op, sh), cap = kp_host_mem_bytes() / 4;
    int64_t fit = per > 0 ? cap / (2 * per) : rounds;
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
        if (iset_make_rounds(c, sh, round_dist + r0, nb, seeds + 2 * r0, sets, err, sizeof err))
            return decide(sr, KP_ERROR, "harness", "%s", err);
        for (int k = 0; k < nb && !bad; k++) {
            iset *two = &sets[2 * k];
            uint32_t mis[2] = {mis_of[r0 + k], 0};
            bad = part_setup(c, p, sh, round_dist[r0 + k], two, 2, 1, mis, sr);
            for (int i = 0; i < 2 && !bad; i++) {
                char when[240], note[200] = "";
                if (mis[i]) misalign_note(c->op, mis[i], note, sizeof note);
                snprintf(when, sizeof when, "distribution '%s'%s%s", c->op->dists[round_dist[r0 + k]].name,
                         mis[i] ? ", " : "", note);
                run_out ro;
                bad = part_run(c, p, i, flags, &ro, sr) || judge_run(c, p, &ro, flags, sr);
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
        for (int i = 0; i < 2 * nb; i++) iset_free(c->op, &sets[i]);
    }
    return bad;
}

/* The naive one-input flaw: the reference is computed first in memory that
 * the candidate's output then reuses (the Sakana bug), nothing is poisoned,
 * and the reference comes from the inputs as read back after the call. */
static int correctness_one_input(ctx *c, part *p, const kp_shape *sh, kp_shape_result *sr) {
    iset s;
    char err[200];
    if (iset_make(c, sh, 0, kp_rng_next(&c->rng), &s, 0, err, sizeof err))
        return decide(sr, KP_ERROR, "harness", "%s", err);
    int bad = part_setup(c, p, sh, 0, &s, 1, 0, NULL, sr);
    int ob = kp_op_output_buf(c->op);
    kp_dtype t = c->op->bufs[ob].dtype;
    int64_t n = c->op->buf_elems(sh, ob), bytes = n * (int64_t)kp_dtype_size(t);
    if (!bad && !s.ref.want) {
        /* No full reference here (large matmul is checked by sampling): the
         * worker computes one itself, as a naive harness would. */
        kp_stale_req q = {0, 0, 0};
        char e2[300];
        int rc = kp_wk_call(p->w, KP_MSG_STALE, &q, sizeof q, NULL, 0, NULL, 0, NULL, c->o->timeout_s, e2, sizeof e2);
        if (rc) bad = worker_failed(c, p, sr, rc, "preparing the naive check", e2);
    } else if (!bad && (uint64_t)bytes + sizeof(kp_stale_req) > KP_FRAME_MAX)
        kp_result_warn(c->r, "output too large to stage the stale reference (%lld bytes): one-input runs without it",
                       (long long)bytes);
    else if (!bad) {
        char *payload = (char *)malloc(sizeof(kp_stale_req) + (size_t)bytes);
        if (!payload) bad = decide(sr, KP_ERROR, "harness", "out of host memory");
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
            if (rc) bad = worker_failed(c, p, sr, rc, "preparing the naive check", e2);
        }
    }
    run_out ro;
    int flags = rigorous_flags(c);
    if (!bad) bad = part_run(c, p, 0, flags, &ro, sr) || judge_run(c, p, &ro, flags, sr);
    if (!bad) {
        /* Read the inputs back and compute the reference from them. */
        iset after;
        memset(&after, 0, sizeof after);
        for (int b = 0; b < c->op->nbufs && !bad; b++) {
            if (c->op->bufs[b].output) continue;
            int64_t ib = c->op->buf_elems(sh, b) * (int64_t)kp_dtype_size(c->op->bufs[b].dtype);
            after.in[b] = malloc(ib ? (size_t)ib : 1);
            if (!after.in[b]) bad = decide(sr, KP_ERROR, "harness", "out of host memory");
            else bad = fetch(c, p, 0, b, 0, ib, after.in[b], sr);
        }
        if (!bad) {
            if (c->op->reference(c->op, sh, (const void *const *)after.in, &after.ref) == 0) {
                after.have_ref = 1;
                bad = check_full(c, p, sh, &after, 0, sr, "the one checked call");
            } else {
                bad = decide(sr, KP_ERROR, "harness", "out of host memory computing the reference");
            }
        }
        iset_free(c->op, &after);
    }
    iset_free(c->op, &s);
    return bad;
}

/* ---- accounting: every device operation, every call (cuda) ----------------------- */

static const char *acct_kind(uint32_t kind) { return kind == 1 ? "copy" : kind == 2 ? "memset" : "kernel"; }

/* "launched by thread 1234 (not the calling thread)" and the like. */
static void acct_thread(const kp_acct_op *o, char *buf, size_t len) {
    if (o->thread == KP_ACCT_THREAD_OTHER)
        snprintf(buf, len, "launched by thread %d, not the thread that made the call", o->tid);
    else if (o->thread == KP_ACCT_THREAD_CALLER)
        snprintf(buf, len, "launched from inside the call");
    else
        snprintf(buf, len, "launched after the call returned");
}

/* The evidence for the first operation outside its window. */
static void acct_evidence(const kp_acct_rep *rep, char *buf, size_t len) {
    const kp_acct_op *o = &rep->show[0];
    char who[96], fmt[48];
    acct_thread(o, who, sizeof who);
    kp_fmt_time(fmt, sizeof fmt, o->outside_s, o->outside_s);
    const char *where = o->stream == rep->given_stream ? "the given stream" : "another stream";
    switch (o->where) {
    case KP_ACCT_LATE:
        snprintf(buf, len,
                 "%s %s on %s (id %u), %s, was still running %s after its call's stop event: work left running past "
                 "the window is not timed (%d operation(s) outside their calls)",
                 acct_kind(o->kind), o->name, where, o->stream, who, fmt, rep->ops_outside);
        break;
    case KP_ACCT_EARLY:
        snprintf(buf, len, "%s %s on %s (id %u), %s, started %s before its call's start event (%d operation(s) outside)",
                 acct_kind(o->kind), o->name, where, o->stream, who, fmt, rep->ops_outside);
        break;
    case KP_ACCT_RACE:
        snprintf(buf, len,
                 "%s %s on %s (id %u), %s, was still being launched when the call returned: where it lands "
                 "against the stop event is a race, and a call's work must be queued when it returns (%d "
                 "operation(s) outside)",
                 acct_kind(o->kind), o->name, where, o->stream, who, rep->ops_outside);
        break;
    case KP_ACCT_LOAD:
        snprintf(buf, len,
                 "%s %s on %s (id %u), launched while the candidate loaded, was still running %s into the first call "
                 "(%d operation(s) outside)",
                 acct_kind(o->kind), o->name, where, o->stream, fmt, rep->ops_outside);
        break;
    default:
        snprintf(buf, len,
                 "%s %s on %s (id %u), %s, ran outside every call (%s of device work between calls; %d "
                 "operation(s) outside): work done between calls is not timed",
                 acct_kind(o->kind), o->name, where, o->stream, who, fmt, rep->ops_outside);
        break;
    }
}

/* Asks the worker for its account of the device work since the last one
 * and judges it. `what` names the phase for the evidence. Decides the
 * shape on a finding; 0 otherwise. */
static int account(ctx *c, part *p, const kp_shape *sh, kp_shape_result *sr, const char *what, int baseline) {
    (void)sh;
    if (c->o->backend != KP_BACKEND_CUDA || c->o->unaudited || !p->alive) return 0;
    kp_acct_rep *rep = (kp_acct_rep *)calloc(1, sizeof *rep);
    if (!rep) return decide(sr, KP_ERROR, "harness", "out of host memory");
    char err[300];
    size_t got = 0;
    int bad = 0;
    int rc = kp_wk_call(p->w, KP_MSG_ACCOUNT, NULL, 0, NULL, 0, rep, sizeof *rep, &got, c->o->timeout_s + 30, err,
                        sizeof err);
    if (rc) {
        p->alive = 0;
        bad = worker_failed(c, p, sr, rc, "accounting for the device work", err);
    } else if (got != sizeof *rep) {
        bad = decide(sr, KP_REJECTED, "frame", "a reply of the wrong size on the result channel");
    } else if (rep->harness_lost > 0) {
        bad = decide(sr, KP_ERROR, "harness",
                     "the worker ran out of memory for its record of %d call(s) during %s: it cannot account for "
                     "them", rep->harness_lost, what);
    } else if (!rep->supported) {
        bad = decide(sr, KP_ERROR, "harness", "device activity tracing stopped working (%s): %s", what, rep->error);
    } else if (rep->dropped > 0) {
        bad = decide(sr, KP_REJECTED, "account",
                     "the tracer lost %d record(s) of device work during %s: kproof must see every operation to vouch "
                     "for the time",
                     rep->dropped, what);
    } else if (rep->missing_marks > 0) {
        bad = decide(sr, KP_REJECTED, "account",
                     "the trace of %d of %d call(s) during %s lacks the marks kproof put around them: something in "
                     "the worker disturbed the tracer",
                     rep->missing_marks, rep->calls, what);
    } else if (rep->ops_outside > 0 && !FLAW(c, KP_FLAW_LAUNCH)) {
        char ev[300];
        acct_evidence(rep, ev, sizeof ev);
        bad = decide(sr, KP_REJECTED, "account", "during %s: %s", what, ev);
    } else if (rep->library && !baseline && !c->o->allow_library && !FLAW(c, KP_FLAW_WEAK_BASE)) {
        /* A baseline may be a library wrapper (cuBLAS): that is what it is for. */
        bad = decide(sr, KP_REJECTED, "library",
                     "ran %d library kernel(s), e.g. %s: the candidate must be its own kernel (pass --allow-library "
                     "to measure a library wrapper)",
                     rep->library, rep->library_name);
    }
    if (!bad) {
        sr->acct_calls += rep->calls;
        sr->acct_ops += rep->ops_inside;
        sr->acct_other_stream += rep->ops_other_stream;
        if (rep->ops_load > 0 && !sr->acct_load) {
            sr->acct_load = rep->ops_load;
            kp_result_warn(c->r, "the candidate ran %d device operation(s) while it loaded (over before its first "
                           "call; inputs did not exist yet)", rep->ops_load);
        }
    }
    for (int i = 0; i < rep->nkernels && sr->nkernels < 16; i++) {
        const kp_acct_op *o = &rep->kernels[i];
        int seen = 0;
        for (int j = 0; j < sr->nkernels && !seen; j++)
            seen = !strcmp(sr->kernels[j].name, o->name) && sr->kernels[j].stream == o->stream;
        if (seen) continue;
        kp_audit_kernel *k = &sr->kernels[sr->nkernels++];
        snprintf(k->name, sizeof k->name, "%s", o->name);
        k->stream = o->stream;
        k->on_given_stream = o->stream == rep->given_stream;
        k->duration_s = o->duration_s;
    }
    free(rep);
    return bad;
}

/* A baseline's account: a baseline that works outside its calls is
 * dropped with the reason, so every participant is held to one rule. */
static void account_baseline(ctx *c, part *p, const kp_shape *sh, kp_shape_result *bsr) {
    if (!p->alive) return;
    kp_shape_result tmp;
    memset(&tmp, 0, sizeof tmp);
    int bad = account(c, p, sh, &tmp, "timing", 1);
    if (bad || tmp.verdict != KP_PASS) {
        bsr->verdict = tmp.verdict;
        p->alive = 0;
        kp_result_warn(c->r, "baseline %s dropped: %s", p->name, tmp.detail);
    }
}

/* ---- phase 2: timing -------------------------------------------------------------- */

static int push_sample(part *p, double t, double th) {
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        double *a = (double *)realloc(p->t, (size_t)cap * sizeof *a);
        if (!a) return -1;
        p->t = a;
        double *b = (double *)realloc(p->th, (size_t)cap * sizeof *b);
        if (!b) return -1;
        p->th = b;
        p->cap = cap;
    }
    p->t[p->n] = t;
    p->th[p->n] = th;
    p->n++;
    return 0;
}

static int64_t set_bytes(const kp_op *op, const kp_shape *sh) {
    int64_t b = 0;
    for (int i = 0; i < op->nbufs; i++) b += op->buf_elems(sh, i) * (int64_t)kp_dtype_size(op->bufs[i].dtype);
    return b;
}

static void fill_timing(ctx *c, const kp_shape *sh, part *p, kp_timing *t) {
    memset(t, 0, sizeof *t);
    if (p->n == 0) return;
    t->n = p->n;
    t->samples = (double *)malloc((size_t)p->n * sizeof(double));
    if (t->samples) memcpy(t->samples, p->t, (size_t)p->n * sizeof(double));
    t->median = kp_median(p->t, p->n);
    t->mean = kp_mean(p->t, p->n);
    t->min = kp_quantile(p->t, p->n, 0.0);
    kp_boot_median_ci(p->t, p->n, 0.95, 2000, kp_rng_next(&c->rng), &t->lo, &t->hi);
    t->host_median = kp_median(p->th, p->n);
    t->host_bound = p->host_bound;
    double rate = FLAW(c, KP_FLAW_WEAK_BASE) ? t->mean : t->median;
    if (rate > 0) {
        t->gbs = c->op->min_bytes(sh) / rate * 1e-9;
        t->gflops = c->op->flops(sh) / rate * 1e-9;
    }
    double sol = 0;
    if (c->calib.copy_gbs > 0) sol = c->op->min_bytes(sh) / (c->calib.copy_gbs * 1e9);
    double peak = 0;
    if (strcmp(c->op->family, "matmul") == 0)
        peak = c->op->dtype == KP_BF16 ? c->calib.gemm_bf16_gflops : c->calib.gemm_f32_gflops;
    /* The arithmetic ceiling is the chip's, not cuBLAS's: cuBLAS reaches
     * about 77-80% of the H200's datasheet rates (measured: 51.4 of ~67
     * TFLOP/s fp32, ~790 of ~990 bf16), so a kernel may beat it by ~1.3x. */
    peak *= 1.3;
    if (peak > 0 && c->op->flops(sh) / (peak * 1e9) > sol) sol = c->op->flops(sh) / (peak * 1e9);
    t->sol_time = sol;
    t->sol_fraction = (sol > 0 && t->median > 0) ? sol / t->median : 0;
}

/* Parent-side clock. Batches of n calls, each on a freshly poisoned output
 * as in timed calls, and the same batches without the calls, timed from
 * this process; the difference per call is what a (warm) call really
 * costs, at most what a cold one does. The fastest of several of each is kept (preemption
 * only slows a batch down). The batch's last output is checked too, so a
 * candidate cannot idle through it. Returns 0 with *floor set, or 1 when
 * it decided the shape's verdict. */
static int parent_floor(ctx *c, part *p, double median, const kp_shape *sh, iset *set0, kp_shape_result *sr,
                        double *floor) {
    char err[300];
    *floor = 0;
    int n = median > 0 ? (int)(0.002 / median) : 100;
    if (n < 2) n = 2;
    if (n > 1000) n = 1000;
    double best[2] = {0, 0};
    for (int b = 0; b < 18; b++) {
        int call = b % 2;
        kp_batch_req q = {0, n, call, 0};
        kp_batch_rep rep;
        size_t got;
        int rc = kp_wk_call(p->w, KP_MSG_BATCH, &q, sizeof q, NULL, 0, &rep, sizeof rep, &got,
                            c->o->timeout_s + (median + 0.05) * n * 4, err, sizeof err);
        if (rc) {
            p->alive = 0;
            return worker_failed(c, p, sr, rc, "timing a batch of calls with the parent's clock", err);
        }
        if (rep.rc)
            return decide(sr, KP_ERROR, "rc", "the entry point %s returned %d in a batch of calls", c->op->entry, rep.rc);
        double w = kp_wk_last_wall(p->w) / n;
        if (best[call] == 0 || w < best[call]) best[call] = w;
    }
    if (!FLAW(c, KP_FLAW_ONE_INPUT) && check_sampled(c, p, sh, set0, 0, sr)) return 1;
    *floor = best[1] > best[0] ? best[1] - best[0] : 0;
    return 0;
}

static int timing_locked(ctx *c, part *parts, int np, const kp_shape *sh, iset *sets, int nsets,
                         kp_shape_result *sr);

/* Speed of light. With the device's datasheet limits (kproof/limits.h):
 * a median below min_bytes / HBM bandwidth, or below the FLOPs over the
 * fastest unit that could do them, is physically impossible (REJECTED);
 * a median faster than the measured copy rate or library (cuBLAS) rate
 * allows, by more than its own interval, is possible and suspicious: PASS
 * with a warning that names the margin. Without datasheet limits (the
 * host, an unknown GPU) the measured rates with a margin decide: 1.25x on
 * CUDA (a read-only kernel streams a little faster than a copy, and the
 * arithmetic ceiling is taken as 1.3x cuBLAS), 2x on the host, whose
 * caches are large and shared. */
static void speed_of_light(ctx *c, const kp_shape *sh, kp_shape_result *sr, const double *t, int n) {
    double med = sr->cand.median;
    if (!(med > 0)) return;
    const kp_limits *lim = kp_limits_for(c->r->env.gpu);
    double phys = c->o->backend == KP_BACKEND_CUDA ? kp_limits_floor_s(lim, c->op, sh) : 0;
    if (phys > 0) {
        if (med < phys) {
            decide(sr, KP_REJECTED, "speed-of-light",
                   "the median %.3g s is %.2fx faster than this device can physically go (%.3g s: %s, %.0f GB/s "
                   "HBM, FLOPs at the fastest unit that could do them): the time is not real",
                   med, phys / med, phys, lim->source, lim->hbm_gbs);
            return;
        }
        double meas = 0;
        const char *what = "the measured copy rate";
        if (c->calib.copy_gbs > 0) meas = c->op->min_bytes(sh) / (c->calib.copy_gbs * 1e9);
        double lib = 0;
        if (strcmp(c->op->family, "matmul") == 0)
            lib = c->op->dtype == KP_BF16 ? c->calib.gemm_bf16_gflops : c->calib.gemm_f32_gflops;
        if (lib > 0 && c->op->flops(sh) / (lib * 1e9) > meas) {
            meas = c->op->flops(sh) / (lib * 1e9);
            what = "the measured cuBLAS rate";
        }
        /* The noise here is the eval's interval and the calibration's own
         * (a separate measurement, within about 1% of the eval's on the
         * H200: cuBLAS SGEMM 0.1%): 2% at least. */
        double half = kp_rel_halfwidth(t, n, 2);
        if (half < 0.02) half = 0.02;
        if (meas > 0 && med * (1 + half) < meas) {
            char st[64];
            kp_shape_format(sh, st, sizeof st);
            kp_result_warn(c->r, "%s: %.1f%% faster than %s allows (%.3g s against %.3g s), within the physical "
                           "limit (%.3g s): possible, but worth a second look",
                           st, 100 * (meas / med - 1), what, med, meas, phys);
        }
        return;
    }
    double margin = c->o->backend == KP_BACKEND_CUDA ? 1.25 : 2.0;
    if (sr->cand.sol_time > 0 && med * margin < sr->cand.sol_time)
        decide(sr, KP_REJECTED, "speed-of-light",
               "the median %.3g s is %.1fx faster than the speed of light of this device (%.3g s at the "
               "measured peaks): physically impossible, so the time is not real",
               med, sr->cand.sol_time / med, sr->cand.sol_time);
}

/* The timing phase holds the device from the first upload to the last
 * sample and the parent-clock batches: no other kproof process runs
 * anything on it meanwhile. The first pass's input sets are built before
 * (CPU work that needs no device). */
static int timing(ctx *c, part *parts, int np, const kp_shape *sh, kp_shape_result *sr) {
    int64_t sb = set_bytes(c->op, sh);
    int nsets = c->o->nsets < 8 ? 8 : c->o->nsets;
    int64_t l2 = c->r->env.l2_bytes > 0 ? c->r->env.l2_bytes : (64 << 20);
    int maxsets = c->o->max_sets > 0 && c->o->max_sets < KP_MAX_SETS ? c->o->max_sets : KP_MAX_SETS;
    while (nsets < maxsets && (int64_t)nsets * sb < 3 * l2) nsets++;
    if (FLAW(c, KP_FLAW_WARM) || FLAW(c, KP_FLAW_ONE_INPUT)) nsets = 1;
    iset *sets = (iset *)calloc((size_t)nsets, sizeof *sets);
    if (!sets) return decide(sr, KP_ERROR, "harness", "out of host memory");
    char err[200];
    progress(c, "  timing: %d input set(s) of %.1f MiB each, %d participant(s)", nsets, sb / 1048576.0, np);
    if (iset_make_many(c, sh, 0, sets, nsets, err, sizeof err)) {
        free(sets);
        return decide(sr, KP_ERROR, "harness", "%s", err);
    }
    kp_devlock_hold(1);
    int bad = timing_locked(c, parts, np, sh, sets, nsets, sr);
    kp_devlock_hold(0);
    return bad;
}

/* Frees sets. */
static int timing_locked(ctx *c, part *parts, int np, const kp_shape *sh, iset *sets, int nsets,
                         kp_shape_result *sr) {
    int warm = FLAW(c, KP_FLAW_WARM);
    kp_env env;
    memset(&env, 0, sizeof env);
    char err[200];
    int bad = 0;
    kp_shape_result bsr[MAX_PART]; /* baselines' own findings */
    memset(bsr, 0, sizeof bsr);
    for (int k = 0; k < np && !bad; k++) {
        if (k > 0 && !parts[k].alive) continue; /* a baseline that did not start */
        kp_shape_result *tgt = k == 0 ? sr : &bsr[k];
        if (part_setup(c, &parts[k], sh, 0, sets, nsets, !FLAW(c, KP_FLAW_ONE_INPUT), NULL, tgt) && k == 0) bad = 1;
        if (k > 0 && bsr[k].verdict != KP_PASS) parts[k].alive = 0;
    }
    int flags = rigorous_flags(c);
    if (!warm) flags |= KP_RUN_FLUSH;
    /* The device's time for what the call enqueued, not the host's launch
     * latency (a harness that times launches is the launch flaw). */
    if (!FLAW(c, KP_FLAW_LAUNCH)) flags |= KP_RUN_BLOCK;
    int check_timed = !FLAW(c, KP_FLAW_ONE_INPUT);
    int *perm = (int *)malloc((size_t)nsets * sizeof(int));
    if (!perm) bad = decide(sr, KP_ERROR, "harness", "out of host memory");
    double t0 = 0; /* the budget starts after the warm-up */
    int pass = -1, settled = 0;
    for (int it = 0; !bad; it++) {
        int slot = it % nsets;
        if (slot == 0) {
            pass++;
            /* Fresh inputs every pass (the warm flaw keeps one set): a
             * cache keyed on pointers or on the data never sees the same
             * input twice. Same shape, so the pooled pointers stay. */
            if (pass > 0 && !warm && !FLAW(c, KP_FLAW_ONE_INPUT)) {
                for (int i = 0; i < nsets; i++) iset_free(c->op, &sets[i]);
                if (iset_make_many(c, sh, 0, sets, nsets, err, sizeof err)) {
                    bad = decide(sr, KP_ERROR, "harness", "%s", err);
                    break;
                }
                for (int k = 0; k < np && !bad; k++) {
                    if (!parts[k].alive) continue;
                    kp_shape_result *tgt = k == 0 ? sr : &bsr[k];
                    if (part_setup(c, &parts[k], sh, 0, sets, nsets, 1, NULL, tgt)) {
                        if (k == 0) bad = 1;
                        else parts[k].alive = 0;
                    }
                }
                if (bad) break;
            }
            for (int i = 0; i < nsets; i++) perm[i] = i;
            for (int i = nsets - 1; i > 0; i--) {
                int j = (int)kp_rng_below(&c->rng, (uint64_t)i + 1), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
        }
        int set = perm[slot];
        /* The first calls are the warm-up (each participant's first three,
         * at least one per set on small rotations): checked, not kept. */
        int keep = it >= (nsets < 3 ? nsets : 3);
        if (keep && t0 == 0) t0 = kp_wall_s();
        for (int kk = 0; kk < np && !bad; kk++) {
            int k = (kk + it) % np; /* rotate who goes first: drift hits everyone */
            part *p = &parts[k];
            if (!p->alive) continue;
            kp_shape_result *tgt = k == 0 ? sr : &bsr[k];
            run_out ro;
            /* Each participant's first call here is not held: a first use
             * (a library's setup, a module loaded lazily) may wait on the
             * device, which a hold would turn into a 1 s stall. It is a
             * warm-up call either way. */
            int f = it == 0 ? flags & ~KP_RUN_BLOCK : flags;
            if (part_run(c, p, set, f, &ro, tgt) || judge_run(c, p, &ro, f, tgt) ||
                (check_timed && check_sampled(c, p, sh, &sets[set], set, tgt))) {
                if (k == 0) bad = 1;
                else {
                    p->alive = 0;
                    kp_result_warn(c->r, "baseline %s dropped: %s", p->name, tgt->detail);
                }
                continue;
            }
            /* Launch flaw on cuda: events on the given stream only (no
             * device sync in the window); on the host the host clock is all
             * there is, and it stops when the call returns. */
            double t = ro.rep.event_s;
            if (ro.rep.blocked == 1 && ro.rep.enqueue_s > t) {
                /* Held: the device ran the call's work back to back; host
                 * work that took longer than that is the call's real cost. */
                t = ro.rep.enqueue_s;
                if (keep) p->host_bound++;
            } else if (ro.rep.blocked == 2) {
                /* The call waited on the device while the stream was held:
                 * this sample timed the hold. The worker stops holding. */
                kp_result_warn(c->r, "%s stalled for a second while its stream was held (it waits on the "
                               "device inside its call): its times from here on are events around the call, host "
                               "launch latency included", p->name);
                continue;
            }
            if (keep && push_sample(p, t, ro.rep.host_s)) bad = decide(sr, KP_ERROR, "harness", "out of memory");
        }
        if (bad || !keep) continue;
        double el = kp_wall_s() - t0;
        /* The budget may not cut a run short of its minimum samples, unless
         * the candidate is so slow that five budgets have passed. */
        if (parts[0].n < c->o->stop.min_samples && el < 5 * c->o->stop.budget_s) continue;
        if (kp_stop_check(&c->o->stop, parts[0].t, parts[0].n, el, &settled)) break;
        if (c->o->progress && parts[0].n % 50 == 0)
            progress(c, "  %d samples, %.1f s, interval +-%.2f%%", parts[0].n, el,
                     100 * kp_rel_halfwidth(parts[0].t, parts[0].n, 1));
    }
    free(perm);
    /* Every timed call of every participant, accounted: the candidate's
     * findings decide, a baseline's drop it. */
    if (!bad) bad = account(c, &parts[0], sh, sr, "the timed calls", 0);
    for (int k = 1; k < np && !bad; k++) account_baseline(c, &parts[k], sh, &bsr[k]);
    /* A slow candidate may run out of budget before the minimum sample
     * count; its timing still settled if even those few samples agree. */
    if (!bad && !settled && parts[0].n >= 3 && kp_rel_halfwidth(parts[0].t, parts[0].n, 3) <= c->o->stop.target)
        settled = 1;
    if (!bad) {
        fill_timing(c, sh, &parts[0], &sr->cand);
        sr->cand.settled = settled;
        sr->timed = 1;
        /* Strongest baseline: the lowest median among those still standing. */
        int best = -1;
        for (int k = 1; k < np; k++) {
            if (!parts[k].alive || parts[k].n < 3) continue;
            double m = kp_median(parts[k].t, parts[k].n);
            if (best < 0 || m < kp_median(parts[best].t, parts[best].n)) best = k;
        }
        if (best > 0) {
            fill_timing(c, sh, &parts[best], &sr->base);
            snprintf(sr->base_name, sizeof sr->base_name, "%s", parts[best].name);
            int weak = FLAW(c, KP_FLAW_WEAK_BASE);
            double bm = weak ? sr->base.mean : sr->base.median, cm = weak ? sr->cand.mean : sr->cand.median;
            sr->speedup = cm > 0 ? bm / cm : 0;
            kp_boot_ratio_ci(parts[best].t, parts[best].n, parts[0].t, parts[0].n, 0.95, 2000, kp_rng_next(&c->rng),
                             &sr->speedup_lo, &sr->speedup_hi);
        }
        /* Sanity bounds. Speed of light first: an impossible time is the
         * plainer evidence. The parent-side clock belongs to two flaws: a
         * harness that times the launch has none, and neither has one that
         * trusts whatever the process reports. */
        if (!FLAW(c, KP_FLAW_WEAK_BASE)) speed_of_light(c, sh, sr, parts[0].t, parts[0].n);
        if (!FLAW(c, KP_FLAW_WEAK_BASE) && !FLAW(c, KP_FLAW_LAUNCH) && sr->verdict == KP_PASS &&
            parent_floor(c, &parts[0], sr->cand.median, sh, &sets[0], sr, &sr->cand.parent_floor) == 0) {
            if (sr->cand.parent_floor > 0 && sr->cand.median < 0.5 * sr->cand.parent_floor)
                decide(sr, KP_REJECTED, "timer",
                       "the reported median %.3g s is below half of what the parent's own clock measured "
                       "around a batch of calls (%.3g s per call): the time was not measured honestly",
                       sr->cand.median, sr->cand.parent_floor);
        }
        if (sr->verdict == KP_PASS) account(c, &parts[0], sh, sr, "the parent-clock batches", 0);
        if (sr->verdict == KP_PASS && !settled)
            decide(sr, KP_NOISY, "noise",
                   "correct, but the timing never settled: the median's 95%% interval is +-%.2f%% after %d samples "
                   "(target +-%.2f%%); pass --time-budget with more seconds or quiet the machine",
                   100 * kp_rel_halfwidth(parts[0].t, parts[0].n, 2), parts[0].n, 100 * c->o->stop.target);
    }
    for (int i = 0; i < nsets; i++) iset_free(c->op, &sets[i]);
    free(sets);
    return sr->verdict != KP_PASS && sr->verdict != KP_NOISY;
}

/* ---- shapes, baselines, calibration ----------------------------------------------- */

typedef struct shape_item {
    kp_shape s;
    const char *origin;
    int timed;
} shape_item;

static int64_t largest_buf(const kp_op *op, const kp_shape *s) {
    int64_t m = 0;
    for (int b = 0; b < op->nbufs; b++)
        if (op->buf_elems(s, b) > m) m = op->buf_elems(s, b);
    return m;
}

/* Edge shapes a CPU can afford in a test run; and the caller's own cap. */
static int skip_shape(const ctx *c, const kp_shape *s) {
    if (c->o->max_elems > 0 && largest_buf(c->op, s) > c->o->max_elems) return 1;
    return c->o->backend == KP_BACKEND_HOST && (c->op->flops(s) > 1e9 || c->op->min_bytes(s) > (40.0 * (1 << 20)));
}

static int pick_shapes(ctx *c, shape_item *items, int cap) {
    const kp_eval_opts *o = c->o;
    int n = 0;
    int host = o->backend == KP_BACKEND_HOST;
    int sets = o->shape_sets;
    int fixed_only = FLAW(c, KP_FLAW_ONE_INPUT) || FLAW(c, KP_FLAW_WARM);
    if (o->nshapes > 0) {
        for (int i = 0; i < o->nshapes && n < cap; i++) items[n++] = (shape_item){o->shapes[i], "user", 1};
        if (!o->user_shapes_plus) return n;
        sets &= 2 | 8;
    }
    const kp_shape_set *timed = host ? &c->op->quick : &c->op->canonical;
    if ((sets & 1) || (sets & 4))
        for (int i = 0; i < timed->n && n < cap; i++) items[n++] = (shape_item){timed->shapes[i], timed->label, 1};
    if ((sets & 2) && !fixed_only)
        for (int i = 0; i < c->op->edge.n && n < cap; i++) {
            if (skip_shape(c, &c->op->edge.shapes[i])) continue;
            items[n++] = (shape_item){c->op->edge.shapes[i], "edge", 0};
        }
    if ((sets & 8) && !fixed_only)
        for (int i = 0; i < 2 && n < cap; i++) {
            kp_shape s;
            int64_t most = host ? (1 << 18) : (1 << 24);
            if (o->max_elems > 0 && o->max_elems < most) most = o->max_elems;
            c->op->draw_shape(kp_rng_next(&c->rng), most, &s);
            items[n++] = (shape_item){s, "drawn", 0};
        }
    return n;
}

/* kernels/<family>/<backend>/<dtype>-NN-*.{c,cu}: the naive one (lowest NN),
 * the project's best (highest NN), and library wrappers (<dtype>-<lib>). */
static int find_baselines(ctx *c, part *parts, int maxp, uint64_t cand_hash) {
    char dir[PATH_MAX];
    const char *be = kp_backend_name(c->o->backend);
    snprintf(dir, sizeof dir, "%s/kernels/%s/%s", c->o->root, c->op->family, be);
    const char *dt = kp_dtype_name(c->op->dtype);
    size_t dl = strlen(dt);
    char lo[256] = "", hi[256] = "", lib[256] = "";
    int nlo = INT_MAX, nhi = -1;
    kp_name *names = NULL;
    int nn = kp_list_dir(dir, &names);
    for (int f = 0; f < nn; f++) {
        const char *nm = names[f];
        if (strncmp(nm, dt, dl) != 0 || nm[dl] != '-') continue;
        const char *ext = strrchr(nm, '.');
        if (!ext || (strcmp(ext, ".c") && strcmp(ext, ".cu"))) continue;
        const char *rest = nm + dl + 1;
        if (rest[0] >= '0' && rest[0] <= '9') {
            int num = (int)strtol(rest, NULL, 10);
            if (num < nlo) nlo = num, snprintf(lo, sizeof lo, "%s", nm);
            char path[PATH_MAX + 256];
            snprintf(path, sizeof path, "%s/%s", dir, nm);
            if (num > nhi && !kp_kernel_not_best(path)) nhi = num, snprintf(hi, sizeof hi, "%s", nm);
        } else if (!lib[0]) {
            snprintf(lib, sizeof lib, "%s", nm);
        }
    }
    free(names);
    int np = 0;
    const char *pick[3];
    int npick = 0;
    if (FLAW(c, KP_FLAW_WEAK_BASE)) {
        if (lo[0]) pick[npick++] = lo;
    } else {
        if (lib[0]) pick[npick++] = lib;
        if (hi[0]) pick[npick++] = hi;
        if (lo[0] && strcmp(lo, hi)) pick[npick++] = lo;
    }
    if (c->o->max_baselines > 0 && maxp > c->o->max_baselines) maxp = c->o->max_baselines;
    for (int i = 0; i < npick && np < maxp; i++) {
        part *p = &parts[np];
        memset(p, 0, sizeof *p);
        snprintf(p->path, sizeof p->path, "%s/%s", dir, pick[i]);
        if (kp_file_hash(p->path) == cand_hash) continue; /* the candidate itself */
        snprintf(p->name, sizeof p->name, "%.*s", (int)(strrchr(pick[i], '.') - pick[i]), pick[i]);
        np++;
    }
    return np;
}

/* Device facts and measured peaks into the result, from the trusted worker. */
static void calibrate(ctx *c, part *p) {
    char err[300] = "";
    kp_env e;
    int measured = 0;
    const char *cache = c->o->cache_dir ? c->o->cache_dir : kp_default_cache();
    if (kp_device_facts(p->w, cache, 0, &e, &c->calib, &measured, err, sizeof err))
        kp_result_warn(c->r, "calibration failed (%s): no speed-of-light bound", err);
    if (measured) progress(c, "measured this device's peaks once (cached in %s)", cache);
    char date[32];
    memcpy(date, c->r->env.date, sizeof date);
    c->r->env = e;
    memcpy(c->r->env.date, date, sizeof date);
    c->r->env.peak_gbs = c->calib.copy_gbs;
    c->r->env.peak_gflops_f32 = c->calib.gemm_f32_gflops;
    c->r->env.peak_gflops_bf16 = c->calib.gemm_bf16_gflops;
}

static void env_after(ctx *c, part *p) {
    char err[200];
    size_t got;
    kp_env e;
    memset(&e, 0, sizeof e);
    if (!p->alive || kp_wk_call(p->w, KP_MSG_ENV, NULL, 0, NULL, 0, &e, sizeof e, &got, 30, err, sizeof err)) return;
    kp_env *r = &c->r->env;
    r->sm_mhz_after = e.sm_mhz_before;
    r->mem_mhz_after = e.mem_mhz_before;
    r->throttle_after = e.throttle_before;
    if (r->sm_mhz_before > 0 && r->sm_mhz_after > 0) {
        double ch = (double)r->sm_mhz_after / r->sm_mhz_before - 1;
        if (fabs(ch) > 0.10)
            kp_result_warn(c->r, "SM clock moved %+.0f%% during the run (%d -> %d MHz): compare numbers with care",
                           100 * ch, r->sm_mhz_before, r->sm_mhz_after);
    }
}

/* ---- the whole evaluation --------------------------------------------------------- */

static kp_verdict worse(kp_verdict a, kp_verdict b) {
    static const int rank[] = {0, 3, 4, 2, 1}; /* PASS, WRONG, REJECTED, ERROR, NOISY */
    return rank[b] > rank[a] ? b : a;
}

static void protocol_name(int flaws, char *buf, size_t len) {
    if (!flaws) {
        snprintf(buf, len, "rigorous");
        return;
    }
    if (flaws == KP_FLAW_ALL) {
        snprintf(buf, len, "naive");
        return;
    }
    size_t u = (size_t)snprintf(buf, len, "naive(");
    int first = 1;
    for (int b = 0; b < KP_NFLAWS; b++)
        if (flaws & (1 << b)) {
            u += (size_t)snprintf(buf + u, u < len ? len - u : 0, "%s%s", first ? "" : ",", kp_flaw_name(1 << b));
            first = 0;
        }
    snprintf(buf + u, u < len ? len - u : 0, ")");
}

static int build_part(ctx *c, part *p, kp_result *r, int is_candidate) {
    char log[4096];
    const char *cache = c->o->cache_dir ? c->o->cache_dir : kp_default_cache();
    int rc = kp_build(c->o->backend, p->path, c->o->root, cache, p->so, sizeof p->so, log, sizeof log);
    if (rc == 0) return 0;
    if (!is_candidate) {
        kp_result_warn(r, "baseline %s did not build; left out", p->name);
        return -1;
    }
    r->verdict = KP_ERROR;
    /* -1: the compiler refused the candidate; otherwise the harness could
     * not build anything (no compiler, no cache directory). */
    snprintf(r->check_name, sizeof r->check_name, "%s", rc == -1 ? "build" : "harness");
    if (rc == -1) snprintf(r->detail, sizeof r->detail, "the candidate does not compile:\n%s", log);
    else snprintf(r->detail, sizeof r->detail, "%s", log);
    return -1;
}

/* The run's wall time and its share of the device lock, since t0 / w0 / h0. */
static void finish_times(kp_result *r, double t0, double w0, double h0) {
    double w, h;
    kp_devlock_times(&w, &h);
    r->wall_s = kp_wall_s() - t0;
    r->lock_wait_s = w - w0;
    r->lock_held_s = h - h0;
}

int kp_eval(const kp_eval_opts *o, kp_result *r, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.op = o->op;
    c.r = r;
    c.flaws = o->flaws;
    r->op = o->op;
    r->backend = o->backend;
    r->seed = o->seed ? o->seed : kp_entropy_seed();
    c.rng.s = r->seed;
    snprintf(r->candidate, sizeof r->candidate, "%s", o->candidate);
    protocol_name(c.flaws, r->protocol, sizeof r->protocol);
    kp_now_iso(r->env.date, sizeof r->env.date);
    double t_start = kp_wall_s(), lock_w0, lock_h0;
    kp_devlock_times(&lock_w0, &lock_h0);

    part parts[MAX_PART];
    memset(parts, 0, sizeof parts);
    int np = 1;
    snprintf(parts[0].name, sizeof parts[0].name, "candidate");
    snprintf(parts[0].path, sizeof parts[0].path, "%s", o->candidate);
    if (!kp_file_exists(o->candidate)) {
        snprintf(err, errlen, "cannot read %s: no such file", o->candidate);
        return -1;
    }
    if (kp_wk_available(o->backend, err, errlen)) return -1;
    kp_devlock_open_backend(o->backend);
    progress(&c, "building %s for the %s backend", o->candidate, kp_backend_name(o->backend));
    double tp = t_start;
#define PHASE(ph) do { double now_ = kp_wall_s(); r->phase_s[ph] += now_ - tp; tp = now_; } while (0)
    int brc = build_part(&c, &parts[0], r, 1);
    PHASE(KP_PH_BUILD);
    if (brc) {
        finish_times(r, t_start, lock_w0, lock_h0);
        return 0;
    }
    /* Baselines (and the trusted worker used for calibration). */
    part trusted;
    memset(&trusted, 0, sizeof trusted);
    int nb = 0;
    if (!o->no_baseline && !o->correctness_only) {
        nb = find_baselines(&c, parts + 1, MAX_PART - 1, kp_file_hash(o->candidate));
        for (int i = 1; i <= nb; i++) {
            if (build_part(&c, &parts[i], r, 0) == 0) parts[np++] = parts[i];
        }
    }
    PHASE(KP_PH_BUILD);
    /* Calibration runs in a worker that holds a project kernel, never the candidate. */
    if (o->env_hint) {
        /* Facts and peaks read once by the caller, held in memory: nothing a
         * candidate writes to the cache between evaluations reaches them. */
        r->env = *o->env_hint;
        kp_now_iso(r->env.date, sizeof r->env.date);
        c.calib.copy_gbs = r->env.peak_gbs;
        c.calib.gemm_f32_gflops = r->env.peak_gflops_f32;
        c.calib.gemm_bf16_gflops = r->env.peak_gflops_bf16;
        if (c.calib.copy_gbs <= 0) kp_result_warn(r, "no calibration for this device: no speed-of-light bound");
    } else {
        if (kp_trusted_start(o->backend, o->root, o->cache_dir ? o->cache_dir : kp_default_cache(), &trusted.w, err,
                             errlen))
            return -1;
        trusted.alive = 1;
        calibrate(&c, &trusted);
    }

    /* Seeds are drawn only after the candidate's worker has loaded it. */
    char e3[600];
    int rc = part_start(&c, &parts[0], e3, sizeof e3);
    if (rc != KP_WK_OK) {
        r->verdict = KP_ERROR;
        if (rc >= 100) {
            snprintf(r->check_name, sizeof r->check_name, "load");
            snprintf(r->detail, sizeof r->detail, "%s", e3);
        } else if (rc == KP_WK_SYS) {
            part_stop(&parts[0]);
            if (trusted.w) kp_wk_stop(trusted.w);
            if (o->backend == KP_BACKEND_CUDA && parts[0].hello.status == KP_LOAD_DEVICE)
                snprintf(err, errlen, "%s (where this GPU works outside kproof, run again with --no-sandbox to see "
                         "whether the worker's sandbox is the cause)", e3);
            else
                snprintf(err, errlen, "%s", e3);
            return -1;
        } else {
            kp_shape_result tmp;
            memset(&tmp, 0, sizeof tmp);
            worker_failed(&c, &parts[0], &tmp, rc, "loading the candidate", e3);
            snprintf(r->check_name, sizeof r->check_name, "%s", tmp.check_name);
            snprintf(r->detail, sizeof r->detail, "%s", tmp.detail);
        }
        part_stop(&parts[0]);
        if (trusted.w) kp_wk_stop(trusted.w);
        finish_times(r, t_start, lock_w0, lock_h0);
        return 0;
    }
    /* No account, no PASS: on a GPU a time is vouched for only when every
     * piece of device work the candidate causes can be seen. */
    if (o->backend == KP_BACKEND_CUDA && !o->unaudited && !parts[0].hello.traced) {
        r->verdict = KP_ERROR;
        snprintf(r->check_name, sizeof r->check_name, "harness");
        snprintf(r->detail, sizeof r->detail,
                 "device activity tracing is unavailable (%s), and kproof does not vouch for device work it cannot "
                 "see. Detach other profilers (Nsight, other CUPTI clients) or allow profiling for this user; "
                 "--unaudited times without tracing (every row then says so); --no-sandbox tells whether the "
                 "sandbox stops it",
                 parts[0].hello.trace_error[0] ? parts[0].hello.trace_error : "no reason given");
        part_stop(&parts[0]);
        if (trusted.w) kp_wk_stop(trusted.w);
        finish_times(r, t_start, lock_w0, lock_h0);
        return 0;
    }
    r->unaudited = o->backend == KP_BACKEND_CUDA && o->unaudited;
    if (r->unaudited)
        kp_result_warn(r, "unaudited: device work was not traced (--unaudited), so work outside the timed calls "
                       "would go unseen");
    /* Baselines start before the first timing phase, not here: a candidate
     * that fails its correctness (most of the exploit corpus) never needs
     * them, and a worker start holds the device lock. */
    int baselines_started = 0;

    PHASE(KP_PH_START);
    shape_item items[64];
    int ns = pick_shapes(&c, items, 64);
    r->shapes = (kp_shape_result *)calloc((size_t)(ns ? ns : 1), sizeof *r->shapes);
    if (!r->shapes) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int stop = 0;
    for (int i = 0; i < ns && !stop; i++) {
        kp_shape_result *sr = &r->shapes[r->nshapes++];
        sr->shape = items[i].s;
        sr->origin = items[i].origin;
        char st[64];
        kp_shape_format(&sr->shape, st, sizeof st);
        char why[200];
        if (c.op->shape_ok && c.op->shape_ok(&sr->shape, why, sizeof why)) {
            snprintf(err, errlen, "shape %s is not valid for %s: %s", st, c.op->name, why);
            return -1;
        }
        progress(&c, "shape %d/%d %s (%s): correctness", i + 1, ns, st, items[i].origin);
        int bad = FLAW(&c, KP_FLAW_ONE_INPUT) ? correctness_one_input(&c, &parts[0], &sr->shape, sr)
                                               : correctness(&c, &parts[0], &sr->shape, sr);
        PHASE(KP_PH_CORRECT);
        /* Every call of the correctness phase, accounted before timing. */
        if (!bad) bad = account(&c, &parts[0], &sr->shape, sr, "the correctness calls", 0);
        PHASE(KP_PH_AUDIT);
        if (!bad && items[i].timed && !o->correctness_only && !baselines_started) {
            baselines_started = 1;
            for (int k = 1; k < np; k++) {
                char e4[600];
                if (part_start(&c, &parts[k], e4, sizeof e4) != KP_WK_OK) {
                    kp_result_warn(r, "baseline %s did not start: %s", parts[k].name, e4);
                    part_stop(&parts[k]);
                }
            }
            PHASE(KP_PH_START);
        }
        if (!bad && items[i].timed && !o->correctness_only) bad = timing(&c, parts, np, &sr->shape, sr);
        PHASE(KP_PH_TIMING);
        r->verdict = worse(r->verdict, sr->verdict);
        if (sr->verdict != KP_PASS && sr->verdict != KP_NOISY) {
            if (!r->check_name[0] || !strcmp(r->check_name, "noise")) { /* a failure outranks noise */
                snprintf(r->check_name, sizeof r->check_name, "%s", sr->check_name);
                snprintf(r->detail, sizeof r->detail, "at %s: %s", st, sr->detail);
            }
            stop = 1;
        } else if (sr->verdict == KP_NOISY && !r->check_name[0]) {
            snprintf(r->check_name, sizeof r->check_name, "%s", sr->check_name);
            snprintf(r->detail, sizeof r->detail, "at %s: %s", st, sr->detail);
        }
        for (int k = 0; k < np; k++) parts[k].n = parts[k].host_bound = 0;
        if (!parts[0].alive) stop = 1;
    }
    if (stop && r->nshapes < ns)
        kp_result_warn(r, "%d shape(s) not run after the first failure", ns - r->nshapes);
    env_after(&c, trusted.alive ? &trusted : &parts[0]);
    for (int k = 0; k < np; k++) part_stop(&parts[k]);
    if (trusted.w) kp_wk_stop(trusted.w);
    PHASE(KP_PH_START);
#undef PHASE
    finish_times(r, t_start, lock_w0, lock_h0);
    return 0;
}
