/* sum f32, cuda, 02 grid stride: a grid sized to the GPU, warp shuffles.
 *
 * Adds over 01: 8 blocks of 256 threads an SM walk the vector with a grid
 * stride, each thread keeping a double sum: one atomic a block instead of
 * one per 256 elements, and shuffles instead of a barrier per tree level.
 * measured: PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/sum-f32-02-grid-stride.json);
 * not timed.
 */
#include <kproof/kernel.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

enum { THREADS = 256, WARPS = THREADS / 32, BLOCKS_PER_SM = 8 };

static __device__ double acc_total; /* the running sum of one call */

static __device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
static __device__ __forceinline__ double block_sum(double v) {
    __shared__ double sh[WARPS];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < WARPS ? sh[threadIdx.x & 31] : 0.0;
    return warp_sum(v);
}

static __global__ void sum_zero(void) { acc_total = 0.0; }

static __global__ __launch_bounds__(THREADS) void sum_grid(const float *__restrict__ x, int64_t n) {
    const int64_t stride = (int64_t)gridDim.x * THREADS;
    double s = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) s += x[i];
    s = block_sum(s);
    if (threadIdx.x == 0) atomicAdd(&acc_total, s);
}

static __global__ void sum_finish(float *out) { *out = (float)acc_total; }

KP_ENTRY int kp_sum_f32(const float *x, float *out, int64_t n, kp_stream stream) {
    if (n < 0) return 1;
    int dev = 0, sms = 0;
    KP_TRY(cudaGetDevice(&dev));
    KP_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    int64_t blocks = (n + THREADS - 1) / THREADS; /* no block without work */
    if (blocks > (int64_t)sms * BLOCKS_PER_SM) blocks = (int64_t)sms * BLOCKS_PER_SM;

    sum_zero<<<1, 1, 0, stream>>>();
    KP_TRY(cudaGetLastError());
    if (blocks > 0) {
        sum_grid<<<(unsigned)blocks, THREADS, 0, stream>>>(x, n);
        KP_TRY(cudaGetLastError());
    }
    sum_finish<<<1, 1, 0, stream>>>(out);
    KP_TRY(cudaGetLastError());
    return 0;
}
