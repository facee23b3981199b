/* layernorm f32, host, 02 fused: one pass from memory for the statistics.
 *
 * Adds over 01: each block of 256 elements gets an exact two-pass mean and
 * spread while it sits in L1 (16 independent lanes, so they vectorize) and
 * blocks merge in double by Chan's parallel formula; then one vectorized
 * output pass. x is read twice from memory instead of three times; the mean
 * is kept in double and subtracted in two float parts.
 * measured: 1.97x over 01 (noisy, 2-core CPU) in the host demo's rigorous
 * column (results/2026-11-30-host-4c64575/demo.md).
 */
#include <math.h>

#include <kproof/kernel.h>

enum {
    LANES = 16, /* independent accumulators: one AVX-512 or two AVX2 registers */
    BLOCK = 256 /* elements per block: stays in L1 between its two passes */
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

/* Adds block xb[0..nb) to s: a float mean of the block as the shift c, then
 * the deviations from c (sum and squares) correct it exactly enough. */
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

KP_ENTRY int kp_layernorm_f32(const float *x, const float *w, const float *b, float *y, int64_t rows,
                              int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;

        stats s = {0.0, 0.0, 0.0};
        for (int64_t c0 = 0; c0 < cols; c0 += BLOCK)
            add_block(&s, xr + c0, cols - c0 < BLOCK ? cols - c0 : BLOCK);

        double var = s.m2 / (double)cols; /* biased (population) variance */
        if (var < 0.0) var = 0.0;
        float rstd = (float)(1.0 / sqrt(var + KP_LAYERNORM_EPS));
        /* mean = hi + lo: x - hi is exact for x near the mean, so the float
         * rounding of the mean does not cost digits when mean >> std. */
        float hi = (float)s.mean, lo = (float)(s.mean - (double)hi);
        for (int64_t c = 0; c < cols; c++)
            yr[c] = fmaf(((xr[c] - hi) - lo) * rstd, w[c], b[c]);
    }
    return 0;
}
