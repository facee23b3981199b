/* softmax bf16, host, 02 fused: f32 02's vectorized passes on blocks widened to fp32.
 *
 * Adds over 01: blocks of the row widened with a shift per element, the
 * branch-free polynomial exp; exp recomputed in the output pass so each
 * output is rounded to bf16 once.
 * measured: PASS on every shape of the op (tests/it_host.c); not timed.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <kproof/kernel.h>

enum {
    LANES = 16, /* independent accumulators: one AVX-512 or two AVX2 registers */
    BLOCK = 256 /* elements widened at a time; 16 adds per lane per block */
};

/* exp(x) for x <= 0, branch-free (see softmax f32-02): Cody-Waite range
 * reduction with FMA, degree-7 Taylor polynomial, 2^n in the exponent
 * bits; results below FLT_MIN flush to 0. */
static inline float exp_nonpos(float x) {
    float xc = x < -88.0f ? -88.0f : x;
    float t = fmaf(xc, 1.44269504f, 12582912.0f);
    float n = t - 12582912.0f;
    float r = fmaf(n, -0.693145752f, xc);
    r = fmaf(n, -1.42860677e-6f, r);
    float p = 1.0f / 5040.0f;
    p = fmaf(p, r, 1.0f / 720.0f);
    p = fmaf(p, r, 1.0f / 120.0f);
    p = fmaf(p, r, 1.0f / 24.0f);
    p = fmaf(p, r, 1.0f / 6.0f);
    p = fmaf(p, r, 0.5f);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return x < -87.33f ? 0.0f : p * scale;
}

static float fold_lanes(float *acc) {
    for (int width = LANES / 2; width > 0; width /= 2)
        for (int l = 0; l < width; l++)
            acc[l] += acc[l + width];
    return acc[0];
}

/* Widens xr[0..n) into buf; n <= BLOCK. */
static void widen(const kp_bf16 *xr, float *buf, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        buf[i] = kp_bf16_to_f32(xr[i]);
}

KP_ENTRY int kp_softmax_bf16(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols) {
    float buf[BLOCK];
    for (int64_t r = 0; r < rows; r++) {
        const kp_bf16 *xr = x + r * cols;
        kp_bf16 *yr = y + r * cols;

        float m[LANES];
        for (int l = 0; l < LANES; l++)
            m[l] = -INFINITY;
        for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
            int64_t n = cols - c0 < BLOCK ? cols - c0 : BLOCK;
            widen(xr + c0, buf, n);
            int64_t c = 0;
            for (; c + LANES <= n; c += LANES)
                for (int l = 0; l < LANES; l++)
                    m[l] = buf[c + l] > m[l] ? buf[c + l] : m[l];
            for (; c < n; c++)
                m[0] = buf[c] > m[0] ? buf[c] : m[0];
        }
        float mx = m[0];
        for (int l = 1; l < LANES; l++)
            mx = m[l] > mx ? m[l] : mx;

        double total = 0.0;
        for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
            int64_t n = cols - c0 < BLOCK ? cols - c0 : BLOCK;
            widen(xr + c0, buf, n);
            float acc[LANES] = {0};
            int64_t c = 0;
            for (; c + LANES <= n; c += LANES)
                for (int l = 0; l < LANES; l++)
                    acc[l] += exp_nonpos(buf[c + l] - mx);
            for (int l = 0; c < n; c++, l++)
                acc[l] += exp_nonpos(buf[c] - mx);
            total += fold_lanes(acc);
        }

        float inv = (float)(1.0 / total);
        for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
            int64_t n = cols - c0 < BLOCK ? cols - c0 : BLOCK;
            widen(xr + c0, buf, n);
            for (int64_t c = 0; c < n; c++)
                yr[c0 + c] = kp_f32_to_bf16(exp_nonpos(buf[c] - mx) * inv);
        }
    }
    return 0;
}
