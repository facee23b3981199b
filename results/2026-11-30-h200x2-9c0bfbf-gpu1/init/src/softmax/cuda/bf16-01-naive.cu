/* softmax bf16, variant 01: naive, one thread per row.
 *
 * Adds: nothing; the simplest correct kernel, the baseline for the others.
 * bf16 in, bf16 out, all arithmetic in fp32 (the sum in double), one
 * rounding to bf16 (nearest even) per output. Each thread walks its row
 * three times: the max (so exp never overflows on inputs of magnitude
 * 1000), the sum of exp(x - max), then the output.
 * Napkin math: one read and one write of 2*rows*cols bytes each is the
 * minimum traffic; this reads x three times, and neighbouring threads touch
 * addresses a whole row apart, so every load is its own 32-byte sector.
 * About 5 FLOPs and 2 exp per element.
 * H200: not yet measured
 */
#include <kproof/kernel.h>

#include <cuda_bf16.h>
#include <math.h>

#define KP_TRY(call) do { if ((call) != cudaSuccess) return 1; } while (0)

static __device__ __forceinline__ float bf16_to_f32(kp_bf16 h) { return __uint_as_float((uint32_t)h << 16); }
static __device__ __forceinline__ kp_bf16 f32_to_bf16(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }

static __global__ void softmax_naive(const kp_bf16 *__restrict__ x, kp_bf16 *__restrict__ y, int64_t rows,
                                     int64_t cols) {
    int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const kp_bf16 *xr = x + row * cols;
    kp_bf16 *yr = y + row * cols;

    float m = -INFINITY;
    for (int64_t c = 0; c < cols; c++) m = fmaxf(m, bf16_to_f32(xr[c]));
    double s = 0.0;
    for (int64_t c = 0; c < cols; c++) s += (double)expf(bf16_to_f32(xr[c]) - m);
    float inv = (float)(1.0 / s);
    for (int64_t c = 0; c < cols; c++) yr[c] = f32_to_bf16(expf(bf16_to_f32(xr[c]) - m) * inv);
}

KP_ENTRY int kp_softmax_bf16(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols, kp_stream stream) {
    if (rows <= 0 || cols <= 0) return 0;
    const int threads = 256;
    int64_t blocks = (rows + threads - 1) / threads;
    softmax_naive<<<(unsigned)blocks, threads, 0, stream>>>(x, y, rows, cols);
    KP_TRY(cudaGetLastError());
    return 0;
}
