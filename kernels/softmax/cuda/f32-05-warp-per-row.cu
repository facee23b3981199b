/* softmax f32, cuda, 05 warp per row: the launch shape chosen by row length.
 *
 * Adds over 04: rows up to 1024 floats get one warp each (no barrier);
 * longer rows a block sized so a thread keeps at most 32 floats (rows up to
 * 32768 stay in registers); only longer rows take the online path.
 * measured: 144.7 / 143.0 / 275.5 us at 8192x8192 / 65536x1024 / 4096x32768
 * under an earlier timing protocol (results/2026-11-30-h200x2-e9d72fd-gpu1,
 * archived); PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/softmax-f32-05-warp-per-row.json).
 */
#include <kproof/kernel.h>

#include <math.h>
#include <stdint.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

#define LOG2E 1.44269504088896341f
enum { ONLINE_THREADS = 1024, ONLINE_UNROLL = 4 };

static __device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
template <typename T> static __device__ __forceinline__ T warp_sum(T v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
/* A group of TPR threads reduces one row: a warp needs only shuffles; a
 * whole block (TPR > 32) goes through shared memory once. Every warp
 * reduces the per-warp partials itself, so the result reaches all threads
 * without a second barrier; each reduction owns its buffer. */
template <int TPR> static __device__ __forceinline__ float row_max(float v, float *sh) {
    v = warp_max(v);
    if (TPR == 32) return v;
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < TPR / 32 ? sh[threadIdx.x & 31] : -INFINITY;
    return warp_max(v);
}
template <int TPR, typename T> static __device__ __forceinline__ T row_sum(T v, T *sh) {
    v = warp_sum(v);
    if (TPR == 32) return v;
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < TPR / 32 ? sh[threadIdx.x & 31] : (T)0;
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

/* ---- rows that fit: one read, registers only ----------------------------
 * TPR threads per row, each keeping PER floats; BLOCK / TPR rows per block.
 * 64 registers a thread at PER = 32 (1024 threads per SM), fewer below. */
template <int VEC, int PER, int TPR, int BLOCK>
static __global__ __launch_bounds__(BLOCK, (PER <= 8 ? 2048 : PER <= 16 ? 1536 : 1024) / BLOCK) void softmax_regs(
    const float *__restrict__ x, float *__restrict__ y, int64_t rows, int64_t cols) {
    constexpr int CHUNKS = PER / VEC;
    __shared__ float sh_max[32];
    __shared__ float sh_sum[32];
    const int64_t row = (int64_t)blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
    if (TPR == 32 && row >= rows) return; /* whole warps; a block row always exists */
    const int t = (int)(threadIdx.x % TPR);
    const float *xr = x + row * cols;
    float *yr = y + row * cols;
    const int n = (int)(cols / VEC);
    float v[PER];

    /* All loads first, so they are in flight together; slots past the row
     * hold -inf, which the max ignores and exp2 turns into 0. */
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * TPR + t;
        if (i < n) {
            vec<VEC>::load(xr, i, &v[k * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = -INFINITY;
        }
    }

    float m = -INFINITY;
#pragma unroll
    for (int j = 0; j < PER; j++) m = fmaxf(m, v[j]);
    m = row_max<TPR>(m, sh_max);
    const float ml = m * LOG2E; /* its rounding is one factor in every term */

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* short chains, then a tree */
#pragma unroll
    for (int j = 0; j < PER; j++) {
        v[j] = exp2f(fmaf(v[j], LOG2E, -ml));
        acc[j % 4] += v[j];
    }
    const float inv = 1.0f / row_sum<TPR>((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_sum);

#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * TPR + t;
        if (i < n) {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] *= inv;
            vec<VEC>::store(yr, i, &v[k * VEC]);
        }
    }
}

/* ---- rows over 32768 floats: online max and sum, then the output pass ---- */
template <int VEC>
static __global__ __launch_bounds__(ONLINE_THREADS) void softmax_online(const float *__restrict__ x,
                                                                        float *__restrict__ y, int64_t cols) {
    __shared__ float sh_max[32];
    __shared__ double sh_sum[32];
    const float *xr = x + (int64_t)blockIdx.x * cols;
    float *yr = y + (int64_t)blockIdx.x * cols;
    const int64_t n = cols / VEC;
    const int64_t step = (int64_t)ONLINE_THREADS * ONLINE_UNROLL;
    float v[ONLINE_UNROLL * VEC];

    /* Running ml = max*log2e (rounded) and s = sum of exp2(x*log2e - ml).
     * A new max rescales s by exp2(ml_old - ml_new), a difference of the
     * same rounded values the terms used (exact when they are close), so
     * each thread's rounding of ml cancels as it does on the one-read path.
     * s in double because a thread's chain of chunks grows with the row. */
    float ml = -INFINITY;
    double s = 0.0;
    for (int64_t base = threadIdx.x; base < n; base += step) {
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; u++) {
            int64_t i = base + (int64_t)u * ONLINE_THREADS;
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
    const float rml = row_max<ONLINE_THREADS>(ml, sh_max);
    s *= (double)exp2f(ml - rml); /* to the row's max; 0 for idle threads */
    const float inv = (float)(1.0 / row_sum<ONLINE_THREADS>(s, sh_sum));

    for (int64_t base = threadIdx.x; base < n; base += step) {
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; u++) {
            int64_t i = base + (int64_t)u * ONLINE_THREADS;
            if (i < n) vec<VEC>::load(xr, i, &v[u * VEC]);
        }
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; u++) {
            int64_t i = base + (int64_t)u * ONLINE_THREADS;
            if (i < n) {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = exp2f(fmaf(v[u * VEC + j], LOG2E, -rml)) * inv;
                vec<VEC>::store(yr, i, &v[u * VEC]);
            }
        }
    }
}

/* ---- launchers ------------------------------------------------------------ */
static const int64_t MAX_GRID = 0x7fffffff;

template <int VEC, int PER, int TPR, int BLOCK>
static int launch_regs(const float *x, float *y, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int64_t rpb = BLOCK / TPR;
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID * rpb) { /* one pass in practice */
        int64_t n = rows - r0 < MAX_GRID * rpb ? rows - r0 : MAX_GRID * rpb;
        softmax_regs<VEC, PER, TPR, BLOCK>
            <<<(unsigned)((n + rpb - 1) / rpb), BLOCK, 0, stream>>>(x + r0 * cols, y + r0 * cols, n, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}

template <int VEC>
static int launch(const float *x, float *y, int64_t rows, int64_t cols, cudaStream_t stream) {
    if (cols <= 128) return launch_regs<VEC, 4, 32, 256>(x, y, rows, cols, stream);
    if (cols <= 256) return launch_regs<VEC, 8, 32, 256>(x, y, rows, cols, stream);
    if (cols <= 512) return launch_regs<VEC, 16, 32, 256>(x, y, rows, cols, stream);
    if (cols <= 1024) return launch_regs<VEC, 32, 32, 256>(x, y, rows, cols, stream);
    if (cols <= 2048) return launch_regs<VEC, 16, 128, 128>(x, y, rows, cols, stream);
    if (cols <= 4096) return launch_regs<VEC, 32, 128, 128>(x, y, rows, cols, stream);
    if (cols <= 8192) return launch_regs<VEC, 32, 256, 256>(x, y, rows, cols, stream);
    if (cols <= 16384) return launch_regs<VEC, 32, 512, 512>(x, y, rows, cols, stream);
    if (cols <= 32768) return launch_regs<VEC, 32, 1024, 1024>(x, y, rows, cols, stream);
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID) {
        int64_t n = rows - r0 < MAX_GRID ? rows - r0 : MAX_GRID;
        softmax_online<VEC><<<(unsigned)n, ONLINE_THREADS, 0, stream>>>(x + r0 * cols, y + r0 * cols, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}

/* ---- entry point ------------------------------------------------------------ */
KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols, kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    if (cols % 4 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0) return launch<4>(x, y, rows, cols, stream);
    return launch<1>(x, y, rows, cols, stream);
}
