/* matmul f32, cuda, 01 naive: one thread per output element, a plain fp32
 * dot product over K. The starting point: correct first, fast later.
 *
 * Napkin math: 2*M*N*K FLOPs; every thread reads a row of A and a column of
 * B, 8*K bytes per output from L1/L2 (threads of a warp share the A row and
 * read consecutive B columns, so B loads coalesce). Bound by L1/L2 traffic,
 * a few percent of the fp32 FMA peak.
 * measured: PASS on all 14 shapes of the op
 * (results/2026-11-30-h200x2-04357a8-gpu1/correct/, archived); not timed.
 */
#include <cuda_runtime.h>

#include <kproof/kernel.h>

/* The one check for every CUDA call (launches: cudaGetLastError). A
 * candidate reports failure through its return value; it never prints or
 * exits, the harness owns the process. */
#define KP_CUDA_OK(call) ((call) == cudaSuccess)

/* threadIdx.x runs along a row of C so that B and C accesses coalesce. The
 * y dimension loops, so any M fits in the 65535 limit of gridDim.y. */
static __global__ void matmul_naive(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K) {
    int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= N) return;
    for (int64_t row = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; row < M;
         row += (int64_t)gridDim.y * blockDim.y) {
        float acc = 0.0f; /* fp32 accumulation, fp32 FMA: no tf32 anywhere */
        for (int64_t k = 0; k < K; k++)
            acc = fmaf(A[row * K + k], B[k * N + col], acc);
        C[row * N + col] = acc;
    }
}

/* The entry point kproof calls. Launch only on `stream` and never
 * synchronize: the harness times the stream and checks the output itself. */
KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K,
                           kp_stream stream) {
    if (M <= 0 || N <= 0) return 0; /* nothing to write; an empty grid is a launch error */
    dim3 block(32, 8);
    int64_t gy = (M + block.y - 1) / block.y;
    dim3 grid((unsigned)((N + block.x - 1) / block.x), (unsigned)(gy < 65535 ? gy : 65535));
    matmul_naive<<<grid, block, 0, (cudaStream_t)stream>>>(A, B, C, M, N, K);
    return KP_CUDA_OK(cudaGetLastError()) ? 0 : 1;
}
