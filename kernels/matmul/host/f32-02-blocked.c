/* matmul f32, host, 02 blocked: cache blocking (a KCxNC panel of B in L2,
 * MCxKC blocks of A), both packed into contiguous slivers (zero padded at
 * the edges), and a 6x32 register-tiled micro-kernel that walks contiguous
 * rows of the B sliver, so the compiler keeps the 6x32 accumulators in
 * vector registers and issues one broadcast and 2-4 vector FMAs per A value.
 *
 * Napkin math: 2*M*N*K FLOPs. Per K step the micro-kernel loads 6 floats of
 * A and 32 of B for 192 FMAs; each packed B element is reused MC/6 times
 * from L1, each packed A element N/32 times from L2. Packing costs
 * O(M*K*N/NC + K*N) moves, small against the FLOPs.
 * Accuracy: plain fp32 FMA chains, K split into blocks of KC (no tf32).
 * measured: PASS on every shape of the op (tests/it_host.c);
 * 10.96x over 01 (noisy, 2-core CPU) in the host demo's rigorous column
 * (results/2026-11-30-host-4c64575/demo.md).
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

/* Packs A[0..mc) x [0..kc) (row stride lda) into slivers of MR rows stored
 * k-major: ap[s][k][i]. Rows past mc are zero so the micro-kernel needs no
 * bounds checks. */
static void pack_a(const float *a, int64_t lda, int64_t mc, int64_t kc, float *ap) {
    for (int64_t s = 0; s < mc; s += MR) {
        int64_t rows = mc - s < MR ? mc - s : MR;
        for (int64_t k = 0; k < kc; k++) {
            int64_t i = 0;
            for (; i < rows; i++)
                ap[k * MR + i] = a[(s + i) * lda + k];
            for (; i < MR; i++)
                ap[k * MR + i] = 0.0f;
        }
        ap += kc * MR;
    }
}

/* Packs B[0..kc) x [0..nc) (row stride ldb) into slivers of NR columns:
 * bp[s][k][j], zero past nc. */
static void pack_b(const float *b, int64_t ldb, int64_t kc, int64_t nc, float *bp) {
    for (int64_t s = 0; s < nc; s += NR) {
        int64_t cols = nc - s < NR ? nc - s : NR;
        for (int64_t k = 0; k < kc; k++) {
            const float *row = b + k * ldb + s;
            int64_t j = 0;
            if (cols == NR)
                for (; j < NR; j++)
                    bp[k * NR + j] = row[j];
            for (; j < cols; j++)
                bp[k * NR + j] = row[j];
            for (; j < NR; j++)
                bp[k * NR + j] = 0.0f;
        }
        bp += kc * NR;
    }
}

/* C[0..m) x [0..n) (=, or += unless first) the product of one packed A
 * sliver and one packed B sliver over kc. */
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

KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K) {
    if (M <= 0 || N <= 0) return 0;
    if (K <= 0) { /* an empty sum: every output is zero */
        for (int64_t i = 0; i < M * N; i++)
            C[i] = 0.0f;
        return 0;
    }
    /* Scratch sized to the problem: small shapes stay off mmap'd memory. */
    int64_t kmax = K < KC ? K : KC;
    int64_t mmax = M < MC ? (M + MR - 1) / MR * MR : MC;
    int64_t nmax = N < NC ? (N + NR - 1) / NR * NR : NC;
    float *ap = malloc(sizeof(float) * (size_t)(mmax * kmax));
    float *bp = malloc(sizeof(float) * (size_t)(kmax * nmax));
    if (!ap || !bp) {
        free(ap);
        free(bp);
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
                        micro_kernel(kc, ap + ir * kc, bp + jr * kc, C + (ic + ir) * N + jc + jr, N,
                                     mc - ir < MR ? mc - ir : MR, nc - jr < NR ? nc - jr : NR, pc == 0);
            }
        }
    }
    free(ap);
    free(bp);
    return 0;
}
