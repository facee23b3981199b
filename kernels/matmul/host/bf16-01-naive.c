/* matmul bf16, host, 01 naive: the textbook triple loop with bf16 inputs,
 * fp32 accumulation and one rounding to bf16 per output element.
 *
 * Napkin math: 2*M*N*K FLOPs; 2*(M*K + K*N + M*N) bytes of unique traffic.
 * B is walked down its columns (stride N): slow on purpose, 02 fixes it.
 * measured: PASS on every shape of the op (tests/it_host.c).
 */
#include <kproof/kernel.h>

/* C[M,N] = A[M,K] * B[K,N]; bf16 values travel as raw 16-bit patterns. */
KP_ENTRY int kp_matmul_bf16(const kp_bf16 *A, const kp_bf16 *B, kp_bf16 *C, int64_t M, int64_t N, int64_t K) {
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            /* Widen to fp32 and accumulate there (torch.mm / cuBLAS semantics). */
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++)
                acc += kp_bf16_to_f32(A[i * K + k]) * kp_bf16_to_f32(B[k * N + j]);
            /* Round once, at the end, to nearest even. */
            C[i * N + j] = kp_f32_to_bf16(acc);
        }
    }
    return 0;
}
