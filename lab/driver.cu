/* lab/driver.cu: one kernel file's entry point, called in a loop on one
 * shape, for a profiler (ncu) or a quick event timing. Not a harness: no
 * checks, warm after the first call, inputs from a hash. kproof's numbers
 * come from kproof; this is for seeing inside a kernel (lab/profile.sh).
 *   nvcc ... -DLAB_OP=LAB_SOFTMAX_BF16 lab/driver.cu KERNEL.cu -o drv
 *   ./drv ROWS COLS [CALLS]
 */
#include <kproof/kernel.h>

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define LAB_SOFTMAX_F32 1
#define LAB_SOFTMAX_BF16 2
#define LAB_LAYERNORM_F32 3
#define LAB_LAYERNORM_BF16 4
#ifndef LAB_OP
#error "define LAB_OP"
#endif
#if LAB_OP == LAB_SOFTMAX_F32 || LAB_OP == LAB_LAYERNORM_F32
typedef float elem;
#else
typedef kp_bf16 elem;
#endif

/* The first CUDA error, said once; main returns 1 on it. */
static int failed(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return 0;
    fprintf(stderr, "lab driver: %s: %s\n", what, cudaGetErrorString(e));
    return 1;
}
#define CK(call) \
    if (failed((call), #call)) return 1

__global__ void lab_fill(elem *p, long long n, unsigned salt, float scale, float offset) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ salt;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
        float v = offset + scale * ((float)(h & 0xffffff) / 16777216.0f - 0.5f);
#if LAB_OP == LAB_SOFTMAX_F32 || LAB_OP == LAB_LAYERNORM_F32
        p[i] = v;
#else
        p[i] = (kp_bf16)(__float_as_uint(v) >> 16);
#endif
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s ROWS COLS [CALLS]\n", argv[0]);
        return 64;
    }
    const long long rows = atoll(argv[1]), cols = atoll(argv[2]);
    const int calls = argc > 3 ? atoi(argv[3]) : 20;
    const long long n = rows * cols;
    elem *x, *y, *w, *b;
    CK(cudaMalloc(&x, n * sizeof(elem)));
    CK(cudaMalloc(&y, n * sizeof(elem)));
    CK(cudaMalloc(&w, cols * sizeof(elem)));
    CK(cudaMalloc(&b, cols * sizeof(elem)));
    lab_fill<<<1024, 256>>>(x, n, 1u, 4.0f, 0.0f);
    lab_fill<<<64, 256>>>(w, cols, 2u, 0.5f, 1.0f);
    lab_fill<<<64, 256>>>(b, cols, 3u, 1.0f, 0.0f);
    CK(cudaDeviceSynchronize());
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float best = 1e30f, total = 0.0f;
    for (int c = 0; c < calls; c++) {
        CK(cudaEventRecord(e0, s));
#if LAB_OP == LAB_SOFTMAX_F32
        int rc = kp_softmax_f32(x, y, rows, cols, s);
#elif LAB_OP == LAB_SOFTMAX_BF16
        int rc = kp_softmax_bf16(x, y, rows, cols, s);
#elif LAB_OP == LAB_LAYERNORM_F32
        int rc = kp_layernorm_f32(x, w, b, y, rows, cols, s);
#else
        int rc = kp_layernorm_bf16(x, w, b, y, rows, cols, s);
#endif
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        if (rc) {
            fprintf(stderr, "the entry point returned %d\n", rc);
            return 1;
        }
        float ms = 0.0f;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (c > 0) { /* the first call loads the module */
            total += ms;
            best = ms < best ? ms : best;
        }
    }
    const double bytes = 2.0 * (double)n * sizeof(elem);
    printf("%lldx%lld: %d calls, mean %.2f us, best %.2f us (%.0f GB/s), warm L2 between calls\n", rows, cols,
           calls - 1, 1e3 * total / (calls - 1), 1e3 * best, bytes / (best * 1e-3) / 1e9);
    return 0;
}
