/* layernorm.c: y[r, j] = (x[r, j] - mean_r) / sqrt(var_r + 1e-5) * w[j] + b[j]
 * over each row of x[rows, cols]; var is the biased (population) variance.
 *   layernorm_f32:  fp32 in and out.
 *   layernorm_bf16: bf16 in and out (x, w, b, y), fp32 inside, one final rounding.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kernel.h" /* KP_LAYERNORM_EPS: the contract's eps */
#include "kproof/kproof.h"
#include "ops/op_priv.h"

/* ===== spec & shapes ===================================================== */

static const kp_shape ln_canonical[] = {
    {2, {16384, 4096}},
    {2, {65536, 1024}},
    {2, {4096, 16384}},
};

/* 1 column (var = 0: y = b), tiny odd rows, rows that are not a multiple of
 * a warp or a vector width, many short rows, rows of 262144 and of a
 * million (past one block's shared memory). All under 64M elements.
 * Then a few rows at every width where the project's best kernels
 * (kernels/layernorm/cuda/f32-17-keep-x.cu, bf16-21-two-pass.cu: the launch
 * tables of 16 and 11)
 * change their launch: they branch at 128 (f32), 256, 512, ..., 32768
 * columns, and take their one-reduction path only when a row fills every
 * thread's registers, at exactly those widths. The widths between (96,
 * 200, 384, 1536, 3072, 6144, 12288, 24576, and 1000 above: multiples of
 * 8, so the vector path runs) leave threads short in every branch. Rows
 * not a multiple of 8 where 8 rows share a block. 12288-32768 in steps
 * of 4096: bf16 21's two-read kernel, one instance per width. */
static const kp_shape ln_edge[] = {
    {2, {1, 1}},      {2, {3, 5}},        {2, {127, 129}},     {2, {4099, 1000}},
    {2, {65537, 17}}, {2, {37, 262144}},  {2, {3, 1048583}},   {2, {2, 4194319}},
    {2, {13, 128}},   {2, {13, 256}},     {2, {11, 512}},      {2, {9, 1024}},
    {2, {7, 2048}},   {2, {5, 4096}},     {2, {5, 8192}},      {2, {3, 16384}},
    {2, {2, 32768}},  {2, {13, 96}},      {2, {13, 200}},      {2, {11, 384}},
    {2, {7, 1536}},   {2, {5, 3072}},     {2, {5, 6144}},      {2, {3, 12288}},
    {2, {2, 24576}},  {2, {2, 20480}},    {2, {2, 28672}},
};

static const kp_shape ln_quick[] = {
    {2, {384, 768}},
    {2, {100, 1031}},
};

static int64_t ln_buf_elems(const kp_shape *s, int buf) {
    return buf == 1 || buf == 2 ? s->d[1] : s->d[0] * s->d[1];
}

static int ln_shape_ok(const kp_shape *s, char *why, size_t len) {
    return kp_shape_common_ok(&kp_op_layernorm_f32, s, why, len);
}

/* ===== inputs (distributions) ============================================= */

static const kp_dist ln_dists[] = {
    {"normal", "x ~ N(0,1); w ~ 1 + N(0,1)/4 and b ~ N(0,1)/2, both random per column"},
    {"offset", "x = 1000 + N(0,1) (bf16: 200 + 3 N(0,1)): a one-pass E[x^2] - E[x]^2 variance cancels away"},
    {"spike", "x ~ N(0,1) but each row's first value is +-1000: a variance taken in one pass about a pivot (x - x[0]) "
              "cancels away, the way an outlier feature breaks it"},
};

/* w and b are random so that a kernel that ignores them, swaps them or
 * indexes them by row fails; w stays near 1 so y keeps x's spread. */
static kp_gen ln_gen_f32(const kp_shape *s, int buf, int dist) {
    kp_gen g = {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f};
    if (buf == 1) {
        g.offset = 1.0f;
        g.scale = 0.25f;
    } else if (buf == 2) {
        g.scale = 0.5f;
    } else if (dist == 1) {
        g.offset = 1000.0f;
    } else if (dist == 2) {
        /* Column 0 of every row. A kernel that shifts by the row's first
         * value (to keep its sums small) and then takes E[d^2] - E[d]^2
         * of d = x - x[0] cancels ~n-fold here: E[d^2] is ~1000^2 and the
         * variance ~1000^2 / n. Two passes, Welford and Chan's merge do
         * not. 1000 is exact in bf16 too. */
        g.period = s->d[1];
        g.spike = 1000.0f;
    }
    return g;
}

/* bf16 spacing at 1000 is 4: N(1000, 1) would round to a constant row and
 * the test would be y = b. At 200 +- 3 the spacing is 1: a couple of dozen
 * distinct values per row, mean/std ~ 70. */
