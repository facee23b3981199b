/* softmax f32, host, 01 naive: three plain passes per row.
 *
 * The baseline: max, exp and sum (libm expf, a double accumulator), scale.
 * Napkin math: 20 bytes and one expf per element against 8 bytes of unique
 * traffic.
 * measured: PASS on every shape of the op (tests/it_host.c); the host demo
 * times 02 against it.
 */
#include <math.h>

#include <kproof/kernel.h>

/* y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)) for every row r. */
KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;

        /* Subtracting the row max keeps expf from overflowing when inputs
         * reach the hundreds; the result is mathematically unchanged. */
        float mx = -INFINITY;
        for (int64_t c = 0; c < cols; c++)
            if (xr[c] > mx) mx = xr[c];

        /* A double sum stays accurate over rows of a million elements,
         * where a single fp32 running sum would drift. */
        double sum = 0.0;
        for (int64_t c = 0; c < cols; c++) {
            yr[c] = expf(xr[c] - mx);
            sum += yr[c];
        }

        float inv = (float)(1.0 / sum);
        for (int64_t c = 0; c < cols; c++)
            yr[c] *= inv;
    }
    return 0;
}
