/* layernorm f32, cuda, 16 four warps: rows of 513-1024 floats on four warps, 8 values a thread.
 *
 * Adds over 11: a row of 513-1024 floats goes to a 128-thread block, 8
 * floats a thread (32 registers), where 11 gives it one warp keeping 32 (64
 * registers): 2048 threads an SM instead of 1024, 16 rows in flight instead
 * of 32. Faster; why is not measured. Other rows as in 11.
 * measured: 126.96 us (99.3% of a same-bytes memcpy) against 11's 129.34
 * (97.5%) at 65536x1024 (results/2026-11-30-h200-04028f3/screen.txt,
 * archived); PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/layernorm-f32-16-four-warps-1k.json).
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

/* VEC consecutive floats starting at element i*VEC of a row. */
/* Mean m and sum of squared deviations q of two sets of c values each,
 * across lanes o apart: the pair's mean and M2 (Chan et al. with equal
 * counts). Symmetric in the two lanes, so both end with the same bits. */
static __device__ __forceinline__ void merge_equal(float &m, float &q, float c, int o) {
    const float mo = __shfl_xor_sync(0xffffffffu, m, o), qo = __shfl_xor_sync(0xffffffffu, q, o);
    const float d = mo - m;
    q = (q + qo) + d * d * (0.5f * c);
    m = 0.5f * (m + mo);
}
/* A row's (mean, M2) from each thread's own over c values: the warp's
 * lanes in five steps, then (TPR > 32) each warp reads the TPR / 32 warp
 * results (lane l takes warp l % (TPR / 32), so every xor step below
 * TPR / 32 pairs two different warps) and merges them itself. */
template <int TPR> static __device__ __forceinline__ void row_stats(float &m, float &q, float c, float2 *sh) {
#pragma unroll
    for (int o = 1; o < 32; o <<= 1, c *= 2.0f) merge_equal(m, q, c, o);
    if (TPR == 32) return;
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = make_float2(m, q);
    __syncthreads();
    const float2 s = sh[(threadIdx.x & 31) % (TPR / 32)];
    m = s.x;
    q = s.y;
#pragma unroll
    for (int o = 1; o < TPR / 32; o <<= 1, c *= 2.0f) merge_equal(m, q, c, o);
}

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
    __shared__ float sh_mean[32];
    __shared__ float sh_var[32];
    __shared__ float2 sh_stats[32];
    const int64_t row = (int64_t)blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
    if (TPR == 32 && row >= rows) return; /* whole warps; a block row always exists */
    const int t = (int)(threadIdx.x % TPR);
    const float *xr = x + row * cols;
    float *yr = y + row * cols;
    const int n = (int)(cols / VEC);
    const float pivot = first(xr);
    float v[PER];

    /* All loads first, so they are in flight together. A row that fills
     * every thread's slots (every canonical shape) takes plain loads with
     * nothing between them. In 05 every slot had the pivot copied into it
     * before its predicated load (the default for a slot past the row), and
     * in the SASS those copies sat between the loads, so each load after
     * the pivot's waited for the pivot to arrive: two memory round trips a
     * row. Copying the pivot in after the loads instead needs a predicate
     * per slot alive across all of them, more than the 7 an SM thread has,
     * and the compiler then holds a load back. A short row keeps 05's code. */
    if (n >= CHUNKS * TPR) {
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) vec<VEC>::load(xr, k * TPR + t, &v[k * VEC]);
    } else {
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) {
            int i = k * TPR + t;
            if (i < n) {
                vec<VEC>::load(xr, i, &v[k * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[k * VEC + j] = pivot; /* adds 0 to the shifted sum */
            }
        }
    }

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* short chains, then a tree */
#pragma unroll
    for (int j = 0; j < PER; j++) {
        v[j] -= pivot;
        acc[j % 4] += v[j];
    }
    float delta, var; /* mean - pivot; variance */
    if (n >= CHUNKS * TPR) {
        /* Every thread holds PER values of the row: its own mean and M2
         * (a second pass over its registers), then one merged reduction. */
        float m = ((acc[0] + acc[1]) + (acc[2] + acc[3])) * (1.0f / (float)PER), q4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const float e = v[j] - m;
            q4[j % 4] = fmaf(e, e, q4[j % 4]);
        }
        float q = (q4[0] + q4[1]) + (q4[2] + q4[3]);
        row_stats<TPR>(m, q, (float)PER, sh_stats);
        delta = m;
        var = q / (float)cols;
#pragma unroll
        for (int j = 0; j < PER; j++) v[j] -= delta;
    } else { /* as 05: the shifted mean, then the variance about it */
        delta = row_sum<TPR>((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_mean) / (float)cols;
#pragma unroll
        for (int j = 0; j < 4; j++) acc[j] = 0.0f;
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) {
            const bool in_row = k * TPR + t < n;
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                float d = v[k * VEC + j] - delta;
                v[k * VEC + j] = d;
                if (in_row) acc[j % 4] = fmaf(d, d, acc[j % 4]);
            }
        }
        var = row_sum<TPR>((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_var) / (float)cols;
    }
    const float rstd = 1.0f / sqrtf(var + (float)KP_LAYERNORM_EPS);

#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * TPR + t;
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
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = 0.0f;
            }
        }
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            const bool in_row = base + (int64_t)u * LONG_THREADS < n;
#pragma unroll
            for (int j = 0; j < VEC; j++) acc[(u * VEC + j) % 4] += in_row ? v[u * VEC + j] - pivot : 0.0f;
        }
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
    if (cols <= 1024) return launch_regs<VEC, 8, 128, 128>(x, w, b, y, rows, cols, stream); /* 16 */
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
