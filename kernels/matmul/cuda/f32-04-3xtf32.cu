/* matmul f32, cuda, 04 3xtf32: over 03, the tensor cores at fp32-level
 * accuracy. Each fp32 operand x is split into two tf32 values, hi =
 * tf32(x) (round to nearest) and lo = tf32(x - hi), and each product is
 * taken as a_lo*b_hi + a_hi*b_lo + a_hi*b_hi (the small terms first) with
 * mma.sync.m16n8k8 tf32, fp32 accumulation: a relative error per product
 * of about 3 * 2^-22 (the dropped a_lo*b_lo and the two splits' residues),
 * against fp32's 2^-24 rounding, and with random signs, so over K it stays
 * far inside kproof's fp32 tolerance (16 u (S + sqrt(K) |C|), src/ops/
 * matmul.c), where plain tf32 (2^-11) fails. The tensor cores' accumulate
 * truncates rather than rounds (bf16 02's header: one chain over a million
 * terms drifted 1.9%), so the MMA accumulator covers 128 k (48 MMAs) and
 * is then added into a running fp32 total with IEEE adds, at every K.
 * Layout: 128x128x32 block tiles in a 4-stage cp.async ring (16-byte
 * copies; rows padded to 36 and 136 floats so every fragment load of a
 * warp hits 32 banks), 8 warps as 2x4 tiles of 64x32, a thread's
 * fragments read with scalar shared loads and split in registers. Where
 * rows are not 16-byte aligned (a pointer, K or N not a multiple of 4),
 * 03's code runs unchanged.
 *
 * Napkin math: 2*M*N*K FLOPs (4096^3: 137 GFLOP, 2.68 ms at cuBLAS SGEMM's
 * 51.3 TFLOP/s, results/2026-12-01-h200-e090e54/calibrate.txt), as 3x that in tf32 MMAs: 412 TFLOP of tf32 work at the
 * 404 TFLOP/s cuBLAS reached in tf32 there is 1.0 ms, the floor. Per k8
 * step a warp issues 48 MMAs, 24 shared loads and 72 conversions and
 * subtractions for its 64x32 tile; 8 warps an SM (ptxas: 242-250
 * registers a thread, no spill; one block).
 * Prediction (before any run): PASS on every shape. lab/tf32_emu.py runs
 * this arithmetic on the CPU with a pessimistic model of the MMA's
 * accumulate: worst error 0.20-0.26 of the tolerance at K = 112, 0.03-0.04
 * at K = 4096 and 8192 (normal and positive data, 256 outputs each; plain
 * tf32 in the same model: 13x the tolerance at K = 4096 on normal data,
 * RMS 4.0, as src/ops/matmul.c predicts). 45-65 TFLOP/s at 4096^3 and
 * 8192^3, i.e. 0.9-1.25x cuBLAS SGEMM: the MMA pipe is the floor at a third of its
 * tf32 rate, issue and latency with 8 warps an SM may cost more.
 * measured: PASS at the canonical shapes; 2.651 ms [2.647, 2.657] at
 * 4096^3 (52 TFLOP/s), 20.819 ms at 8192^3 (53), 3.269 ms at 4095^3,
 * 2.625 ms at 8192x1024x8192: inside the prediction, 0.36-0.46x of f32 05
 * (results/2026-12-04-h200-bd74d80/matmul-f32-04).
 * kproof-best: no (f32 05 is faster, with fp32-level error too)
 */
#include <stdint.h>

/* ======================================================================
 * 03's kernel, unchanged: rows that are not 16-byte aligned
 * ====================================================================== */

#include <cuda_runtime.h>

#include <kproof/kernel.h>

/* The one check for every CUDA call (launches: cudaGetLastError). A
 * candidate reports failure through its return value; it never prints or
 * exits, the harness owns the process. */
#define KP_CUDA_OK(call) ((call) == cudaSuccess)

#define BM 128
#define BN 128
#define BK 8
#define THREADS 256
#define AS_LD (BM + 4) /* padding: conflict-free transposed stores, float4-aligned rows */
#define GROUP_M 8      /* tile rows per group in the block ordering (L2 reuse) */

