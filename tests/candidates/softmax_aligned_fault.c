/* Broken on purpose: dies of SIGBUS when x is 16-byte aligned but y is
 * not, as a GPU kernel does (cudaErrorMisalignedAddress) when it decides
 * on its first pointer alone and then stores 16 bytes to the others.
 * Expect ERROR (crash) at a call whose pointers are not all 16-byte
 * aligned, with evidence that says which. */
#include <kproof/kernel.h>
#include <math.h>
#include <signal.h>

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    if ((uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 != 0) raise(SIGBUS);
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
