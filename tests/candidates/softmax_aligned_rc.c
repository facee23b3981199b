/* Broken on purpose: refuses pointers that are not 16-byte aligned (its
 * only path is a 16-byte one), which kernel.h does not allow. Expect ERROR
 * (rc) at the first call whose pointers are off, with evidence that says
 * they were. */
#include <kproof/kernel.h>
#include <math.h>

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    if (((uintptr_t)x | (uintptr_t)y) & 15u) return 22;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float m = xr[0];
        for (int64_t j = 1; j < cols; j++) m = xr[j] > m ? xr[j] : m;
        double s = 0;
        for (int64_t j = 0; j < cols; j++) s += (yr[j] = expf(xr[j] - m));
        for (int64_t j = 0; j < cols; j++) yr[j] = (float)(yr[j] / s);
    }
    return 0;
}
