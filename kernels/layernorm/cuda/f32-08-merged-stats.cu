/* layernorm f32, variant 08: both statistics in one block reduction, merged by Chan's formula.
 *
 * Adds over 05: a row waits on one barrier and one chain of shuffles for
 * its mean and variance instead of two, one after the other, between its
 * loads and its stores. Each thread keeps the mean and the sum of squared
 * deviations of its own values (two passes over registers), and the row
 * merges (count, mean, M2) triples (Chan et al.), which is as exact as two
 * passes over the row.
 * History: the first 08 took E[d^2] - E[d]^2 of d = x - x[0] in one pass.
 * It measured 130.43 / 131.73 / 135.10 us at 16384x4096 / 65536x1024 /
 * 4096x16384 against 05's 130.00 / 130.46 / 132.08
 * (results/2026-11-30-h200-session4/call3-61cbe17), and review then found it
 * wrong where a row's first value is an outlier: the two terms are ~n times
 * the variance and cancel. layernorm's spike inputs now test exactly that
 * (tests/candidates/layernorm_pivot_onepass.c is WRONG on them), and this
 * merge replaced it.
 * Statistics in fp32, shifted by the row's first element; x - x0 is exact
 * for the nearby values of a row.
 * Napkin math: 8 bytes per element moved (x read once, y written once; w
 * and b come from L2), about 10 FLOPs per element: bandwidth-bound.
 * H200: this version not measured yet.
 * kproof-best: no
 */
#include <kproof/kernel.h>

#include <math.h>
#include <stdint.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

enum { LONG_THREADS = 1024, LONG_UNROLL = 4 };

template <typename T> static __device__ __forceinline__ T warp_sum(T v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
/* A group of TPR threads reduces one row: a warp needs only shuffles; a
 * whole block (TPR > 32) goes through shared memory once. Every warp
 * reduces the per-warp partials itself, so the result reaches all threads
 * without a second barrier; each reduction owns its buffer. */
template <int TPR, typename T> static __device__ __forceinline__ T row_sum(T v, T *sh) {
    v = warp_sum(v);
    if (TPR == 32) return v;
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < TPR / 32 ? sh[threadIdx.x & 31] : (T)0;
    return warp_sum(v);
}

/* (count, mean, M2) of two sets of values merged (Chan et al.): the
 * larger set's mean moves by the difference times the other's share, and
 * M2 gains the spread between the two means. An empty set changes nothing. */
static __device__ __forceinline__ float4 merge_stats(float4 a, float4 b) {
    if (b.x == 0.0f) return a; /* not through the formula: 0 * inf would be NaN */
    if (a.x == 0.0f) return b;
    const float n = a.x + b.x;
    const float d = b.y - a.y, f = __fdividef(b.x, n);
    return make_float4(n, fmaf(d, f, a.y), a.z + b.z + d * d * a.x * f, 0.0f);
}
/* Both lanes of a pair merge (lower lane, upper lane) in that order, so
 * every lane ends with the same bits (the merge is not commutative in
 * rounding, as a sum is). */
static __device__ __forceinline__ float4 warp_stats(float4 v) {
    for (int o = 16; o > 0; o >>= 1) {
        const float4 w = make_float4(__shfl_xor_sync(0xffffffffu, v.x, o), __shfl_xor_sync(0xffffffffu, v.y, o),
                                     __shfl_xor_sync(0xffffffffu, v.z, o), 0.0f);
        v = (threadIdx.x & o) ? merge_stats(w, v) : merge_stats(v, w);
    }
    return v;
}
template <int TPR> static __device__ __forceinline__ float4 row_stats(float4 v, float4 *sh) {
    v = warp_stats(v);
    if (TPR == 32) return v;
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < TPR / 32 ? sh[threadIdx.x & 31] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    return warp_stats(v);
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

/* ---- rows that fit: one read, registers only ----------------------------
 * TPR threads per row, each keeping PER floats; BLOCK / TPR rows per block.
 * 64 registers a thread at PER = 32 (1024 threads per SM), fewer below. */
template <int VEC, int PER, int TPR, int BLOCK>
static __global__ __launch_bounds__(BLOCK, (PER <= 8 ? 2048 : PER <= 16 ? 1536 : 1024) / BLOCK) void layernorm_regs(
    const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b, float *__restrict__ y,
    int64_t rows, int64_t cols) {
    constexpr int CHUNKS = PER / VEC;
    __shared__ float4 sh_stats[32];
    const int64_t row = (int64_t)blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
    if (TPR == 32 && row >= rows) return; /* whole warps; a block row always exists */
    const int t = (int)(threadIdx.x % TPR);
    const float *xr = x + row * cols;
    float *yr = y + row * cols;
    const int n = (int)(cols / VEC);
    const float pivot = first(xr);
    float v[PER];

    /* All loads first, so they are in flight together; slots past the row
     * hold the pivot, which adds 0 to the shifted sum. */
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * TPR + t;
        if (i < n) {
            vec<VEC>::load(xr, i, &v[k * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = pivot;
        }
    }

    /* One reduction for both statistics. Each thread takes the mean and
     * the sum of squared deviations of its own values (two passes over its
     * registers), and the row merges (count, mean, M2) triples by Chan's
     * formula: one barrier and one chain of shuffles, as exact as two
     * passes over the row whatever its first value (an outlier there is
     * what breaks E[d^2] - E[d]^2 about a pivot: layernorm's spike inputs). */
    float cnt = 0.0f, s[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* short chains, then a tree */
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        if (k * TPR + t < n) cnt += (float)VEC;
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            v[k * VEC + j] -= pivot; /* slots past the row: 0 */
            s[j % 4] += v[k * VEC + j];
        }
    }
    const float tm = cnt > 0.0f ? ((s[0] + s[1]) + (s[2] + s[3])) / cnt : 0.0f;
    float q[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        const bool in_row = k * TPR + t < n;
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            const float e = v[k * VEC + j] - tm;
            if (in_row) q[j % 4] = fmaf(e, e, q[j % 4]);
        }
    }
    const float4 st = row_stats<TPR>(make_float4(cnt, tm, (q[0] + q[1]) + (q[2] + q[3]), 0.0f), sh_stats);
    const float delta = st.y;                 /* mean - pivot */
    const float var = st.z / (float)cols;
    const float rstd = 1.0f / sqrtf(var + (float)KP_LAYERNORM_EPS);

#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * TPR + t;
        if (i < n) {
            float wv[VEC], bv[VEC];
            vec<VEC>::load(w, i, wv);
            vec<VEC>::load(b, i, bv);
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = fmaf((v[k * VEC + j] - delta) * rstd, wv[j], bv[j]);
            vec<VEC>::store(yr, i, &v[k * VEC]);
        }
    }
}