/* A thread's share of one tile: one float4 of A (128x8 / 256 threads: row
 * tid/2, columns 4*(tid%2)..+3) and one of B (row tid/32, columns
 * 4*(tid%32)..+3). Anything past M, N or K reads as zero. VA / VB: rows of
 * A / B are 16-byte aligned and a multiple of 4 long, so a float4 is either
 * wholly inside the matrix or wholly outside. The loader state is kept
 * small because the 64 accumulators already fill half the registers. */
template <bool VA, bool VB>
static __device__ __forceinline__ void fetch(float4 &fa, float4 &fb, const float *pa, const float *pb,
                                             bool row_in, int cols_left, int ka, int kb, int K) {
    fa = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row_in) {
        if (VA) {
            if (ka < K) fa = __ldg(reinterpret_cast<const float4 *>(pa));
        } else {
            if (ka < K) fa.x = __ldg(pa);
            if (ka + 1 < K) fa.y = __ldg(pa + 1);
            if (ka + 2 < K) fa.z = __ldg(pa + 2);
            if (ka + 3 < K) fa.w = __ldg(pa + 3);
        }
    }
    fb = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (kb < K) {
        if (VB) {
            if (cols_left > 0) fb = __ldg(reinterpret_cast<const float4 *>(pb));
        } else {
            if (cols_left > 0) fb.x = __ldg(pb);
            if (cols_left > 1) fb.y = __ldg(pb + 1);
            if (cols_left > 2) fb.z = __ldg(pb + 2);
            if (cols_left > 3) fb.w = __ldg(pb + 3);
        }
    }
}

/* Registers -> one shared buffer. A is transposed so that the compute loop
 * reads 4 consecutive rows of one k as a float4; with a row stride of
 * BM + 4 the scalar stores of a warp hit 32 different banks. */
static __device__ __forceinline__ void stash(const float4 &fa, const float4 &fb, float (*As)[AS_LD],
                                             float (*Bs)[BN], int tid) {
    const int r = tid / 2, k = (tid % 2) * 4;
    As[k + 0][r] = fa.x;
    As[k + 1][r] = fa.y;
    As[k + 2][r] = fa.z;
    As[k + 3][r] = fa.w;
    *reinterpret_cast<float4 *>(&Bs[tid / 32][(tid % 32) * 4]) = fb;
}

