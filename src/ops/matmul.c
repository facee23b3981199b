/* matmul.c: C[M,N] = A[M,K] * B[K,N], row-major.
 *   matmul_f32:  fp32 in, fp32 out, fp32-level accuracy (tf32 and bf16 fail).
 *   matmul_bf16: bf16 in, fp32 accumulation, bf16 out (one final rounding).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kproof.h"
#include "ops/op_priv.h"

/* ===== spec & shapes ===================================================== */

static const kp_shape mm_canonical[] = {
    {3, {4096, 4096, 4096}},
    {3, {8192, 8192, 8192}},
    {3, {4095, 4095, 4095}},
    {3, {8192, 1024, 8192}},
};

/* What a shape-gated kernel gets wrong: 1, one row, one column, primes
 * around 128, a K of a million (the tolerance's sqrt(K) term and split-K),
 * non-multiples of 8/16/128 in every dim. Every buffer stays under 64M
 * elements and every shape under 2^31 multiply-adds; the two near 2^30
 * straddle the full/sampled reference switch. */
static const kp_shape mm_edge[] = {
    {3, {1, 1, 1}},
    {3, {1, 1, 1000003}},
    {3, {1, 4097, 257}},
    {3, {4099, 1, 263}},
    {3, {127, 129, 131}},
    {3, {17, 19, 1048573}},
    {3, {4095, 4097, 61}},
    {3, {1021, 1031, 1039}},
};

static const kp_shape mm_quick[] = {
    {3, {96, 80, 112}},
    {3, {200, 136, 256}},
    {3, {33, 1, 517}},
};

static int64_t mm_buf_elems(const kp_shape *s, int buf) {
    int64_t M = s->d[0], N = s->d[1], K = s->d[2];
    return buf == 0 ? M * K : buf == 1 ? K * N : M * N;
}

static int mm_shape_ok(const kp_shape *s, char *why, size_t len) {
    return kp_shape_common_ok(&kp_op_matmul_f32, s, why, len);
}

/* Each dim drawn up to sqrt(max_elems) (K up to what A and B allow), then
 * the largest one halved until the largest of A, B, C fits max_elems; the
 * draw makes every dim odd or prime. */
static void mm_draw_shape(uint64_t seed, int64_t max_elems, kp_shape *out) {
    kp_rng r = {seed};
    if (max_elems < 1) max_elems = 1;
    int64_t side = (int64_t)sqrt((double)max_elems);
    if (side < 1) side = 1;
    int64_t M = kp_draw_size(&r, side), N = kp_draw_size(&r, side);
    int64_t K = kp_draw_size(&r, max_elems / (M > N ? M : N));
    while ((double)M * K > (double)max_elems || (double)K * N > (double)max_elems ||
           (double)M * N > (double)max_elems) {
        int64_t *big = K >= M && K >= N ? &K : M >= N ? &M : &N;
        *big = *big / 2 | 1;
    }
    out->nd = 3;
    out->d[0] = M;
    out->d[1] = N;
    out->d[2] = K;
}

/* ===== inputs (distributions) ============================================= */

static const kp_dist mm_dists[] = {
    {"normal", "zero-mean N(0,1) A and B: sums cancel, so reduced precision shows"},
    {"positive", "U[0,1) A and B: no cancellation, sums grow like K; stresses accumulation"},
};

static kp_gen mm_gen(const kp_shape *s, int buf, int dist) {
    (void)s;
    (void)buf;
    kp_gen g = {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f};
    if (dist == 1) g.kind = KP_GEN_UNIFORM;
    return g;
}

/* ===== cost model ========================================================= */

/* One multiply and one add per (i, j, k): 2*M*N*K. 4096^3 is 137 GFLOP,
 * 2.7 ms at cuBLAS's 51 TFLOP/s in fp32, 0.19 ms at 716 in bf16. */
static double mm_flops(const kp_shape *s) { return 2.0 * (double)s->d[0] * (double)s->d[1] * (double)s->d[2]; }

/* A and B read once, C written once: (MK + KN + MN) elements. 4096^3 in
 * fp32 is 201 MB, 47 us at 4.3 TB/s: matmul is compute-bound by ~50x. */
