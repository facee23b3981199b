/* layernorm f32, host, 01 naive: two passes for the statistics, a third for the output.
 *
 * The baseline: mean, then variance around that mean, in double; output.
 * measured: PASS on every shape of the op (tests/it_host.c); the host demo
 * times 02 against it.
 */
#include <math.h>

#include <kproof/kernel.h>

/* y[r, c] = (x[r, c] - mean_r) / sqrt(var_r + eps) * w[c] + b[c], var_r the
 * biased (population) variance of row r. */
KP_ENTRY int kp_layernorm_f32(const float *x, const float *w, const float *b, float *y, int64_t rows,
                              int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;

        double mean = 0.0;
        for (int64_t c = 0; c < cols; c++)
            mean += xr[c];
        mean /= (double)cols;

        /* Variance as the mean of squared deviations, never E[x^2] - mean^2:
         * with a mean of 1000 and a std of 1 that difference cancels away
         * every significant digit. */
        double var = 0.0;
        for (int64_t c = 0; c < cols; c++) {
            double d = xr[c] - mean;
            var += d * d;
        }
        var /= (double)cols;

        double rstd = 1.0 / sqrt(var + KP_LAYERNORM_EPS);
        for (int64_t c = 0; c < cols; c++)
            yr[c] = (float)((xr[c] - mean) * rstd * w[c] + b[c]);
    }
    return 0;
}
