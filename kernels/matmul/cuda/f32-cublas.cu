/* f32-cublas.cu: the fp32 matmul baseline, cuBLAS SGEMM with TF32 off.
 *
 * cuBLAS is what torch.mm runs for fp32 tensors (eager and torch.compile
 * both pick it on the H200: about 51 TFLOP/s at 4096^3 and 8192^3), so a
 * custom fp32 kernel's speedup is only interesting against it. Default math
 * keeps fp32 accuracy: TF32 would be 7x faster and not an fp32 result.
 *
 * Row-major C = A B is column-major C^T = B^T A^T, and a row-major X[r][c]
 * read column-major is X^T with leading dimension c: so pass B before A and
 * swap M and N; no transposes are needed. The 64-bit API takes any size.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kproof/kernel.h"

static cublasHandle_t kp_handle(void) {
    static cublasHandle_t h;
    static int failed;
    if (!h && !failed) {
        if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
            cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) {
            h = NULL;
            failed = 1;
        }
    }
    return h;
}

KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K,
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
    cublasStatus_t st = cublasSgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : 1;
}