template <bool VA, bool VB, bool VC>
static __global__ __launch_bounds__(THREADS, 2) void sgemm_128x128(const float *__restrict__ A,
                                                                   const float *__restrict__ B, float *__restrict__ C,
                                                                   int M, int N, int K) {
    __shared__ __align__(16) float As[2][BK][AS_LD];
    __shared__ __align__(16) float Bs[2][BK][BN];

    /* Grouped ordering: consecutive blocks walk GROUP_M tile rows down one
     * tile column before moving right, so the A and B panels they need are
     * still in L2. */
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x, per_group = GROUP_M * tiles_n;
    const int first_m = pid / per_group * GROUP_M;
    const int group_rows = tiles_m - first_m < GROUP_M ? tiles_m - first_m : GROUP_M;
    const int m0 = (first_m + pid % per_group % group_rows) * BM;
    const int n0 = pid % per_group / group_rows * BN;

    /* Warps form a 2x4 grid of 64x32 warp tiles; lanes an 8x4 grid. A
     * thread owns rows {wm*64 + tm*4 + (0..3), +32} and columns
     * {wn*32 + tn*4 + (0..3), +16}: per k a warp reads 128 contiguous bytes
     * of A and 64 of B per float4 load, with no bank conflicts. */
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int rm = (warp / 4) * 64 + (lane / 4) * 4;
    const int rn = (warp % 4) * 32 + (lane % 4) * 4;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            acc[i][j] = 0.0f;

    const int ktiles = (K + BK - 1) / BK;
    /* Loader state: where this thread's slice of the next tile starts. */
    const bool row_in = m0 + tid / 2 < M;
    const int cols_left = N - (n0 + (tid % 32) * 4);
    const float *pa = A + (int64_t)(row_in ? m0 + tid / 2 : 0) * K + (tid % 2) * 4;
    const float *pb = B + (int64_t)(tid / 32) * N + (cols_left > 0 ? n0 + (tid % 32) * 4 : 0);
    int ka = (tid % 2) * 4, kb = tid / 32;
    float4 fa, fb;
    if (ktiles > 0) {
        fetch<VA, VB>(fa, fb, pa, pb, row_in, cols_left, ka, kb, K);
        stash(fa, fb, As[0], Bs[0], tid);
    }
    __syncthreads();

    for (int t = 0; t < ktiles; t++) {
        const int cur = t & 1;
        /* Issue the next tile's global loads first: they complete while
         * this tile is multiplied. */
        if (t + 1 < ktiles) {
            pa += BK;
            pb += (int64_t)BK * N;
            ka += BK;
            kb += BK;
            fetch<VA, VB>(fa, fb, pa, pb, row_in, cols_left, ka, kb, K);
        }

#pragma unroll
        for (int k = 0; k < BK; k++) {
            float a[8], b[8];
            *reinterpret_cast<float4 *>(&a[0]) = *reinterpret_cast<const float4 *>(&As[cur][k][rm]);
            *reinterpret_cast<float4 *>(&a[4]) = *reinterpret_cast<const float4 *>(&As[cur][k][rm + 32]);
            *reinterpret_cast<float4 *>(&b[0]) = *reinterpret_cast<const float4 *>(&Bs[cur][k][rn]);
            *reinterpret_cast<float4 *>(&b[4]) = *reinterpret_cast<const float4 *>(&Bs[cur][k][rn + 16]);
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }

        /* The other buffer was last read in iteration t-1, which every
         * thread finished before the barrier at its end. */
        if (t + 1 < ktiles) stash(fa, fb, As[cur ^ 1], Bs[cur ^ 1], tid);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int r = m0 + rm + (i / 4) * 32 + i % 4;
        if (r >= M) continue;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int c = n0 + rn + h * 16;
            float *p = C + (int64_t)r * N + c;
            const float *v = &acc[i][h * 4];
            if (VC) {
                if (c < N) *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++)
                    if (c + j < N) p[j] = v[j];
            }
        }
    }
}

template <bool VA, bool VB, bool VC>
static void launch(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K,
                   cudaStream_t stream) {
    int64_t blocks = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    sgemm_128x128<VA, VB, VC><<<(unsigned)blocks, THREADS, 0, stream>>>(A, B, C, (int)M, (int)N, (int)K);
}


/* ======================================================================
 * 04: 3xtf32 on the tensor cores (16-byte aligned rows)
 * ====================================================================== */

#define T_BM 128
#define T_BN 128
#define T_BK 32
#define T_STAGES 4
#define T_A_LD (T_BK + 4) /* 144-byte rows: a warp's A fragment loads hit 32 banks */
#define T_B_LD (T_BN + 8) /* 544-byte rows: the same for B */
#define T_A_STAGE (T_BM * T_A_LD) /* floats */
#define T_B_STAGE (T_BK * T_B_LD)
#define T_SMEM_BYTES (T_STAGES * (T_A_STAGE + T_B_STAGE) * 4)
#define T_FOLD 4 /* k tiles (128 k) per MMA accumulation chain */

static __device__ __forceinline__ uint32_t t_smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16-byte async copy global -> shared; src_bytes 0 writes zeros. */
static __device__ __forceinline__ void t_cp16(void *dst, const void *src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(t_smem_addr(dst)), "l"(src), "r"(src_bytes)
                 : "memory");
}
static __device__ __forceinline__ void t_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int n>
static __device__ __forceinline__ void t_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(n) : "memory");
}

/* x = hi + lo + (a residue of about 2^-22 |x|), both tf32 bit patterns. */
static __device__ __forceinline__ void split_tf32(float x, uint32_t &hi, uint32_t &lo) {
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(hi) : "f"(x));
    const float r = x - __uint_as_float(hi);
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(lo) : "f"(r));
}

/* d += a (16x8, row) * b (8x8, col), tf32 in, fp32 accumulate. */
static __device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* One stage: the 128x32 A tile (rows m0.., cols k0..) and the 32x128 B tile
 * (rows k0.., cols n0..), four 16-byte chunks of each a thread; zeros past
 * M, N and K (K % 4 == 0 and N % 4 == 0: a chunk is wholly in or out). */
