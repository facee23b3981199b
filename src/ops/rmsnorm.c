/* rmsnorm.c: y[r, j] = x[r, j] / sqrt(mean_k x[r, k]^2 + 1e-5) * w[j]
 * over each row of x[rows, cols]: layernorm without the mean and the bias.
 *   rmsnorm_f32:  fp32 in and out.
 *   rmsnorm_bf16: bf16 in and out (x, w, y), fp32 inside, one final rounding.
 * eps is 1e-5, layernorm's (and torch.nn.functional.layer_norm's default),
 * so that both row ops share one constant; torch.nn.RMSNorm's default
 * (eps=None) is the dtype's machine epsilon, which a caller passes as it
 * likes and kernels cannot know.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kernel.h" /* KP_RMSNORM_EPS: the contract's eps */
#include "kproof/kproof.h"
#include "ops/op_priv.h"

/* ===== spec & shapes ===================================================== */

static const kp_shape rn_canonical[] = {
    {2, {16384, 4096}},
    {2, {65536, 1024}},
    {2, {4096, 16384}},
};

/* layernorm's edge set (src/ops/layernorm.c), for the same reasons: the
 * project's fast rmsnorm kernels (kernels/rmsnorm/cuda/f32-02-keep-x.cu,
 * bf16-02-shared-w.cu) keep layernorm's launch tables, so they branch at
 * 128 (f32), 256, 512, ..., 32768 columns, bf16 takes rows of exactly 1024
 * and rows of 12288-32768 in steps of 4096 (one instance each) to kernels
 * of their own, and past 32768 both take a block-per-row kernel that reads
 * x twice. Every branch gets a full row and one that leaves threads
 * short (96, 200, 384, 1536, 3072, 6144, 12288, 24576 and 1000: multiples
 * of 8, so the 16-byte path runs). One row, one column (y = x / sqrt(x^2 +
 * eps) * w), odd and prime widths (one row of 4097, just past a branch),
 * rows not a multiple of 8 where 8 rows share a block, rows of 262144 and
 * of a million (past one block's registers). All under 64M elements. */
static const kp_shape rn_edge[] = {
    {2, {1, 1}},      {2, {3, 5}},        {2, {127, 129}},     {2, {4099, 1000}},
    {2, {65537, 17}}, {2, {37, 262144}},  {2, {3, 1048583}},   {2, {2, 4194319}},
    {2, {13, 128}},   {2, {13, 256}},     {2, {11, 512}},      {2, {9, 1024}},
    {2, {7, 2048}},   {2, {5, 4096}},     {2, {5, 8192}},      {2, {3, 16384}},
    {2, {2, 32768}},  {2, {13, 96}},      {2, {13, 200}},      {2, {11, 384}},
    {2, {7, 1536}},   {2, {5, 3072}},     {2, {5, 6144}},      {2, {3, 12288}},
    {2, {2, 24576}},  {2, {2, 20480}},    {2, {2, 28672}},     {2, {1, 4097}},
};

static const kp_shape rn_quick[] = {
    {2, {384, 768}},
    {2, {100, 1031}},
};

static int64_t rn_buf_elems(const kp_shape *s, int buf) { return buf == 1 ? s->d[1] : s->d[0] * s->d[1]; }

static int rn_shape_ok(const kp_shape *s, char *why, size_t len) {
    return kp_shape_common_ok(&kp_op_rmsnorm_f32, s, why, len);
}

/* ===== inputs (distributions) ============================================= */

static const kp_dist rn_dists[] = {
    {"normal", "x ~ N(0,1); w ~ 1 + N(0,1)/4, random per column"},
    {"small", "x ~ N(0,1) / 1000: mean(x^2) is a tenth of eps, so eps left out, taken as another value or "
              "added outside the square root changes y severalfold"},
    {"huge", "x ~ N(0,1) * 1e15: x^2 near 1e30, a million columns' sum of squares near 1e36: squares or sums "
             "in fp16, or under a fixed scale, overflow"},
    {"spike", "x ~ N(0,1) but each row's first value is +-1000: one element holds most of the row's "
              "mean square, so a reduction that skips, repeats or samples elements is visibly off"},
};

