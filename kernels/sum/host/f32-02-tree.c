/* sum f32, host, 02 tree: adds 32 independent fp32 partial sums per block
 * of 512 elements (the compiler turns them into vector adds), folds the 32
 * lanes in a fixed pairwise tree and adds each block's result to a double.
 *
 * Napkin math: 4*n bytes read, n adds; at 2^28 elements 1 GiB streamed, so
 * it runs at memory bandwidth instead of one add latency per element.
 * Accuracy: an element meets at most 16 sequential fp32 adds in its lane
 * and 5 in the fold; block sums meet only double adds. The worst-case
 * error bound is about 21*eps*sum|x| whatever n is (a single fp32 chain:
 * n*eps*sum|x|); measured errors stay near eps*sum|x|.
 * The tree is fixed by the index, so the result is deterministic.
 * H200: not yet measured (host backend: CPU only).
 */
#include <kproof/kernel.h>

enum {
    LANES = 32, /* independent partial sums: 2 AVX-512 or 4 AVX2 registers */
    BLOCK = 512 /* elements per block: 16 adds per lane before the fold */
};

/* Pairwise fold of the lanes: the same tree for every block. */
static float fold_lanes(float *acc) {
    for (int width = LANES / 2; width > 0; width /= 2)
        for (int l = 0; l < width; l++)
            acc[l] += acc[l + width];
    return acc[0];
}

KP_ENTRY int kp_sum_f32(const float *x, float *out, int64_t n) {
    double total = 0.0;
    int64_t i = 0;
    for (; i + BLOCK <= n; i += BLOCK) {
        float acc[LANES] = {0};
        for (int j = 0; j < BLOCK; j += LANES)
            for (int l = 0; l < LANES; l++)
                acc[l] += x[i + j + l];
        total += fold_lanes(acc);
    }
    if (i < n) { /* the tail block, same lane assignment, bounds checked */
        float acc[LANES] = {0};
        for (int64_t j = 0; i + j < n; j++)
            acc[j % LANES] += x[i + j];
        total += fold_lanes(acc);
    }
    out[0] = (float)total;
    return 0;
}
