/* sum.c: out[0] = x[0] + ... + x[n-1], fp32 in and out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kproof.h"
#include "ops/op_priv.h"

/* ===== spec & shapes ===================================================== */

static const kp_shape sum_canonical[] = {
    {1, {268435456}}, /* 2^28: 1 GiB, a pure stream */
    {1, {16777216}},  /* 2^24: 64 MiB, about the size of L2 */
    {1, {1048576}},   /* 2^20: 4 MiB, launch-bound */
};

/* 1 and 2 (no tree at all), not a multiple of a vector, a warp or a
 * block, primes just past 2^16, 2^20 and 2^24, and 3 * 2^24 + a prime
 * step: tails everywhere. All under 64M elements. */
static const kp_shape sum_edge[] = {
    {1, {1}},       {1, {2}},       {1, {17}},       {1, {1023}},
    {1, {65537}},   {1, {1000003}}, {1, {16777259}}, {1, {50331653}},
};

static const kp_shape sum_quick[] = {
    {1, {1000003}},
    {1, {4099}},
};

static int64_t sum_buf_elems(const kp_shape *s, int buf) { return buf == 0 ? s->d[0] : 1; }

static int sum_shape_ok(const kp_shape *s, char *why, size_t len) {
    return kp_shape_common_ok(&kp_op_sum_f32, s, why, len);
}

static void sum_draw_shape(uint64_t seed, int64_t max_elems, kp_shape *out) {
    kp_rng r = {seed};
    out->nd = 1;
    out->d[0] = kp_draw_size(&r, max_elems);
    out->d[1] = out->d[2] = 0;
}

/* ===== inputs (distributions) ============================================= */

static const kp_dist sum_dists[] = {
    {"normal", "N(0,1): the sum is ~sqrt(n), most of it cancels"},
    {"shifted", "1 + N(0,1): the sum grows like n; one long fp32 chain stalls past 2^24"},
    {"cancel", "0.5 + U[-1000,1000): large terms of both signs hide a small positive mean"},
};

static kp_gen sum_gen(const kp_shape *s, int buf, int dist) {
    (void)s;
    (void)buf;
    kp_gen g = {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f};
    if (dist == 1) g.offset = 1.0f;
    if (dist == 2) {
        g.kind = KP_GEN_SIGNED;
        g.scale = 1000.0f;
        g.offset = 0.5f;
    }
    return g;
}

/* ===== cost model ========================================================= */

/* One add per element: 2^28 is 0.27 GFLOP, nothing. */
static double sum_flops(const kp_shape *s) { return (double)s->d[0]; }

/* x read once, one float written: 2^28 is 1.07 GB, 250 us at 4.3 TB/s. */
static double sum_bytes(const kp_shape *s) { return 4.0 * (double)s->d[0] + 4.0; }

/* ===== float64 reference + tolerance ====================================== */

/* The model (see check.c): a length-L chain of fp32 additions commits
 * rounding errors of about u times each running total, adding up like a
 * random walk: u (sqrt(L) |x|_2 + sqrt(L) |sum|) bounds it for any data
 * (|x|_2 = sqrt(sum x^2); sqrt(L)|x|_2 >= sum|x| covers cancelling data, the
 * second term the steady growth of biased data). Chains of at most
 * L = 2^20 elements combined by a tree keep the same bound for any n: the
 * chains' errors add in quadrature, the tree adds log2(n/L) u |sum|.
 *
 *     tol = KP_SUM_C * u * sqrt(min(n, 2^20)) * (|x|_2 + |sum|)
 *
 * A GPU reduction (chains of a few thousand, then a tree) lands two or
 * more orders of magnitude below it (e < 0.005 at 2^28). A plain
 * single-accumulator loop passes up to ~2^20 elements and fails beyond,
 * where it is wrong: past 2^24 a running total of ones stops growing
 * (shifted data at 2^28: e ~ 800). Inputs rounded to bf16 move the sum by
 * a random ~2^-10 |x|_2, which is 0.1x to 1x the tolerance on normal and
 * cancel data from 2^20 to 2^28: caught at some shapes, not at all, and
 * never on shifted data, where honest chains are noisier than that. */
#define KP_SUM_C 16.0
#define KP_SUM_CHAIN 1048576

static int sum_reference(const kp_op *op, const kp_shape *s, const void *const *in, kp_ref *ref) {
    int64_t n = s->d[0];
    if (kp_ref_alloc(ref, 1)) return -1;
    kp_dtype t = op->bufs[0].dtype;
    /* Neumaier's compensated sum: the float64 total is good to ~1 ulp of
     * double however long the vector. */
    double sum = 0, comp = 0, ss = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = kp_ld(in[0], t, i), tsum = sum + v;
        if (fabs(sum) >= fabs(v)) comp += (sum - tsum) + v;
        else comp += (v - tsum) + sum;
        sum = tsum;
        ss += v * v;
    }
    sum += comp;
    ref->want[0] = sum;
    ref->tol[0] = KP_SUM_C * KP_U32 * kp_sqrt_len(n < KP_SUM_CHAIN ? n : KP_SUM_CHAIN) * (sqrt(ss) + fabs(sum)) +
                  KP_TOL_FLOOR;
    return 0;
}

/* ===== invoke ============================================================= */

typedef int (*sum_fn)(const float *, float *, int64_t);
typedef int (*sum_sfn)(const float *, float *, int64_t, void *);

static int sum_invoke(void *fn, void *const *b, const kp_shape *s, void *stream, int with_stream) {
    if (with_stream) {
        sum_sfn f;
        KP_FN_FROM(f, fn);
        return f(b[0], b[1], s->d[0], stream);
    }
    sum_fn f;
    KP_FN_FROM(f, fn);
    return f(b[0], b[1], s->d[0]);
}

const kp_op kp_op_sum_f32 = {
    .name = "sum_f32",
    .family = "sum",
    .dtype = KP_F32,
    .entry = "kp_sum_f32",
    .summary = "out[0] = sum of x[n], fp32",
    .proto = "int kp_sum_f32(const float *x, float *out, int64_t n)",
    .nd = 1,
    .dim_names = {"n"},
    .nbufs = 2,
    .bufs = {{"x", KP_F32, 0}, {"out", KP_F32, 1}},
    .canonical = {"canonical", (int)(sizeof sum_canonical / sizeof sum_canonical[0]), sum_canonical},
    .edge = {"edge", (int)(sizeof sum_edge / sizeof sum_edge[0]), sum_edge},
    .quick = {"quick", (int)(sizeof sum_quick / sizeof sum_quick[0]), sum_quick},
    .ndists = (int)(sizeof sum_dists / sizeof sum_dists[0]),
    .dists = sum_dists,
    .buf_elems = sum_buf_elems,
    .flops = sum_flops,
    .min_bytes = sum_bytes,
    .gen = sum_gen,
    .draw_shape = sum_draw_shape,
    .shape_ok = sum_shape_ok,
    .reference = sum_reference,
    .check = NULL,
    .invoke = sum_invoke,
    /* one element: this is the effective threshold; honest e ~0.03 at most */
    .rms_limit = 0.25,
};
