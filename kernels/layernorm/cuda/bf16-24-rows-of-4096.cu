/* layernorm bf16, cuda, 24 rows of 4096: a register kernel compiled for that length.
 *
 * Adds over 23: rows of exactly 4096 take 23's register kernel compiled
 * for rows of PER * TPR (FULL: every slot holds a value, no short-row
 * paths, the length a constant), at 23's launch bounds (8 blocks of 128
 * threads an SM, 64 registers). Other widths: 23's code.
 * Why: under kproof's tracing (activity records and API callbacks, on for
 * every call it times) 23 took 2.61% more time at 16384x4096, 24 0.80%
 * (lab/tracecost.sh, 3 rounds of 100 cold calls: untraced 64.06 us for 23,
 * 63.84 for 24; traced 65.73 and 64.35;
 * results/2026-12-04-h200-3291f92/norm-lab), and in a second run 23
 * +2.31%, 24 -0.06% (results/2026-12-04-h200-35da0f1/tracecost-lab.txt).
 * The same kernel held to 56 registers (9 blocks an SM) paid nothing
 * traced but ran 65.82 us untraced, and at 1024 columns 56 registers paid
 * +1.69% against 23's +1.07%: spare registers are not what tracing needs.
 * measured: PASS on all 32 shapes of the op; 63.89 us [63.17, 64.42] at
 * 16384x4096 (99.0% of the copy rate), 63.34 [63.02, 64.24] at 65536x1024,
 * 66.50 [66.17, 67.04] at 4096x16384 (23's code at the last two)
 * (results/2026-12-04-h200-35da0f1/kernels-lab).
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
/* L2 eviction policies that give every line they touch evict_last or
 * evict_first priority, and a 16-byte load under one. */
static __device__ __forceinline__ uint64_t evict_last_policy() {
    uint64_t pol;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}
static __device__ __forceinline__ uint64_t evict_first_policy() {
    uint64_t pol;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}
static __device__ __forceinline__ uint4 ld16_hint(const uint4 *p, uint64_t pol) {
    uint4 t;
    asm("ld.global.nc.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
        : "=r"(t.x), "=r"(t.y), "=r"(t.z), "=r"(t.w) : "l"(p), "l"(pol));
    return t;
}
template <int VEC> struct vec;
template <> struct vec<1> {
    static __device__ __forceinline__ void load(const kp_bf16 *p, int64_t i, float *v) { v[0] = bf16_to_f32(p[i]); }
    static __device__ __forceinline__ void store(kp_bf16 *p, int64_t i, const float *v) { p[i] = f32_to_bf16(v[0]); }
    static __device__ __forceinline__ void load_keep(const kp_bf16 *p, int64_t i, float *v, uint64_t) { v[0] = bf16_to_f32(p[i]); }
    typedef kp_bf16 raw; /* one element as it is in memory */
    static __device__ __forceinline__ raw load_raw(const kp_bf16 *p, int64_t i) { return p[i]; }
    static __device__ __forceinline__ raw zero() { return 0; }
    static __device__ __forceinline__ void unpack(raw r, float *v) { v[0] = bf16_to_f32(r); }
};
template <> struct vec<8> {
    static __device__ __forceinline__ void load(const kp_bf16 *p, int64_t i, float *v) {
        uint4 t = reinterpret_cast<const uint4 *>(p)[i];
        unpack2(t.x, v); unpack2(t.y, v + 2); unpack2(t.z, v + 4); unpack2(t.w, v + 6);
    }
    static __device__ __forceinline__ void store(kp_bf16 *p, int64_t i, const float *v) {
        reinterpret_cast<uint4 *>(p)[i] = make_uint4(pack2(v), pack2(v + 2), pack2(v + 4), pack2(v + 6));
    }
    static __device__ __forceinline__ void load_keep(const kp_bf16 *p, int64_t i, float *v, uint64_t pol) {
        const uint4 t = ld16_hint(reinterpret_cast<const uint4 *>(p) + i, pol);
        unpack2(t.x, v); unpack2(t.y, v + 2); unpack2(t.z, v + 4); unpack2(t.w, v + 6);
    }
    typedef uint4 raw; /* eight bf16 as they are in memory */
    static __device__ __forceinline__ raw load_raw(const kp_bf16 *p, int64_t i) {
        return reinterpret_cast<const uint4 *>(p)[i];
    }
    static __device__ __forceinline__ raw zero() { return make_uint4(0u, 0u, 0u, 0u); }
    static __device__ __forceinline__ void unpack(const raw &r, float *v) {
        unpack2(r.x, v); unpack2(r.y, v + 2); unpack2(r.z, v + 4); unpack2(r.w, v + 6);
    }
};
static __device__ __forceinline__ float first(const kp_bf16 *p) { return bf16_to_f32(p[0]); }

