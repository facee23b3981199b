/* layernorm bf16, variant 12: full rows of 16K and 32K streamed by resident blocks, the next row's loads in flight.
 *
 * Adds over 11: at 4096x16384 each SM holds two 512-thread rows, and a
 * row's block issues no load from the moment its own loads land until it
 * exits (its statistics, its barrier, its stores): 11 reached 90.7% of
 * copy there against 96.0% at 16384x4096 (results/2026-11-30-h200-session6/call2-8ecea1a/screen.txt),
 * and 05 without reductions (a wrong-output diagnostic) 96.9%. Here a row
 * of exactly 16384 (or 32768) elements goes to resident blocks, two (one)
 * an SM, that walk rows blockIdx, blockIdx + grid, ...: each thread loads
 * its four 16-byte chunks of the next row into registers before it
 * reduces the current one, so those loads are in flight through the
 * reductions and the stores. Both rows stay packed as bf16 (16 registers
 * each) and are unpacked in each of the three passes (shifted sum,
 * squared deviations, output); even so ptxas needs 48 bytes of spill
 * (local memory, L1) to fit 64 registers (left free it takes ~100, one
 * block an SM). The grid
 * is the fewest blocks that give every block the same number of rows, to
 * one (4096 rows: 256 blocks of 16). The statistics are 11's: each
 * thread's own mean and M2, one merged reduction of equal-sized sets; the
 * two shared buffers alternate between rows, so one barrier a row suffices.
 * Every other shape runs 11's code.
 * Prediction: 4096x16384 from 11's ~90.7% toward the 96-97% of the shapes
 * with more rows an SM.
 * H200 screen (results/2026-11-30-h200-session6/call3-61d21f0/screen.txt): 89.18 us
 * at 4096x16384 against 11's 71.04 (26% slower), 91.14 against 80.26 at
 * 2048x32768, 337.12 against 267.26 at 16384x16384. PASS on all 13 shapes
 * (call3-61d21f0/correct). Not explained by a measurement; suspects: the
 * 48-byte spill reloaded every row, and loads still in flight when the
 * row's barrier is reached (bar.sync orders memory like membar.cta, so
 * the warp may wait for them there). A measured dead end.
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
    __shared__ float sh_mean[32];
    __shared__ float sh_var[32];
    __shared__ float2 sh_stats[32];
    const int64_t row = (int64_t)blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
    if (TPR == 32 && row >= rows) return; /* whole warps; a block row always exists */
    const int t = (int)(threadIdx.x % TPR);
    const kp_bf16 *xr = x + row * cols;
    kp_bf16 *yr = y + row * cols;
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

/* ---- full rows of AHEAD_CH * 8 * TPR elements: resident blocks, next row ahead ----
 * Each thread owns chunks k * TPR + t (k < AHEAD_CH) of every row it
 * touches. Needs cols == AHEAD_CH * 8 * TPR and 16-byte aligned rows. */
enum { AHEAD_CH = 4 };
static __device__ __forceinline__ void fetch_row(const kp_bf16 *__restrict__ x, int64_t row, int64_t cols, int tpr,
                                                 uint4 (&c)[AHEAD_CH], float &pivot) {
    const kp_bf16 *xr = x + row * cols;
    const uint4 *src = reinterpret_cast<const uint4 *>(xr);
#pragma unroll
    for (int k = 0; k < AHEAD_CH; k++) c[k] = __ldg(&src[k * tpr + (int)threadIdx.x]);
    pivot = bf16_to_f32(__ldg(xr));
}
/* The two bf16 of a packed word as floats. volatile, so each pass unpacks
 * again: left to itself the compiler keeps all 32 unpacked floats of a
 * row alive across the three passes (113 registers, one block an SM). */
static __device__ __forceinline__ float lo16(uint32_t u) {
    uint32_t r;
    asm volatile("shl.b32 %0, %1, 16;" : "=r"(r) : "r"(u));
    return __uint_as_float(r);
}
static __device__ __forceinline__ float hi16(uint32_t u) {
    uint32_t r;
    asm volatile("and.b32 %0, %1, 0xffff0000;" : "=r"(r) : "r"(u));
    return __uint_as_float(r);
}
/* One row from its packed chunks: shifted by the pivot, the thread's mean
 * and M2, one merged reduction (11's), then the output. */