static double mm_bytes_f32(const kp_shape *s) {
    double M = (double)s->d[0], N = (double)s->d[1], K = (double)s->d[2];
    return (M * K + K * N + M * N) * 4.0;
}
static double mm_bytes_bf16(const kp_shape *s) { return mm_bytes_f32(s) / 2.0; }

/* ===== float64 reference + tolerance ====================================== */

/* The model (see check.c). C_ij = sum_k t_k with t_k = a_ik b_kj. An fp32
 * accumulation over K rounds each product (<= u|t_k|) and each running
 * total: S_ij = sum_k |t_k| bounds the first and the random walk of the
 * second for cancelling data; sqrt(K) |C_ij| bounds the walk when the
 * totals grow steadily (positive data, where a sequential sum's error
 * really does grow like sqrt(K)). Blocked, tree and FMA orders do better.
 *
 *     tol_ij = KP_MM_C * u * (S_ij + sqrt(K) |C_ij|)      [+ 4 u_bf16 |C_ij|]
 *
 * Honest sequential fp32 lands at e ~ 0.01-0.02 RMS (cuBLAS SGEMM on the
 * H200: max 0.13, RMS 0.013 at 4096^3); one chain over K ~ 2^20 of
 * positive data at ~0.16 (absorption, see check.c). tf32 inputs cost
 * ~2^-11 * sqrt(2/3) * sqrt(sum_k t_k^2) per element, which on normal data
 * is ~16000 / sqrt(K) times the honest error: RMS e ~ 4 at K = 4096 (cuBLAS
 * in TF32 mode fails there with most samples over tolerance). */
#define KP_MM_C 16.0
#define KP_MM_SAMPLES 4096
#define KP_MM_EDGE_SAMPLES 1024
#define KP_MM_COLS 256

/* Above this many multiply-adds the reference samples (tests lower it). */
double kp_matmul_full_limit = 1073741824.0; /* 2^30: ~1 s of float64 on one core */

static double mm_tol(const kp_op *op, double S, double want, double sqrtK) {
    double t = KP_MM_C * KP_U32 * (S + sqrtK * fabs(want)) + KP_TOL_FLOOR;
    if (op->dtype == KP_BF16) t += 4.0 * KP_U16 * fabs(want);
    return t;
}

/* Sampled mode: what the projections' tolerance needs and no rng decides. */
typedef struct mm_extra {
    double *row_abs; /* sum_j S_ij = (|A| (|B| 1))_i, M values */
} mm_extra;

static void mm_free_extra(void *p) {
    mm_extra *x = p;
    if (!x) return;
    free(x->row_abs);
    free(x);
}

static int64_t mm_lazy_at(const kp_shape *s);

static int mm_reference(const kp_op *op, const kp_shape *s, const void *const *in, kp_ref *ref) {
    int64_t M = s->d[0], N = s->d[1], K = s->d[2];
    int ownA = 0, ownB = 0, rc = -1;
    const float *A = NULL, *B = NULL;
    memset(ref, 0, sizeof *ref);
    ref->n = M * N;
    A = kp_as_f32(in[0], op->bufs[0].dtype, M * K, &ownA);
    B = kp_as_f32(in[1], op->bufs[1].dtype, K * N, &ownB);
    if (!A || !B) goto done;

    if (mm_lazy_at(s) > 0) {
        /* |A| (|B| 1): two passes of O(KN + MK), no O(MNK) work. */
        mm_extra *x = calloc(1, sizeof *x);
        double *col = malloc((size_t)K * sizeof *col);
        if (x) x->row_abs = malloc((size_t)M * sizeof *x->row_abs);
        if (!x || !col || !x->row_abs) {
            free(col);
            mm_free_extra(x);
            goto done;
        }
        for (int64_t k = 0; k < K; k++) {
            double a = 0;
            for (int64_t j = 0; j < N; j++) a += fabs((double)B[k * N + j]);
            col[k] = a;
        }
        for (int64_t i = 0; i < M; i++) {
            double a = 0;
            for (int64_t k = 0; k < K; k++) a += fabs((double)A[i * K + k]) * col[k];
            x->row_abs[i] = a;
        }
        free(col);
        ref->extra = x;
        ref->free_extra = mm_free_extra;
        rc = 0;
        goto done;
    }

    if (kp_ref_alloc(ref, M * N)) goto done;
    /* i-k-j order streams rows of B; the tol array holds S until the end.
     * Products of two floats are exact in double. */
    double sqrtK = kp_sqrt_len(K);
    for (int64_t i = 0; i < M; i++) {
        double *w = ref->want + i * N, *sa = ref->tol + i * N;
        for (int64_t j = 0; j < N; j++) w[j] = sa[j] = 0;
        for (int64_t k = 0; k < K; k++) {
            double a = A[i * K + k];
            const float *b = B + k * N;
            for (int64_t j = 0; j < N; j++) {
                double t = a * (double)b[j];
                w[j] += t;
                sa[j] += fabs(t);
            }
        }
        for (int64_t j = 0; j < N; j++) sa[j] = mm_tol(op, sa[j], w[j], sqrtK);
    }
    rc = 0;
done:
    if (ownA) free((void *)A);
    if (ownB) free((void *)B);
    if (rc) kp_ref_free(ref);
    return rc;
}

