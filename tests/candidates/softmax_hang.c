/* Broken on purpose: never returns. Expect ERROR (timeout). */
#include <kproof/kernel.h>

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    volatile int spin = 1;
    (void)x; (void)y; (void)rows; (void)cols;
    while (spin) {}
    return 0;
}
