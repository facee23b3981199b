/* softmax f32, cuda, 01 naive: one thread per row.
 *
 * The simplest correct kernel, the baseline the others are measured against.
 * Each thread walks its row three times (max, so exp never overflows on
 * inputs of magnitude 1000; the sum of exp(x - max) in double, since a long
 * fp32 chain over a 1M-column row loses digits; output). Napkin math: 8
 * bytes per element is the minimum; this reads x three times, each load its
 * own 32-byte sector.
 * measured: PASS on the op's edge set
 * (results/2026-12-01-h200-0d62826/correct-edge/softmax-f32-01-naive.json);
 * not timed.
 */
#include <kproof/kernel.h>

#include <math.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

static __global__ void softmax_naive(const float *__restrict__ x, float *__restrict__ y, int64_t rows, int64_t cols) {
    int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float *xr = x + row * cols;
    float *yr = y + row * cols;

    float m = -INFINITY;
    for (int64_t c = 0; c < cols; c++) m = fmaxf(m, xr[c]);
    double s = 0.0;
    for (int64_t c = 0; c < cols; c++) s += (double)expf(xr[c] - m);
    float inv = (float)(1.0 / s);
    for (int64_t c = 0; c < cols; c++) yr[c] = expf(xr[c] - m) * inv;
}

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols, kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    const int threads = 256;
    int64_t blocks = (rows + threads - 1) / threads;
    softmax_naive<<<(unsigned)blocks, threads, 0, stream>>>(x, y, rows, cols);
    KP_TRY(cudaGetLastError());
    return 0;
}
