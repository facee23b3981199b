/* inputs.c: input sets as the parent knows them. Seeds drawn in order from
 * the run's generator, inputs generated and checksummed on the CPU in
 * chunks on all cores, the float64 references (by blocks of rows for a
 * row-local op), and lazy sets: for the timing phase of a large row-local
 * op only the rows a sampled check needs, generated and referenced when it
 * needs them (a large matmul's: correctness.c, check_lazy_grid). Part of
 * the protocol (eval.c tells the story). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/protocol/protocol_priv.h"

/* The reference pool. A set's float64 reference (want and tol, 16 bytes an
 * output element: hundreds of MiB at the larger shapes) is made and freed
 * set after set; fresh from the allocator each time (glibc maps anything
 * over 32 MiB anew), every page of it is faulted in and zeroed again: most
 * of a host evaluation's page faults. A row-local op's freed references are
 * kept for later sets of the same or a smaller size, up to an eighth of the
 * host's memory and 4 GiB, until the evaluation ends or the memory is wanted
 * (kpp_ref_pool_drain: before baselines' workers start, and where the timing
 * phase's sets would not fit otherwise). A set's reference is written
 * whole (every row, by the op's own reference through kp_ref_alloc), so
 * nothing of an earlier set is read. Parent memory only: no candidate sees
 * it. */
enum { REF_POOL = 32 };
#define REF_POOL_MAX ((int64_t)4 << 30) /* bytes: and at most an eighth of the host's memory */
static struct {
    double *want, *tol;
    int64_t cap; /* doubles each; 0: an empty slot */
} ref_pool[REF_POOL];
static pthread_mutex_t ref_pool_mu = PTHREAD_MUTEX_INITIALIZER;

/* The smallest pooled pair of at least n doubles each, or a new one. */
static int ref_take(int64_t n, double **want, double **tol, int64_t *cap) {
    if (n < 1) n = 1; /* an empty slot (cap 0) is never a match */
    pthread_mutex_lock(&ref_pool_mu);
    int best = -1;
    for (int i = 0; i < REF_POOL; i++)
        if (ref_pool[i].cap >= n && (best < 0 || ref_pool[i].cap < ref_pool[best].cap)) best = i;
    if (best >= 0) {
        *want = ref_pool[best].want, *tol = ref_pool[best].tol, *cap = ref_pool[best].cap;
        ref_pool[best].want = ref_pool[best].tol = NULL, ref_pool[best].cap = 0;
    }
    pthread_mutex_unlock(&ref_pool_mu);
    if (best >= 0) return 0;
    *cap = n;
    *want = (double *)malloc((size_t)*cap * sizeof(double));
    *tol = (double *)malloc((size_t)*cap * sizeof(double));
    if (*want && *tol) return 0;
    free(*want), free(*tol);
    *want = *tol = NULL;
    return -1;
}

/* Back to the pool, in place of its smallest pair (or an empty slot) where
 * it is larger and the pool stays within its limit (an eighth of the
 * host's memory, at most REF_POOL_MAX); whatever is left out is freed. */
static void ref_give(double *want, double *tol, int64_t cap) {
    static int64_t limit; /* bytes */
    pthread_mutex_lock(&ref_pool_mu);
    if (!limit) limit = kp_host_mem_bytes() / 8 < REF_POOL_MAX ? kp_host_mem_bytes() / 8 : REF_POOL_MAX;
    int slot = 0;
    int64_t held = 0;
    for (int i = 0; i < REF_POOL; i++) {
        held += ref_pool[i].cap * 16;
        if (ref_pool[i].cap < ref_pool[slot].cap) slot = i;
    }
    if (ref_pool[slot].cap < cap && held - ref_pool[slot].cap * 16 + cap * 16 <= limit) {
        double *w = ref_pool[slot].want, *t = ref_pool[slot].tol;
        ref_pool[slot].want = want, ref_pool[slot].tol = tol, ref_pool[slot].cap = cap;
        want = w, tol = t;
    }
    pthread_mutex_unlock(&ref_pool_mu);
    free(want);
    free(tol);
}

void kpp_ref_pool_drain(void) {
    pthread_mutex_lock(&ref_pool_mu);
    for (int i = 0; i < REF_POOL; i++) {
        free(ref_pool[i].want);
        free(ref_pool[i].tol);
        ref_pool[i].want = ref_pool[i].tol = NULL, ref_pool[i].cap = 0;
    }
    pthread_mutex_unlock(&ref_pool_mu);
}

/* A set's reference freed, its pooled buffers back to the pool. */
static void iset_ref_release(iset *s) {
    if (s->ref_cap > 0) {
        ref_give(s->ref.want, s->ref.tol, s->ref_cap);
        s->ref.want = s->ref.tol = NULL, s->ref_cap = 0;
    }
    kp_ref_free(&s->ref);
}

void kpp_iset_free(const kp_op *op, iset *s) {
    kp_free_bufs(op, s->in);
    if (s->have_ref) iset_ref_release(s);
    memset(s, 0, sizeof *s);
}

/* op's reference on sh into the caller's want and tol (cap doubles each),
 * offered through r (kp_ref.borrowed); 0 when the op took and wrote them.
 * A row-local op's reference allocates through kp_ref_alloc
 * (tests/test_ops.c holds every one to it); one that did not, or failed,
 * leaves r zeroed and its own arrays freed. */
