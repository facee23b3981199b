/* rmsnorm bf16, host, 01 naive: f32 01's two passes on widened values.
 *
 * The baseline: the sum of squares in double, one rounding to bf16 per
 * output.
 * measured: PASS on every shape of the op (tests/it_host.c); not timed.
 */
#include <math.h>

#include <kproof/kernel.h>

/* y = x / sqrt(mean(x^2) + eps) * w per row. */
KP_ENTRY int kp_rmsnorm_bf16(const kp_bf16 *x, const kp_bf16 *w, kp_bf16 *y, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const kp_bf16 *xr = x + r * cols;
        kp_bf16 *yr = y + r * cols;

        double ss = 0.0;
        for (int64_t c = 0; c < cols; c++) {
            double v = kp_bf16_to_f32(xr[c]);
            ss += v * v;
        }

        double rstd = 1.0 / sqrt(ss / (double)cols + KP_RMSNORM_EPS);
        for (int64_t c = 0; c < cols; c++) {
            double v = kp_bf16_to_f32(xr[c]) * rstd * kp_bf16_to_f32(w[c]);
            /* Through float first: differs from a direct double -> bf16
             * rounding only on exact ties, far inside the tolerance. */
            yr[c] = kp_f32_to_bf16((float)v);
        }
    }
    return 0;
}