/* Sampled check for large shapes, O(MN + (M + N) K + samples * K):
 *  - every element scanned for poison and NaN/Inf;
 *  - KP_MM_SAMPLES elements recomputed in float64 with their own S_ij, a
 *    quarter of them on the first/last row and column, where tiling and
 *    shape gating go wrong, the rest anywhere;
 *  - two Freivalds projections: C r against A (B r), r random +-1 chosen
 *    here from the parent's rng. An honest error e_ij enters (C r)_i as a
 *    random-sign sum, so its scale is sqrt(sum_j tol_ij^2), estimated from
 *    sum_j S_ij / sqrt(N) (times 1.5 for the spread of S_ij over j on our
 *    generated data) and from sqrt(sum_j C_ij^2) taken from the output
 *    itself (capped by sum_j S_ij: inflating it to hide an error needs an
 *    error at least as large elsewhere in the row). A wrong tile or row
 *    shifts (C r)_i far beyond that. */
#define KP_MM_PROJ_Z 2.0

/* The check's passes, each split into blocks of rows (of C, or of B for
 * B r and the column gather) that share nothing but read-only inputs and
 * write disjoint slices; ref->parallel_for, where the caller gives one,
 * runs the blocks on its threads. Every value is computed by the same
 * loop in the same order whichever thread runs its block, and everything
 * order-dependent (the scan's counts and first bad index, the samples'
 * kp_check_add, the projections' verdict) is folded afterwards in index
 * order on the calling thread: the verdict and its evidence are those of
 * a serial run, bit for bit, on any number of threads. */
#define KP_MM_BLOCKS 256

typedef struct mm_job {
    int64_t M, N, K, nc;
    kp_dtype ta, tb, tc;
    const void *A, *B, *C;
    double loose;
    const signed char *sg;  /* 2N signs: r1, r2 */
    double *rowv;           /* M x 3: |C_i|_2, (C r1)_i, (C r2)_i */
    kp_check *scan;         /* one per block of rows of C */
    const int64_t *cols;    /* the nc gathered columns of B */
    double *bcol;           /* nc x K: those columns, contiguous */
    const int64_t *si, *sq; /* samples: row, gathered column */
    double *sw, *sS;        /* samples: float64 value, S_ij */
    double *br;             /* K x 2: B r1, B r2 */
    double *abr;            /* M x 2: A (B r1), A (B r2) */
    int nb;                 /* blocks of every pass */
} mm_job;

static void mm_range(int64_t n, int nb, int b, int64_t *lo, int64_t *hi) {
    *lo = n * b / nb;
    *hi = n * (b + 1) / nb;
}

static void mm_for(const kp_ref *ref, int n, void (*fn)(void *, int), void *ctx) {
    if (ref->parallel_for) ref->parallel_for(n, fn, ctx);
    else
        for (int i = 0; i < n; i++) fn(ctx, i);
}

/* Rows of C: poison and NaN/Inf into this block's own scan, and per row
 * |C_i|_2 and the two projections C r. A finite element that is not the
 * poison pattern is one kp_check_scan would pass without a trace, so only
 * the others go through it. */
