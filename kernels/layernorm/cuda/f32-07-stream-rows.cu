/* layernorm f32, variant 07: rows of 1K-16K floats streamed by a persistent grid.
 *
 * Adds over 05: rows of 513 to 16384 floats go to a grid that fills every
 * SM once (blocks of 256 to 1024 threads, as many per SM as shared memory
 * and registers allow) and stays resident, each block walking rows
 * blockIdx, blockIdx + grid, ... The next two rows are copied into shared
 * memory with cp.async while one is reduced and written, so an SM's loads
 * never pause for its reductions, and the grid ends within one row of
 * even (05 launches a block per row: 15.5 waves at 16384x4096, and the
 * last one half empty). Each thread owns the same 16-byte slots of every
 * buffer for its whole life: no barrier guards them. Statistics exactly
 * as in 05. Other rows run as in 05.
 * Napkin math: 16384x4096 and 65536x1024 move 512 MiB: 125 us at a
 * 4.28 TB/s copy; 05 took 131.3 / 132.4 us there (95.5 / 94.8%,
 * results/2026-11-30-h200x2-session3/call2-c86ae76-gpu1), while ANCHORS.md
 * has torch.compile at 4152 / 4095 GB/s (97.0 / 95.7%).
 * H200 (results/2026-11-30-h200x2-session3/call3-3c12f8c-gpu1): 143.20 / 173.04 / 162.64 us at
 * 16384x4096 / 65536x1024 / 4096x16384 against 05's 131.95 / 131.87 /
 * 133.47 us in the same run: slower everywhere (8-31%). A resident block
 * stalls on each row's barriers while only its own prefetch is in flight;
 * 05's many short-lived blocks per SM keep independent rows moving. Kept
 * as a measured dead end.
 * kproof-best: no
 */
#include <kproof/kernel.h>