static kp_gen ln_gen_bf16(const kp_shape *s, int buf, int dist) {
    kp_gen g = ln_gen_f32(s, buf, dist);
    if (buf == 0 && dist == 1) {
        g.offset = 200.0f;
        g.scale = 3.0f;
    }
    return g;
}

/* ===== cost model ========================================================= */

/* Per element: add (mean), subtract, square-add (variance), subtract,
 * multiply by rstd, multiply by w, add b: ~8 FLOPs; 16384x4096 is 0.5
 * GFLOP, nothing next to its bytes. */
static double ln_flops(const kp_shape *s) { return 8.0 * (double)s->d[0] * (double)s->d[1]; }

/* x read once, y written once, w and b read once (they stay in cache
 * across rows): (2 rows cols + 2 cols) elements. 16384x4096 fp32 is 537 MB,
 * 125 us at 4.3 TB/s. */
static double ln_bytes(const kp_shape *s, double es) {
    double r = (double)s->d[0], c = (double)s->d[1];
    return (2.0 * r * c + 2.0 * c) * es;
}
static double ln_bytes_f32(const kp_shape *s) { return ln_bytes(s, 4.0); }
static double ln_bytes_bf16(const kp_shape *s) { return ln_bytes(s, 2.0); }

/* ===== float64 reference + tolerance ====================================== */

/* The model (see check.c), for a row of n values with mean m, standard
 * deviation sd (rstd = 1/sqrt(var + eps)), z_j = (x_j - m) rstd:
 *   - the mean is a length-n reduction: error u (sum|x| + sqrt(n)|sum x|)/n
 *     = u (mean|x| + sqrt(n)|m|); it shifts every z_j by rstd times that.
 *     Kernels often shift the row by a value of their own first (its first
 *     element as a pivot, a partial mean) to keep the sums small; x - pivot
 *     then carries u |x - pivot| <= 2 u max|x - m|, which comes back
 *     uncancelled when the pivot is subtracted out again: u max|x - m| too
 *     (the H200 warp-per-row kernels do this and land at max e ~0.11).
 *     With a large mean (offset inputs) sqrt(n)|m| is the dominant term: an
 *     honest sequential fp32 mean of 1000 + N(0,1) is off by ~1000 u sqrt(n)/3.
 *     None of it when n = 1: the mean is x itself.
 *   - the variance is a reduction of positive terms: relative
 *     (1 + sqrt(n)) u, half of it in rstd, so |z_j| (1 + sqrt(n)) u; the
 *     subtraction, the rsqrt, the multiplies add a few u of |z_j|.
 *   - y = z w + b: u (|z w| + |y|) for the last multiply-add.
 *
 *   tol_j = KP_LN_C * u * (|w_j| (rstd (mean|x| + sqrt(n)|m| + max|x - m|) + |z_j| (4 + sqrt(n)))
 *                          + |b_j|)
 *           + floor                                      [+ 4 u_bf16 |y_j|]
 *
 * Two-pass and Welford in fp32 fit it when their sums run in chains and
 * trees, as kernels' do (a single fp32 chain over a million values drifts
 * ~n-fold, past it: tests/test_tolerance.c). A one-pass variance
 * E[x^2] - E[x]^2 loses u E[x^2] sqrt(n) / var, i.e. (mean/sd)^2 u sqrt(n)
 * relative: at the f32 offset distribution that is ~10^6 u sqrt(n), which
 * is not fp32-level and fails. For bf16 tasks the inputs cannot hold a
 * mean/sd beyond ~2^7 without collapsing, and a one-pass variance in fp32
 * then stays below bf16's own rounding: it passes, honestly. */
#define KP_LN_C 16.0

static int ln_reference(const kp_op *op, const kp_shape *s, const void *const *in, kp_ref *ref) {
    int64_t rows = s->d[0], cols = s->d[1];
    if (kp_ref_alloc(ref, rows * cols)) return -1;
    kp_dtype tx = op->bufs[0].dtype, tw = op->bufs[1].dtype, tb = op->bufs[2].dtype;
    double fin = op->dtype == KP_BF16 ? 4.0 * KP_U16 : 0.0;
    double sq = kp_sqrt_len(cols), n = (double)cols;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t o = r * cols;
        double sum = 0, sabs = 0, css = 0;
        for (int64_t j = 0; j < cols; j++) {
            double v = kp_ld(in[0], tx, o + j);
            sum += v;
            sabs += fabs(v);
        }
        double mean = sum / n;
        double dmax = 0;
        for (int64_t j = 0; j < cols; j++) {
            double d = kp_ld(in[0], tx, o + j) - mean;
            css += d * d;
            if (fabs(d) > dmax) dmax = fabs(d);
        }
        double rstd = 1.0 / sqrt(css / n + KP_LAYERNORM_EPS);
        /* One column: the mean is x itself, exactly, and y is exactly b. */
        double shift = cols > 1 ? rstd * (sabs / n + sq * fabs(mean) + dmax) : 0.0;
        for (int64_t j = 0; j < cols; j++) {
            double z = (kp_ld(in[0], tx, o + j) - mean) * rstd;
            double w = kp_ld(in[1], tw, j), b = kp_ld(in[2], tb, j);
            double y = z * w + b;
            ref->want[o + j] = y;
            ref->tol[o + j] = KP_LN_C * KP_U32 * (fabs(w) * (shift + fabs(z) * (4.0 + sq)) + fabs(b)) +
                              fin * fabs(y) + KP_TOL_FLOOR;
        }
    }
    return 0;
}

