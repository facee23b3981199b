/* layernorm bf16, host, 02 fused: f32 02 on blocks widened to fp32.
 *
 * Adds over 01: f32 02's statistics pass (exact two-pass per block in L1,
 * blocks merged by Chan's formula) and vectorized output pass on blocks of
 * 256 elements widened with a shift each; one bf16 rounding per output.
 * measured: PASS on every shape of the op (tests/it_host.c); not timed.
 */
#include <math.h>

#include <kproof/kernel.h>

enum {
    LANES = 16, /* independent accumulators: one AVX-512 or two AVX2 registers */
    BLOCK = 256 /* elements widened at a time; stays in L1 for both passes */
};

static float fold_lanes(float *acc) {
    for (int width = LANES / 2; width > 0; width /= 2)
        for (int l = 0; l < width; l++)
            acc[l] += acc[l + width];
    return acc[0];
}

/* Running statistics of a row (Chan et al.): count, mean, sum of squared
 * deviations from the mean. */
typedef struct stats {
    double n, mean, m2;
} stats;

/* Adds widened block xb[0..nb) to s: a float mean of the block as the
 * shift c, then the deviations from c (sum and squares) correct it. */
static void add_block(stats *s, const float *xb, int64_t nb) {
    float acc[LANES] = {0};
    int64_t c = 0;
    for (; c + LANES <= nb; c += LANES)
        for (int l = 0; l < LANES; l++)
            acc[l] += xb[c + l];
    for (int l = 0; c < nb; c++, l++)
        acc[l] += xb[c];
    float shift = fold_lanes(acc) / (float)nb;

    float sd[LANES] = {0}, sq[LANES] = {0};
    for (c = 0; c + LANES <= nb; c += LANES)
        for (int l = 0; l < LANES; l++) {
            float d = xb[c + l] - shift;
            sd[l] += d;
            sq[l] = fmaf(d, d, sq[l]);
        }
    for (int l = 0; c < nb; c++, l++) {
        float d = xb[c] - shift;
        sd[l] += d;
        sq[l] = fmaf(d, d, sq[l]);
    }
    double dsum = fold_lanes(sd), dsq = fold_lanes(sq), bn = (double)nb;
    double bmean = shift + dsum / bn;
    double bm2 = dsq - dsum * dsum / bn;

    double tot = s->n + bn, delta = bmean - s->mean;
    s->mean += delta * bn / tot;
    s->m2 += bm2 + delta * delta * s->n * bn / tot;
    s->n = tot;
}

KP_ENTRY int kp_layernorm_bf16(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows,
                               int64_t cols) {
    float buf[BLOCK];
    for (int64_t r = 0; r < rows; r++) {
        const kp_bf16 *xr = x + r * cols;
        kp_bf16 *yr = y + r * cols;

        stats s = {0.0, 0.0, 0.0};
        for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
            int64_t nb = cols - c0 < BLOCK ? cols - c0 : BLOCK;
            for (int64_t c = 0; c < nb; c++)
                buf[c] = kp_bf16_to_f32(xr[c0 + c]);
            add_block(&s, buf, nb);
        }

        double var = s.m2 / (double)cols; /* biased (population) variance */
        if (var < 0.0) var = 0.0;
        float rstd = (float)(1.0 / sqrt(var + KP_LAYERNORM_EPS));
        /* mean = hi + lo: x - hi is exact for x near the mean. */
        float hi = (float)s.mean, lo = (float)(s.mean - (double)hi);
        for (int64_t c = 0; c < cols; c++) {
            float v = ((kp_bf16_to_f32(xr[c]) - hi) - lo) * rstd;
            yr[c] = kp_f32_to_bf16(fmaf(v, kp_bf16_to_f32(w[c]), kp_bf16_to_f32(b[c])));
        }
    }
    return 0;
}
