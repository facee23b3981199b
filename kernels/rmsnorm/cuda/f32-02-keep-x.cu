/* rmsnorm f32, cuda, 02 keep x: layernorm f32 17 without the mean and the bias.
 *
 * Adds over 01: the structure of the project's best layernorm
 * (kernels/layernorm/cuda/f32-17-keep-x.cu): the row in registers, read from
 * HBM once and written once with 16-byte accesses where every pointer and
 * the row length allow (one element at a time where not); a warp a row up
 * to 512 columns, four warps of 8 values at 1024, a block a row beyond,
 * sized so a thread keeps at most 32 values; every load of a row issued
 * before any value is used; x loaded at L2's evict_last priority under one
 * policy made once a kernel. One reduction a row (the sum of squares: no
 * mean, so no pivot and no merge), then rsqrtf. Rows over 32768 floats: a
 * block a row that reads x twice, sums of chunks in double.
 * measured: PASS on every shape of the op on the H200. In one harness
 * with torch (lab/torch_vs.py): 124.48 us [124.45, 124.51] at 16384x4096
 * (99.8% of the copy), 124.13 at 65536x1024, 125.54 at 4096x16384; 0.5%
 * behind torch.compile at 16384x4096, 0.3% and 0.7% ahead of the best
 * torch mode at the other two (results/2026-12-04-h200-94448f8).
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
 * whole block (TPR > 32, then TPR == blockDim.x) goes through shared memory
 * once. Every warp reduces the per-warp partials itself, so the result
 * reaches all threads without a second barrier. */
template <int TPR, typename T> static __device__ __forceinline__ T row_sum(T v, T *sh) {
    v = warp_sum(v);
    if (TPR == 32) return v;
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < TPR / 32 ? sh[threadIdx.x & 31] : (T)0;
    return warp_sum(v);
}

/* An L2 eviction policy that gives every line it touches evict_last
 * priority. */
static __device__ __forceinline__ uint64_t evict_last_policy() {
    uint64_t pol;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}
/* VEC consecutive floats starting at element i*VEC of a row. */
template <int VEC> struct vec;
template <> struct vec<1> {
    static __device__ __forceinline__ void load(const float *p, int64_t i, float *v) { v[0] = p[i]; }
    static __device__ __forceinline__ void store(float *p, int64_t i, const float *v) { p[i] = v[0]; }
    static __device__ __forceinline__ void load_keep(const float *p, int64_t i, float *v, uint64_t) { v[0] = p[i]; }
};
template <> struct vec<4> {
    static __device__ __forceinline__ void load(const float *p, int64_t i, float *v) {
        float4 t = reinterpret_cast<const float4 *>(p)[i];
        v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
    }
    static __device__ __forceinline__ void store(float *p, int64_t i, const float *v) {
        reinterpret_cast<float4 *>(p)[i] = make_float4(v[0], v[1], v[2], v[3]);
    }
    /* The same load with x's lines at L2's evict_last priority. */
    static __device__ __forceinline__ void load_keep(const float *p, int64_t i, float *v, uint64_t pol) {
        float4 t;
        asm("ld.global.nc.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
            : "=f"(t.x), "=f"(t.y), "=f"(t.z), "=f"(t.w) : "l"(reinterpret_cast<const float4 *>(p) + i), "l"(pol));
        v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
    }
};

/* ---- rows that fit: one read, registers only ----------------------------
 * TPR threads per row, each keeping PER floats; BLOCK / TPR rows per block
 * (TPR == 32, or TPR == BLOCK: one row a block). */
template <int VEC, int PER, int TPR, int BLOCK>
static __global__ __launch_bounds__(BLOCK, (PER <= 8 ? 2048 : PER <= 16 ? 1536 : 1024) / BLOCK) void rmsnorm_regs(
    const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y, int64_t rows, int64_t cols) {
    static_assert(TPR == 32 || TPR == BLOCK, "a row is a warp or the whole block");
    constexpr int CHUNKS = PER / VEC;
    __shared__ float sh_ss[32];
    const int64_t row = (int64_t)blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;
    if (row >= rows) return; /* whole warps (TPR == 32); a block's one row always exists otherwise */
    const int t = (int)(threadIdx.x % TPR);
    const float *xr = x + row * cols;
    float *yr = y + row * cols;
    const int n = (int)(cols / VEC);
    float v[PER];
    const uint64_t pol = evict_last_policy();

    /* All loads first, so they are in flight together; a row that fills
     * every slot (every benchmark shape) takes plain loads with nothing
     * between them, a short one zeros in the slots past its end. */
    if (n >= CHUNKS * TPR) {
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) vec<VEC>::load_keep(xr, k * TPR + t, &v[k * VEC], pol);
    } else {
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) {
            const int i = k * TPR + t;
            if (i < n) {
                vec<VEC>::load_keep(xr, i, &v[k * VEC], pol);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[k * VEC + j] = 0.0f;
            }
        }
    }

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* short chains, then a tree */
#pragma unroll
    for (int j = 0; j < PER; j++) acc[j % 4] = fmaf(v[j], v[j], acc[j % 4]);
    const float ss = row_sum<TPR>((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_ss);
    const float rstd = rsqrtf(ss / (float)cols + (float)KP_RMSNORM_EPS);

#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
        const int i = k * TPR + t;
        if (i < n) {
            float wv[VEC];
            vec<VEC>::load(w, i, wv);
#pragma unroll
            for (int j = 0; j < VEC; j++) v[k * VEC + j] = v[k * VEC + j] * rstd * wv[j];
            vec<VEC>::store(yr, i, &v[k * VEC]);
        }
    }
}