/* ===== invoke ============================================================= */

typedef int (*ln_f32_fn)(const float *, const float *, const float *, float *, int64_t, int64_t);
typedef int (*ln_f32_sfn)(const float *, const float *, const float *, float *, int64_t, int64_t, void *);
typedef int (*ln_bf16_fn)(const uint16_t *, const uint16_t *, const uint16_t *, uint16_t *, int64_t, int64_t);
typedef int (*ln_bf16_sfn)(const uint16_t *, const uint16_t *, const uint16_t *, uint16_t *, int64_t, int64_t,
                           void *);

static int ln_invoke_f32(void *fn, void *const *b, const kp_shape *s, void *stream, int with_stream) {
    if (with_stream) {
        ln_f32_sfn f;
        KP_FN_FROM(f, fn);
        return f(b[0], b[1], b[2], b[3], s->d[0], s->d[1], stream);
    }
    ln_f32_fn f;
    KP_FN_FROM(f, fn);
    return f(b[0], b[1], b[2], b[3], s->d[0], s->d[1]);
}

static int ln_invoke_bf16(void *fn, void *const *b, const kp_shape *s, void *stream, int with_stream) {
    if (with_stream) {
        ln_bf16_sfn f;
        KP_FN_FROM(f, fn);
        return f(b[0], b[1], b[2], b[3], s->d[0], s->d[1], stream);
    }
    ln_bf16_fn f;
    KP_FN_FROM(f, fn);
    return f(b[0], b[1], b[2], b[3], s->d[0], s->d[1]);
}

#define LN_SETS                                                                                          \
    .family = "layernorm", .nd = 2, .dim_names = {"rows", "cols"}, .nbufs = 4,                           \
    .canonical = {"canonical", (int)(sizeof ln_canonical / sizeof ln_canonical[0]), ln_canonical},       \
    .edge = {"edge", (int)(sizeof ln_edge / sizeof ln_edge[0]), ln_edge},                                \
    .quick = {"quick", (int)(sizeof ln_quick / sizeof ln_quick[0]), ln_quick},                           \
    .ndists = (int)(sizeof ln_dists / sizeof ln_dists[0]), .dists = ln_dists, .buf_elems = ln_buf_elems, \
    .flops = ln_flops, .draw_shape = kp_draw_rows_cols, .shape_ok = ln_shape_ok,                         \
    .reference = ln_reference, .check = NULL, .row_local = 1

const kp_op kp_op_layernorm_f32 = {
    .name = "layernorm_f32",
    .dtype = KP_F32,
    .entry = "kp_layernorm_f32",
    .summary = "layernorm over each row of x[rows, cols] with weight and bias, eps 1e-5, fp32",
    .proto = "int kp_layernorm_f32(const float *x, const float *w, const float *b, float *y, int64_t rows, "
             "int64_t cols)",
    .bufs = {{"x", KP_F32, 0}, {"w", KP_F32, 0}, {"b", KP_F32, 0}, {"y", KP_F32, 1}},
    .gen = ln_gen_f32,
    .min_bytes = ln_bytes_f32,
    .invoke = ln_invoke_f32,
    .rms_limit = 0.25,
    LN_SETS,
};

const kp_op kp_op_layernorm_bf16 = {
    .name = "layernorm_bf16",
    .dtype = KP_BF16,
    .entry = "kp_layernorm_bf16",
    .summary = "layernorm over each row of x[rows, cols] with weight and bias, eps 1e-5, bf16 in and out",
    .proto = "int kp_layernorm_bf16(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows, "
             "int64_t cols)",
    .bufs = {{"x", KP_BF16, 0}, {"w", KP_BF16, 0}, {"b", KP_BF16, 0}, {"y", KP_BF16, 1}},
    .gen = ln_gen_bf16,
    .min_bytes = ln_bytes_bf16,
    .invoke = ln_invoke_bf16,
    .rms_limit = 0.5,
    LN_SETS,
};
