/* layernorm f32, cuda, 04 row in registers: x read from HBM once.
 *
 * Adds over 03: each of a row's 256 threads keeps its share (up to 32
 * floats) in registers, so mean, variance and output work on registers: one
 * read and one write per element. Statistics in fp32, shifted by the row's
 * first element. Rows over 8192 take three reads, still correct.
 * measured: PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/layernorm-f32-04-row-in-registers.json);
 * not timed.
 */
#include <kproof/kernel.h>

#include <math.h>
#include <stdint.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

enum {
    THREADS = 256,    /* threads per row */
    PER_THREAD = 32,  /* floats a thread keeps in registers */
    CAPACITY = THREADS * PER_THREAD,
    LONG_UNROLL = 4   /* chunks in flight per thread on the long-row path */
};

template <typename T> static __device__ __forceinline__ T warp_sum(T v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
/* Every warp reduces the per-warp partials itself, so the result reaches
 * all threads without a second barrier; each reduction owns its buffer. */
template <typename T> static __device__ __forceinline__ T block_sum(T v, T *sh) {
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < THREADS / 32 ? sh[threadIdx.x & 31] : (T)0;
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
static __device__ __forceinline__ float first(const float *p) { return p[0]; }

/* ---- rows that fit: one read, registers only ---------------------------- */
template <int VEC>
static __global__ __launch_bounds__(THREADS) void layernorm_regs(const float *__restrict__ x,
                                                                 const float *__restrict__ w,
                                                                 const float *__restrict__ b,
                                                                 float *__restrict__ y, int64_t cols) {
    constexpr int CHUNKS = PER_THREAD / VEC;
    __shared__ float sh_mean[32];
    __shared__ float sh_var[32];
    const int t = (int)threadIdx.x;
    const float *xr = x + (int64_t)blockIdx.x * cols;
    float *yr = y + (int64_t)blockIdx.x * cols;
    const int n = (int)(cols / VEC);
    const float pivot = first(xr);
    float v[PER_THREAD];

    /* All loads first, so they are in flight together; slots past the row
     * hold the pivot, which adds 0 to the shifted sum. */
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * THREADS + t;
        if (i < n) {
            vec<VEC>::load(xr, i, &v[k * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = pivot;
        }
    }

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* short chains, then a tree */
#pragma unroll
    for (int j = 0; j < PER_THREAD; j++) {
        v[j] -= pivot;
        acc[j % 4] += v[j];
    }
    const float delta = block_sum((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_mean) / (float)cols; /* mean - pivot */

#pragma unroll
    for (int j = 0; j < 4; j++) acc[j] = 0.0f;
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        const bool in_row = k * THREADS + t < n;
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            float d = v[k * VEC + j] - delta;
            v[k * VEC + j] = d;
            if (in_row) acc[j % 4] = fmaf(d, d, acc[j % 4]);
        }
    }
    const float var = block_sum((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_var) / (float)cols;
    const float rstd = 1.0f / sqrtf(var + (float)KP_LAYERNORM_EPS);

#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * THREADS + t;
        if (i < n) {
            float wv[VEC], bv[VEC];
            vec<VEC>::load(w, i, wv);
            vec<VEC>::load(b, i, bv);
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = fmaf(v[k * VEC + j] * rstd, wv[j], bv[j]);
            vec<VEC>::store(yr, i, &v[k * VEC]);
        }
    }
}

/* ---- rows over 8192 floats: shifted mean, variance, output (three reads).
 * Chunks are summed in fp32, the chunk sums in double, since a thread's
 * chain of chunks grows with the row. */
template <int VEC>
static __global__ __launch_bounds__(THREADS) void layernorm_long(const float *__restrict__ x,
                                                                 const float *__restrict__ w,
                                                                 const float *__restrict__ b,
                                                                 float *__restrict__ y, int64_t cols) {
    __shared__ double sh_mean[32];
    __shared__ double sh_var[32];
    const float *xr = x + (int64_t)blockIdx.x * cols;
    float *yr = y + (int64_t)blockIdx.x * cols;
    const int64_t n = cols / VEC;
    const int64_t step = (int64_t)THREADS * LONG_UNROLL;
    const float pivot = first(xr);
    float v[LONG_UNROLL * VEC];

    double s = 0.0;
    for (int64_t base = threadIdx.x; base < n; base += step) {
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            int64_t i = base + (int64_t)u * THREADS;
            if (i < n) {
                vec<VEC>::load(xr, i, &v[u * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = pivot;
            }
        }
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < LONG_UNROLL * VEC; j++) acc[j % 4] += v[j] - pivot;
        s += (double)((acc[0] + acc[1]) + (acc[2] + acc[3]));
    }
    const float delta = (float)(block_sum(s, sh_mean) / (double)cols);

    double q = 0.0;
    for (int64_t base = threadIdx.x; base < n; base += step) {
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            int64_t i = base + (int64_t)u * THREADS;
            if (i < n) vec<VEC>::load(xr, i, &v[u * VEC]);
        }
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            if (base + (int64_t)u * THREADS < n) {
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    float d = (v[u * VEC + j] - pivot) - delta;
                    acc[j % 4] = fmaf(d, d, acc[j % 4]);
                }
            }
        }
        q += (double)((acc[0] + acc[1]) + (acc[2] + acc[3]));
    }
    const double var = block_sum(q, sh_var) / (double)cols;
    const float rstd = (float)(1.0 / sqrt(var + KP_LAYERNORM_EPS));

    for (int64_t base = threadIdx.x; base < n; base += step) {
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            int64_t i = base + (int64_t)u * THREADS;
            if (i < n) vec<VEC>::load(xr, i, &v[u * VEC]);
        }
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            int64_t i = base + (int64_t)u * THREADS;
            if (i < n) {
                float wv[VEC], bv[VEC];
                vec<VEC>::load(w, i, wv);
                vec<VEC>::load(b, i, bv);
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    v[u * VEC + j] = fmaf(((v[u * VEC + j] - pivot) - delta) * rstd, wv[j], bv[j]);
                vec<VEC>::store(yr, i, &v[u * VEC]);
            }
        }
    }
}

/* ---- launchers ------------------------------------------------------------ */
static const int64_t MAX_GRID = 0x7fffffff;

template <int VEC>
static int launch(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols,
                  cudaStream_t stream) {
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID) { /* one pass unless rows > 2^31-1 */
        int64_t n = rows - r0 < MAX_GRID ? rows - r0 : MAX_GRID;
        if (cols <= CAPACITY)
            layernorm_regs<VEC><<<(unsigned)n, THREADS, 0, stream>>>(x + r0 * cols, w, b, y + r0 * cols, cols);
        else
            layernorm_long<VEC><<<(unsigned)n, THREADS, 0, stream>>>(x + r0 * cols, w, b, y + r0 * cols, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}

/* ---- entry point ------------------------------------------------------------ */
KP_ENTRY int kp_layernorm_f32(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols,
                              kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    if (cols % 4 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)w % 16 == 0 && (uintptr_t)b % 16 == 0 &&
        (uintptr_t)y % 16 == 0)
        return launch<4>(x, w, b, y, rows, cols, stream);
    return launch<1>(x, w, b, y, rows, cols, stream);
}
