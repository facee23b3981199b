/* layernorm f32, cuda, 01 naive: one thread per row.
 *
 * The simplest correct kernel, the baseline the others are measured against.
 * Each thread walks its row three times (mean; variance as the mean of (x -
 * mean)^2, since rows with mean 1000 and std 1 lose every digit in E[x^2] -
 * E[x]^2; output), both sums in double. Napkin math: 8 bytes per element is
 * the minimum; this reads x three times, each load its own 32-byte sector.
 * measured: PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/layernorm-f32-01-naive.json);
 * not timed.
 */
#include <kproof/kernel.h>

#include <math.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

static __global__ void layernorm_naive(const float *__restrict__ x, const float *__restrict__ w,
                                       const float *__restrict__ b, float *__restrict__ y, int64_t rows,
                                       int64_t cols) {
    int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float *xr = x + row * cols;
    float *yr = y + row * cols;

    double mean = 0.0;
    for (int64_t c = 0; c < cols; c++) mean += xr[c];
    mean /= (double)cols;
    double var = 0.0;
    for (int64_t c = 0; c < cols; c++) {
        double d = xr[c] - mean;
        var += d * d;
    }
    var /= (double)cols;
    double rstd = 1.0 / sqrt(var + KP_LAYERNORM_EPS);
    for (int64_t c = 0; c < cols; c++) yr[c] = (float)((xr[c] - mean) * rstd * w[c] + b[c]);
}

KP_ENTRY int kp_layernorm_f32(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols,
                              kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    const int threads = 256;
    int64_t blocks = (rows + threads - 1) / threads;
    layernorm_naive<<<(unsigned)blocks, threads, 0, stream>>>(x, w, b, y, rows, cols);
    KP_TRY(cudaGetLastError());
    return 0;
}
