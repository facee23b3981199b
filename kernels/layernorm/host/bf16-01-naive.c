/* layernorm bf16, host, 01 naive: f32 01's three passes on widened values.
 *
 * The baseline: statistics in double, one rounding to bf16 per output.
 * measured: PASS on every shape of the op (tests/it_host.c); not timed.
 */
#include <math.h>

#include <kproof/kernel.h>

/* y = (x - mean) / sqrt(var + eps) * w + b per row, biased variance. */
KP_ENTRY int kp_layernorm_bf16(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows,
                               int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const kp_bf16 *xr = x + r * cols;
        kp_bf16 *yr = y + r * cols;

        double mean = 0.0;
        for (int64_t c = 0; c < cols; c++)
            mean += kp_bf16_to_f32(xr[c]);
        mean /= (double)cols;

        /* Two passes (deviations from the mean), never E[x^2] - mean^2,
         * which cancels catastrophically when the mean dwarfs the spread. */
        double var = 0.0;
        for (int64_t c = 0; c < cols; c++) {
            double d = kp_bf16_to_f32(xr[c]) - mean;
            var += d * d;
        }
        var /= (double)cols;

        double rstd = 1.0 / sqrt(var + KP_LAYERNORM_EPS);
        for (int64_t c = 0; c < cols; c++) {
            double v = (kp_bf16_to_f32(xr[c]) - mean) * rstd * kp_bf16_to_f32(w[c]) + kp_bf16_to_f32(b[c]);
            /* Through float first: differs from a direct double -> bf16
             * rounding only on exact ties, far inside the tolerance. */
            yr[c] = kp_f32_to_bf16((float)v);
        }
    }
    return 0;
}
