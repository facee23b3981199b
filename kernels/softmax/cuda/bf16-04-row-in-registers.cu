/* softmax bf16, cuda, 04 row in registers: x read from HBM once, one exp per element.
 *
 * Adds over 03: each of a row's 256 threads keeps its share (up to 32
 * values, as fp32) in registers; max, exp, sum and the output work on
 * registers. exp(x - max) is exp2(x*log2e - max*log2e), one FMA. Rows over
 * 8192 take an online pass (running max, rescaled sum) and an output pass.
 * measured: PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/softmax-bf16-04-row-in-registers.json);
 * not timed.
 */
#include <kproof/kernel.h>

#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

enum {
    THREADS = 256,          /* threads per row */
    WARPS = THREADS / 32,
    PER_THREAD = 32,        /* floats a thread keeps in registers */
    CAPACITY = THREADS * PER_THREAD,
    ONLINE_UNROLL = 4       /* chunks in flight per thread on the long-row path */
};
#define LOG2E 1.44269504088896341f

static __device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
template <typename T> static __device__ __forceinline__ T warp_sum(T v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
/* Every warp reduces the per-warp partials itself, so the result reaches
 * all threads without a second barrier; each reduction owns its buffer. */
static __device__ __forceinline__ float block_max(float v, float *sh) {
    v = warp_max(v);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < WARPS ? sh[threadIdx.x & 31] : -INFINITY;
    return warp_max(v);
}
template <typename T> static __device__ __forceinline__ T block_sum(T v, T *sh) {
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < WARPS ? sh[threadIdx.x & 31] : (T)0;
    return warp_sum(v);
}

/* VEC consecutive bf16 starting at element i*VEC of a row, as floats. */
static __device__ __forceinline__ float bf16_to_f32(kp_bf16 h) { return __uint_as_float((uint32_t)h << 16); }
static __device__ __forceinline__ kp_bf16 f32_to_bf16(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
static __device__ __forceinline__ void unpack2(uint32_t w, float *v) {
    v[0] = __uint_as_float(w << 16);
    v[1] = __uint_as_float(w & 0xffff0000u);
}
static __device__ __forceinline__ uint32_t pack2(const float *v) { /* one cvt.rn.bf16x2 */
    __nv_bfloat162 h = __floats2bfloat162_rn(v[0], v[1]);
    return *reinterpret_cast<uint32_t *>(&h);
}
template <int VEC> struct vec;
template <> struct vec<1> {
    static __device__ __forceinline__ void load(const kp_bf16 *p, int64_t i, float *v) { v[0] = bf16_to_f32(p[i]); }
    static __device__ __forceinline__ void store(kp_bf16 *p, int64_t i, const float *v) { p[i] = f32_to_bf16(v[0]); }
};
template <> struct vec<8> {
    static __device__ __forceinline__ void load(const kp_bf16 *p, int64_t i, float *v) {
        uint4 t = reinterpret_cast<const uint4 *>(p)[i];
        unpack2(t.x, v); unpack2(t.y, v + 2); unpack2(t.z, v + 4); unpack2(t.w, v + 6);
    }
    static __device__ __forceinline__ void store(kp_bf16 *p, int64_t i, const float *v) {
        reinterpret_cast<uint4 *>(p)[i] = make_uint4(pack2(v), pack2(v + 2), pack2(v + 4), pack2(v + 6));
    }
};

/* ---- rows that fit: one read, registers only ---------------------------- */
template <int VEC>
static __global__ __launch_bounds__(THREADS) void softmax_regs(const kp_bf16 *__restrict__ x, kp_bf16 *__restrict__ y,
                                                               int64_t cols) {
    constexpr int CHUNKS = PER_THREAD / VEC;
    __shared__ float sh_max[WARPS];
    __shared__ float sh_sum[WARPS];
    const kp_bf16 *xr = x + (int64_t)blockIdx.x * cols;
    kp_bf16 *yr = y + (int64_t)blockIdx.x * cols;
    const int n = (int)(cols / VEC);
    float v[PER_THREAD];

    /* All loads first, so they are in flight together; slots past the row
     * hold -inf, which the max ignores and exp2 turns into 0. */
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * THREADS + (int)threadIdx.x;
        if (i < n) {
            vec<VEC>::load(xr, i, &v[k * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = -INFINITY;
        }
    }

    float m = -INFINITY;
#pragma unroll
    for (int j = 0; j < PER_THREAD; j++) m = fmaxf(m, v[j]);
    m = block_max(m, sh_max);
    const float ml = m * LOG2E;

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* 4 short chains, then a tree */
#pragma unroll
    for (int j = 0; j < PER_THREAD; j++) {
        v[j] = exp2f(fmaf(v[j], LOG2E, -ml));
        acc[j % 4] += v[j];
    }
    float s = block_sum((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_sum);
    const float inv = 1.0f / s;

#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * THREADS + (int)threadIdx.x;
        if (i < n) {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] *= inv;
            vec<VEC>::store(yr, i, &v[k * VEC]);
        }
    }
}

/* ---- long rows: online max and sum, then the output pass ----------------- */
template <int VEC>
static __global__ __launch_bounds__(THREADS) void softmax_online(const kp_bf16 *__restrict__ x, kp_bf16 *__restrict__ y,
                                                                 int64_t cols) {
    __shared__ float sh_max[WARPS];
    __shared__ double sh_sum[WARPS];
    const kp_bf16 *xr = x + (int64_t)blockIdx.x * cols;
    kp_bf16 *yr = y + (int64_t)blockIdx.x * cols;
    const int64_t n = cols / VEC;
    float v[ONLINE_UNROLL * VEC];

    /* Running ml = max*log2e (rounded) and s = sum of exp2(x*log2e - ml).
     * A new max rescales s by exp2(ml_old - ml_new), a difference of the
     * same rounded values the terms used (exact when they are close), so
     * each thread's rounding of ml cancels as it does on the one-read path.
     * s in double because a thread's chain of chunks grows with the row. */
    float ml = -INFINITY;
    double s = 0.0;
    for (int64_t base = threadIdx.x; base < n; base += (int64_t)THREADS * ONLINE_UNROLL) {
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; u++) {
            int64_t i = base + (int64_t)u * THREADS;
            if (i < n) {
                vec<VEC>::load(xr, i, &v[u * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
            }
        }
        float cm = -INFINITY;
#pragma unroll
        for (int j = 0; j < ONLINE_UNROLL * VEC; j++) cm = fmaxf(cm, v[j]);
        const float nml = fmaxf(ml, cm * LOG2E);
        s *= (double)exp2f(ml - nml); /* ml = -inf: factor 0, s was 0 */
        ml = nml;
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < ONLINE_UNROLL * VEC; j++) acc[j % 4] += exp2f(fmaf(v[j], LOG2E, -ml));
        s += (double)((acc[0] + acc[1]) + (acc[2] + acc[3]));
    }
    const float rml = block_max(ml, sh_max);
    s *= (double)exp2f(ml - rml); /* to the row's max; 0 for idle threads */
    const float inv = (float)(1.0 / block_sum(s, sh_sum));

    for (int64_t base = threadIdx.x; base < n; base += (int64_t)THREADS * ONLINE_UNROLL) {
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; u++) {
            int64_t i = base + (int64_t)u * THREADS;
            if (i < n) vec<VEC>::load(xr, i, &v[u * VEC]);
        }
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; u++) {
            int64_t i = base + (int64_t)u * THREADS;
            if (i < n) {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = exp2f(fmaf(v[u * VEC + j], LOG2E, -rml)) * inv;
                vec<VEC>::store(yr, i, &v[u * VEC]);
            }
        }
    }
}

template <int VEC>
static int launch(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int64_t max_grid = 0x7fffffff;
    for (int64_t r0 = 0; r0 < rows; r0 += max_grid) { /* one pass unless rows > 2^31-1 */
        int64_t n = rows - r0 < max_grid ? rows - r0 : max_grid;
        if (cols <= CAPACITY)
            softmax_regs<VEC><<<(unsigned)n, THREADS, 0, stream>>>(x + r0 * cols, y + r0 * cols, cols);
        else
            softmax_online<VEC><<<(unsigned)n, THREADS, 0, stream>>>(x + r0 * cols, y + r0 * cols, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}

KP_ENTRY int kp_softmax_bf16(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols, kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    if (cols % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0) return launch<8>(x, y, rows, cols, stream);
    return launch<1>(x, y, rows, cols, stream);
}
