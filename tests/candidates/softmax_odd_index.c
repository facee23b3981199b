/* Broken on purpose: when cols is odd the last element of each row is
 * skipped (left as poison). Correct at even widths. Expect WRONG. */
#include <kproof/kernel.h>
#include <math.h>

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    int64_t n = cols & ~(int64_t)1; /* the bug: rounds odd widths down */
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; c++) m = xr[c] > m ? xr[c] : m;
        double s = 0;
        for (int64_t c = 0; c < cols; c++) s += exp((double)xr[c] - m);
        for (int64_t c = 0; c < n; c++) yr[c] = (float)(exp((double)xr[c] - m) / s);
    }
    return 0;
}
