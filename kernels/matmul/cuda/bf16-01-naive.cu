/* matmul bf16, cuda, 01 naive: one thread per output element, bf16 inputs
 * widened to fp32, fp32 accumulation, one rounding to bf16 at the end.
 *
 * Napkin math: 2*M*N*K FLOPs; each thread reads a row of A and a column of
 * B, 4*K bytes per output from L1/L2; no tensor cores, so a small fraction
 * of even the fp32 SIMT peak. The baseline bf16-02-mma is measured against.
 * measured: PASS on all 14 shapes of the op
 * (results/2026-11-30-h200x2-04357a8-gpu1/correct/, archived); not timed.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <kproof/kernel.h>

/* The one check for every CUDA call (launches: cudaGetLastError). A
 * candidate reports failure through its return value; it never prints or
 * exits, the harness owns the process. */
#define KP_CUDA_OK(call) ((call) == cudaSuccess)

static __global__ void matmul_naive(const __nv_bfloat16 *A, const __nv_bfloat16 *B, __nv_bfloat16 *C, int64_t M,
                                    int64_t N, int64_t K) {
    int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= N) return;
    for (int64_t row = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; row < M;
         row += (int64_t)gridDim.y * blockDim.y) {
        float acc = 0.0f;
        for (int64_t k = 0; k < K; k++)
            acc = fmaf(__bfloat162float(A[row * K + k]), __bfloat162float(B[k * N + col]), acc);
        C[row * N + col] = __float2bfloat16_rn(acc); /* round to nearest even, once */
    }
}

KP_ENTRY int kp_matmul_bf16(const kp_bf16 *A, const kp_bf16 *B, kp_bf16 *C, int64_t M, int64_t N, int64_t K,
                            kp_stream stream) {
    if (M <= 0 || N <= 0) return 0; /* nothing to write; an empty grid is a launch error */
    dim3 block(32, 8);
    int64_t gy = (M + block.y - 1) / block.y;
    dim3 grid((unsigned)((N + block.x - 1) / block.x), (unsigned)(gy < 65535 ? gy : 65535));
    matmul_naive<<<grid, block, 0, (cudaStream_t)stream>>>((const __nv_bfloat16 *)A, (const __nv_bfloat16 *)B,
                                                           (__nv_bfloat16 *)C, M, N, K);
    return KP_CUDA_OK(cudaGetLastError()) ? 0 : 1;
}