static void mm_scan_rows(void *arg, int b) {
    mm_job *J = arg;
    int64_t i0, i1, N = J->N;
    const void *C = J->C;
    kp_dtype tc = J->tc;
    const signed char *r1 = J->sg, *r2 = J->sg + N;
    mm_range(J->M, J->nb, b, &i0, &i1);
    kp_check *c = &J->scan[b];
    kp_check_begin_loose(c, INFINITY, J->loose);
    for (int64_t i = i0; i < i1; i++) {
        double g2 = 0, p1 = 0, p2 = 0;
        for (int64_t j = 0; j < N; j++) {
            int64_t idx = i * N + j;
            double g = kp_ld(C, tc, idx);
            int poisoned = kp_poison_at(C, tc, idx);
            if ((poisoned || !isfinite(g)) && !kp_check_scan(c, idx, g, poisoned)) continue;
            g2 += g * g;
            p1 += g * r1[j];
            p2 += g * r2[j];
        }
        J->rowv[3 * i] = sqrt(g2);
        J->rowv[3 * i + 1] = p1;
        J->rowv[3 * i + 2] = p2;
    }
}

/* Rows k of B: the gathered columns' elements. */
static void mm_gather(void *arg, int b) {
    mm_job *J = arg;
    int64_t k0, k1;
    mm_range(J->K, J->nb, b, &k0, &k1);
    for (int64_t k = k0; k < k1; k++)
        for (int64_t q = 0; q < J->nc; q++) J->bcol[q * J->K + k] = kp_ld(J->B, J->tb, k * J->N + J->cols[q]);
}

/* Samples n: row si[n] of A against gathered column sq[n]. */
static void mm_samples(void *arg, int b) {
    mm_job *J = arg;
    int64_t n0, n1, K = J->K;
    mm_range(KP_MM_SAMPLES, J->nb, b, &n0, &n1);
    for (int64_t n = n0; n < n1; n++) {
        int64_t i = J->si[n];
        const double *bq = J->bcol + J->sq[n] * K;
        double w = 0, S = 0;
        for (int64_t k = 0; k < K; k++) {
            double t = kp_ld(J->A, J->ta, i * K + k) * bq[k];
            w += t;
            S += fabs(t);
        }
        J->sw[n] = w;
        J->sS[n] = S;
    }
}

/* Rows k of B: (B r1)_k and (B r2)_k. */
static void mm_b_r(void *arg, int b) {
    mm_job *J = arg;
    int64_t k0, k1, N = J->N;
    mm_range(J->K, J->nb, b, &k0, &k1);
    for (int64_t k = k0; k < k1; k++) {
        double a1 = 0, a2 = 0;
        for (int64_t j = 0; j < N; j++) {
            double v = kp_ld(J->B, J->tb, k * N + j);
            a1 += v * J->sg[j];
            a2 += v * J->sg[N + j];
        }
        J->br[2 * k] = a1;
        J->br[2 * k + 1] = a2;
    }
}

/* Rows i of A: (A (B r1))_i and (A (B r2))_i. */
static void mm_a_br(void *arg, int b) {
    mm_job *J = arg;
    int64_t i0, i1, K = J->K;
    mm_range(J->M, J->nb, b, &i0, &i1);
    for (int64_t i = i0; i < i1; i++) {
        double w1 = 0, w2 = 0;
        for (int64_t k = 0; k < K; k++) {
            double a = kp_ld(J->A, J->ta, i * K + k);
            w1 += a * J->br[2 * k];
            w2 += a * J->br[2 * k + 1];
        }
        J->abr[2 * i] = w1;
        J->abr[2 * i + 1] = w2;
    }
}

