/* Broken on purpose: a correct matmul for its first 7 calls (the
 * correctness phase at one shape and the first timed call), then every
 * call multiplies the inputs of the call before it (another input set,
 * still in the worker's memory) and writes that product: a whole, honest
 * looking output for the wrong inputs. The timed calls' checks recompute
 * elements from this call's inputs. Expect WRONG, tolerance, "a timed
 * call". */
#include <kproof/kernel.h>

static void matmul(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K) {
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * N;
        for (int64_t j = 0; j < N; j++) c[j] = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            float a = A[i * K + k];
            const float *b = B + k * N;
            for (int64_t j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
}

KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K) {
    static int calls;
    static const float *prev_a, *prev_b;
    if (++calls > 7 && prev_a && prev_a != A) matmul(prev_a, prev_b, C, M, N, K);
    else matmul(A, B, C, M, N, K);
    if (calls >= 7) { /* the timing phase's buffers: they stay allocated through it */
        prev_a = A;
        prev_b = B;
    }
    return 0;
}
