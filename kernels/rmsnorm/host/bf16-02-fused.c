/* rmsnorm bf16, host, 02 fused: f32 02 on blocks widened to fp32.
 *
 * Adds over 01: blocks of 256 elements widened into an fp32 buffer in L1,
 * their squares summed in 16 float lanes (f32 02's reduction), block sums
 * in double; the output pass in float, one bf16 rounding per output.
 * measured: PASS on every shape of the op (tests/it_host.c); not timed.
 */
#include <math.h>

#include <kproof/kernel.h>

enum {
    LANES = 16, /* independent accumulators: one AVX-512 or two AVX2 registers */
    BLOCK = 256 /* elements widened at a time; stays in L1 */
};

static float fold_lanes(float *acc) {
    for (int width = LANES / 2; width > 0; width /= 2)
        for (int l = 0; l < width; l++)
            acc[l] += acc[l + width];
    return acc[0];
}

static float block_squares(const float *xb, int64_t nb) {
    float acc[LANES] = {0};
    int64_t c = 0;
    for (; c + LANES <= nb; c += LANES)
        for (int l = 0; l < LANES; l++)
            acc[l] = fmaf(xb[c + l], xb[c + l], acc[l]);
    for (int l = 0; c < nb; c++, l++)
        acc[l] = fmaf(xb[c], xb[c], acc[l]);
    return fold_lanes(acc);
}

KP_ENTRY int kp_rmsnorm_bf16(const kp_bf16 *x, const kp_bf16 *w, kp_bf16 *y, int64_t rows, int64_t cols) {
    float buf[BLOCK];
    for (int64_t r = 0; r < rows; r++) {
        const kp_bf16 *xr = x + r * cols;
        kp_bf16 *yr = y + r * cols;

        double ss = 0.0;
        for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
            int64_t nb = cols - c0 < BLOCK ? cols - c0 : BLOCK;
            for (int64_t c = 0; c < nb; c++)
                buf[c] = kp_bf16_to_f32(xr[c0 + c]);
            ss += block_squares(buf, nb);
        }

        const float rstd = (float)(1.0 / sqrt(ss / (double)cols + KP_RMSNORM_EPS));
        for (int64_t c = 0; c < cols; c++)
            yr[c] = kp_f32_to_bf16(kp_bf16_to_f32(xr[c]) * rstd * kp_bf16_to_f32(w[c]));
    }
    return 0;
}
