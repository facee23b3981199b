/* sum f32, host, 01 naive: one running sum, kept in double.
 *
 * The baseline. A single fp32 chain errs by about n eps sum|x| and the check
 * allows about log2(n) eps sum|x|, so the sum is kept in double: one
 * dependent add per element, latency-bound.
 * measured: PASS on every shape of the op (tests/it_host.c); the host demo
 * times 02 against it.
 */
#include <kproof/kernel.h>

/* out[0] = x[0] + x[1] + ... + x[n-1]. */
KP_ENTRY int kp_sum_f32(const float *x, float *out, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        s += x[i];
    out[0] = (float)s;
    return 0;
}
