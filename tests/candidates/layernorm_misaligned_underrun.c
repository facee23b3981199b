/* Broken on purpose: a correct layernorm that, when y is not 16-byte
 * aligned, also writes the element just before y (as a kernel does that
 * rounds its store address down to a 16-byte boundary). The guard bytes
 * sit right before the data wherever it starts, so this is caught. Expect
 * REJECTED (canary) at a call whose pointers are not 16-byte aligned. */
#include <kproof/kernel.h>
#include <math.h>

KP_ENTRY int kp_layernorm_f32(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        double s = 0, q = 0;
        for (int64_t j = 0; j < cols; j++) s += xr[j];
        double mean = s / (double)cols;
        for (int64_t j = 0; j < cols; j++) q += (xr[j] - mean) * (xr[j] - mean);
        double rstd = 1.0 / sqrt(q / (double)cols + KP_LAYERNORM_EPS);
        for (int64_t j = 0; j < cols; j++) yr[j] = (float)((xr[j] - mean) * rstd * w[j] + b[j]);
    }
    if ((uintptr_t)y % 16 != 0) y[-1] = 0.0f;
    return 0;
}