static int ref_into(const kp_op *op, const kp_shape *sh, const void *const *in, double *want, double *tol,
                    int64_t cap, kp_ref *r) {
    memset(r, 0, sizeof *r);
    r->n = cap, r->want = want, r->tol = tol, r->borrowed = KP_REF_OFFERED;
    if (op->reference(op, sh, in, r) == 0 && r->borrowed == KP_REF_TAKEN && r->want == want) return 0;
    if (r->want == want) r->want = NULL;
    if (r->tol == tol) r->tol = NULL;
    r->borrowed = 0;
    kp_ref_free(r);
    return -1;
}

int64_t kpp_iset_host_bytes(const kp_op *op, const kp_shape *sh) {
    int64_t b = 0;
    for (int i = 0; i < op->nbufs; i++)
        b += op->buf_elems(sh, i) * (op->bufs[i].output ? 16 : (int64_t)kp_dtype_size(op->bufs[i].dtype));
    return b;
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
    /* Computed straight into its rows of the set's reference. */
    int64_t out_row = op->buf_elems(&one, kp_op_output_buf(op));
    kp_ref piece;
    if (ref_into(op, &sub, in, R->ref->want + r0 * out_row, R->ref->tol + r0 * out_row, (r1 - r0) * out_row, &piece))
        R->failed = 1;
    kp_ref_free(&piece);
}

static int make_reference(const ctx *c, const kp_shape *sh, iset *s, int threads) {
    const kp_op *op = c->op;
    if (threads <= 0) threads = kp_cores();
    int64_t rows = sh->d[0];
    if (!op->row_local) return op->reference(op, sh, (const void *const *)s->in, &s->ref);
    int64_t n = op->buf_elems(sh, kp_op_output_buf(op));
    double *want, *tol;
    int64_t cap;
    if (ref_take(n, &want, &tol, &cap)) return -1;
    if (threads < 2 || rows < 2) { /* on this thread, into the pooled buffers */
        if (ref_into(op, sh, (const void *const *)s->in, want, tol, cap, &s->ref)) {
            ref_give(want, tol, cap);
            return -1;
        }
        s->ref_cap = cap;
        return 0;
    }
    memset(&s->ref, 0, sizeof s->ref);
    s->ref.n = n, s->ref.want = want, s->ref.tol = tol, s->ref.borrowed = KP_REF_TAKEN;
    s->ref_cap = cap;
    int64_t jobs = rows < 4 * (int64_t)threads ? rows : 4 * (int64_t)threads;
    ref_job R = {op, sh, s->in, &s->ref, (rows + jobs - 1) / jobs, 0};
    kp_parallel_for_n((int)jobs, threads, ref_rows, &R);
    if (R.failed) iset_ref_release(s);
    return R.failed ? -1 : 0;
}

int kpp_iset_make(ctx *c, const kp_shape *sh, int dist, uint64_t seed, iset *s, int threads, char *err,
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
    if (kpp_iset_make(j->c, j->sh, dist, j->sets[i].seed, &j->sets[i], j->threads, err, sizeof err)) {
        j->failed = 1; /* racy but only ever set to 1 */
        snprintf(j->err, sizeof j->err, "%s", err);
    }
}

/* Timing sets may be lazy when every timed output is checked by sampled
 * chunks (large outputs) of a row-local op: the parent then builds only
 * the rows each check needs, not whole inputs and references per pass.
 * An op with lazy_at (matmul) says where itself. */
int kpp_sets_lazy(const kp_op *op, const kp_shape *sh) {
    /* matmul: wherever the parent would hold no full reference (the
     * correctness phase samples there too), the sets are lazy and checked
     * from whole rows and a grid of recomputed elements. */
    if (op->lazy_at) return op->lazy_at(sh) > 0;
    int64_t n = op->buf_elems(sh, kp_op_output_buf(op));
    if (!op->row_local || op->check || n <= FULL_CHECK_ELEMS) return 0;
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
        for (int i = 0; i < n; i++) kpp_iset_free(c->op, &sets[i]);
        snprintf(err, len, "%s", j.err);
        return -1;
    }
    return 0;
}

/* n fresh input sets (the timing phase's): seeds drawn here in order
 * (reproducible from the master seed), built on all cores, or lazy (see
 * kpp_sets_lazy). */
int kpp_iset_make_many(ctx *c, const kp_shape *sh, int dist, iset *sets, int n, char *err, size_t len) {
    for (int i = 0; i < n; i++) {
        memset(&sets[i], 0, sizeof sets[i]);
        sets[i].seed = kp_rng_next(&c->rng);
        sets[i].lazy = kpp_sets_lazy(c->op, sh);
        sets[i].dist = dist;
    }
    int was = kpp_work(c, KP_WORK_GENERATE);
    int rc = sets[0].lazy ? 0 : build_sets(c, sh, dist, NULL, sets, n, err, len);
    kpp_work(c, was);
    return rc;
}

/* Two sets per round, rounds of distributions dist_of[0..nr), from the
 * given seeds. */
int kpp_iset_make_rounds(ctx *c, const kp_shape *sh, const int *dist_of, int nr, const uint64_t *seeds, iset *sets,
                         char *err, size_t len) {
    for (int i = 0; i < 2 * nr; i++) {
        memset(&sets[i], 0, sizeof sets[i]);
        sets[i].seed = seeds[i];
    }
    int was = kpp_work(c, KP_WORK_GENERATE);
    int rc = build_sets(c, sh, 0, dist_of, sets, 2 * nr, err, len);
    kpp_work(c, was);
    return rc;
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

/* The reference of one sampled chunk: the rows it covers, on a sub-shape. */
void kpp_lazy_chunk_ref(void *arg, int j) {
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