static int mm_check(const kp_op *op, const kp_shape *s, const void *const *in, const kp_ref *ref, const void *out,
                    uint64_t rng, kp_check *c) {
    int64_t M = s->d[0], N = s->d[1], K = s->d[2];
    const mm_extra *x = ref->extra;
    kp_rng r = {rng};
    double sqrtK = kp_sqrt_len(K);
    int rc = -1;
    /* The loose flaw: a naive harness's allclose on the samples, no
     * projections (no naive harness has them). */
    int loose = ref->loose > 0;
    kp_check_begin_loose(c, op->rms_limit, ref->loose);
    snprintf(c->method, sizeof c->method, loose ? "sampled %d, loose" : "sampled %d + Freivalds x2", KP_MM_SAMPLES);
    int64_t nc = N < KP_MM_COLS ? N : KP_MM_COLS;
    mm_job J = {M, N, K, nc, op->bufs[0].dtype, op->bufs[1].dtype, op->bufs[2].dtype, in[0], in[1], out,
                ref->loose, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, KP_MM_BLOCKS};
    int64_t *cols = malloc((size_t)nc * sizeof *cols);
    signed char *sg = malloc((size_t)N * 2);
    int64_t *si = malloc(2 * KP_MM_SAMPLES * sizeof *si);
    J.bcol = malloc((size_t)(nc * K) * sizeof *J.bcol);
    J.rowv = malloc((size_t)M * 3 * sizeof *J.rowv);
    J.scan = malloc(KP_MM_BLOCKS * sizeof *J.scan);
    J.sw = malloc(2 * KP_MM_SAMPLES * sizeof *J.sw);
    J.br = malloc((size_t)K * 2 * sizeof *J.br);
    J.abr = malloc((size_t)M * 2 * sizeof *J.abr);
    if (!cols || !sg || !si || !J.bcol || !J.rowv || !J.scan || !J.sw || !J.br || !J.abr || !x) {
        snprintf(c->why, sizeof c->why, "out of host memory for the sampled check");
        c->ok = 0;
        goto done;
    }
    J.sg = sg;
    J.cols = cols;
    J.si = si;
    J.sq = si + KP_MM_SAMPLES;
    J.sS = J.sw + KP_MM_SAMPLES;
    for (int64_t j = 0; j < 2 * N; j++) sg[j] = (kp_rng_next(&r) >> 63) ? 1 : -1;

    /* The scan, block by block, folded in row order. */
    mm_for(ref, J.nb, mm_scan_rows, &J);
    for (int b = 0; b < J.nb; b++) kp_check_scan_merge(c, &J.scan[b]);

    /* Walking a column of B costs a cache miss per k (8192 per sample at
     * 8192^3: seconds for 4096 samples), so the samples share KP_MM_COLS
     * columns, gathered once into contiguous vectors in one pass over B;
     * rows stay fully random. Columns 0 and N-1 are always among them.
     * Every draw is made here, in order, before any sample is computed. */
    for (int64_t q = 0; q < nc; q++)
        cols[q] = nc == N ? q : q == 0 ? 0 : q == 1 ? N - 1 : (int64_t)kp_rng_below(&r, (uint64_t)N);
    mm_for(ref, J.nb, mm_gather, &J);
    int64_t qfirst = 0, qlast = nc == N ? N - 1 : 1;
    for (int n = 0; n < KP_MM_SAMPLES; n++) {
        int64_t i, q;
        if (n < KP_MM_EDGE_SAMPLES) {
            int side = n & 3; /* first row, last row, first column, last column */
            if (side < 2) {
                i = side == 0 ? 0 : M - 1;
                q = (int64_t)kp_rng_below(&r, (uint64_t)nc);
            } else {
                q = side == 2 ? qfirst : qlast;
                i = (int64_t)kp_rng_below(&r, (uint64_t)M);
            }
        } else {
            i = (int64_t)kp_rng_below(&r, (uint64_t)M);
            q = (int64_t)kp_rng_below(&r, (uint64_t)nc);
        }
        si[n] = i;
        si[KP_MM_SAMPLES + n] = q;
    }
    mm_for(ref, J.nb, mm_samples, &J);
    for (int n = 0; n < KP_MM_SAMPLES; n++) {
        int64_t idx = J.si[n] * N + cols[J.sq[n]];
        double g = kp_ld(out, J.tc, idx), w = J.sw[n];
        if (kp_poison_at(out, J.tc, idx) || !isfinite(g)) continue; /* counted by the scan */
        kp_check_add(c, idx, g, w, mm_tol(op, J.sS[n], w, sqrtK), 0);
    }
    kp_check_finish(c, op, s);
    rc = 0;
    if (!c->ok || c->poisoned || c->nonfinite || loose) goto done;

    /* B r for both r in one pass over B, then A (B r) row by row; the
     * verdict in row order. */
    mm_for(ref, J.nb, mm_b_r, &J);
    mm_for(ref, J.nb, mm_a_br, &J);
    double fp32 = KP_MM_C * KP_U32, fin = op->dtype == KP_BF16 ? 4.0 * KP_U16 : 0.0;
    const double *rowv = J.rowv;
    for (int64_t i = 0; i < M; i++) {
        double G = rowv[3 * i] < x->row_abs[i] ? rowv[3 * i] : x->row_abs[i];
        double tol =
            KP_MM_PROJ_Z * (fp32 * (1.5 * x->row_abs[i] / sqrt((double)N) + sqrtK * G) + fin * G) + KP_TOL_FLOOR;
        for (int p = 0; p < 2; p++) {
            double got = rowv[3 * i + 1 + p], want = J.abr[2 * i + p];
            double e = fabs(got - want) / tol;
            if (e > c->max_ratio) c->max_ratio = e;
            if (e > 1 && c->ok) {
                c->ok = 0;
                c->first_bad = i * N;
                c->got = got;
                c->want = want;
                c->tol = tol;
                snprintf(c->why, sizeof c->why,
                         "Freivalds projection %d: (C r)[%lld] = %.6g but A (B r) gives %.6g (tol %.2g): row %lld of "
                         "C is wrong outside the sampled elements",
                         p + 1, (long long)i, got, want, tol, (long long)i);
            }
        }
    }
done:
    free(sg);
    free(si);
    free(cols);
    free(J.bcol);
    free(J.rowv);
    free(J.scan);
    free(J.sw);
    free(J.br);
    free(J.abr);
    return rc;
}

