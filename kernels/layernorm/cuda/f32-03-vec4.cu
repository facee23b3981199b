/* layernorm f32, cuda, 03 vec4: 16-byte loads and stores.
 *
 * Adds over 02: with x, w, b and y 16-byte aligned and cols a multiple of 4,
 * each thread moves a float4 per instruction; other shapes take 02's scalar
 * path.
 * measured: PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/layernorm-f32-03-vec4.json);
 * not timed.
 */
#include <kproof/kernel.h>

#include <math.h>
#include <stdint.h>

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

/* VEC consecutive floats starting at element i*VEC of a row. */
template <int VEC> struct vec;
template <> struct vec<1> {
    static __device__ __forceinline__ void load(const float *p, int64_t i, float *v) { v[0] = p[i]; }
    static __device__ __forceinline__ void store(float *p, int64_t i, const float *v) { p[i] = v[0]; }
};
template <> struct vec<4> {
    static __device__ __forceinline__ void load(const float *p, int64_t i, float *v) {
        float4 t = reinterpret_cast<const float4 *>(p)[i];
        v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
    }
    static __device__ __forceinline__ void store(float *p, int64_t i, const float *v) {
        reinterpret_cast<float4 *>(p)[i] = make_float4(v[0], v[1], v[2], v[3]);
    }
};

template <int VEC>
static __global__ __launch_bounds__(THREADS) void layernorm_block(const float *__restrict__ x,
                                                                  const float *__restrict__ w,
                                                                  const float *__restrict__ b,
                                                                  float *__restrict__ y, int64_t cols) {
    __shared__ double sh_mean[WARPS];
    __shared__ double sh_var[WARPS];
    const float *xr = x + (int64_t)blockIdx.x * cols;
    float *yr = y + (int64_t)blockIdx.x * cols;
    const int64_t n = cols / VEC; /* cols % VEC == 0 here */
    float v[VEC], wv[VEC], bv[VEC];

    double s = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += THREADS) {
        vec<VEC>::load(xr, i, v);
#pragma unroll
        for (int j = 0; j < VEC; j++) s += v[j];
    }
    const double mean = block_sum(s, sh_mean) / (double)cols;

    double q = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += THREADS) {
        vec<VEC>::load(xr, i, v);
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            double d = v[j] - mean;
            q += d * d;
        }
    }
    const double var = block_sum(q, sh_var) / (double)cols;
    const float rstd = (float)(1.0 / sqrt(var + KP_LAYERNORM_EPS));

    for (int64_t i = threadIdx.x; i < n; i += THREADS) {
        vec<VEC>::load(xr, i, v);
        vec<VEC>::load(w, i, wv);
        vec<VEC>::load(b, i, bv);
#pragma unroll
        for (int j = 0; j < VEC; j++) v[j] = fmaf((float)(v[j] - mean) * rstd, wv[j], bv[j]);
        vec<VEC>::store(yr, i, v);
    }
}

KP_ENTRY int kp_layernorm_f32(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols,
                              kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    const int vec4 = cols % 4 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)w % 16 == 0 && (uintptr_t)b % 16 == 0 &&
                     (uintptr_t)y % 16 == 0;
    const int64_t max_grid = 0x7fffffff;
    for (int64_t r0 = 0; r0 < rows; r0 += max_grid) { /* one pass unless rows > 2^31-1 */
        int64_t n = rows - r0 < max_grid ? rows - r0 : max_grid;
        if (vec4)
            layernorm_block<4><<<(unsigned)n, THREADS, 0, stream>>>(x + r0 * cols, w, b, y + r0 * cols, cols);
        else
            layernorm_block<1><<<(unsigned)n, THREADS, 0, stream>>>(x + r0 * cols, w, b, y + r0 * cols, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}
