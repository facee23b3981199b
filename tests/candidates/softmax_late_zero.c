/* Broken on purpose: a correct softmax for its first 12 calls (more than a
 * correctness phase at one shape makes), then every later row starts with
 * a zero: only the timed calls' checks can see it. At an output past 4M
 * elements those checks sample chunks of rows generated on demand (lazy
 * sets). Expect WRONG, tolerance, "a timed call". */
#include <kproof/kernel.h>
#include <math.h>

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    static int calls;
    int late = ++calls > 12;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float m = xr[0];
        for (int64_t j = 1; j < cols; j++) m = xr[j] > m ? xr[j] : m;
        double s = 0;
        for (int64_t j = 0; j < cols; j++) s += (yr[j] = expf(xr[j] - m));
        for (int64_t j = 0; j < cols; j++) yr[j] = (float)(yr[j] / s);
        if (late)
            for (int64_t j = 0; j < cols; j += 64) yr[j] = 0.0f;
    }
    return 0;
}