/* ===== lazy timing sets =================================================== */

/* Where the parent holds no full reference (M N K above the limit) the
 * timing phase's sets are lazy: the parent keeps their seeds only, and
 * checks each timed output from whole rows and a grid of elements
 * (src/core/protocol/correctness.c, check_lazy_grid). An element of the
 * grid is recomputed here from the generator: row i of A and column j of
 * B regenerated element by element from (seed, buffer, index), exactly the
 * values the device generated, then the same float64 sum, S_ij and
 * tolerance as mm_check's samples. A column of data is K values. */
static int64_t mm_lazy_at(const kp_shape *s) {
    return (double)s->d[0] * (double)s->d[1] * (double)s->d[2] > kp_matmul_full_limit ? s->d[2] : 0;
}

/* Element idx of input buffer b as the buffer holds it (bf16 rounded). */
static double mm_gen_at(const kp_op *op, const kp_gen *g, uint64_t seed, int b, uint64_t idx) {
    float v = kp_gen_value(g, seed, (uint32_t)b, idx);
    if (op->bufs[b].dtype == KP_BF16) v = kp_bf16_bits_to_f32(kp_f32_to_bf16_bits(v));
    return (double)v;
}

static void mm_lazy_col(const kp_op *op, const kp_shape *s, int dist, uint64_t seed, int64_t j, double *col) {
    int64_t N = s->d[1], K = s->d[2];
    kp_gen g = op->gen(s, 1, dist);
    for (int64_t k = 0; k < K; k++) col[k] = mm_gen_at(op, &g, seed, 1, (uint64_t)(k * N + j));
}

static int mm_lazy_row(const kp_op *op, const kp_shape *s, int dist, uint64_t seed, int64_t i, int64_t ncols,
                       const double *cols, double *want, double *tol) {
    int64_t K = s->d[2];
    double *a = malloc((size_t)(K ? K : 1) * sizeof *a);
    if (!a) return -1;
    kp_gen g = op->gen(s, 0, dist);
    for (int64_t k = 0; k < K; k++) a[k] = mm_gen_at(op, &g, seed, 0, (uint64_t)(i * K + k));
    double sqrtK = kp_sqrt_len(K);
    for (int64_t q = 0; q < ncols; q++) {
        const double *b = cols + q * K;
        double w = 0, S = 0;
        for (int64_t k = 0; k < K; k++) {
            double t = a[k] * b[k];
            w += t;
            S += fabs(t);
        }
        want[q] = w;
        tol[q] = mm_tol(op, S, w, sqrtK);
    }
    free(a);
    return 0;
}

