/* matmul bf16, host, 02 blocked: f32-02's packed, cache-blocked 6x32
 * micro-kernel, with bf16 -> fp32 conversion done once per element while
 * packing (a block at a time) and the fp32 sums of each panel of C kept in
 * a scratch buffer until the whole K is done, then rounded to bf16 once.
 *
 * Napkin math: 2*M*N*K FLOPs. Per K step the micro-kernel loads 6 floats of
 * A and 32 of B for 192 FMAs; packing converts each A element N/NC times
 * and each B element once. Scratch: 4*M*min(N, NC) bytes.
 * Accuracy: bf16 inputs are exact in fp32, fp32 FMA accumulation, one
 * rounding to bf16 (nearest even) per output.
 * measured: PASS on every shape of the op (tests/it_host.c).
 */
#include <math.h>
#include <stdlib.h>

#include <kproof/kernel.h>

enum {
    MR = 6,    /* rows of C per micro-tile */
    NR = 32,   /* columns of C per micro-tile: contiguous in the B sliver */
    KC = 256,  /* depth of one packed block: a B sliver is KC*NR*4 = 32 KiB */
    MC = 96,   /* rows of A per packed block (a multiple of MR): 96 KiB */
    NC = 1024  /* columns of B per packed panel (a multiple of NR): 1 MiB */
};

/* Packs and widens A[0..mc) x [0..kc) (row stride lda) into slivers of MR
 * rows stored k-major, ap[s][k][i]; rows past mc are zero. */
static void pack_a(const kp_bf16 *a, int64_t lda, int64_t mc, int64_t kc, float *ap) {
    for (int64_t s = 0; s < mc; s += MR) {
        int64_t rows = mc - s < MR ? mc - s : MR;
        for (int64_t k = 0; k < kc; k++) {
            int64_t i = 0;
            for (; i < rows; i++)
                ap[k * MR + i] = kp_bf16_to_f32(a[(s + i) * lda + k]);
            for (; i < MR; i++)
                ap[k * MR + i] = 0.0f;
        }
        ap += kc * MR;
    }
}

/* Packs and widens B[0..kc) x [0..nc) (row stride ldb) into slivers of NR
 * columns, bp[s][k][j]; zero past nc. */
static void pack_b(const kp_bf16 *b, int64_t ldb, int64_t kc, int64_t nc, float *bp) {
    for (int64_t s = 0; s < nc; s += NR) {
        int64_t cols = nc - s < NR ? nc - s : NR;
        for (int64_t k = 0; k < kc; k++) {
            const kp_bf16 *row = b + k * ldb + s;
            int64_t j = 0;
            if (cols == NR)
                for (; j < NR; j++)
                    bp[k * NR + j] = kp_bf16_to_f32(row[j]);
            for (; j < cols; j++)
                bp[k * NR + j] = kp_bf16_to_f32(row[j]);
            for (; j < NR; j++)
                bp[k * NR + j] = 0.0f;
        }
        bp += kc * NR;
    }
}

/* c[0..m) x [0..n) (=, or += unless first) the fp32 product of one packed
 * A sliver and one packed B sliver over kc. */
static void micro_kernel(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int64_t m, int64_t n,
                         int first) {
    float acc[MR][NR] = {{0}};
    for (int64_t k = 0; k < kc; k++) {
        const float *brow = bp + k * NR;
        for (int i = 0; i < MR; i++) {
            float a = ap[k * MR + i];
            for (int j = 0; j < NR; j++)
                acc[i][j] = fmaf(a, brow[j], acc[i][j]);
        }
    }
    if (m == MR && n == NR) {
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++)
                c[i * ldc + j] = first ? acc[i][j] : c[i * ldc + j] + acc[i][j];
        return;
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            c[i * ldc + j] = first ? acc[i][j] : c[i * ldc + j] + acc[i][j];
}

KP_ENTRY int kp_matmul_bf16(const kp_bf16 *A, const kp_bf16 *B, kp_bf16 *C, int64_t M, int64_t N, int64_t K) {
    if (M <= 0 || N <= 0) return 0;
    if (K <= 0) { /* an empty sum: every output is zero */
        for (int64_t i = 0; i < M * N; i++)
            C[i] = 0;
        return 0;
    }
    /* Scratch sized to the problem: small shapes stay off mmap'd memory. */
    int64_t kmax = K < KC ? K : KC;
    int64_t mmax = M < MC ? (M + MR - 1) / MR * MR : MC;
    int64_t nmax = N < NC ? (N + NR - 1) / NR * NR : NC;
    int64_t ncmax = N < NC ? N : NC;
    float *ap = malloc(sizeof(float) * (size_t)(mmax * kmax));
    float *bp = malloc(sizeof(float) * (size_t)(kmax * nmax));
    float *cf = malloc(sizeof(float) * (size_t)(M * ncmax)); /* fp32 sums of one panel of C */
    if (!ap || !bp || !cf) {
        free(ap);
        free(bp);
        free(cf);
        return 1;
    }
    for (int64_t jc = 0; jc < N; jc += NC) {
        int64_t nc = N - jc < NC ? N - jc : NC;
        for (int64_t pc = 0; pc < K; pc += KC) {
            int64_t kc = K - pc < KC ? K - pc : KC;
            pack_b(B + pc * N + jc, N, kc, nc, bp);
            for (int64_t ic = 0; ic < M; ic += MC) {
                int64_t mc = M - ic < MC ? M - ic : MC;
                pack_a(A + ic * K + pc, K, mc, kc, ap);
                for (int64_t jr = 0; jr < nc; jr += NR)
                    for (int64_t ir = 0; ir < mc; ir += MR)
                        micro_kernel(kc, ap + ir * kc, bp + jr * kc, cf + (ic + ir) * nc + jr, nc,
                                     mc - ir < MR ? mc - ir : MR, nc - jr < NR ? nc - jr : NR, pc == 0);
            }
        }
        for (int64_t i = 0; i < M; i++) /* the panel is complete: round once */
            for (int64_t j = 0; j < nc; j++)
                C[i * N + jc + j] = kp_f32_to_bf16(cf[i * nc + j]);
    }
    free(ap);
    free(bp);
    free(cf);
    return 0;
}
