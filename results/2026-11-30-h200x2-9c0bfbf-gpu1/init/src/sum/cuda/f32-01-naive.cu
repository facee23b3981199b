/* sum f32, variant 01: naive, one block per 256 elements, atomics of block sums.
 *
 * Adds: nothing; the simplest correct kernel, the baseline for the others.
 * Each block loads 256 elements into shared memory and halves them in a
 * tree; thread 0 adds the block's sum to a device-side double with
 * atomicAdd. The accumulator is double because a million fp32 atomics in a
 * row would lose more digits than the task allows (about
 * eps*log2(n)*sum|x|). Three launches on the caller's stream: zero the
 * accumulator, reduce, write the float result (the output holds poison on
 * entry, so it is always written, never only added to).
 * Napkin math: 4 bytes read per element, 1 FLOP per element; 2^28 elements
 * is 1 GiB and a million same-address atomics, which dominate.
 * H200: not yet measured
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