/* w is random so that a kernel that ignores it or indexes it by row fails;
 * it stays near 1 so y keeps x / rms's spread. */
static kp_gen rn_gen(const kp_shape *s, int buf, int dist) {
    kp_gen g = {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f};
    if (buf == 1) {
        g.offset = 1.0f;
        g.scale = 0.25f;
    } else if (dist == 1) {
        g.scale = 1e-3f;
    } else if (dist == 2) {
        g.scale = 1e15f;
    } else if (dist == 3) {
        /* Column 0 of every row; 1000 is exact in bf16 too. */
        g.period = s->d[1];
        g.spike = 1000.0f;
    }
    return g;
}

/* ===== cost model ========================================================= */

/* Per element: square-add (mean square), multiply by rstd, multiply by w:
 * ~4 FLOPs; 16384x4096 is 0.27 GFLOP, nothing next to its bytes. */
static double rn_flops(const kp_shape *s) { return 4.0 * (double)s->d[0] * (double)s->d[1]; }

/* x read once, y written once, w read once (it stays in cache across
 * rows): (2 rows cols + cols) elements. 16384x4096 fp32 is 537 MB, 125 us
 * at 4.3 TB/s. */
static double rn_bytes(const kp_shape *s, double es) {
    double r = (double)s->d[0], c = (double)s->d[1];
    return (2.0 * r * c + c) * es;
}
static double rn_bytes_f32(const kp_shape *s) { return rn_bytes(s, 4.0); }
static double rn_bytes_bf16(const kp_shape *s) { return rn_bytes(s, 2.0); }

/* ===== float64 reference + tolerance ====================================== */

/* The model (see check.c), for a row of n values, z_j = x_j rstd with
 * rstd = 1/sqrt(mean(x^2) + eps):
 *   - the mean square is a length-n reduction of positive terms: no
 *     cancellation, relative error (1 + sqrt(n)) u for sums in chains and
 *     trees, as kernels take them; half of it reaches rstd through the
 *     square root. Every y_j of the row inherits that relative error.
 *   - the square root, the reciprocal (or an rsqrt of a couple of ulps),
 *     x rstd and the multiply by w add a few u of |y_j|.
 *
 *   tol_j = KP_RN_C * u * |y_j| * (4 + sqrt(n)) + floor     [+ 4 u_bf16 |y_j|]
 *
 * Every term is relative to y_j: an element that is 0 (x_j or w_j zero) is
 * exactly 0 in any honest order of operations, and all zeros for y fail
 * every element that is not. Unlike layernorm there is no mean to cancel:
 * even one fp32 chain over a million squares is off by ~u sqrt(n) / 3, far
 * inside; what the distributions test is where eps goes (small), range
 * (huge) and that every element enters the sum once (spike). A task's
 * precision is what fails: a reduction or product in bf16 (2^-8 relative)
 * on an fp32 task is 60x over at 4096 columns. For bf16 tasks the final
 * rounding (one u_bf16 |y|; 4 u_bf16 leaves room for an fp32 result near
 * a rounding boundary) dominates. */
#define KP_RN_C 16.0

static int rn_reference(const kp_op *op, const kp_shape *s, const void *const *in, kp_ref *ref) {
    int64_t rows = s->d[0], cols = s->d[1];
    if (kp_ref_alloc(ref, rows * cols)) return -1;
    kp_dtype tx = op->bufs[0].dtype, tw = op->bufs[1].dtype;
    double fin = op->dtype == KP_BF16 ? 4.0 * KP_U16 : 0.0;
    double rel = KP_RN_C * KP_U32 * (4.0 + kp_sqrt_len(cols)) + fin;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t o = r * cols;
        double ss = 0;
        for (int64_t j = 0; j < cols; j++) {
            double v = kp_ld(in[0], tx, o + j);
            ss += v * v;
        }
        double rstd = 1.0 / sqrt(ss / (double)cols + KP_RMSNORM_EPS);
        for (int64_t j = 0; j < cols; j++) {
            double y = kp_ld(in[0], tx, o + j) * rstd * kp_ld(in[1], tw, j);
            ref->want[o + j] = y;
            ref->tol[o + j] = rel * fabs(y) + KP_TOL_FLOOR;
        }
    }
    return 0;
}

