/* sum f32, cuda, 01 naive: a block per 256 elements, atomics of block sums.
 *
 * The simplest correct kernel, the baseline the others are measured against.
 * Each block halves 256 elements in shared memory and thread 0 adds the
 * block's sum to a device-side double with atomicAdd (a million fp32 atomics
 * would lose more digits than the tolerance allows). Three launches: zero,
 * reduce, write the float result (the output holds poison on entry, so it is
 * always written).
 * measured: PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/sum-f32-01-naive.json); not
 * timed.
 */
#include <kproof/kernel.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

enum { THREADS = 256 };

static __device__ double acc_total; /* the running sum of one call */

static __global__ void sum_zero(void) { acc_total = 0.0; }

static __global__ __launch_bounds__(THREADS) void sum_blocks(const float *__restrict__ x, int64_t n) {
    __shared__ float sh[THREADS];
    const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    sh[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(&acc_total, (double)sh[0]);
}

static __global__ void sum_finish(float *out) { *out = (float)acc_total; }

KP_ENTRY int kp_sum_f32(const float *x, float *out, int64_t n, kp_stream stream) {
    if (n < 0) return 1;
    sum_zero<<<1, 1, 0, stream>>>();
    KP_TRY(cudaGetLastError());
    const int64_t blocks = (n + THREADS - 1) / THREADS;
    if (blocks > 0x7fffffff) return 1; /* over 500 billion elements */
    if (blocks > 0) {
        sum_blocks<<<(unsigned)blocks, THREADS, 0, stream>>>(x, n);
        KP_TRY(cudaGetLastError());
    }
    sum_finish<<<1, 1, 0, stream>>>(out);
    KP_TRY(cudaGetLastError());
    return 0;
}
