/* layernorm bf16, variant 10: both statistics in one pass and one reduction, shifted at every level.
 *
 * Adds over 05: a row waits on one barrier and one chain of shuffles for
 * its mean and variance instead of two in turn. At 4096x16384 an SM holds
 * only two 512-thread rows, so the time a row spends in reductions is time
 * its SM's loads are half idle: the first 09 (one reduction of sums about
 * the row's first value) was 2.9% faster than 05 there and wrong on
 * outlier first values; 09's Chan merge was right and 26% slower (lab
 * screen, results/2026-11-30-h200-session5/call1-1b7f95b: 90.00 against
 * 71.23 us), its merges a chain of divisions. Here each level sums
 * d = x - pivot and d^2 plainly, with a pivot taken from inside the level
 * (a thread's first value, a warp's first lane mean, the row's first warp
 * mean), so no level cancels more than ~32-fold (see the comment in the
 * kernel) and an outlier anywhere grows the variance along with the error.
 * Rows of at most 1024 elements (a warp each) skip the block level.
 * tests/test_tolerance.c runs a host copy of this arithmetic (LN_NESTED)
 * on every shape and input distribution, spike rows included.
 * Output in fp32, rounded once to bf16.
 * H200 (results/2026-11-30-h200-session5/call3-6aadba2, 1.5 s per shape):
 * 83.18 / 86.40 / 84.69 us at 16384x4096 / 65536x1024 / 4096x16384 =
 * 75.2 / 72.4 / 73.9% of copy, against 05's 64.91 / 64.32 / 70.94 in the
 * same run: 19-34% slower everywhere, warp-per-row rows included. Kept as
 * a measured dead end (see f32 09 for what its SASS shows).
 * kproof-best: no
 */
#include <kproof/kernel.h>

#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

enum { LONG_THREADS = 1024, LONG_UNROLL = 4 };