/* ---- rows over 32768 floats: the sum of squares, then the output (two
 * reads). Chunks are summed in fp32, the chunk sums in double, since a
 * thread's chain of chunks grows with the row. */
template <int VEC>
static __global__ __launch_bounds__(LONG_THREADS) void rmsnorm_long(const float *__restrict__ x,
                                                                    const float *__restrict__ w,
                                                                    float *__restrict__ y, int64_t cols) {
    __shared__ double sh_ss[32];
    const float *xr = x + (int64_t)blockIdx.x * cols;
    float *yr = y + (int64_t)blockIdx.x * cols;
    const int64_t n = cols / VEC;
    const int64_t step = (int64_t)LONG_THREADS * LONG_UNROLL;
    float v[LONG_UNROLL * VEC];

    double s = 0.0;
    for (int64_t base = threadIdx.x; base < n; base += step) {
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            const int64_t i = base + (int64_t)u * LONG_THREADS;
            if (i < n) {
                vec<VEC>::load(xr, i, &v[u * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = 0.0f;
            }
        }
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < LONG_UNROLL * VEC; j++) acc[j % 4] = fmaf(v[j], v[j], acc[j % 4]);
        s += (double)((acc[0] + acc[1]) + (acc[2] + acc[3]));
    }
    const double ss = row_sum<LONG_THREADS>(s, sh_ss);
    const float rstd = (float)(1.0 / sqrt(ss / (double)cols + KP_RMSNORM_EPS));

    for (int64_t base = threadIdx.x; base < n; base += step) {
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            const int64_t i = base + (int64_t)u * LONG_THREADS;
            if (i < n) vec<VEC>::load(xr, i, &v[u * VEC]);
        }
#pragma unroll
        for (int u = 0; u < LONG_UNROLL; u++) {
            const int64_t i = base + (int64_t)u * LONG_THREADS;
            if (i < n) {
                float wv[VEC];
                vec<VEC>::load(w, i, wv);
#pragma unroll
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = v[u * VEC + j] * rstd * wv[j];
                vec<VEC>::store(yr, i, &v[u * VEC]);
            }
        }
    }
}

/* ---- launchers ------------------------------------------------------------ */
static const int64_t MAX_GRID = 0x7fffffff;

template <int VEC, int PER, int TPR, int BLOCK>
static int launch_regs(const float *x, const float *w, float *y, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int64_t rpb = BLOCK / TPR;
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID * rpb) { /* one pass in practice */
        const int64_t n = rows - r0 < MAX_GRID * rpb ? rows - r0 : MAX_GRID * rpb;
        rmsnorm_regs<VEC, PER, TPR, BLOCK>
            <<<(unsigned)((n + rpb - 1) / rpb), BLOCK, 0, stream>>>(x + r0 * cols, w, y + r0 * cols, n, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}

/* layernorm f32 17's launch table (docs/kernels.md: why these shapes). */
template <int VEC>
static int launch(const float *x, const float *w, float *y, int64_t rows, int64_t cols, cudaStream_t stream) {
    if (cols <= 128) return launch_regs<VEC, 4, 32, 256>(x, w, y, rows, cols, stream);
    if (cols <= 256) return launch_regs<VEC, 8, 32, 256>(x, w, y, rows, cols, stream);
    if (cols <= 512) return launch_regs<VEC, 16, 32, 256>(x, w, y, rows, cols, stream);
    if (cols <= 1024) return launch_regs<VEC, 8, 128, 128>(x, w, y, rows, cols, stream);
    if (cols <= 2048) return launch_regs<VEC, 16, 128, 128>(x, w, y, rows, cols, stream);
    if (cols <= 4096) return launch_regs<VEC, 32, 128, 128>(x, w, y, rows, cols, stream);
    if (cols <= 8192) return launch_regs<VEC, 32, 256, 256>(x, w, y, rows, cols, stream);
    if (cols <= 16384) return launch_regs<VEC, 32, 512, 512>(x, w, y, rows, cols, stream);
    if (cols <= 32768) return launch_regs<VEC, 32, 1024, 1024>(x, w, y, rows, cols, stream);
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID) {
        const int64_t n = rows - r0 < MAX_GRID ? rows - r0 : MAX_GRID;
        rmsnorm_long<VEC><<<(unsigned)n, LONG_THREADS, 0, stream>>>(x + r0 * cols, w, y + r0 * cols, cols);
        KP_TRY(cudaGetLastError());
    }
    return 0;
}

/* ---- entry point ------------------------------------------------------------ */
KP_ENTRY int kp_rmsnorm_f32(const float *x, const float *w, float *y, int64_t rows, int64_t cols, kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    /* 16-byte accesses only where every pointer is 16-byte aligned and every
     * row starts on a 16-byte boundary (cols a multiple of 4). */
    if (cols % 4 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)w % 16 == 0 && (uintptr_t)y % 16 == 0)
        return launch<4>(x, w, y, rows, cols, stream);
    return launch<1>(x, w, y, rows, cols, stream);
}
