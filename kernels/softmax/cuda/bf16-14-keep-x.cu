/* softmax bf16, cuda, 14 keep x: x read at L2's evict_last priority.
 *
 * Adds over 12: the register kernel (rows up to 8192, and misaligned rows)
 * loads x under one evict_last policy made once a kernel, as softmax f32 10
 * and layernorm bf16 19. Rows of 8K-32K keep 12's bulk copies.
 * measured: 63.52 us (100.7% of a same-bytes memcpy) against 12's 64.77 at
 * 65536x1024, 63.39 against 65.18 at 8192x8192 in a screen
 * (results/2026-12-01-h200-3779272, archived); 63.15 / 63.44 / 131.94 us at
 * 8192x8192 / 65536x1024 / 4096x32768, the best torch 2.16x / 1.01x / 1.85x
 * slower
 * (results/2026-12-01-h200-e090e54/kernels/softmax-bf16-14-keep-x.json);
 * PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/softmax-bf16-14-keep-x.json).
 */
#include <kproof/kernel.h>

#include <cuda_bf16.h>
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
/* An L2 eviction policy that gives every line it touches evict_last
 * priority, and a 16-byte load under it. */
static __device__ __forceinline__ uint64_t evict_last_policy() {
    uint64_t pol;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
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
};
template <> struct vec<8> {
    typedef uint4 raw; /* what one 16-byte chunk is in memory */
    static __device__ __forceinline__ void unpack(const raw &t, float *v) {
        unpack2(t.x, v); unpack2(t.y, v + 2); unpack2(t.z, v + 4); unpack2(t.w, v + 6);
    }
    static __device__ __forceinline__ void load(const kp_bf16 *p, int64_t i, float *v) {
        unpack(reinterpret_cast<const uint4 *>(p)[i], v);
    }
    static __device__ __forceinline__ void load_keep(const kp_bf16 *p, int64_t i, float *v, uint64_t pol) {
        unpack(ld16_hint(reinterpret_cast<const uint4 *>(p) + i, pol), v);
    }
    static __device__ __forceinline__ void store(kp_bf16 *p, int64_t i, const float *v) {
        reinterpret_cast<uint4 *>(p)[i] = make_uint4(pack2(v), pack2(v + 2), pack2(v + 4), pack2(v + 6));
    }
};

/* ---- rows that fit: one read, registers only ----------------------------
 * TPR threads per row, each keeping PER floats; BLOCK / TPR rows per block.
 * 64 registers a thread at PER = 32 (1024 threads per SM), fewer below. */
