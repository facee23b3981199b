/* sum f32, cuda, 03 vec4: 16-byte loads.
 *
 * Adds over 02: a scalar head until x is 16-byte aligned, a float4 body, a
 * scalar tail; a quarter of 02's load instructions. One 16-byte load in
 * flight a thread is still short of what hides HBM latency at 4 TB/s.
 * measured: PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/sum-f32-03-vec4.json); not
 * timed.
 */
#include <kproof/kernel.h>

#include <stdint.h>

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

/* x[0, head) and x[tail, n) are scalars; x + head holds n4 float4. */
static __global__ __launch_bounds__(THREADS) void sum_vec(const float *__restrict__ x, int64_t n, int64_t head,
                                                          int64_t n4) {
    const int64_t g = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * THREADS;
    const float4 *x4 = reinterpret_cast<const float4 *>(x + head);
    double s = 0.0;
    for (int64_t i = g; i < n4; i += stride) {
        float4 v = x4[i];
        s += (double)((v.x + v.y) + (v.z + v.w));
    }
    for (int64_t i = g; i < head; i += stride) s += x[i];
    for (int64_t i = head + 4 * n4 + g; i < n; i += stride) s += x[i];
    s = block_sum(s);
    if (threadIdx.x == 0) atomicAdd(&acc_total, s);
}

static __global__ void sum_finish(float *out) { *out = (float)acc_total; }

KP_ENTRY int kp_sum_f32(const float *x, float *out, int64_t n, kp_stream stream) {
    if (n < 0) return 1;
    int dev = 0, sms = 0;
    KP_TRY(cudaGetDevice(&dev));
    KP_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const uintptr_t addr = (uintptr_t)x;
    int64_t head = addr % 4 == 0 ? (int64_t)((16 - addr % 16) % 16 / 4) : n; /* a float* off 4 bytes: scalars only */
    if (head > n) head = n;
    const int64_t n4 = (n - head) / 4;
    int64_t blocks = (n4 + (n - 4 * n4) + THREADS - 1) / THREADS; /* no block without work */
    if (blocks > (int64_t)sms * BLOCKS_PER_SM) blocks = (int64_t)sms * BLOCKS_PER_SM;

    sum_zero<<<1, 1, 0, stream>>>();
    KP_TRY(cudaGetLastError());
    if (blocks > 0) {
        sum_vec<<<(unsigned)blocks, THREADS, 0, stream>>>(x, n, head, n4);
        KP_TRY(cudaGetLastError());
    }
    sum_finish<<<1, 1, 0, stream>>>(out);
    KP_TRY(cudaGetLastError());
    return 0;
}
