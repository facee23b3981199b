/* Broken on purpose: dereferences a null pointer. Expect ERROR (crash). */
#include <kproof/kernel.h>

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    volatile float *p = (volatile float *)0;
    (void)x; (void)rows; (void)cols;
    y[0] = *p;
    return 0;
}
