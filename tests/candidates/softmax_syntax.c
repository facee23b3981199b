/* Broken on purpose: does not compile. Expect ERROR (build). */
#include <kproof/kernel.h>

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    return this is not C;
}