/* ---- rows over 32768 floats: shifted mean, variance, output (three reads).
 * Chunks are summed in fp32, the chunk sums in double, since a thread's
 * chain of chunks grows with the row. */
template <int VEC>
static __global__ __launch_bounds__(LONG_THREADS) void layernorm_long(const float *__restrict__ x,
                                                                      const float *__restrict__ w,
                                                                      const float *__restrict__ b,
                                                                      float *__restrict__ y, int64_t cols) {
    __shared__ double sh_mean[32];
    __shared__ double sh_var[32];
    const float *xr = x + (int64_t)blockIdx.x * cols;
    float *yr = y + (int64_t)blockIdx.x * cols;
    const int64_t n = cols / VEC;
    const int64_t step = (int64_t)LONG_THREADS * LONG_UNROLL;
    const float pivot = first(xr);
    float v[LONG_UNROLL * VEC];

    double s = 0.0;
    for (int64_t base = threadIdx.x; base < n; base += step) {
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            int64_t i = base + (int64_t)u * LONG_THREADS;
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
    const float delta = (float)(row_sum<LONG_THREADS>(s, sh_mean) / (double)cols);

    double q = 0.0;
    for (int64_t base = threadIdx.x; base < n; base += step) {
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            int64_t i = base + (int64_t)u * LONG_THREADS;
            if (i < n) vec<VEC>::load(xr, i, &v[u * VEC]);
        }
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            if (base + (int64_t)u * LONG_THREADS < n) {
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    float d = (v[u * VEC + j] - pivot) - delta;
                    acc[j % 4] = fmaf(d, d, acc[j % 4]);
                }
            }
        }
        q += (double)((acc[0] + acc[1]) + (acc[2] + acc[3]));
    }
    const double var = row_sum<LONG_THREADS>(q, sh_var) / (double)cols;
    const float rstd = (float)(1.0 / sqrt(var + KP_LAYERNORM_EPS));

    for (int64_t base = threadIdx.x; base < n; base += step) {
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            int64_t i = base + (int64_t)u * LONG_THREADS;
            if (i < n) vec<VEC>::load(xr, i, &v[u * VEC]);
        }
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            int64_t i = base + (int64_t)u * LONG_THREADS;
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

template <int VEC, int PER, int TPR, int BLOCK>
static int launch_regs(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols,
                       cudaStream_t stream) {
    const int64_t rpb = BLOCK / TPR;
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID * rpb) { /* one pass in practice */
        int64_t n = rows - r0 < MAX_GRID * rpb ? rows - r0 : MAX_GRID * rpb;
        layernorm_regs<VEC, PER, TPR, BLOCK>
            <<<(unsigned)((n + rpb - 1) / rpb), BLOCK, 0, stream>>>(x + r0 * cols, w, b, y + r0 * cols, n, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}

template <int VEC>
static int launch(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols,
                  cudaStream_t stream) {
    if (cols <= 128) return launch_regs<VEC, 4, 32, 256>(x, w, b, y, rows, cols, stream);
    if (cols <= 256) return launch_regs<VEC, 8, 32, 256>(x, w, b, y, rows, cols, stream);
    if (cols <= 512) return launch_regs<VEC, 16, 32, 256>(x, w, b, y, rows, cols, stream);
    if (cols <= 1024) return launch_regs<VEC, 32, 32, 256>(x, w, b, y, rows, cols, stream);
    if (cols <= 2048) return launch_regs<VEC, 16, 128, 128>(x, w, b, y, rows, cols, stream);
    if (cols <= 4096) return launch_regs<VEC, 32, 128, 128>(x, w, b, y, rows, cols, stream);
    if (cols <= 8192) return launch_regs<VEC, 32, 256, 256>(x, w, b, y, rows, cols, stream);
    if (cols <= 16384) return launch_regs<VEC, 32, 512, 512>(x, w, b, y, rows, cols, stream);
    if (cols <= 32768) return launch_regs<VEC, 32, 1024, 1024>(x, w, b, y, rows, cols, stream);
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID) {
        int64_t n = rows - r0 < MAX_GRID ? rows - r0 : MAX_GRID;
        layernorm_long<VEC><<<(unsigned)n, LONG_THREADS, 0, stream>>>(x + r0 * cols, w, b, y + r0 * cols, cols);
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