template <typename T> static __device__ __forceinline__ T warp_sum(T v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
/* (count, mean, M2) of a warp's 32 lanes, each given as its own triple,
 * about the pivot P (one lane's mean): the shifted sums a = n (mean - P)
 * and b = M2 + n (mean - P)^2 add up plainly, and every lane ends with the
 * same bits (a butterfly of additions). */
static __device__ __forceinline__ void combine(float &num, float &mean, float &m2, float pivot) {
    const float e = mean - pivot;
    float a = num * e, b = fmaf(num * e, e, m2), c = num;
    a = warp_sum(a);
    b = warp_sum(b);
    c = warp_sum(c);
    num = c;
    if (c > 0.0f) {
        mean = pivot + a / c;
        m2 = fmaxf(b - a * (a / c), 0.0f);
    } else {
        mean = 0.0f;
        m2 = 0.0f;
    }
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
static __device__ __forceinline__ float first(const kp_bf16 *p) { return bf16_to_f32(p[0]); }

/* ---- rows that fit: one read, registers only ----------------------------
 * TPR threads per row, each keeping PER floats; BLOCK / TPR rows per block.
 * 64 registers a thread at PER = 32 (1024 threads per SM), fewer below. */
template <int VEC, int PER, int TPR, int BLOCK>
static __global__ __launch_bounds__(BLOCK, (PER <= 8 ? 2048 : PER <= 16 ? 1536 : 1024) / BLOCK) void layernorm_regs(
    const kp_bf16 *__restrict__ x, const kp_bf16 *__restrict__ w, const kp_bf16 *__restrict__ b,
    kp_bf16 *__restrict__ y, int64_t rows, int64_t cols) {
    constexpr int CHUNKS = PER / VEC;
    __shared__ float4 sh_stats[32];
    const int64_t row = (int64_t)blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
    if (TPR == 32 && row >= rows) return; /* whole warps; a block row always exists */
    const int t = (int)(threadIdx.x % TPR);
    const kp_bf16 *xr = x + row * cols;
    kp_bf16 *yr = y + row * cols;
    const int n = (int)(cols / VEC);
    float v[PER];

    /* All loads first, so they are in flight together. A thread's chunks
     * in the row are a prefix of k; slots past the row take the thread's
     * first value, so they add 0 to its shifted sums. */
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * TPR + t;
        if (i < n) {
            vec<VEC>::load(xr, i, &v[k * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = k > 0 ? v[0] : 0.0f;
        }
    }

    /* Both statistics in one pass and one reduction, each level shifted by
     * a pivot from inside it: a thread by its own first value, a warp by
     * its first lane's mean, the row by its first warp's mean. At each
     * level sum(d) and sum(d^2) about the pivot give M2 = sum(d^2) -
     * sum(d)^2 / n, whose cancellation is at most ~n times the rounding of
     * M2 itself when the pivot is one of the values it summarizes (M2 then
     * holds the pivot's own distance to the mean). With n at most 32
     * values, 32 threads and 32 warps, no level sees a large n, and an
     * outlier anywhere (the spike inputs) only grows M2 with the error. */
    const float cnt = (float)(t < n ? VEC * ((n - 1 - t) / TPR + 1 < CHUNKS ? (n - 1 - t) / TPR + 1 : CHUNKS) : 0);
    const float pt = v[0];
    float s[2] = {0.0f, 0.0f}, q[2] = {0.0f, 0.0f}; /* short chains */
#pragma unroll
    for (int j = 0; j < PER; j++) {
        const float d = v[j] - pt;
        s[j & 1] += d;
        q[j & 1] = fmaf(d, d, q[j & 1]);
    }
    float mean = 0.0f, m2 = 0.0f, num = cnt;
    if (cnt > 0.0f) {
        const float sd = s[0] + s[1];
        mean = pt + sd / cnt;
        m2 = fmaxf((q[0] + q[1]) - sd * (sd / cnt), 0.0f);
    }
    /* warp: lane 0 has values whenever any lane has */
    combine(num, mean, m2, __shfl_sync(0xffffffffu, mean, 0));
    if (TPR > 32) {
        if ((threadIdx.x & 31) == 0) sh_stats[threadIdx.x >> 5] = make_float4(num, mean, m2, 0.0f);
        __syncthreads();
        const float4 p = (threadIdx.x & 31) < TPR / 32 ? sh_stats[threadIdx.x & 31] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        num = p.x; mean = p.y; m2 = p.z;
        combine(num, mean, m2, sh_stats[0].y); /* warp 0 always has values */
    }
    const float rstd = 1.0f / sqrtf(m2 / (float)cols + (float)KP_LAYERNORM_EPS);

#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * TPR + t;
        if (i < n) {
            float wv[VEC], bv[VEC];
            vec<VEC>::load(w, i, wv);
            vec<VEC>::load(b, i, bv);
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = fmaf((v[k * VEC + j] - mean) * rstd, wv[j], bv[j]);
            vec<VEC>::store(yr, i, &v[k * VEC]);
        }
    }
}

/* ---- rows over 32768 elements: shifted mean, variance, output (three reads).
 * Chunks are summed in fp32, the chunk sums in double, since a thread's
 * chain of chunks grows with the row. */
template <int VEC>
static __global__ __launch_bounds__(LONG_THREADS) void layernorm_long(const kp_bf16 *__restrict__ x,
                                                                      const kp_bf16 *__restrict__ w,
                                                                      const kp_bf16 *__restrict__ b,
                                                                      kp_bf16 *__restrict__ y, int64_t cols) {
    __shared__ double sh_mean[32];
    __shared__ double sh_var[32];
    const kp_bf16 *xr = x + (int64_t)blockIdx.x * cols;
    kp_bf16 *yr = y + (int64_t)blockIdx.x * cols;
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
static int launch_regs(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows, int64_t cols,
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
static int launch(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows, int64_t cols,
                  cudaStream_t stream) {
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
KP_ENTRY int kp_layernorm_bf16(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows,
                               int64_t cols, kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    if (cols % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)w % 16 == 0 && (uintptr_t)b % 16 == 0 &&
        (uintptr_t)y % 16 == 0)
        return launch<8>(x, w, b, y, rows, cols, stream);
    return launch<1>(x, w, b, y, rows, cols, stream);
}
