/* sum f32, cuda, 05 single launch: the last block to finish adds the partials.
 *
 * Adds over 04: no zero and finish launches. Each block writes its double
 * partial to its own slot, fences and takes a ticket; the block that draws
 * the last ticket adds every slot in a fixed order (the same input gives the
 * same bits), writes the result and resets the counter for the next call. At
 * 2^20 (4 MiB) the launch and one round trip dominate, so one launch instead
 * of three is what counts.
 * measured: 241.14 / 21.09 / 6.88 us at 2^28 / 2^24 / 2^20 (103.9% of copy
 * at 2^28: a read-only stream outruns a copy); torch eager 250.18 / 23.68 /
 * 9.50 us (results/2026-12-01-h200-e090e54/summary.md); PASS on the op's
 * edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/sum-f32-05-single-launch.json).
 */
#include <kproof/kernel.h>

#include <stdint.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

enum {
    THREADS = 256,
    WARPS = THREADS / 32,
    UNROLL = 8,                /* float4 loads in flight per thread */
    TILE = THREADS * UNROLL,   /* float4 per block and tile */
    BLOCKS_PER_SM = 4,         /* 1024 threads per SM at <= 64 registers */
    MAX_BLOCKS = 2048          /* partial slots; a grid never has more blocks */
};

static __device__ double partials[MAX_BLOCKS];
static __device__ unsigned int blocks_done; /* 0 between calls */

static __device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
/* Each reduction owns its buffer, so none waits for the previous one's
 * readers; the result reaches every thread. */
static __device__ __forceinline__ double block_sum(double v, double *sh) {
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < WARPS ? sh[threadIdx.x & 31] : 0.0;
    return warp_sum(v);
}

static __device__ __forceinline__ double sum4(float4 v) { return (double)((v.x + v.y) + (v.z + v.w)); }

/* x[0, head) and x[head + 4*n4, n) are scalars; x + head holds n4 float4. */
static __global__ __launch_bounds__(THREADS, BLOCKS_PER_SM) void sum_single(const float *__restrict__ x,
                                                                            float *__restrict__ out, int64_t n,
                                                                            int64_t head, int64_t n4) {
    __shared__ double sh_block[WARPS];
    __shared__ double sh_final[WARPS];
    __shared__ bool last;
    const int64_t g = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * THREADS;
    const float4 *x4 = reinterpret_cast<const float4 *>(x + head);
    const int64_t tiles = n4 / TILE;
    double s = 0.0;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const float4 *p = x4 + t * TILE + threadIdx.x;
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = p[u * THREADS];
        double d[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) d[u] = sum4(v[u]);
#pragma unroll
        for (int w = 1; w < UNROLL; w *= 2) /* pairwise: depth 3, not a chain of 8 */
#pragma unroll
            for (int u = 0; u < UNROLL; u += 2 * w) d[u] += d[u + w];
        s += d[0];
    }
    for (int64_t i = tiles * TILE + g; i < n4; i += stride) s += sum4(x4[i]);
    for (int64_t i = g; i < head; i += stride) s += x[i];
    for (int64_t i = head + 4 * n4 + g; i < n; i += stride) s += x[i];
    s = block_sum(s, sh_block);

    if (threadIdx.x == 0) {
        partials[blockIdx.x] = s;
        __threadfence(); /* the slot is visible before the ticket is */
        last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;

    __threadfence(); /* every other block's slot is visible now */
    double t = 0.0;
    for (unsigned i = threadIdx.x; i < gridDim.x; i += THREADS) t += __ldcg(&partials[i]);
    t = block_sum(t, sh_final);
    if (threadIdx.x == 0) {
        *out = (float)t;
        blocks_done = 0; /* kernel boundaries order this before the next call */
    }
}

KP_ENTRY int kp_sum_f32(const float *x, float *out, int64_t n, kp_stream stream) {
    if (n < 0) return 1;
    int dev = 0, sms = 0;
    KP_TRY(cudaGetDevice(&dev));
    KP_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const uintptr_t addr = (uintptr_t)x;
    int64_t head = addr % 4 == 0 ? (int64_t)((16 - addr % 16) % 16 / 4) : n; /* a float* off 4 bytes: scalars only */
    if (head > n) head = n;
    const int64_t n4 = (n - head) / 4;
    int64_t blocks = (n4 + TILE - 1) / TILE; /* no block without a tile, but at least one */
    if (blocks < 1) blocks = 1;
    if (blocks > (int64_t)sms * BLOCKS_PER_SM) blocks = (int64_t)sms * BLOCKS_PER_SM;
    if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;

    sum_single<<<(unsigned)blocks, THREADS, 0, stream>>>(x, out, n, head, n4);
    KP_TRY(cudaGetLastError());
    return 0;
}
