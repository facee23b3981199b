/* softmax.c: y[r, j] = exp(x[r, j] - max_r) / sum_k exp(x[r, k] - max_r),
 * over each row of x[rows, cols].
 *   softmax_f32:  fp32 in and out.
 *   softmax_bf16: bf16 in and out, fp32 inside, one final rounding.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kproof.h"
#include "ops/op_priv.h"

/* ===== spec & shapes ===================================================== */

static const kp_shape sm_canonical[] = {
    {2, {8192, 8192}},
    {2, {65536, 1024}},
    {2, {4096, 32768}},
};

/* 1x1 (y = 1), tiny odd rows, rows that are not a multiple of a warp or a
 * block, many very short rows, rows of 262144 (past one block's shared
 * memory in fp32) and rows of a million (past a cluster's). All under 64M
 * elements. Then a few rows in every launch branch of the project's best
 * kernels (kernels/softmax/cuda/f32-10-keep-x.cu, 07's launch table, and bf16-14-keep-x.cu:
 * up to 128 (f32), 256, 512, 1024, 2048, 4096, 8192 columns in registers,
 * to 16384 and to 32768 split into shared memory (f32) or brought into
 * shared memory by one bulk copy (bf16) when the 16-byte path runs, in
 * registers when it does not), widths that are multiples of 8 (the vector
 * path runs) and fill only part of the threads' slots, and one full row
 * of 16384 (bf16 12's 16K branch with every thread's chunks in the row).
 * Rows not a multiple of 8 where 8 rows share a block. */
static const kp_shape sm_edge[] = {
    {2, {1, 1}},          {2, {7, 3}},         {2, {257, 1000}},     {2, {4099, 127}},
    {2, {65537, 17}},     {2, {37, 262144}},   {2, {3, 1048583}},    {2, {1, 4194319}},
    {2, {13, 96}},        {2, {13, 200}},      {2, {11, 384}},       {2, {9, 1536}},
    {2, {7, 3072}},       {2, {5, 6144}},      {2, {5, 12000}},      {2, {3, 24000}},
    {2, {3, 16384}},
};

static const kp_shape sm_quick[] = {
    {2, {257, 1000}},
    {2, {31, 4099}},
};

static int64_t sm_buf_elems(const kp_shape *s, int buf) {
    (void)buf;
    return s->d[0] * s->d[1];
}

static int sm_shape_ok(const kp_shape *s, char *why, size_t len) {
    return kp_shape_common_ok(&kp_op_softmax_f32, s, why, len);
}

/* ===== inputs (distributions) ============================================= */

static const kp_dist sm_dists[] = {
    {"normal", "N(0,1): outputs spread over a few orders of magnitude"},
    {"large", "N(0,1) * 100: exp overflows unless the row max is subtracted first"},
    {"offset", "every value near +1000 (bf16: +200): exp overflows without the max, and the max is not 0"},
};

static kp_gen sm_gen_f32(const kp_shape *s, int buf, int dist) {
    (void)s;
    (void)buf;
    kp_gen g = {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f};
    if (dist == 1) g.scale = 100.0f;
    if (dist == 2) g.offset = 1000.0f;
    return g;
}

/* bf16 has 8 significant bits: at 1000 its spacing is 4, so N(1000, 1)
 * would collapse to one or two values. At 200 +- 3 the spacing is 1 and a
 * row still holds a couple of dozen distinct values; exp(200) overflows
 * fp32 just as surely. */
static kp_gen sm_gen_bf16(const kp_shape *s, int buf, int dist) {
    kp_gen g = sm_gen_f32(s, buf, dist);
    if (dist == 2) {
        g.offset = 200.0f;
        g.scale = 3.0f;
    }
    return g;
}

/* ===== cost model ========================================================= */

/* Per element: compare (max), subtract, exp, add (sum), multiply by 1/sum:
 * ~5 FLOPs, so 8192x8192 is 0.34 GFLOP: nothing for an H200. */
static double sm_flops(const kp_shape *s) { return 5.0 * (double)s->d[0] * (double)s->d[1]; }

/* x read once, y written once: the row stays on chip. 8192x8192 fp32 is
 * 537 MB, 125 us at 4.3 TB/s; bf16 half that. */
static double sm_bytes_f32(const kp_shape *s) { return 2.0 * 4.0 * (double)s->d[0] * (double)s->d[1]; }
static double sm_bytes_bf16(const kp_shape *s) { return 2.0 * 2.0 * (double)s->d[0] * (double)s->d[1]; }

/* ===== float64 reference + tolerance ====================================== */

/* The model (see check.c), relative to y_j itself, since y_j is a product
 * and quotient of positive things:
 *   - d_j = x_j - max is exact or rounded once (u |d_j|); exp turns an
 *     absolute error in its argument into the same relative error, so
 *     |d_j| u. An exp2(x * log2e) implementation adds a rounding of the
 *     scaled argument: also ~|d_j| u. Approximate exp: a few ulp.
 *   - the row sum of n positive terms: relative (1 + sqrt(n)) u, the
 *     reduction model with S = |sum|.
 *   - the division (or reciprocal and multiply): 1-2 u.
 *
 *     tol_j = KP_SM_C * u * y_j * (4 + |d_j| + sqrt(n))  + floor  [+ 4 u_bf16 y_j]
 *
 * Subtracting the row max late (exp2(x*log2e - max*log2e) on offset data)
 * loses |x| u in the argument, i.e. ~1000 u at the offset distribution:
 * that is not fp32-level and this tolerance says so. */
