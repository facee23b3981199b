/* Broken on purpose: a correct matmul for its first 6 calls (the
 * correctness phase at one shape), then every later call skips a 32 x 32
 * tile in the middle of C, which keeps whatever the memory held: only the
 * timed calls' checks can see it. Where the parent holds no full reference
 * the timing sets are lazy and a timed output is checked from whole rows,
 * one in every band of rows (src/core/protocol/correctness.c): a tile as
 * tall as a band always lies across one. Expect WRONG, poison, "a timed
 * call". */
#include <kproof/kernel.h>
#include <stdlib.h>

KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K) {
    static int calls;
    int late = ++calls > 6;
    float *t = (float *)malloc((size_t)(N ? N : 1) * sizeof *t);
    if (!t) return 1;
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) t[j] = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            float a = A[i * K + k];
            const float *b = B + k * N;
            for (int64_t j = 0; j < N; j++) t[j] += a * b[j];
        }
        int band = late && i >= M / 2 && i < M / 2 + 32;
        for (int64_t j = 0; j < N; j++)
            if (!band || j < N / 2 || j >= N / 2 + 32) C[i * N + j] = t[j];
    }
    free(t);
    return 0;
}
