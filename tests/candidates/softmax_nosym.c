/* Broken on purpose: defines the wrong entry point. Expect ERROR (load). */
#include <kproof/kernel.h>

KP_ENTRY int kp_softmax(const float *x, float *y, int64_t rows, int64_t cols) {
    (void)x; (void)y; (void)rows; (void)cols;
    return 0;
}
