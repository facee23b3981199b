/* sum f32, host, 01 naive: one running sum over the vector, kept in double.
 *
 * Napkin math: n adds, 4*n bytes read. A single fp32 running sum has an
 * error bound of about n*eps*sum|x|; the check allows about
 * log2(n)*eps*sum|x|, so at 2^28 elements fp32 is not enough and the sum is
 * kept in double. The price is one dependent add per element (latency
 * bound); 02-tree removes that chain.
 * H200: not yet measured (host backend: CPU only).
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
