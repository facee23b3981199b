/* rmsnorm bf16, cuda, 01 naive: one thread per row.
 *
 * The simplest correct kernel, the baseline the others are measured against.
 * y = x / sqrt(mean(x^2) + 1e-5) * w; each thread walks its row twice (the
 * sum of squares in double; output), one rounding to bf16 per output.
 * Napkin math: 4 bytes per element is the minimum; this reads x twice,
 * each load its own 32-byte sector.
 * measured: the baseline of 02's run on the H200 (bf16: 2.26 ms at
 * 16384x4096, results/2026-12-03-h200-c74fb33/rms-bf16.json).
 */
#include <kproof/kernel.h>

#include <cuda_bf16.h>
#include <math.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

static __device__ __forceinline__ float bf16_to_f32(kp_bf16 h) { return __uint_as_float((uint32_t)h << 16); }
static __device__ __forceinline__ kp_bf16 f32_to_bf16(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }

static __global__ void rmsnorm_naive(const kp_bf16 *__restrict__ x, const kp_bf16 *__restrict__ w,
                                     kp_bf16 *__restrict__ y, int64_t rows, int64_t cols) {
    int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const kp_bf16 *xr = x + row * cols;
    kp_bf16 *yr = y + row * cols;

    double ss = 0.0;
    for (int64_t c = 0; c < cols; c++) {
        double v = bf16_to_f32(xr[c]);
        ss += v * v;
    }
    float rstd = (float)(1.0 / sqrt(ss / (double)cols + KP_RMSNORM_EPS));
    for (int64_t c = 0; c < cols; c++) yr[c] = f32_to_bf16(bf16_to_f32(xr[c]) * rstd * bf16_to_f32(w[c]));
}

KP_ENTRY int kp_rmsnorm_bf16(const kp_bf16 *x, const kp_bf16 *w, kp_bf16 *y, int64_t rows, int64_t cols,
                             kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    const int threads = 256;
    int64_t blocks = (rows + threads - 1) / threads;
    if (blocks > 0x7fffffff) return 1; /* 2^31 blocks of 256 rows: far past any memory */
    rmsnorm_naive<<<(unsigned)blocks, threads, 0, stream>>>(x, w, y, rows, cols);
    KP_TRY(cudaGetLastError());
    return 0;
}
