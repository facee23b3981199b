/* naive_ref.cu: the one-input flaw's in-worker reference (cuda).
 *
 * A naive harness computes its expected output on the GPU, in the process
 * that then runs the candidate (cuBLAS, here), and frees that memory before
 * the candidate's output is allocated: the bug this flaw reproduces. Only
 * the naive mode asks for it, and only for matmul, whose full reference the
 * parent does not compute at large sizes. Nothing here is ever a judge. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <string.h>

#include "cuda_priv.h"
#include "worker/backend.h"

int kp_dev_reference(const kp_op *op, const kp_shape *s, void *const *bufs, void *out) {
    if (strcmp(op->family, "matmul") != 0) return 1;
    int64_t M = s->d[0], N = s->d[1], K = s->d[2];
    if (M > 2147483647 || N > 2147483647 || K > 2147483647) {
        kp_cu_seterr("naive reference: a dimension over 2^31 - 1 (cuBLAS takes int)");
        return -1;
    }
    cublasHandle_t h = NULL;
    const float one = 1.0f, zero = 0.0f;
    int rc = -1;
    if (KP_CU(cublasCreate(&h)) || KP_CU(cublasSetStream(h, kp_cu_util_stream())) ||
        KP_CU(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH)))
        goto done;
    /* Row-major C = A B is column-major C^T = B^T A^T. */
    if (op->dtype == KP_F32) {
        if (KP_CU(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, (const float *)bufs[1],
                              (int)N, (const float *)bufs[0], (int)K, &zero, (float *)out, (int)N)))
            goto done;
    } else {
        if (KP_CU(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, bufs[1], CUDA_R_16BF, (int)N,
                               bufs[0], CUDA_R_16BF, (int)K, &zero, out, CUDA_R_16BF, (int)N, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT)))
            goto done;
    }
    if (KP_CU(cudaStreamSynchronize(kp_cu_util_stream()))) goto done;
    rc = 0;
done:
    if (h) cublasDestroy(h);
    return rc;
}