/* ===== invoke ============================================================= */

typedef int (*rn_f32_fn)(const float *, const float *, float *, int64_t, int64_t);
typedef int (*rn_f32_sfn)(const float *, const float *, float *, int64_t, int64_t, void *);
typedef int (*rn_bf16_fn)(const uint16_t *, const uint16_t *, uint16_t *, int64_t, int64_t);
typedef int (*rn_bf16_sfn)(const uint16_t *, const uint16_t *, uint16_t *, int64_t, int64_t, void *);

static int rn_invoke_f32(void *fn, void *const *b, const kp_shape *s, void *stream, int with_stream) {
    if (with_stream) {
        rn_f32_sfn f;
        KP_FN_FROM(f, fn);
        return f(b[0], b[1], b[2], s->d[0], s->d[1], stream);
    }
    rn_f32_fn f;
    KP_FN_FROM(f, fn);
    return f(b[0], b[1], b[2], s->d[0], s->d[1]);
}

static int rn_invoke_bf16(void *fn, void *const *b, const kp_shape *s, void *stream, int with_stream) {
    if (with_stream) {
        rn_bf16_sfn f;
        KP_FN_FROM(f, fn);
        return f(b[0], b[1], b[2], s->d[0], s->d[1], stream);
    }
    rn_bf16_fn f;
    KP_FN_FROM(f, fn);
    return f(b[0], b[1], b[2], s->d[0], s->d[1]);
}

#define RN_SETS                                                                                          \
    .family = "rmsnorm", .nd = 2, .dim_names = {"rows", "cols"}, .nbufs = 3,                             \
    .canonical = {"canonical", (int)(sizeof rn_canonical / sizeof rn_canonical[0]), rn_canonical},       \
    .edge = {"edge", (int)(sizeof rn_edge / sizeof rn_edge[0]), rn_edge},                                \
    .quick = {"quick", (int)(sizeof rn_quick / sizeof rn_quick[0]), rn_quick},                           \
    .ndists = (int)(sizeof rn_dists / sizeof rn_dists[0]), .dists = rn_dists, .buf_elems = rn_buf_elems, \
    .flops = rn_flops, .gen = rn_gen, .draw_shape = kp_draw_rows_cols, .shape_ok = rn_shape_ok,          \
    .reference = rn_reference, .check = NULL, .row_local = 1

const kp_op kp_op_rmsnorm_f32 = {
    .name = "rmsnorm_f32",
    .dtype = KP_F32,
    .entry = "kp_rmsnorm_f32",
    .summary = "rmsnorm over each row of x[rows, cols] with weight, eps 1e-5, fp32",
    .proto = "int kp_rmsnorm_f32(const float *x, const float *w, float *y, int64_t rows, int64_t cols)",
    .bufs = {{"x", KP_F32, 0}, {"w", KP_F32, 0}, {"y", KP_F32, 1}},
    .min_bytes = rn_bytes_f32,
    .invoke = rn_invoke_f32,
    .rms_limit = 0.25,
    RN_SETS,
};

const kp_op kp_op_rmsnorm_bf16 = {
    .name = "rmsnorm_bf16",
    .dtype = KP_BF16,
    .entry = "kp_rmsnorm_bf16",
    .summary = "rmsnorm over each row of x[rows, cols] with weight, eps 1e-5, bf16 in and out",
    .proto = "int kp_rmsnorm_bf16(const kp_bf16 *x, const kp_bf16 *w, kp_bf16 *y, int64_t rows, int64_t cols)",
    .bufs = {{"x", KP_BF16, 0}, {"w", KP_BF16, 0}, {"y", KP_BF16, 1}},
    .min_bytes = rn_bytes_bf16,
    .invoke = rn_invoke_bf16,
    .rms_limit = 0.5,
    RN_SETS,
};