template <int VEC, int PER, int TPR, int BLOCK>
static __global__ __launch_bounds__(BLOCK, (PER <= 8 ? 2048 : PER <= 16 ? 1536 : 1024) / BLOCK) void softmax_regs(
    const kp_bf16 *__restrict__ x, kp_bf16 *__restrict__ y, int64_t rows, int64_t cols) {
    constexpr int CHUNKS = PER / VEC;
    __shared__ float sh_max[32];
    __shared__ float sh_sum[32];
    const int64_t row = (int64_t)blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
    if (TPR == 32 && row >= rows) return; /* whole warps; a block row always exists */
    const int t = (int)(threadIdx.x % TPR);
    const kp_bf16 *xr = x + row * cols;
    kp_bf16 *yr = y + row * cols;
    const int n = (int)(cols / VEC);
    float v[PER];
    const uint64_t pol = evict_last_policy(); /* x's lines at evict_last (14) */

    /* All loads first, so they are in flight together; slots past the row
     * hold -inf, which the max ignores and exp2 turns into 0. */
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        int i = k * TPR + t;
        if (i < n) {
            vec<VEC>::load_keep(xr, i, &v[k * VEC], pol);
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

/* ---- rows over 32768 elements: online max and sum, then the output pass ---- */
template <int VEC>
static __global__ __launch_bounds__(ONLINE_THREADS) void softmax_online(const kp_bf16 *__restrict__ x,
                                                                        kp_bf16 *__restrict__ y, int64_t cols) {
    __shared__ float sh_max[32];
    __shared__ double sh_sum[32];
    const kp_bf16 *xr = x + (int64_t)blockIdx.x * cols;
    kp_bf16 *yr = y + (int64_t)blockIdx.x * cols;
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
static int launch_regs(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int64_t rpb = BLOCK / TPR;
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID * rpb) { /* one pass in practice */
        int64_t n = rows - r0 < MAX_GRID * rpb ? rows - r0 : MAX_GRID * rpb;
        softmax_regs<VEC, PER, TPR, BLOCK>
            <<<(unsigned)((n + rpb - 1) / rpb), BLOCK, 0, stream>>>(x + r0 * cols, y + r0 * cols, n, cols);
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

/* TPB threads a row; a thread owns 16-byte chunks t, t + TPB, ... (at most
 * CH of them), so a warp's shared-memory reads are conflict-free. */
template <int TPB, int CH>
static __global__ __launch_bounds__(TPB) void softmax_tma(const kp_bf16 *__restrict__ x, kp_bf16 *__restrict__ y,
                                                         int64_t cols) {
    extern __shared__ __align__(128) uint4 row[];
    __shared__ uint64_t bar;
    __shared__ float sh_max[32];
    __shared__ float sh_sum[32];
    const int n = (int)(cols / 8), t = (int)threadIdx.x;
    kp_bf16 *yr = y + (int64_t)blockIdx.x * cols;
    if (t == 0) row_copy_start(&bar, row, x + (int64_t)blockIdx.x * cols, (uint32_t)(cols * 2));
    __syncthreads(); /* the barrier is initialised before anyone waits on it */
    row_copy_wait(&bar);

    float m4[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
    for (int k = 0; k < CH; k++) {
        const int i = k * TPB + t;
        if (i < n) {
            float v[8];
            unpack8(row[i], v);
#pragma unroll
            for (int j = 0; j < 8; j++) m4[j % 4] = fmaxf(m4[j % 4], v[j]);
        }
    }
    const float m = row_max<TPB>(fmaxf(fmaxf(m4[0], m4[1]), fmaxf(m4[2], m4[3])), sh_max);
    const float ml = m * LOG2E; /* its rounding is one factor in every term */

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < CH; k++) {
        const int i = k * TPB + t;
        if (i < n) {
            float v[8];
            unpack8(row[i], v);
#pragma unroll
            for (int j = 0; j < 8; j++) acc[j % 4] += exp2f(fmaf(v[j], LOG2E, -ml));
        }
    }
    const float inv = 1.0f / row_sum<TPB>((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_sum);

#pragma unroll
    for (int k = 0; k < CH; k++) {
        const int i = k * TPB + t;
        if (i < n) {
            float v[8];
            unpack8(row[i], v);
#pragma unroll
            for (int j = 0; j < 8; j++) v[j] = exp2f(fmaf(v[j], LOG2E, -ml)) * inv;
            vec<8>::store(yr, i, v);
        }
    }
}

template <int TPB, int CH>
static int launch_tma(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int smem = (int)(cols * 2);
    static int ready; /* the attribute once per process: a host call, not device work */
    if (!ready) {
        KP_TRY(cudaFuncSetAttribute(softmax_tma<TPB, CH>, cudaFuncAttributeMaxDynamicSharedMemorySize, CH * TPB * 16));
        ready = 1;
    }
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID) {
        int64_t nr = rows - r0 < MAX_GRID ? rows - r0 : MAX_GRID;
        softmax_tma<TPB, CH><<<(unsigned)nr, TPB, smem, stream>>>(x + r0 * cols, y + r0 * cols, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}

template <int VEC>
static int launch(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols, cudaStream_t stream) {
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
KP_ENTRY int kp_softmax_bf16(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols, kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    if (cols % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0) {
        if (cols > 8192 && cols <= 16384) return launch_tma<512, 4>(x, y, rows, cols, stream);
        if (cols > 16384 && cols <= 32768) return launch_tma<1024, 4>(x, y, rows, cols, stream);
        return launch<8>(x, y, rows, cols, stream);
    }
    return launch<1>(x, y, rows, cols, stream);
}
