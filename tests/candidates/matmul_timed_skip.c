/* Broken on purpose: a correct matmul for its first 6 calls (the
 * correctness phase at one shape), then every later call returns at once
 * and leaves C as it was (a stale output): only the timed calls' checks can
 * see it, on lazy timing sets from the rows they fetch. Expect WRONG,
 * poison, "a timed call". */
#include <kproof/kernel.h>

KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K) {
    static int calls;
    if (++calls > 6) return 0;
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * N;
        for (int64_t j = 0; j < N; j++) c[j] = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            float a = A[i * K + k];
            const float *b = B + k * N;
            for (int64_t j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
    return 0;
}