static __device__ __forceinline__ void t_load(float *as, float *bs, const float *A, const float *B, int M, int N,
                                              int K, int m0, int n0, int k0, int tid) {
#pragma unroll
    for (int l = 0; l < 4; l++) {
        const int ia = tid + l * 256, r = ia / 8, kc = (ia % 8) * 4; /* A: 8 chunks a row */
        const bool ina = m0 + r < M && k0 + kc < K;
        t_cp16(as + r * T_A_LD + kc, ina ? A + (int64_t)(m0 + r) * K + k0 + kc : A, ina ? 16 : 0);
        const int kr = ia / 32, nc = (ia % 32) * 4; /* B: 32 chunks a row */
        const bool inb = k0 + kr < K && n0 + nc < N;
        t_cp16(bs + kr * T_B_LD + nc, inb ? B + (int64_t)(k0 + kr) * N + n0 + nc : B, inb ? 16 : 0);
    }
}

template <bool VC>
static __global__ __launch_bounds__(256, 1) void sgemm_3xtf32(const float *__restrict__ A, const float *__restrict__ B,
                                                             float *__restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) unsigned char t_smem[];
    float *as = reinterpret_cast<float *>(t_smem);
    float *bs = as + T_STAGES * T_A_STAGE;

    const int tiles_m = (M + T_BM - 1) / T_BM, tiles_n = (N + T_BN - 1) / T_BN;
    const int pid = blockIdx.x, per_group = GROUP_M * tiles_n;
    const int first_m = pid / per_group * GROUP_M;
    const int group_rows = tiles_m - first_m < GROUP_M ? tiles_m - first_m : GROUP_M;
    const int m0 = (first_m + pid % per_group % group_rows) * T_BM;
    const int n0 = pid % per_group / group_rows * T_BN;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = (warp / 4) * 64, wn = (warp % 4) * 32; /* 2x4 warps, 64x32 each */
    const int fr = lane / 4, fc = lane % 4;                 /* fragment row / column of this lane */

    /* [m16 tile][n8 tile][fragment]: acc the MMA chain (at most T_FOLD k
     * tiles), run the IEEE total of the chains before it. */
    float acc[4][4][4], run[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = run[i][j][e] = 0.0f;

    const int ktiles = (K + T_BK - 1) / T_BK;
#pragma unroll
    for (int s = 0; s < T_STAGES - 1; s++) {
        if (s < ktiles) t_load(as + s * T_A_STAGE, bs + s * T_B_STAGE, A, B, M, N, K, m0, n0, s * T_BK, tid);
        t_commit(); /* empty groups too: group t is tile t in the waits below */
    }

    for (int t = 0; t < ktiles; t++) {
        t_wait<T_STAGES - 2>(); /* tile t has landed (for this thread) */
        __syncthreads();        /* ... for every thread; and stage (t-1) % T_STAGES is free */
        const int nt = t + T_STAGES - 1;
        if (nt < ktiles)
            t_load(as + (nt % T_STAGES) * T_A_STAGE, bs + (nt % T_STAGES) * T_B_STAGE, A, B, M, N, K, m0, n0,
                   nt * T_BK, tid);
        t_commit();

        const float *at = as + (t % T_STAGES) * T_A_STAGE;
        const float *bt = bs + (t % T_STAGES) * T_B_STAGE;
#pragma unroll
        for (int kk = 0; kk < T_BK; kk += 8) {
            /* A fragment (16x8, row): a0 (r, c), a1 (r+8, c), a2 (r, c+4),
             * a3 (r+8, c+4) with r = lane/4, c = lane%4. B fragment (8x8,
             * col): b0 (k = lane%4, n = lane/4), b1 (k + 4, n). */
            uint32_t ahi[4][4], alo[4][4], bhi[4][2], blo[4][2];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const float *p = at + (wm + i * 16 + fr) * T_A_LD + kk + fc;
                split_tf32(p[0], ahi[i][0], alo[i][0]);
                split_tf32(p[8 * T_A_LD], ahi[i][1], alo[i][1]);
                split_tf32(p[4], ahi[i][2], alo[i][2]);
                split_tf32(p[8 * T_A_LD + 4], ahi[i][3], alo[i][3]);
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float *p = bt + (kk + fc) * T_B_LD + wn + j * 8 + fr;
                split_tf32(p[0], bhi[j][0], blo[j][0]);
                split_tf32(p[4 * T_B_LD], bhi[j][1], blo[j][1]);
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    mma_tf32(acc[i][j], alo[i], bhi[j][0], bhi[j][1]);
                    mma_tf32(acc[i][j], ahi[i], blo[j][0], blo[j][1]);
                    mma_tf32(acc[i][j], ahi[i], bhi[j][0], bhi[j][1]);
                }
        }
        if ((t + 1) % T_FOLD == 0 || t + 1 == ktiles) { /* end of a chain: fold it in, start a fresh one */
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        run[i][j][e] += acc[i][j][e];
                        acc[i][j][e] = 0.0f;
                    }
        }
    }
    t_wait<0>(); /* nothing real is left in flight; no copy outlives the block */

    /* C fragment (16x8): c0, c1 at row lane/4, columns 2*(lane%4) and +1;
     * c2, c3 eight rows down. */
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = m0 + wm + i * 16 + fr + h * 8;
            if (r >= M) continue;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int c = n0 + wn + j * 8 + fc * 2;
                float *p = C + (int64_t)r * N + c;
                const float v0 = run[i][j][h * 2], v1 = run[i][j][h * 2 + 1];
                if (VC) { /* C 8-byte aligned, N even: c < N means c + 1 < N */
                    if (c < N) *reinterpret_cast<float2 *>(p) = make_float2(v0, v1);
                } else {
                    if (c < N) p[0] = v0;
                    if (c + 1 < N) p[1] = v1;
                }
            }
        }
}

