/* layernorm bf16, variant 16: two rows a block in shared memory, sharing each w and b load.
 *
 * Adds over 15 (11 stays the step before it): 15 brings a row into shared
 * memory with one bulk copy and fits six rows of 16384 an SM, yet ran at
 * 88.2-88.9% of copy against 11's 90.0-90.4% at 4096x16384; without its
 * w and b loads (a wrong-output diagnostic) it ran at 96.8%, with six rows
 * an SM or four (results/2026-11-30-h200-session7/call2-6f0229b/screen.txt).
 * Every row reads all of w and b (twice its own bytes, from L1 or L2) and
 * unpacks them. Here a block takes two consecutive rows (one bulk copy of
 * both, 64 KiB at 16384 columns, three blocks and six rows an SM), reduces
 * both rows' statistics in one merged reduction (two independent chains,
 * one barrier), and in its output pass loads and unpacks each chunk of w
 * and b once for both rows: half the w and b traffic and unpacking of 15.
 * Statistics as 11 and 15. Rows of 8193-16384 elements that are 16-byte
 * multiples with 16-byte aligned pointers take this path, rows of
 * 16385-32768 take 15's (one row a block: two would leave one block an
 * SM); others run 11's.
 * Prediction: 4096x16384 from 15's 88.5% to 92-94% of copy.
 * H200 screen (results/2026-11-30-h200-session7/call3-25ce45b/screen.txt, 3 rounds of 30
 * cold calls): 74.66 us (85.8% of a cudaMemcpy of the same bytes) against
 * 11's 71.17 (90.0%) at 4096x16384; 143.01 against 136.06 at 8192x16384.
 * Slower than 15, not faster: halving the w and b traffic did not buy
 * back what two rows a block (three blocks an SM, a block lives through
 * two rows' output) cost. PASS on all 13 shapes (call3-25ce45b/correct).
 * A measured side road.
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


/* ---- rows of 8K-32K: shared memory filled by one bulk copy ----------------
 * PTX of the Hopper bulk copy (cp.async.bulk) and its mbarrier: one thread
 * arms the barrier with the row's byte count and issues the copy; every
 * thread waits on phase 0, after which the bytes are visible to it. */
static __device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
static __device__ __forceinline__ void row_copy_start(uint64_t *bar, void *dst, const void *src, uint32_t bytes) {
    const uint32_t b = smem_u32(bar);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(b)
                 : "memory");
}
static __device__ __forceinline__ void row_copy_wait(uint64_t *bar) {
    asm volatile("{\n\t.reg .pred done;\n"
                 "WAIT_%=:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n\t"
                 "@!done bra WAIT_%=;\n}" ::"r"(smem_u32(bar))
                 : "memory");
}
static __device__ __forceinline__ void unpack8(uint4 t, float *v) {
    unpack2(t.x, v); unpack2(t.y, v + 2); unpack2(t.z, v + 4); unpack2(t.w, v + 6);
}

/* R rows a block, TPB threads each row's: thread t owns 16-byte chunks
 * t, t + TPB, ... (at most CH) of every row, so a warp's shared-memory
 * reads are conflict-free, and one load of a w or b chunk serves R rows. */
template <int TPB, int R>
static __device__ __forceinline__ void rows_stats(float (&m)[R], float (&q)[R], float c, float2 (*sh)[32]) {
#pragma unroll
    for (int o = 1; o < 32; o <<= 1, c *= 2.0f)
#pragma unroll
        for (int r = 0; r < R; r++) merge_equal(m[r], q[r], c, o);
    if ((threadIdx.x & 31) == 0)
#pragma unroll
        for (int r = 0; r < R; r++) sh[r][threadIdx.x >> 5] = make_float2(m[r], q[r]);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; r++) {
        const float2 s = sh[r][(threadIdx.x & 31) % (TPB / 32)];
        m[r] = s.x;
        q[r] = s.y;
    }
#pragma unroll
    for (int o = 1; o < TPB / 32; o <<= 1, c *= 2.0f)
#pragma unroll
        for (int r = 0; r < R; r++) merge_equal(m[r], q[r], c, o);
}
template <int TPB, int R>
static __device__ __forceinline__ void rows_sum(float (&v)[R], float (*sh)[32]) {
#pragma unroll
    for (int r = 0; r < R; r++) v[r] = warp_sum(v[r]);
    if ((threadIdx.x & 31) == 0)
#pragma unroll
        for (int r = 0; r < R; r++) sh[r][threadIdx.x >> 5] = v[r];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; r++) v[r] = warp_sum((threadIdx.x & 31) < TPB / 32 ? sh[r][threadIdx.x & 31] : 0.0f);
}

