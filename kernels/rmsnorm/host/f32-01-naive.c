/* rmsnorm f32, host, 01 naive: one pass for the mean square, a second for the output.
 *
 * The baseline: the sum of squares in double, then y = x * rstd * w.
 * measured: PASS on every shape of the op (tests/it_host.c); not timed.
 */
#include <math.h>

#include <kproof/kernel.h>

/* y[r, c] = x[r, c] / sqrt(mean_k x[r, k]^2 + eps) * w[c]. */
KP_ENTRY int kp_rmsnorm_f32(const float *x, const float *w, float *y, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;

        double ss = 0.0;
        for (int64_t c = 0; c < cols; c++)
            ss += (double)xr[c] * xr[c];

        double rstd = 1.0 / sqrt(ss / (double)cols + KP_RMSNORM_EPS);
        for (int64_t c = 0; c < cols; c++)
            yr[c] = (float)(xr[c] * rstd * w[c]);
    }
    return 0;
}
