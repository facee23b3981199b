/* bf16-cublas.cu: the bf16 matmul baseline, cuBLAS GemmEx with bf16 inputs
 * and output and fp32 accumulation (CUBLAS_COMPUTE_32F).
 *
 * This is what torch.mm runs for bf16 tensors: about 716 TFLOP/s at 4096^3
 * on the H200, but only 150 at 4095^3, where unaligned rows push cuBLAS off
 * its tensor-core paths (torch.compile's Triton kernel does 605 there). A
 * custom kernel has to beat it at aligned sizes and is expected to beat it
 * by far at unaligned ones. Reduced-precision (bf16) split-K reductions are
 * disallowed so the result is the fp32-accumulated product rounded once,
 * which is what the task demands at every K.
 *
 * Row-major C = A B is column-major C^T = B^T A^T: pass B before A and swap
 * M and N (see f32-cublas.cu). The 64-bit API takes any size.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kproof/kernel.h"

static cublasHandle_t kp_handle(void) {
    static cublasHandle_t h;
    static int failed;
    if (!h && !failed) {
        if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
            cublasSetMathMode(h, (cublasMath_t)(CUBLAS_DEFAULT_MATH |
                                                CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) !=
                CUBLAS_STATUS_SUCCESS) {
            h = NULL;
            failed = 1;
        }
    }
    return h;
}

KP_ENTRY int kp_matmul_bf16(const kp_bf16 *A, const kp_bf16 *B, kp_bf16 *C, int64_t M, int64_t N, int64_t K,
                            kp_stream stream) {
    if (M < 0 || N < 0 || K < 0)
        return 1;
    if (M == 0 || N == 0)
        return 0;
    cublasHandle_t h = kp_handle();
    if (!h || cublasSetStream(h, (cudaStream_t)stream) != CUBLAS_STATUS_SUCCESS)
        return 1;
    const float one = 1.0f, zero = 0.0f;
    /* C^T[N,M] = B^T[N,K] * A^T[K,M]; leading dims N, K, N. */
    cublasStatus_t st = cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16BF, N, A,
                                        CUDA_R_16BF, K, &zero, C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : 1;
}