static int launch_3xtf32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K, bool vc,
                         cudaStream_t stream) {
    /* More than 48 KiB of dynamic shared memory must be opted into. */
    if (!KP_CUDA_OK(cudaFuncSetAttribute(sgemm_3xtf32<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         T_SMEM_BYTES)) ||
        !KP_CUDA_OK(cudaFuncSetAttribute(sgemm_3xtf32<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         T_SMEM_BYTES)))
        return 1;
    const int64_t blocks = ((M + T_BM - 1) / T_BM) * ((N + T_BN - 1) / T_BN);
    if (vc)
        sgemm_3xtf32<true><<<(unsigned)blocks, 256, T_SMEM_BYTES, stream>>>(A, B, C, (int)M, (int)N, (int)K);
    else
        sgemm_3xtf32<false><<<(unsigned)blocks, 256, T_SMEM_BYTES, stream>>>(A, B, C, (int)M, (int)N, (int)K);
    return 0;
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K,
                           kp_stream stream) {
    if (M <= 0 || N <= 0) return 0; /* nothing to write; an empty grid is a launch error */
    /* 32-bit indices inside the kernel (products are widened). */
    if (M > INT32_MAX - BM || N > INT32_MAX - BN || K > INT32_MAX - BK) return 1;
    if (((M + BM - 1) / BM) * ((N + BN - 1) / BN) > INT32_MAX) return 1;
    /* float4 paths only where every row start is 16-byte aligned. */
    const bool va = aligned16(A) && K % 4 == 0;
    const bool vb = aligned16(B) && N % 4 == 0;
    const bool vc = aligned16(C) && N % 4 == 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (va && vb && K > 0 && K <= INT32_MAX - T_BK) { /* K + T_BK - 1 stays an int */
        if (launch_3xtf32(A, B, C, M, N, K, ((uintptr_t)C & 7u) == 0 && N % 2 == 0, s)) return 1;
    } else if (va && vb && vc)
        launch<true, true, true>(A, B, C, M, N, K, s);
    else if (va)
        launch<true, false, false>(A, B, C, M, N, K, s);
    else if (vb && vc)
        launch<false, true, true>(A, B, C, M, N, K, s);
    else
        launch<false, false, false>(A, B, C, M, N, K, s);
    return KP_CUDA_OK(cudaGetLastError()) ? 0 : 1;
}