/* ---- rows that fit: one read, registers only ----------------------------
 * TPR threads per row, each keeping PER floats; BLOCK / TPR rows per block.
 * 64 registers a thread at PER = 32 (1024 threads per SM), fewer below. */
template <int VEC, int PER, int TPR, int BLOCK, bool FULL = false>
static __global__ __launch_bounds__(BLOCK, (PER <= 8 ? 2048 : PER <= 16 ? 1536 : 1024) / BLOCK) void
layernorm_regs(
    const kp_bf16 *__restrict__ x, const kp_bf16 *__restrict__ w, const kp_bf16 *__restrict__ b,
    kp_bf16 *__restrict__ y, int64_t rows, int64_t cols_arg) {
    /* FULL (24): every row is PER * TPR long, so every slot holds a value and
     * the short-row paths compile away. */
    const int64_t cols = FULL ? (int64_t)PER * TPR : cols_arg;
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
    const uint64_t pol = evict_last_policy(); /* x's lines at evict_last (19) */

    /* All loads first, so they are in flight together; slots past the row
     * hold the pivot, which adds 0 to the shifted sum. */
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * TPR + t;
        if (i < n) {
            vec<VEC>::load_keep(xr, i, &v[k * VEC], pol);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = pivot;
        }
    }

    /* The first chunk's w and b, raw, while the row is reduced (20). Only
     * where it costs no spill: 16-byte chunks, 32 values a thread (ptxas
     * spills 4-40 bytes elsewhere under the launch bounds' register cap). */
    constexpr bool AHEAD = VEC == 8 && PER == 32;
    typedef typename vec<VEC>::raw raw;
    raw wr = vec<VEC>::zero(), br = vec<VEC>::zero();
    if (AHEAD && t < n) {
        wr = vec<VEC>::load_raw(w, t);
        br = vec<VEC>::load_raw(b, t);
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

    /* Chunk k + 1's w and b are loaded before chunk k is written (20). */
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        const int i = k * TPR + t;
        if (!AHEAD) { /* as 19 */
            if (i < n) {
                float wv[VEC], bv[VEC];
                vec<VEC>::load(w, i, wv);
                vec<VEC>::load(b, i, bv);
#pragma unroll
                for (int j = 0; j < VEC; j++) v[k * VEC + j] = fmaf(v[k * VEC + j] * rstd, wv[j], bv[j]);
                vec<VEC>::store(yr, i, &v[k * VEC]);
            }
            continue;
        }
        raw wn = vec<VEC>::zero(), bn = vec<VEC>::zero();
        if (k + 1 < CHUNKS && i + TPR < n) {
            wn = vec<VEC>::load_raw(w, i + TPR);
            bn = vec<VEC>::load_raw(b, i + TPR);
        }
        if (i < n) {
            float wv[VEC], bv[VEC];
            vec<VEC>::unpack(wr, wv);
            vec<VEC>::unpack(br, bv);
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = fmaf(v[k * VEC + j] * rstd, wv[j], bv[j]);
            vec<VEC>::store(yr, i, &v[k * VEC]);
        }
        wr = wn;
        br = bn;
    }
}

/* ---- rows of exactly 1024 (23): w and b from shared memory ---------------
 * A warp a row (rows past the end repeat the last row and store nothing,
 * so every warp reaches the barrier), 32 values a lane in 21's order; the
 * block's 256 threads stage w and b (128 16-byte chunks each) while the
 * rows' loads are in flight. */
