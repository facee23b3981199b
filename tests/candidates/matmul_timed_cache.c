/* Broken on purpose: a correct matmul for its first 6 calls (the
 * correctness phase at one shape); from then on it keeps the product of
 * every A it sees, keyed on A's address, and serves a later call on the
 * same address from that store. The timing phase fills the same pooled
 * buffers with fresh inputs every pass, so from the second pass on the
 * stored products belong to inputs that are gone. The timed calls' checks
 * (a grid of elements recomputed on lazy sets) see another matrix. Expect
 * WRONG, tolerance, "a timed call". */
#include <kproof/kernel.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 32

static struct { const float *a; float *c; size_t n; } g_cache[SLOTS];

static void matmul(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K) {
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * N;
        for (int64_t j = 0; j < N; j++) c[j] = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            float a = A[i * K + k];
            const float *b = B + k * N;
            for (int64_t j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
}

KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K) {
    static int calls;
    size_t n = (size_t)(M * N);
    if (++calls <= 6) {
        matmul(A, B, C, M, N, K);
        return 0;
    }
    for (int s = 0; s < SLOTS; s++)
        if (g_cache[s].a == A && g_cache[s].n == n) {
            memcpy(C, g_cache[s].c, n * sizeof *C);
            return 0;
        }
    matmul(A, B, C, M, N, K);
    for (int s = 0; s < SLOTS; s++)
        if (!g_cache[s].a) {
            g_cache[s].c = (float *)malloc(n * sizeof *C);
            if (!g_cache[s].c) break;
            memcpy(g_cache[s].c, C, n * sizeof *C);
            g_cache[s].a = A;
            g_cache[s].n = n;
            break;
        }
    return 0;
}
