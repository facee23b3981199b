/* layernorm bf16, cuda, 01 naive: one thread per row.
 *
 * The simplest correct kernel, the baseline the others are measured against.
 * y = (x - mean) / sqrt(var + 1e-5) * w + b with the biased variance; each
 * thread walks its row three times (mean; variance as the mean of (x -
 * mean)^2, never E[x^2] - E[x]^2; output), sums in double, one rounding to
 * bf16 per output. Napkin math: 4 bytes per element is the minimum; this
 * reads x three times, each load its own 32-byte sector.
 * measured: PASS on the op's edge set
 * (results/2026-12-01-h200-1c4668e/correct-edge/layernorm-bf16-01-naive.json);
 * not timed.
 */
#include <kproof/kernel.h>

#include <cuda_bf16.h>
#include <math.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

static __device__ __forceinline__ float bf16_to_f32(kp_bf16 h) { return __uint_as_float((uint32_t)h << 16); }
static __device__ __forceinline__ kp_bf16 f32_to_bf16(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }

static __global__ void layernorm_naive(const kp_bf16 *__restrict__ x, const kp_bf16 *__restrict__ w,
                                       const kp_bf16 *__restrict__ b, kp_bf16 *__restrict__ y, int64_t rows,
                                       int64_t cols) {
    int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const kp_bf16 *xr = x + row * cols;
    kp_bf16 *yr = y + row * cols;

    double mean = 0.0;
    for (int64_t c = 0; c < cols; c++) mean += bf16_to_f32(xr[c]);
    mean /= (double)cols;
    double var = 0.0;
    for (int64_t c = 0; c < cols; c++) {
        double d = bf16_to_f32(xr[c]) - mean;
        var += d * d;
    }
    var /= (double)cols;
    float rstd = (float)(1.0 / sqrt(var + KP_LAYERNORM_EPS));
    for (int64_t c = 0; c < cols; c++) {
        float d = (float)(bf16_to_f32(xr[c]) - mean);
        yr[c] = f32_to_bf16(d * rstd * bf16_to_f32(w[c]) + bf16_to_f32(b[c]));
    }
}

KP_ENTRY int kp_layernorm_bf16(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows,
                               int64_t cols, kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    const int threads = 256;
    int64_t blocks = (rows + threads - 1) / threads;
    layernorm_naive<<<(unsigned)blocks, threads, 0, stream>>>(x, w, b, y, rows, cols);
    KP_TRY(cudaGetLastError());
    return 0;
}
