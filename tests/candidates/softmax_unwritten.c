/* Broken on purpose: writes nothing. Expect WRONG, "output never written". */
#include <kproof/kernel.h>

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    (void)x; (void)y; (void)rows; (void)cols;
    return 0;
}