template <int TPR>
static __device__ __forceinline__ void normalize_row(const uint4 (&c)[AHEAD_CH], float pivot,
                                                     const kp_bf16 *__restrict__ w, const kp_bf16 *__restrict__ b,
                                                     kp_bf16 *__restrict__ yr, int64_t cols, float2 *sh) {
    constexpr int PER = AHEAD_CH * 8;
    const int t = (int)threadIdx.x;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < AHEAD_CH; k++) {
        const uint32_t u[4] = {c[k].x, c[k].y, c[k].z, c[k].w};
#pragma unroll
        for (int h = 0; h < 4; h++) { /* element 8k + 2h goes to chain (2h) % 4, as 11's j % 4 */
            acc[(2 * h) % 4] += lo16(u[h]) - pivot;
            acc[(2 * h + 1) % 4] += hi16(u[h]) - pivot;
        }
    }
    float m = ((acc[0] + acc[1]) + (acc[2] + acc[3])) * (1.0f / (float)PER), q4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < AHEAD_CH; k++) {
        const uint32_t u[4] = {c[k].x, c[k].y, c[k].z, c[k].w};
#pragma unroll
        for (int h = 0; h < 4; h++) {
            const float e0 = (lo16(u[h]) - pivot) - m, e1 = (hi16(u[h]) - pivot) - m;
            q4[(2 * h) % 4] = fmaf(e0, e0, q4[(2 * h) % 4]);
            q4[(2 * h + 1) % 4] = fmaf(e1, e1, q4[(2 * h + 1) % 4]);
        }
    }
    float q = (q4[0] + q4[1]) + (q4[2] + q4[3]);
    row_stats<TPR>(m, q, (float)PER, sh);
    const float delta = m, rstd = 1.0f / sqrtf(q / (float)cols + (float)KP_LAYERNORM_EPS);
#pragma unroll
    for (int k = 0; k < AHEAD_CH; k++) {
        const int i = k * TPR + t;
        const uint4 wc = __ldg(reinterpret_cast<const uint4 *>(w) + i), bc = __ldg(reinterpret_cast<const uint4 *>(b) + i);
        const uint32_t u[4] = {c[k].x, c[k].y, c[k].z, c[k].w}, wu[4] = {wc.x, wc.y, wc.z, wc.w},
                       bu[4] = {bc.x, bc.y, bc.z, bc.w};
        float o[8];
#pragma unroll
        for (int h = 0; h < 4; h++) {
            o[2 * h] = fmaf(((lo16(u[h]) - pivot) - delta) * rstd, lo16(wu[h]), lo16(bu[h]));
            o[2 * h + 1] = fmaf(((hi16(u[h]) - pivot) - delta) * rstd, hi16(wu[h]), hi16(bu[h]));
        }
        vec<8>::store(yr, i, o);
    }
}
template <int TPR>
static __global__ __launch_bounds__(TPR, 1024 / TPR) void layernorm_ahead(const kp_bf16 *__restrict__ x,
                                                                         const kp_bf16 *__restrict__ w,
                                                                         const kp_bf16 *__restrict__ b,
                                                                         kp_bf16 *__restrict__ y, int64_t rows,
                                                                         int64_t cols) {
    __shared__ float2 sh[2][32]; /* rows alternate buffers: one barrier a row */
    const int64_t g = gridDim.x;
    int64_t r = blockIdx.x;
    if (r >= rows) return;
    uint4 ca[AHEAD_CH], cb[AHEAD_CH];
    float pa, pb;
    fetch_row(x, r, cols, TPR, ca, pa);
    for (int par = 0; r < rows; r += g, par ^= 1) {
        if (r + g < rows) fetch_row(x, r + g, cols, TPR, cb, pb); /* in flight through this row */
        normalize_row<TPR>(ca, pa, w, b, y + r * cols, cols, sh[par]);
#pragma unroll
        for (int k = 0; k < AHEAD_CH; k++) ca[k] = cb[k];
        pa = pb;
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

template <int TPR>
static int launch_ahead(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows, int64_t cols,
                        cudaStream_t stream) {
    int dev = 0, sms = 0, per_sm = 0;
    KP_TRY(cudaGetDevice(&dev));
    KP_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    KP_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, layernorm_ahead<TPR>, TPR, 0));
    const int64_t most = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
    const int64_t per_block = (rows + most - 1) / most; /* rows a block walks, to one */
    const int64_t grid = (rows + per_block - 1) / per_block;
    layernorm_ahead<TPR><<<(unsigned)grid, TPR, 0, stream>>>(x, w, b, y, rows, cols);
    KP_TRY(cudaGetLastError());
    return 0;
}

template <int VEC>
static int launch(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows, int64_t cols,
                  cudaStream_t stream) {
    if (VEC == 8 && cols == AHEAD_CH * 8 * 512) return launch_ahead<512>(x, w, b, y, rows, cols, stream);
    if (VEC == 8 && cols == AHEAD_CH * 8 * 1024) return launch_ahead<1024>(x, w, b, y, rows, cols, stream);
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
