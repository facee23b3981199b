/* sum f32, host, 02 tree: 32 independent fp32 lanes a block, folded in a fixed tree.
 *
 * Adds over 01: 32 partial sums per block of 512 (vector adds), folded
 * pairwise, each block's result added to a double: memory-bound instead of
 * add-latency-bound, deterministic, worst-case error about 21 eps sum|x| at
 * any n.
 * measured: 3.05x over 01 (noisy, 2-core CPU) in the host demo's rigorous
 * column (results/2026-11-30-host-4c64575/demo.md).
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
