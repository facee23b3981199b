/* softmax bf16, cuda, 07 stream rows: rows of 8K-32K streamed by a persistent grid.
 *
 * Adds over 06: rows over 8192 go to one resident 1024-thread block an SM
 * that walks rows blockIdx, blockIdx + grid, ..., the next two rows copied
 * into shared memory with cp.async while one is reduced and written; each
 * element's exp2 computed once. Rows of at most 8192 run as in 06.
 * measured: 141.60 us against 06's 143.47 at 4096x32768, 1.3% faster
 * (results/2026-11-30-h200x2-3c12f8c-gpu1, archived); 63.94 / 64.29 / 139.65
 * us at 8192x8192 / 65536x1024 / 4096x32768
 * (results/2026-11-30-h200-61cbe17, archived); PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/softmax-bf16-07-stream-rows.json).
 */
#include <kproof/kernel.h>

#include <cuda_bf16.h>
#include <cuda_pipeline.h>
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
template <int VEC> struct vec;
template <> struct vec<1> {
    static __device__ __forceinline__ void load(const kp_bf16 *p, int64_t i, float *v) { v[0] = bf16_to_f32(p[i]); }
    static __device__ __forceinline__ void store(kp_bf16 *p, int64_t i, const float *v) { p[i] = f32_to_bf16(v[0]); }
};
template <> struct vec<8> {
    typedef uint4 raw; /* what one 16-byte chunk is in memory */
    static __device__ __forceinline__ void unpack(const raw &t, float *v) {
        unpack2(t.x, v); unpack2(t.y, v + 2); unpack2(t.z, v + 4); unpack2(t.w, v + 6);
    }
    static __device__ __forceinline__ void load(const kp_bf16 *p, int64_t i, float *v) {
        unpack(reinterpret_cast<const uint4 *>(p)[i], v);
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

/* ---- rows of 8K..32K elements: a persistent grid streams them ---------------
 * STREAM_TPB threads per block, CH 16-byte chunks (8 bf16) per thread,
 * STREAM_BUFS row buffers in shared memory, so the loads of the next two
 * rows are in flight while one is reduced (one row of 16384 bf16 is 32 KiB:
 * fewer bytes in flight per SM than the H200 needs to stream at full rate);
 * chunk slot k * STREAM_TPB + t belongs to thread t in every buffer. Needs cols % 8 == 0 and 16-byte aligned rows. */
enum { STREAM_TPB = 1024, STREAM_BUFS = 3 };

template <int CH>
static __device__ __forceinline__ void stream_fetch(const kp_bf16 *__restrict__ x, int64_t row, int64_t cols, int n,
                                                    uint4 *dst) {
    const uint4 *src = reinterpret_cast<const uint4 *>(x + row * cols);
#pragma unroll
    for (int k = 0; k < CH; k++) {
        int i = k * STREAM_TPB + (int)threadIdx.x;
        if (i < n) __pipeline_memcpy_async(&dst[i], &src[i], sizeof(uint4));
    }
}

template <int CH>
static __global__ __launch_bounds__(STREAM_TPB, 1) void softmax_stream(const kp_bf16 *__restrict__ x,
                                                                      kp_bf16 *__restrict__ y, int64_t rows,
                                                                      int64_t cols) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    uint4 *buf = reinterpret_cast<uint4 *>(smem_raw);
    __shared__ float sh_max[32];
    __shared__ float sh_sum[32];
    const int t = (int)threadIdx.x;
    const int n = (int)(cols / 8);
    const int64_t grid = gridDim.x;
    int64_t r = blockIdx.x;
    const size_t slots = (size_t)CH * STREAM_TPB;
    for (int q = 0; q < STREAM_BUFS - 1; q++) { /* the first rows' loads */
        if (r + q * grid < rows) stream_fetch<CH>(x, r + q * grid, cols, n, buf + q * slots);
        __pipeline_commit();
    }
    for (int cb = 0; r < rows; r += grid, cb = cb + 1 == STREAM_BUFS ? 0 : cb + 1) {
        const uint4 *cur = buf + cb * slots;
        /* the buffer before cur held this thread's slots of the last row,
         * already read: it takes the row STREAM_BUFS - 1 ahead */
        const int64_t ahead = r + (STREAM_BUFS - 1) * grid;
        if (ahead < rows) stream_fetch<CH>(x, ahead, cols, n, buf + (cb == 0 ? STREAM_BUFS - 1 : cb - 1) * slots);
        __pipeline_commit();
        __pipeline_wait_prior(STREAM_BUFS - 1); /* this thread's slots of row r have landed */

        float v[CH * 8];
#pragma unroll
        for (int k = 0; k < CH; k++) {
            int i = k * STREAM_TPB + t;
            if (i < n) {
                vec<8>::unpack(cur[i], &v[k * 8]);
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++) v[k * 8 + j] = -INFINITY;
            }
        }
        float m = -INFINITY;
#pragma unroll
        for (int j = 0; j < CH * 8; j++) m = fmaxf(m, v[j]);
        m = row_max<STREAM_TPB>(m, sh_max);
        const float ml = m * LOG2E; /* its rounding is one factor in every term */

        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < CH * 8; j++) {
            v[j] = exp2f(fmaf(v[j], LOG2E, -ml));
            acc[j % 4] += v[j];
        }
        const float inv = 1.0f / row_sum<STREAM_TPB>((acc[0] + acc[1]) + (acc[2] + acc[3]), sh_sum);

        kp_bf16 *yr = y + r * cols;
#pragma unroll
        for (int k = 0; k < CH; k++) {
            int i = k * STREAM_TPB + t;
            if (i < n) {
#pragma unroll
                for (int j = 0; j < 8; j++) v[k * 8 + j] *= inv;
                vec<8>::store(yr, i, &v[k * 8]);
            }
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

template <int CH>
static int launch_stream(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int smem = STREAM_BUFS * CH * STREAM_TPB * (int)sizeof(uint4);
    KP_TRY(cudaFuncSetAttribute(softmax_stream<CH>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    KP_TRY(cudaFuncSetAttribute(softmax_stream<CH>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                cudaSharedmemCarveoutMaxShared));
    int dev = 0, sms = 0, per_sm = 0;
    KP_TRY(cudaGetDevice(&dev));
    KP_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    KP_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, softmax_stream<CH>, STREAM_TPB, smem));
    int64_t grid = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
    if (grid > rows) grid = rows;
    softmax_stream<CH><<<(unsigned)grid, STREAM_TPB, smem, stream>>>(x, y, rows, cols);
    KP_TRY(cudaGetLastError());
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
    if (VEC == 8 && cols <= 16384) return launch_stream<2>(x, y, rows, cols, stream);
    if (VEC == 8 && cols <= 32768) return launch_stream<4>(x, y, rows, cols, stream);
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
    if (cols % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0) return launch<8>(x, y, rows, cols, stream);
    return launch<1>(x, y, rows, cols, stream);
}