template <int TPB, int CH, int R>
static __global__ __launch_bounds__(TPB) void layernorm_tma(const kp_bf16 *__restrict__ x,
                                                           const kp_bf16 *__restrict__ w,
                                                           const kp_bf16 *__restrict__ b,
                                                           kp_bf16 *__restrict__ y, int64_t rows, int64_t cols) {
    extern __shared__ __align__(128) uint4 buf[];
    __shared__ uint64_t bar;
    __shared__ float sh_mean[R][32];
    __shared__ float sh_var[R][32];
    __shared__ float2 sh_stats[R][32];
    const int n = (int)(cols / 8), t = (int)threadIdx.x;
    const int64_t row0 = (int64_t)blockIdx.x * R;
    const int nr = rows - row0 < R ? (int)(rows - row0) : R; /* rows this block has */
    if (t == 0) row_copy_start(&bar, buf, x + row0 * cols, (uint32_t)(nr * cols * 2));
    __syncthreads(); /* the barrier is initialised before anyone waits on it */
    row_copy_wait(&bar);
    /* A row past the end (nr < R) is computed on whatever the buffer holds
     * and never stored; its reads stay inside the buffer. */
    float pivot[R];
#pragma unroll
    for (int r = 0; r < R; r++) pivot[r] = __uint_as_float(buf[r * n].x << 16);

    float acc[R][2];
#pragma unroll
    for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = 0.0f;
#pragma unroll
    for (int k = 0; k < CH; k++) {
        const int i = k * TPB + t;
        if (i < n) {
#pragma unroll
            for (int r = 0; r < R; r++) {
                float v[8];
                unpack8(buf[r * n + i], v);
#pragma unroll
                for (int j = 0; j < 8; j++) acc[r][j % 2] += v[j] - pivot[r];
            }
        }
    }
    float delta[R], var[R]; /* mean - pivot; variance */
    if (n == CH * TPB) {
        float m[R], q[R];
#pragma unroll
        for (int r = 0; r < R; r++) {
            m[r] = (acc[r][0] + acc[r][1]) * (1.0f / (float)(CH * 8));
            acc[r][0] = acc[r][1] = 0.0f;
        }
#pragma unroll
        for (int k = 0; k < CH; k++)
#pragma unroll
            for (int r = 0; r < R; r++) {
                float v[8];
                unpack8(buf[r * n + k * TPB + t], v);
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    const float e = (v[j] - pivot[r]) - m[r];
                    acc[r][j % 2] = fmaf(e, e, acc[r][j % 2]);
                }
            }
#pragma unroll
        for (int r = 0; r < R; r++) q[r] = acc[r][0] + acc[r][1];
        rows_stats<TPB, R>(m, q, (float)(CH * 8), sh_stats);
#pragma unroll
        for (int r = 0; r < R; r++) {
            delta[r] = m[r];
            var[r] = q[r] / (float)cols;
        }
    } else {
#pragma unroll
        for (int r = 0; r < R; r++) delta[r] = acc[r][0] + acc[r][1];
        rows_sum<TPB, R>(delta, sh_mean);
#pragma unroll
        for (int r = 0; r < R; r++) {
            delta[r] /= (float)cols;
            acc[r][0] = acc[r][1] = 0.0f;
        }
#pragma unroll
        for (int k = 0; k < CH; k++) {
            const int i = k * TPB + t;
            if (i < n) {
#pragma unroll
                for (int r = 0; r < R; r++) {
                    float v[8];
                    unpack8(buf[r * n + i], v);
#pragma unroll
                    for (int j = 0; j < 8; j++) {
                        const float d = (v[j] - pivot[r]) - delta[r];
                        acc[r][j % 2] = fmaf(d, d, acc[r][j % 2]);
                    }
                }
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) var[r] = acc[r][0] + acc[r][1];
        rows_sum<TPB, R>(var, sh_var);
#pragma unroll
        for (int r = 0; r < R; r++) var[r] /= (float)cols;
    }
    float rstd[R];
#pragma unroll
    for (int r = 0; r < R; r++) rstd[r] = 1.0f / sqrtf(var[r] + (float)KP_LAYERNORM_EPS);

#pragma unroll
    for (int k = 0; k < CH; k++) {
        const int i = k * TPB + t;
        if (i < n) {
            float wv[8], bv[8];
            vec<8>::load(w, i, wv);
            vec<8>::load(b, i, bv);
#pragma unroll
            for (int r = 0; r < R; r++) {
                if (r < nr) {
                    float v[8];
                    unpack8(buf[r * n + i], v);
#pragma unroll
                    for (int j = 0; j < 8; j++) v[j] = fmaf(((v[j] - pivot[r]) - delta[r]) * rstd[r], wv[j], bv[j]);
                    vec<8>::store(y + (row0 + r) * cols, i, v);
                }
            }
        }
    }
}

template <int TPB, int CH, int R>
static int launch_tma(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows, int64_t cols,
                      cudaStream_t stream) {
    const int smem = (int)(R * cols * 2);
    static int ready; /* the attribute once per process: a host call, not device work */
    if (!ready) {
        KP_TRY(cudaFuncSetAttribute(layernorm_tma<TPB, CH, R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    R * CH * TPB * 16));
        ready = 1;
    }
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID * R) {
        int64_t nr = rows - r0 < MAX_GRID * R ? rows - r0 : MAX_GRID * R;
        layernorm_tma<TPB, CH, R><<<(unsigned)((nr + R - 1) / R), TPB, smem, stream>>>(x + r0 * cols, w, b,
                                                                                        y + r0 * cols, nr, cols);
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
    {
        if (cols > 8192 && cols <= 16384) return launch_tma<512, 4, 2>(x, w, b, y, rows, cols, stream);
        if (cols > 16384 && cols <= 32768) return launch_tma<512, 8, 1>(x, w, b, y, rows, cols, stream);
        return launch<8>(x, w, b, y, rows, cols, stream);
    }
    return launch<1>(x, w, b, y, rows, cols, stream);
}