/* ===== invoke ============================================================= */

typedef int (*mm_f32_fn)(const float *, const float *, float *, int64_t, int64_t, int64_t);
typedef int (*mm_f32_sfn)(const float *, const float *, float *, int64_t, int64_t, int64_t, void *);
typedef int (*mm_bf16_fn)(const uint16_t *, const uint16_t *, uint16_t *, int64_t, int64_t, int64_t);
typedef int (*mm_bf16_sfn)(const uint16_t *, const uint16_t *, uint16_t *, int64_t, int64_t, int64_t, void *);

static int mm_invoke_f32(void *fn, void *const *b, const kp_shape *s, void *stream, int with_stream) {
    if (with_stream) {
        mm_f32_sfn f;
        KP_FN_FROM(f, fn);
        return f(b[0], b[1], b[2], s->d[0], s->d[1], s->d[2], stream);
    }
    mm_f32_fn f;
    KP_FN_FROM(f, fn);
    return f(b[0], b[1], b[2], s->d[0], s->d[1], s->d[2]);
}

static int mm_invoke_bf16(void *fn, void *const *b, const kp_shape *s, void *stream, int with_stream) {
    if (with_stream) {
        mm_bf16_sfn f;
        KP_FN_FROM(f, fn);
        return f(b[0], b[1], b[2], s->d[0], s->d[1], s->d[2], stream);
    }
    mm_bf16_fn f;
    KP_FN_FROM(f, fn);
    return f(b[0], b[1], b[2], s->d[0], s->d[1], s->d[2]);
}

#define MM_SETS                                                                                          \
    .nd = 3, .dim_names = {"M", "N", "K"}, .nbufs = 3,                                                   \
    .canonical = {"canonical", (int)(sizeof mm_canonical / sizeof mm_canonical[0]), mm_canonical},       \
    .edge = {"edge", (int)(sizeof mm_edge / sizeof mm_edge[0]), mm_edge},                                \
    .quick = {"quick", (int)(sizeof mm_quick / sizeof mm_quick[0]), mm_quick},                           \
    .ndists = (int)(sizeof mm_dists / sizeof mm_dists[0]), .dists = mm_dists, .buf_elems = mm_buf_elems, \
    .flops = mm_flops, .gen = mm_gen, .draw_shape = mm_draw_shape, .shape_ok = mm_shape_ok,              \
    .reference = mm_reference, .check = mm_check, .lazy_at = mm_lazy_at, .lazy_col = mm_lazy_col,            \
    .lazy_row = mm_lazy_row

const kp_op kp_op_matmul_f32 = {
    .name = "matmul_f32",
    .family = "matmul",
    .dtype = KP_F32,
    .entry = "kp_matmul_f32",
    .summary = "C[M,N] = A[M,K] B[K,N], fp32 in and out, fp32-level accuracy (no tf32)",
    .proto = "int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)",
    .bufs = {{"A", KP_F32, 0}, {"B", KP_F32, 0}, {"C", KP_F32, 1}},
    .min_bytes = mm_bytes_f32,
    .invoke = mm_invoke_f32,
    /* honest fp32: RMS e ~0.015 (0.15 for one chain over K = 2^20 of
     * positive data); tf32 on normal data: ~4 at K = 4096, ~1 at 65536 */
    .rms_limit = 0.25,
    MM_SETS,
};

const kp_op kp_op_matmul_bf16 = {
    .name = "matmul_bf16",
    .family = "matmul",
    .dtype = KP_BF16,
    .entry = "kp_matmul_bf16",
    .summary = "C[M,N] = A[M,K] B[K,N], bf16 in and out, fp32 accumulation",
    .proto = "int kp_matmul_bf16(const kp_bf16 *A, const kp_bf16 *B, kp_bf16 *C, int64_t M, int64_t N, int64_t K)",
    .bufs = {{"A", KP_BF16, 0}, {"B", KP_BF16, 0}, {"C", KP_BF16, 1}},
    .min_bytes = mm_bytes_bf16,
    .invoke = mm_invoke_bf16,
    /* the final rounding alone gives RMS e ~0.1 */
    .rms_limit = 0.5,
    MM_SETS,
};