#include <cuda_pipeline.h>
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

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* short chains, then a tree */
#pragma unroll
    for (int j = 0; j < PER; j++) {
        v[j] -= pivot;
        acc[j % 4] += v[j];
    }
    const float delta = row_sum<TPR>((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_mean) / (float)cols; /* mean - pivot */

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
    const float var = row_sum<TPR>((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_var) / (float)cols;
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
/* ---- rows of 513..16384 floats: a persistent grid streams them -------------
 * TPB threads per block, CH 16-byte chunks (4 floats) per thread,
 * STREAM_BUFS row buffers in shared memory, so the loads of the next two
 * rows are in flight while one is reduced; chunk slot k * TPB + t belongs
 * to thread t in every buffer. Needs cols % 4 == 0 and 16-byte aligned
 * rows. */
enum { STREAM_BUFS = 3 };

template <int TPB, int CH>
static __device__ __forceinline__ void stream_fetch(const float *__restrict__ x, int64_t row, int64_t cols, int n,
                                                    float4 *dst) {
    const float4 *src = reinterpret_cast<const float4 *>(x + row * cols);
#pragma unroll
    for (int k = 0; k < CH; k++) {
        int i = k * TPB + (int)threadIdx.x;
        if (i < n) __pipeline_memcpy_async(&dst[i], &src[i], sizeof(float4));
    }
}

template <int TPB, int CH>
static __global__ __launch_bounds__(TPB, (CH == 1 ? 2048 : 1024) / TPB) void layernorm_stream(const float *__restrict__ x,
                                                                          const float *__restrict__ w,
                                                                          const float *__restrict__ b,
                                                                          float *__restrict__ y, int64_t rows,
                                                                          int64_t cols) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    float4 *buf = reinterpret_cast<float4 *>(smem_raw);
    __shared__ float sh_mean[32];
    __shared__ float sh_var[32];
    const int t = (int)threadIdx.x;
    const int n = (int)(cols / 4);
    const int64_t grid = gridDim.x;
    const size_t slots = (size_t)CH * TPB;
    int64_t r = blockIdx.x;
    for (int q = 0; q < STREAM_BUFS - 1; q++) { /* the first rows' loads */
        if (r + q * grid < rows) stream_fetch<TPB, CH>(x, r + q * grid, cols, n, buf + q * slots);
        __pipeline_commit();
    }
    for (int cb = 0; r < rows; r += grid, cb = cb + 1 == STREAM_BUFS ? 0 : cb + 1) {
        const float4 *cur = buf + cb * slots;
        /* the buffer before cur held this thread's slots of the last row,
         * already read: it takes the row STREAM_BUFS - 1 ahead */
        const int64_t ahead = r + (STREAM_BUFS - 1) * grid;
        if (ahead < rows)
            stream_fetch<TPB, CH>(x, ahead, cols, n, buf + (cb == 0 ? STREAM_BUFS - 1 : cb - 1) * slots);
        __pipeline_commit();
        const float pivot = first(x + r * cols);
        __pipeline_wait_prior(STREAM_BUFS - 1); /* this thread's slots of row r have landed */

        float v[CH * 4];
#pragma unroll
        for (int k = 0; k < CH; k++) {
            int i = k * TPB + t;
            if (i < n) {
                float4 q4 = cur[i];
                v[k * 4] = q4.x; v[k * 4 + 1] = q4.y; v[k * 4 + 2] = q4.z; v[k * 4 + 3] = q4.w;
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++) v[k * 4 + j] = pivot;
            }
        }

        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}; /* short chains, then a tree */
#pragma unroll
        for (int j = 0; j < CH * 4; j++) {
            v[j] -= pivot;
            acc[j % 4] += v[j];
        }
        const float delta = row_sum<TPB>((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_mean) / (float)cols; /* mean - pivot */

#pragma unroll
        for (int j = 0; j < 4; j++) acc[j] = 0.0f;
#pragma unroll
        for (int k = 0; k < CH; k++) {
            const bool in_row = k * TPB + t < n;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                float d = v[k * 4 + j] - delta;
                v[k * 4 + j] = d;
                if (in_row) acc[j % 4] = fmaf(d, d, acc[j % 4]);
            }
        }
        const float var = row_sum<TPB>((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_var) / (float)cols;
        const float rstd = 1.0f / sqrtf(var + (float)KP_LAYERNORM_EPS);

        float *yr = y + r * cols;
#pragma unroll
        for (int k = 0; k < CH; k++) {
            int i = k * TPB + t;
            if (i < n) {
                float wv[4], bv[4];
                vec<4>::load(w, i, wv);
                vec<4>::load(b, i, bv);
#pragma unroll
                for (int j = 0; j < 4; j++) v[k * 4 + j] = fmaf(v[k * 4 + j] * rstd, wv[j], bv[j]);
                vec<4>::store(yr, i, &v[k * 4]);
            }
        }
    }
}

template <int TPB, int CH>
static int launch_stream(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols,
                         cudaStream_t stream) {
    const int smem = STREAM_BUFS * CH * TPB * (int)sizeof(float4);
    KP_TRY(cudaFuncSetAttribute(layernorm_stream<TPB, CH>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    KP_TRY(cudaFuncSetAttribute(layernorm_stream<TPB, CH>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                cudaSharedmemCarveoutMaxShared));
    int dev = 0, sms = 0, per_sm = 0;
    KP_TRY(cudaGetDevice(&dev));
    KP_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    KP_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, layernorm_stream<TPB, CH>, TPB, smem));
    int64_t grid = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
    if (grid > rows) grid = rows;
    layernorm_stream<TPB, CH><<<(unsigned)grid, TPB, smem, stream>>>(x, w, b, y, rows, cols);
    KP_TRY(cudaGetLastError());
    return 0;
}

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
    if (VEC == 4) {
        if (cols <= 1024) return launch_stream<256, 1>(x, w, b, y, rows, cols, stream);
        if (cols <= 4096) return launch_stream<256, 4>(x, w, b, y, rows, cols, stream);
        if (cols <= 8192) return launch_stream<512, 4>(x, w, b, y, rows, cols, stream);
        if (cols <= 16384) return launch_stream<1024, 4>(x, w, b, y, rows, cols, stream);
    }
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