#define KP_SM_C 16.0

static int sm_reference(const kp_op *op, const kp_shape *s, const void *const *in, kp_ref *ref) {
    int64_t rows = s->d[0], cols = s->d[1];
    if (kp_ref_alloc(ref, rows * cols)) return -1;
    kp_dtype t = op->bufs[0].dtype;
    double fin = op->dtype == KP_BF16 ? 4.0 * KP_U16 : 0.0;
    double sq = kp_sqrt_len(cols);
    for (int64_t r = 0; r < rows; r++) {
        double *w = ref->want + r * cols, *tl = ref->tol + r * cols;
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < cols; j++) {
            double v = kp_ld(in[0], t, r * cols + j);
            if (v > m) m = v;
        }
        for (int64_t j = 0; j < cols; j++) {
            double d = kp_ld(in[0], t, r * cols + j) - m;
            w[j] = exp(d);
            tl[j] = -d;
            sum += w[j];
        }
        for (int64_t j = 0; j < cols; j++) {
            double y = w[j] / sum;
            w[j] = y;
            tl[j] = KP_SM_C * KP_U32 * y * (4.0 + tl[j] + sq) + fin * y + KP_TOL_FLOOR;
        }
    }
    return 0;
}

/* ===== invoke ============================================================= */

typedef int (*sm_f32_fn)(const float *, float *, int64_t, int64_t);
typedef int (*sm_f32_sfn)(const float *, float *, int64_t, int64_t, void *);
typedef int (*sm_bf16_fn)(const uint16_t *, uint16_t *, int64_t, int64_t);
typedef int (*sm_bf16_sfn)(const uint16_t *, uint16_t *, int64_t, int64_t, void *);

static int sm_invoke_f32(void *fn, void *const *b, const kp_shape *s, void *stream, int with_stream) {
    if (with_stream) {
        sm_f32_sfn f;
        KP_FN_FROM(f, fn);
        return f(b[0], b[1], s->d[0], s->d[1], stream);
    }
    sm_f32_fn f;
    KP_FN_FROM(f, fn);
    return f(b[0], b[1], s->d[0], s->d[1]);
}

static int sm_invoke_bf16(void *fn, void *const *b, const kp_shape *s, void *stream, int with_stream) {
    if (with_stream) {
        sm_bf16_sfn f;
        KP_FN_FROM(f, fn);
        return f(b[0], b[1], s->d[0], s->d[1], stream);
    }
    sm_bf16_fn f;
    KP_FN_FROM(f, fn);
    return f(b[0], b[1], s->d[0], s->d[1]);
}

#define SM_SETS                                                                                          \
    .family = "softmax", .nd = 2, .dim_names = {"rows", "cols"}, .nbufs = 2,                             \
    .canonical = {"canonical", (int)(sizeof sm_canonical / sizeof sm_canonical[0]), sm_canonical},       \
    .edge = {"edge", (int)(sizeof sm_edge / sizeof sm_edge[0]), sm_edge},                                \
    .quick = {"quick", (int)(sizeof sm_quick / sizeof sm_quick[0]), sm_quick},                           \
    .ndists = (int)(sizeof sm_dists / sizeof sm_dists[0]), .dists = sm_dists, .buf_elems = sm_buf_elems, \
    .flops = sm_flops, .draw_shape = kp_draw_rows_cols, .shape_ok = sm_shape_ok,                         \
    .reference = sm_reference, .check = NULL, .row_local = 1

const kp_op kp_op_softmax_f32 = {
    .name = "softmax_f32",
    .dtype = KP_F32,
    .entry = "kp_softmax_f32",
    .summary = "softmax over each row of x[rows, cols], fp32",
    .proto = "int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols)",
    .bufs = {{"x", KP_F32, 0}, {"y", KP_F32, 1}},
    .gen = sm_gen_f32,
    .min_bytes = sm_bytes_f32,
    .invoke = sm_invoke_f32,
    .rms_limit = 0.25,
    SM_SETS,
};

const kp_op kp_op_softmax_bf16 = {
    .name = "softmax_bf16",
    .dtype = KP_BF16,
    .entry = "kp_softmax_bf16",
    .summary = "softmax over each row of x[rows, cols], bf16 in and out, fp32 inside",
    .proto = "int kp_softmax_bf16(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols)",
    .bufs = {{"x", KP_BF16, 0}, {"y", KP_BF16, 1}},
    .gen = sm_gen_bf16,
    .min_bytes = sm_bytes_bf16,
    .invoke = sm_invoke_bf16,
    .rms_limit = 0.5,
    SM_SETS,
};
