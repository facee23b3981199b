/* matmul f32, host, 01 naive: the textbook triple loop, one dot product per
 * output element. The starting point: correct first, fast later.
 *
 * Napkin math: 2*M*N*K FLOPs; reads A once per output column and B once per
 * output row (B column walks stride N floats: cache-hostile on purpose,
 * 02-blocked fixes that). 4*(M*K + K*N + M*N) bytes of unique traffic.
 * measured: PASS on every shape of the op (tests/it_host.c).
 */
#include <kproof/kernel.h>

/* C[M,N] = A[M,K] * B[K,N], all row-major and densely packed. */
KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K) {
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            /* fp32 accumulation, as the task demands (and as cuBLAS does). */
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++)
                acc += A[i * K + k] * B[k * N + j];
            C[i * N + j] = acc; /* every element written, even when K == 0 */
        }
    }
    return 0;
}
