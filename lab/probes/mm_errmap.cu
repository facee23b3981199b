/* lab/probes/mm_errmap.cu: where a bf16 matmul kernel file's output is
 * wrong, element by element. kproof's check samples C and names the first
 * bad element; this compares every element with an fp32 reference and
 * prints where the bad ones lie: poison left (never written), zeros, by row
 * class (row % 8), by column inside the 256-column tile, near the row ends,
 * and the first few with their values. Not a harness: one call, fixed seeds.
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude \
 *        lab/probes/mm_errmap.cu KERNEL.cu -o errmap -lcuda
 *   ./errmap M N K [COFF]   (COFF: C placed COFF elements past a 256-byte boundary)
 */
#include <kproof/kernel.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "errmap: %s: %s\n", #x, cudaGetErrorString(e_));                   \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

static const unsigned short POISON = 0x7fa5; /* a NaN no arithmetic produces */

__device__ static float hashval(unsigned long long i, unsigned seed) {
    unsigned long long x = i * 0x9e3779b97f4a7c15ull + seed * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31; x *= 0x94d049bb133111ebull; x ^= x >> 29;
    return (float)((x >> 40) & 0xffff) / 32768.0f - 1.0f; /* [-1, 1) */
}

__global__ void fill(unsigned short *p, long long n, unsigned seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        p[i] = __bfloat16_as_ushort(__float2bfloat16_rn(hashval(i, seed)));
}

__global__ void poison(unsigned short *p, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        p[i] = POISON;
}

/* One thread an element; fp32 sum over K in order. */
__global__ void ref(const unsigned short *A, const unsigned short *B, float *R, int M, int N, int K) {
    const int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
    if (n >= N) return;
    float s = 0.0f;
    for (int k = 0; k < K; k++)
        s += __bfloat162float(__ushort_as_bfloat16(A[(long long)m * K + k])) *
             __bfloat162float(__ushort_as_bfloat16(B[(long long)k * N + n]));
    R[(long long)m * N + n] = s;
}

static float bf(unsigned short h) {
    unsigned u = (unsigned)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: errmap M N K [COFF]\n");
        return 2;
    }
    const long long M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]);
    const int coff = argc > 4 ? atoi(argv[4]) : 0;
    if (M < 1 || N < 1 || K < 1 || M > 65535 || coff < 0 || coff > 255) {
        fprintf(stderr, "errmap: M, N, K at least 1, M at most 65535 (the reference's grid), COFF 0..255\n");
        return 2;
    }
    unsigned short *A, *B, *Cbuf;
    float *R;
    CK(cudaMalloc(&A, M * K * 2));
    CK(cudaMalloc(&B, K * N * 2));
    CK(cudaMalloc(&Cbuf, M * N * 2 + 512));
    CK(cudaMalloc(&R, M * N * 4));
    unsigned short *C = Cbuf + coff;
    fill<<<1024, 256>>>(A, M * K, 1);
    fill<<<1024, 256>>>(B, K * N, 2);
    poison<<<1024, 256>>>(Cbuf, M * N + 256);
    ref<<<dim3((unsigned)((N + 255) / 256), (unsigned)M), 256>>>(A, B, R, (int)M, (int)N, (int)K);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const int rc = kp_matmul_bf16(A, B, C, M, N, K, 0);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned short> before(coff + 1), c(M * N + 256 - coff);
    CK(cudaMemcpy(before.data(), Cbuf, (coff + 1) * 2, cudaMemcpyDeviceToHost));
    std::vector<float> r(M * N);
    CK(cudaMemcpy(c.data(), C, c.size() * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), R, M * N * 4, cudaMemcpyDeviceToHost));
    long long bad = 0, pois = 0, zero = 0, byclass[8] = {0}, bycol[32] = {0}, head = 0, tail = 0, rows_bad = 0;
    const float tol_abs = 0.005f * sqrtf((float)K) + 0.01f;
    long long shown = 0;
    for (long long m = 0; m < M; m++) {
        long long rb = 0;
        for (long long n = 0; n < N; n++) {
            const unsigned short g = c[m * N + n];
            const float want = r[m * N + n], got = bf(g);
            const bool ok = g != POISON && std::isfinite(got) && fabsf(got - want) <= tol_abs + 0.01f * fabsf(want);
            if (ok) continue;
            bad++, rb++;
            if (g == POISON) pois++;
            else if (got == 0.0f) zero++;
            byclass[m % 8]++;
            bycol[(n % 256) / 8]++;
            if (n < 8) head++;
            if (n >= N - 8) tail++;
            if (shown < 24) {
                printf("  bad C[%lld,%lld] got %g (0x%04x) want %g  (row%%8 %lld, tile col %lld, n0 %lld)\n", m, n, got, g,
                       want, m % 8, n % 256, n - n % 256);
                shown++;
            }
        }
        if (rb) rows_bad++;
    }
    long long past = 0; /* poison overwritten past C's end or before its start */
    for (long long i = M * N; i < (long long)c.size(); i++) past += c[i] != POISON;
    for (int i = 0; i < coff; i++) past += before[i] != POISON;
    printf("errmap M=%lld N=%lld K=%lld coff=%d rc=%d: %lld of %lld bad (%.4f%%), rows with a bad element %lld; "
           "poison left %lld, zeros %lld; in the first 8 columns %lld, the last 8 %lld; written outside C %lld\n",
           M, N, K, coff, rc, bad, M * N, 100.0 * bad / (double)(M * N), rows_bad, pois, zero, head, tail, past);
    printf("  by row %% 8:");
    for (int j = 0; j < 8; j++) printf(" %lld", byclass[j]);
    printf("\n  by tile column / 8:");
    for (int j = 0; j < 32; j++) printf(" %lld", bycol[j]);
    printf("\n");
    return bad || past ? 3 : 0;
}
