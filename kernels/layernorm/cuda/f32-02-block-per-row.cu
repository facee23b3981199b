/* layernorm f32, cuda, 02 block per row: coalesced loads, shuffle reductions.
 *
 * Adds over 01: a block shares a row, so consecutive threads read
 * consecutive floats, and both sums are reduced with warp shuffles, then
 * across warps through shared memory. Still three reads of x.
 * measured: PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/layernorm-f32-02-block-per-row.json);
 * not timed.
 */
#include <kproof/kernel.h>

#include <math.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

enum { THREADS = 256, WARPS = THREADS / 32 };

static __device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
/* Every warp reduces the per-warp partials itself, so the result reaches
 * all threads without a second barrier; each reduction owns its buffer. */
static __device__ __forceinline__ double block_sum(double v, double *sh) {
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < WARPS ? sh[threadIdx.x & 31] : 0.0;
    return warp_sum(v);
}

static __global__ __launch_bounds__(THREADS) void layernorm_block(const float *__restrict__ x,
                                                                  const float *__restrict__ w,
                                                                  const float *__restrict__ b,
                                                                  float *__restrict__ y, int64_t cols) {
    __shared__ double sh_mean[WARPS];
    __shared__ double sh_var[WARPS];
    const float *xr = x + (int64_t)blockIdx.x * cols;
    float *yr = y + (int64_t)blockIdx.x * cols;

    double s = 0.0;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) s += xr[c];
    const double mean = block_sum(s, sh_mean) / (double)cols;

    double q = 0.0;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) {
        double d = xr[c] - mean;
        q += d * d;
    }
    const double var = block_sum(q, sh_var) / (double)cols;
    const float rstd = (float)(1.0 / sqrt(var + KP_LAYERNORM_EPS));

    for (int64_t c = threadIdx.x; c < cols; c += THREADS) {
        float d = (float)(xr[c] - mean);
        yr[c] = fmaf(d * rstd, w[c], b[c]);
    }
}

KP_ENTRY int kp_layernorm_f32(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols,
                              kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    const int64_t max_grid = 0x7fffffff;
    for (int64_t r0 = 0; r0 < rows; r0 += max_grid) { /* one pass unless rows > 2^31-1 */
        int64_t n = rows - r0 < max_grid ? rows - r0 : max_grid;
        layernorm_block<<<(unsigned)n, THREADS, 0, stream>>>(x + r0 * cols, w, b, y + r0 * cols, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}