static __global__ __launch_bounds__(256, 4) void layernorm_1k(const kp_bf16 *__restrict__ x,
                                                             const kp_bf16 *__restrict__ w,
                                                             const kp_bf16 *__restrict__ b,
                                                             kp_bf16 *__restrict__ y, int64_t rows) {
    __shared__ uint4 sw[128], sb[128];
    int64_t row = (int64_t)blockIdx.x * 8 + threadIdx.x / 32;
    const bool live = row < rows;
    if (!live) row = rows - 1;
    const int lane = (int)(threadIdx.x & 31);
    const kp_bf16 *xr = x + row * 1024;
    const float pivot = first(xr);
    const uint64_t pol = evict_last_policy();
    float v[32];
#pragma unroll
    for (int k = 0; k < 4; k++) vec<8>::load_keep(xr, k * 32 + lane, &v[k * 8], pol);
    if (threadIdx.x < 128) sw[threadIdx.x] = reinterpret_cast<const uint4 *>(w)[threadIdx.x];
    else sb[threadIdx.x - 128] = reinterpret_cast<const uint4 *>(b)[threadIdx.x - 128];
    __syncthreads();

    /* 21's statistics for a full row: the lane's mean and M2 about the
     * pivot, then one merged reduction over the warp. */
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int j = 0; j < 32; j++) {
        v[j] -= pivot;
        acc[j % 4] += v[j];
    }
    float m = ((acc[0] + acc[1]) + (acc[2] + acc[3])) * (1.0f / 32.0f), q4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int j = 0; j < 32; j++) {
        const float e = v[j] - m;
        q4[j % 4] = fmaf(e, e, q4[j % 4]);
    }
    float q = (q4[0] + q4[1]) + (q4[2] + q4[3]);
    row_stats<32>(m, q, 32.0f, nullptr);
    const float rstd = rsqrtf(q * (1.0f / 1024.0f) + (float)KP_LAYERNORM_EPS);

    kp_bf16 *yr = y + row * 1024;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        float wv[8], bv[8];
        vec<8>::unpack(sw[k * 32 + lane], wv);
        vec<8>::unpack(sb[k * 32 + lane], bv);
#pragma unroll
        for (int j = 0; j < 8; j++) v[k * 8 + j] = fmaf((v[k * 8 + j] - m) * rstd, wv[j], bv[j]);
        if (live) vec<8>::store(yr, k * 32 + lane, &v[k * 8]);
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

/* ---- rows of 12K-32K (multiples of 4096): two reads, four rows an SM (21).
 * CHUNKS 16-byte chunks a thread; TWO_THREADS threads a row. */
enum { TWO_THREADS = 512 };
template <int CHUNKS>
static __global__ __launch_bounds__(TWO_THREADS, 2048 / TWO_THREADS) void layernorm_two_pass(
    const kp_bf16 *__restrict__ x, const kp_bf16 *__restrict__ w, const kp_bf16 *__restrict__ b,
    kp_bf16 *__restrict__ y, int64_t cols) {
    __shared__ float2 sh_stats[32];
    const uint4 *xr = reinterpret_cast<const uint4 *>(x + (int64_t)blockIdx.x * cols);
    uint4 *yr = reinterpret_cast<uint4 *>(y + (int64_t)blockIdx.x * cols);
    const uint4 *w4 = reinterpret_cast<const uint4 *>(w), *b4 = reinterpret_cast<const uint4 *>(b);
    const int t = (int)threadIdx.x;

    /* Pass 1: every chunk's load first, then each chunk's mean and M2
     * (two passes over its 8 registers) joined to the running pair: after
     * k chunks of 8, a new chunk's weight is 1 / (k + 1) for the mean and
     * 8k / (k + 1) for the squared difference of the means. */
    const uint64_t keep = evict_last_policy();
    uint4 raw[CHUNKS];
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) raw[k] = ld16_hint(xr + k * TWO_THREADS + t, keep);
    float m = 0.0f, q = 0.0f;
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        float v[8];
        vec<8>::unpack(raw[k], v);
        const float cm = (((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]))) * 0.125f;
        float cq = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const float e = v[j] - cm;
            cq = fmaf(e, e, cq);
        }
        if (k == 0) {
            m = cm;
            q = cq;
        } else {
            const float d = cm - m;
            m = fmaf(d, 1.0f / (float)(k + 1), m);
            q = (q + cq) + d * d * (8.0f * (float)k / (float)(k + 1));
        }
    }
    row_stats<TWO_THREADS>(m, q, (float)(8 * CHUNKS), sh_stats);
    const float rstd = 1.0f / sqrtf(q / (float)cols + (float)KP_LAYERNORM_EPS);

    /* Pass 2: the row again, from L2, at evict_first: it is not needed
     * after this. */
    const uint64_t drop = evict_first_policy();
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        const int i = k * TWO_THREADS + t;
        float v[8], wv[8], bv[8];
        vec<8>::unpack(ld16_hint(xr + i, drop), v);
        vec<8>::unpack(w4[i], wv);
        vec<8>::unpack(b4[i], bv);
