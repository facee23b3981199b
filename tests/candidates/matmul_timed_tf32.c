/* Broken on purpose: a correct fp32 matmul for its first 6 calls (the
 * correctness phase at one shape), then every later call rounds A and B to
 * tf32 (10-bit mantissa, as tensor cores in TF32 mode do) before the fp32
 * products: the precision downgrade a fast fp32 kernel is tempted by. The
 * timed calls' checks on lazy sets recompute a grid of elements in float64:
 * their tolerance (and the RMS criterion behind it) sees the tf32 error.
 * Expect WRONG, tolerance, "a timed call". */
#include <kproof/kernel.h>
#include <string.h>

static float tf32(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    u += 0xfffu + ((u >> 13) & 1u); /* round to nearest even at 13 dropped bits */
    u &= ~0x1fffu;
    memcpy(&x, &u, 4);
    return x;
}

KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K) {
    static int calls;
    int late = ++calls > 6;
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * N;
        for (int64_t j = 0; j < N; j++) c[j] = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            float a = late ? tf32(A[i * K + k]) : A[i * K + k];
            const float *b = B + k * N;
            for (int64_t j = 0; j < N; j++) c[j] += a * (late ? tf32(b[j]) : b[j]);
        }
    }
    return 0;
}
