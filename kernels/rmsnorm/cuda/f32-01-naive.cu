/* rmsnorm f32, cuda, 01 naive: one thread per row.
 *
 * The simplest correct kernel, the baseline the others are measured against.
 * Each thread walks its row twice (the sum of squares in double; output).
 * Napkin math: 8 bytes per element is the minimum; this reads x twice, and
 * a warp's 32 rows are 32 rows apart, so each load is its own 32-byte
 * sector.
 * measured: the baseline of 02's run on the H200.
 */
#include <kproof/kernel.h>

#include <math.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

static __global__ void rmsnorm_naive(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
                                     int64_t rows, int64_t cols) {
    int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float *xr = x + row * cols;
    float *yr = y + row * cols;

    double ss = 0.0;
    for (int64_t c = 0; c < cols; c++) ss += (double)xr[c] * xr[c];
    double rstd = 1.0 / sqrt(ss / (double)cols + KP_RMSNORM_EPS);
    for (int64_t c = 0; c < cols; c++) yr[c] = (float)(xr[c] * rstd * w[c]);
}

KP_ENTRY int kp_rmsnorm_f32(const float *x, const float *w, float *y, int64_t rows, int64_t cols, kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    const int threads = 256;
    int64_t blocks = (rows + threads - 1) / threads;
    if (blocks > 0x7fffffff) return 1; /* 2^31 blocks of 256 rows: far past any memory */
    rmsnorm_naive<<<(unsigned)blocks, threads, 0, stream>>>(x, w, y, rows, cols);
    KP_TRY(cudaGetLastError());
    return 0;
}