#pragma unroll
        for (int j = 0; j < 8; j++) v[j] = fmaf((v[j] - m) * rstd, wv[j], bv[j]);
        yr[i] = make_uint4(pack2(v), pack2(v + 2), pack2(v + 4), pack2(v + 6));
    }
}

/* ---- launchers ------------------------------------------------------------ */
static const int64_t MAX_GRID = 0x7fffffff;

template <int VEC, int PER, int TPR, int BLOCK, bool FULL = false>
static int launch_regs(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows, int64_t cols,
                       cudaStream_t stream) {
    const int64_t rpb = BLOCK / TPR;
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID * rpb) { /* one pass in practice */
        int64_t n = rows - r0 < MAX_GRID * rpb ? rows - r0 : MAX_GRID * rpb;
        layernorm_regs<VEC, PER, TPR, BLOCK, FULL>
            <<<(unsigned)((n + rpb - 1) / rpb), BLOCK, 0, stream>>>(x + r0 * cols, w, b, y + r0 * cols, n, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}

template <int CHUNKS>
static int launch_two(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows, int64_t cols,
                      cudaStream_t stream) {
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID) {
        int64_t n = rows - r0 < MAX_GRID ? rows - r0 : MAX_GRID;
        layernorm_two_pass<CHUNKS><<<(unsigned)n, TWO_THREADS, 0, stream>>>(x + r0 * cols, w, b, y + r0 * cols, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}
static int launch_two_pass(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows,
                           int64_t cols, cudaStream_t stream) {
    switch (cols / 4096) {
    case 3: return launch_two<3>(x, w, b, y, rows, cols, stream);
    case 4: return launch_two<4>(x, w, b, y, rows, cols, stream);
    case 5: return launch_two<5>(x, w, b, y, rows, cols, stream);
    case 6: return launch_two<6>(x, w, b, y, rows, cols, stream);
    case 7: return launch_two<7>(x, w, b, y, rows, cols, stream);
    default: return launch_two<8>(x, w, b, y, rows, cols, stream);
    }
}

template <int VEC>
static int launch(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows, int64_t cols,
                  cudaStream_t stream) {
    if (cols <= 256) return launch_regs<VEC, 8, 32, 256>(x, w, b, y, rows, cols, stream);
    if (cols <= 512) return launch_regs<VEC, 16, 32, 256>(x, w, b, y, rows, cols, stream);
    if (VEC == 8 && cols == 1024) { /* w and b from shared memory (23) */
        for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID * 8) { /* one pass in practice */
            int64_t n = rows - r0 < MAX_GRID * 8 ? rows - r0 : MAX_GRID * 8;
            layernorm_1k<<<(unsigned)((n + 7) / 8), 256, 0, stream>>>(x + r0 * 1024, w, b, y + r0 * 1024, n);
            KP_TRY(cudaGetLastError());
        }
        return 0;
    }
    if (cols <= 1024) return launch_regs<VEC, 32, 32, 256>(x, w, b, y, rows, cols, stream);
    if (cols <= 2048) return launch_regs<VEC, 16, 128, 128>(x, w, b, y, rows, cols, stream);
    if (VEC == 8 && cols == 4096) /* a kernel for this one length (24) */
        return launch_regs<VEC, 32, 128, 128, true>(x, w, b, y, rows, cols, stream);
    if (cols <= 4096) return launch_regs<VEC, 32, 128, 128>(x, w, b, y, rows, cols, stream);
    if (cols <= 8192) return launch_regs<VEC, 32, 256, 256>(x, w, b, y, rows, cols, stream);
    if (VEC == 8 && cols % 4096 == 0 && cols <= 32768) /* 12288-32768: two reads (21) */
        return launch_two_pass(x, w, b, y, rows, cols, stream);
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
