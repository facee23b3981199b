/* rmsnorm f32, cuda, 03 two reads at 4096: 02 with rows of 4096 read twice, as torch.compile does.
 *
 * Adds over 02: rows of exactly 4096 columns (16-byte path) on a kernel of
 * their own: 512 threads a row, the sum of squares from one read of x at
 * L2's evict_last priority, then x read again, from L2, at evict_first
 * beside w, and y written; torch.compile's kernel there has that shape
 * (lab/torch_kernels.py: 512 threads a row, 28 registers). Every other
 * shape runs 02's code.
 * measured: PASS on every shape of the op as lab 78, the same code (33,
 * worst 0.037 of the tolerance; results/2026-12-04-h200-1db03e4/rmsnorm/correct). In one
 * harness with torch (lab/torch_vs.py, as lab variant 78, the same code):
 * 124.10 us [124.03, 124.13] at 16384x4096 (100.2% of the copy), 0.2%
 * behind torch.compile's 123.84, where 02 is 0.5% behind
 * (results/2026-12-04-h200-1db03e4/rmsnorm-lab).
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

/* ---- rows of exactly 4096 (16-byte path): two reads ----------------------
 * A block of 512 threads a row, two float4 a thread, four rows an SM: the
 * sum of squares from a read at evict_last, then x again (from L2) at
 * evict_first beside w, at 32 registers a thread. */
static __device__ __forceinline__ uint64_t evict_first_policy() {
    uint64_t pol;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}
static __global__ __launch_bounds__(512, 4) void rmsnorm_two_4k(const float *__restrict__ x, const float *__restrict__ w,
                                                                float *__restrict__ y) {
    __shared__ float sh_ss[32];
    const float *xr = x + (int64_t)blockIdx.x * 4096;
    float *yr = y + (int64_t)blockIdx.x * 4096;
    const int t = (int)threadIdx.x;
    float v[8];
    const uint64_t keep = evict_last_policy();
    vec<4>::load_keep(xr, t, v, keep);
    vec<4>::load_keep(xr, 512 + t, v + 4, keep);
    float a0 = 0.0f, a1 = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; j++) { a0 = fmaf(v[j], v[j], a0); a1 = fmaf(v[4 + j], v[4 + j], a1); }
    const float ss = row_sum<512>(a0 + a1, sh_ss);
    const float rstd = rsqrtf(ss / 4096.0f + (float)KP_RMSNORM_EPS);
    const uint64_t drop = evict_first_policy();
#pragma unroll
    for (int k = 0; k < 2; k++) {
        float xv[4], wv[4];
        vec<4>::load_keep(xr, k * 512 + t, xv, drop);
        vec<4>::load(w, k * 512 + t, wv);
#pragma unroll
        for (int j = 0; j < 4; j++) xv[j] = xv[j] * rstd * wv[j];
        vec<4>::store(yr, k * 512 + t, xv);
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

/* layernorm f32 17's launch table (docs/kernels.md: why these shapes), with
 * rows of exactly 4096 on their own kernel. */
template <int VEC>
static int launch(const float *x, const float *w, float *y, int64_t rows, int64_t cols, cudaStream_t stream) {
    if (cols <= 128) return launch_regs<VEC, 4, 32, 256>(x, w, y, rows, cols, stream);
    if (cols <= 256) return launch_regs<VEC, 8, 32, 256>(x, w, y, rows, cols, stream);
    if (cols <= 512) return launch_regs<VEC, 16, 32, 256>(x, w, y, rows, cols, stream);
    if (cols <= 1024) return launch_regs<VEC, 8, 128, 128>(x, w, y, rows, cols, stream);
    if (cols <= 2048) return launch_regs<VEC, 16, 128, 128>(x, w, y, rows, cols, stream);
    if (VEC == 4 && cols == 4096 && rows <= MAX_GRID) {
        rmsnorm_two_4k<<<(unsigned)rows, 512, 0, stream>>>(x, w, y);
        KP_TRY(cudaGetLastError());
        return 0;
    }
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
