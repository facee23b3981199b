/* matmul f32, cuda, 05 bf16x3: over 04, fp32 products from the bf16
 * tensor cores at wgmma rate. A prepass splits every fp32 value x into
 * three bf16 pieces, x = x0 + x1 + x2 exactly (8 + 8 + 8 significant bits,
 * see split3), written to scratch as [A0; A1; A2] (K-major, rows padded
 * to 16 bytes) and [B0; B1; B2] transposed (so both operands are K-major
 * and the tile width is free); the product is bf16 04's warp-specialized
 * wgmma pipeline (copy-engine tiles into an mbarrier ring, one producer
 * and two consumer warpgroups, setmaxnreg 40 / 232, a persistent grid in
 * grouped order) running the six products a2b0, a0b2, a1b1, a1b0, a0b1,
 * a0b0 (smallest first) for each 32-deep slice of k; the three dropped
 * ones are below 2^-24 |a b| together, under fp32's own rounding of the
 * product. What changes against bf16 04:
 *  1. A stage holds all three pieces of the A and B tiles for 32 k (57
 *     KiB, three stages), so each piece is fetched from L2 once: 57 KiB
 *     per 8.7 MFLOP a block, 0.58x bf16 04's 48 KiB per 4.2 MFLOP.
 *  2. The accumulate is folded. The tensor cores align addends to the
 *     largest and truncate (bf16 02: one chain over 2^20 positive terms
 *     drifted 1.9%), so each chain covers 4 stages (128 k, 24 wgmma k16
 *     steps) and is then added into a second fp32 accumulator with IEEE
 *     adds; the next chain starts with scale-d 0. The second register set
 *     is why the tile is 128 x 176, not 128 x 256: 88 + 88 accumulators a
 *     thread fit under setmaxnreg's 232 (128 + 128 would not), and of the
 *     widths that fit, 176 wastes least at 4096 (768 tiles, 6 rounds of
 *     132 SMs at 97%; 192 would take 704 tiles in 6 rounds at 89%). The
 *     two consumers fold half a chain apart, so one drains while the
 *     other keeps the tensor cores busy.
 *  3. Every shape takes this path (edges from 1x1x1 to K = 2^20, odd
 *     widths, misaligned pointers): the prepass reads any 4-byte-aligned
 *     rows and writes aligned ones, the copy engine fills past M, N and K
 *     with zeros, the epilogue masks C. Scratch: 6 bytes a value of A and
 *     of B from the stream's pool (768 MiB at 8192^3; see
 *     g_scratch_bytes); only without memory does a plain fp32 kernel run.
 * Error model (lab/bf16x3_emu.py: this arithmetic on the CPU with tf32
 * 04's pessimistic accumulate, addends truncated to 24 bits at the
 * largest, which puts bf16 02's measured 1.9% drift at 2.0%): against
 * kproof's fp32 tolerance 16 u (S + sqrt(K) |C|), worst element 0.17 and
 * RMS 0.043 at K = 112, at most 0.05 and 0.009 at K = 4096 and 8192, 0.003
 * and 0.0013 at K = 1048573 (normal and positive data, 256 outputs each;
 * over 8192 outputs at K = 112 the worst is 0.33;
 * measured on the H200: worst 0.043, RMS 0.0083 at 4096^3; cuBLAS SGEMM's
 * RMS there 0.012). Without the folds
 * positive data fails at K = 4096 (max 1.02, RMS 0.91); three products
 * (a0b0 + a0b1 + a1b0, ~2^-16) fail the RMS limit at K = 112 (0.40);
 * plain bf16 fails everywhere (RMS 36 at K = 4096).
 * Napkin math (H200, 989 TFLOP/s bf16 dense; bf16 04 700 TFLOP/s at
 * 4096^3, 773 at 8192^3, both cut 3% by the last round): 4096^3 is 6 x
 * 137 GFLOP of bf16 work, 1.11-1.25 ms at 700-790 TFLOP/s a full round
 * and 94% of rounds full, plus the prepass (A and B read once, 1.5x their
 * bytes written: 336 MB, ~0.1 ms): 1.22-1.37 ms.
 * Prediction (before any run): PASS on every shape; 4096^3 100-112
 * TFLOP/s (1.95-2.2x cuBLAS SGEMM's 51.3), 8192^3 115-125 (2.25-2.45x;
 * 98% of rounds full, prepass 0.42 ms of ~9 ms), 4095^3 within 5% of
 * 4096^3 (1.9-2.1x), 8192x1024x8192 90-100 (the prepass of the 8192^2 A
 * is 17% of it).
 * ptxas: 168 registers at launch (the consumers use 194 of their
 * 232), no spills, no local memory; no wgmma serialized (C7517/C7518,
 * see the consumer loop).
 * measured: PASS on all 14 shapes of the op; against cuBLAS SGEMM
 * interleaved in the same eval, 2.36x [2.35, 2.37] at 4096^3 (1.136 ms,
 * 121 TFLOP/s), 2.54x [2.54, 2.55] at 8192^3 (8.436 ms, 130), 2.37x
 * [2.37, 2.37] at 4095^3 (1.198 ms), 2.20x [2.20, 2.21] at
 * 8192x1024x8192 (1.224 ms); results/2026-12-03-h200-c74fb33/mm-f32-05.json.
 */
#include <stdint.h>

#include <cuda.h> /* CUtensorMap and its enums only: the encoder comes through the runtime */
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <kproof/kernel.h>

/* The one check for every CUDA call (launches: cudaGetLastError). A
 * candidate reports failure through its return value; it never prints or
 * exits, the harness owns the process. */
#define KP_CUDA_OK(call) ((call) == cudaSuccess)

#define GROUP_M 8 /* tile rows per group in the tile ordering (L2 reuse) */

/* ======================================================================
 * The split: x = x0 + x1 + x2, three bf16 pieces, exactly
 * ====================================================================== */

/* x0 = bf16(x) to nearest, x1 = bf16(x - x0), x2 = x - x0 - x1. An fp32 x
 * has 24 significant bits: x - x0 is exact in fp32 and has at most 16,
 * x1 takes the top 8 of them (rounded), and what is left has at most 8, so
 * x2 is a bf16 exactly and x0 + x1 + x2 == x (bf16 has fp32's exponent
 * range; only below 2^-110 do the smaller pieces reach bf16's subnormals
 * and lose bits, less than 2^-134 each). The residues are rounded to
 * nearest, so they take either sign: in the products the tensor cores'
 * truncation then errs both ways. Where x0 would round past bf16's largest
 * finite value it is truncated instead (the split stays exact: the rest is
 * then one-signed and still fits in 8 + 8 bits); an infinity or a NaN is
 * carried in x0 alone. */
static __device__ __forceinline__ void split3(float x, unsigned short &h0, unsigned short &h1, unsigned short &h2) {
    if (!isfinite(x)) {
        h0 = __bfloat16_as_ushort(__float2bfloat16_rn(x));
        h1 = h2 = 0;
        return;
    }
    __nv_bfloat16 b0 = __float2bfloat16_rn(x);
    if (__hisinf(b0)) b0 = __float2bfloat16_rz(x);
    const float r1 = x - __bfloat162float(b0);
    const __nv_bfloat16 b1 = __float2bfloat16_rn(r1);
    const __nv_bfloat16 b2 = __float2bfloat16_rn(r1 - __bfloat162float(b1));
    h0 = __bfloat16_as_ushort(b0);
    h1 = __bfloat16_as_ushort(b1);
    h2 = __bfloat16_as_ushort(b2);
}

/* Packs two bf16 bit patterns, the first in the low half (memory order). */
static __device__ __forceinline__ uint32_t pack2(unsigned short lo, unsigned short hi) {
    return (uint32_t)lo | ((uint32_t)hi << 16);
}

/* Eight consecutive values of one row (zeros past the row's end) as three
 * 16-byte chunks of pieces, stored at dst, dst + piece, dst + 2 piece. */
static __device__ __forceinline__ void split_store8(const float (&v)[8], unsigned short *dst, int64_t piece) {
    unsigned short h[3][8];
#pragma unroll
    for (int e = 0; e < 8; e++) split3(v[e], h[0][e], h[1][e], h[2][e]);
#pragma unroll
    for (int p = 0; p < 3; p++)
        *reinterpret_cast<uint4 *>(dst + p * piece) = make_uint4(pack2(h[p][0], h[p][1]), pack2(h[p][2], h[p][3]),
                                                                 pack2(h[p][4], h[p][5]), pack2(h[p][6], h[p][7]));
}

/* A (rows x K fp32, row-major, 4-byte aligned) -> three piece matrices of
 * rows x ld bf16 (ld = roundup(K, 8): every row starts 16-byte aligned),
 * piece p at dst + p * rows * ld; the columns from K to ld are zeros. A
 * thread takes 8 consecutive elements of a row; V (A 16-byte aligned, K % 4
 * == 0): two 16-byte loads, else one element at a time. */
template <bool V>
static __global__ void split_rows(const float *__restrict__ A, unsigned short *__restrict__ dst, int64_t rows,
                                  int64_t K, int64_t ld) {
    const int64_t per_row = ld / 8, n = rows * per_row, piece = rows * ld;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / per_row, c0 = (i % per_row) * 8;
        const float *p = A + r * K + c0;
        float v[8];
        if (V && c0 + 8 <= K) {
            const float4 x = __ldg(reinterpret_cast<const float4 *>(p));
            const float4 y = __ldg(reinterpret_cast<const float4 *>(p + 4));
            v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w, v[4] = y.x, v[5] = y.y, v[6] = y.z, v[7] = y.w;
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++) v[e] = c0 + e < K ? __ldg(p + e) : 0.0f;
        }
        split_store8(v, dst + r * ld + c0, piece);
    }
}

/* B (K x N fp32, row-major, 4-byte aligned) -> three piece matrices of its
 * transpose, N x ld bf16 (ld = roundup(K, 8)), piece p at dst + p * N * ld,
 * so that both operands of the product are K-major. 64 (k) x 32 (n) tiles
 * through shared memory: a warp reads 32 consecutive floats of a row of B
 * and writes 128 contiguous bytes of four rows of each piece. Reading a
 * column of the tile, a warp's 32 lanes hit 16 banks twice (row stride 33
 * floats): two-way conflicts in a kernel bound by memory. */
static __global__ void __launch_bounds__(256) split_cols(const float *__restrict__ B, unsigned short *__restrict__ dst,
                                                        int64_t K, int64_t N, int64_t ld) {
    __shared__ float s[64][33];
    const int t = threadIdx.x;
    const int64_t tiles_n = (N + 31) / 32, tiles = (K + 63) / 64 * tiles_n, piece = N * ld;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t k0 = tile / tiles_n * 64, n0 = tile % tiles_n * 32;
        const int64_t n = n0 + t % 32;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int kl = t / 32 + 8 * i;
            s[kl][t % 32] = k0 + kl < K && n < N ? __ldg(B + (k0 + kl) * N + n) : 0.0f;
        }
        __syncthreads();
        const int kc = t % 8, nl = t / 8;
        if (n0 + nl < N && k0 + 8 * kc < ld) { /* ld % 8 == 0: the chunk lies wholly inside the row */
            float v[8];
#pragma unroll
            for (int e = 0; e < 8; e++) v[e] = s[8 * kc + e][nl];
            split_store8(v, dst + (n0 + nl) * ld + k0 + 8 * kc, piece);
        }
        __syncthreads(); /* the tile is read before the next one is written */
    }
}

/* ======================================================================
 * The product: six bf16 products a k stage, on wgmma
 * ====================================================================== */

#define G_BM 128 /* two consumer warpgroups of 64 rows */
#define G_BN 176 /* wgmma.m64n176k16: 88 accumulators a thread, and 88 more for the total */
#define G_BK 32  /* k a stage: 64-byte rows, the 64-byte swizzle */
#define G_STAGES 3
#define G_THREADS 384 /* warpgroup 0 produces, 1 and 2 consume */
#define G_FOLD 4      /* stages (128 k) a tensor-core chain; then an IEEE fp32 add */
#define G_A_PIECE (G_BM * G_BK * 2) /* 8 KiB: 128 rows of 64 bytes */
#define G_B_PIECE (G_BN * G_BK * 2) /* 11 KiB: 176 rows of 64 bytes */
#define G_A_BYTES (3 * G_A_PIECE)
#define G_STAGE_BYTES (3 * G_A_PIECE + 3 * G_B_PIECE) /* 57 KiB: every piece of A's and B's tiles */
/* Stages on 1024-byte boundaries, the barriers after them, and 1 KiB of
 * slack to align the dynamic base. */
#define G_SMEM_BYTES (G_STAGES * G_STAGE_BYTES + 1024 + 2 * G_STAGES * 8)

/* The PTX below is sm_90a's (wgmma, setmaxnreg): a plain sm_90 build
 * leaves it out, and the kernel traps there. */
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
static __device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ void mbar_init(uint32_t bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

static __device__ __forceinline__ void mbar_expect_tx(uint32_t bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

static __device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/* Spins until the barrier's phase with this parity has completed. */
static __device__ __forceinline__ void mbar_wait(uint32_t bar, unsigned parity) {
    asm volatile(
        "{\n\t.reg .pred done;\n"
        "WAIT_%=:\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
        "@!done bra WAIT_%=;\n}" ::"r"(bar),
        "r"(parity)
        : "memory");
}

/* One 3-D box of the tensor map at element coordinates (x inner, y, z
 * outer) into shared memory, completing on bar; out-of-range elements land
 * as 0. */
static __device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap *map, int x, int y, int z,
                                                   uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
        "[%5];" ::"r"(dst),
        "l"(map), "r"(x), "r"(y), "r"(z), "r"(bar)
        : "memory");
}

/* Shared-memory matrix descriptor of a K-major tile with the 64-byte
 * swizzle (PTX ISA, wgmma matrix descriptor): start address, LBO 16 bytes
 * (unused: a k16 step lies inside one 64-byte row), SBO 512 bytes (8-row
 * groups), swizzle mode 2 (64 bytes) in bits 62-63. */
static __device__ __forceinline__ uint64_t desc_sw64(uint32_t addr) {
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(16 >> 4) << 16) | ((uint64_t)(512 >> 4) << 32) |
           (2ull << 62);
}

/* d (+)= A(64x16, K-major) * B(16x176, K-major): 88 fp32 a thread; scale_d 0
 * starts a fresh chain (d's old values are not read). */
static __device__ __forceinline__ void wgmma_176(float (&d)[88], uint64_t da, uint64_t db, int scale_d) {
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %90, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87}, %88, %89, p, 1, 1, 0, 0;\n}"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
        : "l"(da), "l"(db), "r"(scale_d));
}

static __device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
static __device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int n>
static __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(n) : "memory");
}

template <int regs>
static __device__ __forceinline__ void regs_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(regs));
}
template <int regs>
static __device__ __forceinline__ void regs_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(regs));
}

/* The accumulators across wgmma_wait: the compiler must not move reads or
 * writes of d over the asynchronous MMAs, so each register is "touched". */
static __device__ __forceinline__ void acc_fence(float (&d)[88]) {
#pragma unroll
    for (int i = 0; i < 88; i++) asm volatile("" : "+f"(d[i])::"memory");
}

#endif

/* C = A B from the piece matrices: map_a is A's three pieces (K x M x 3,
 * K-major), map_b B's (K x N x 3, K-major). A persistent grid (one block an
 * SM) walks 128 x 176 tiles in grouped order; warpgroup 0's one thread
 * fills a ring of three 57 KiB stages with the copy engine, each stage one
 * 32-deep slice of k with all three pieces of the A tile (3 x 128 rows)
 * and of the B tile (3 x 176 rows), so every piece is fetched once. Each
 * consumer warpgroup runs twelve wgmma.m64n176k16 a stage into its 64 x
 * 176 accumulator d, the six products smallest first (a2b0, a0b2, a1b1,
 * a1b0, a0b1, a0b0; a1b2, a2b1 and a2b2 are below 2^-24 |a b| together
 * and left out), keeps one stage's group in flight, and frees a stage
 * when the group after it has been committed and the one reading it has
 * finished. The tensor cores' accumulate truncates, so a chain covers
 * G_FOLD stages (128 k): then d is added into the fp32 total tot with IEEE
 * adds and the next chain starts with scale-d 0. The second warpgroup
 * folds half a chain out of step with the first, so that while one drains
 * its group for the fold the other's keeps the tensor cores busy. */
template <bool VC>
static __global__ __launch_bounds__(G_THREADS, 1) void gemm_bf16x3(const __grid_constant__ CUtensorMap map_a,
                                                                   const __grid_constant__ CUtensorMap map_b,
                                                                   float *__restrict__ C, int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem_raw[];
    const uint32_t raw = smem_addr(smem_raw);
    /* stage s at base + s * G_STAGE_BYTES: A's pieces 0, 1, 2 (8 KiB each),
     * then B's (11 KiB each); every piece starts on a 1024-byte boundary,
     * a multiple of the 64-byte swizzle's 512-byte period */
    const uint32_t base = (raw + 1023u) & ~1023u;
    const uint32_t full = base + G_STAGES * G_STAGE_BYTES, empty = full + G_STAGES * 8;

    const int tiles_m = (M + G_BM - 1) / G_BM, tiles_n = (N + G_BN - 1) / G_BN;
    const int tiles = tiles_m * tiles_n, per_group = GROUP_M * tiles_n;
    const int nst = (K + G_BK - 1) / G_BK; /* stages a tile; the copy engine fills past K with zeros */

    const int tid = threadIdx.x, wg = tid / 128;
    if (tid == 0) {
        for (int s = 0; s < G_STAGES; s++) {
            mbar_init(full + 8 * s, 1);    /* the producer's expect_tx */
            mbar_init(empty + 8 * s, 256); /* every consumer thread */
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    /* Both roles walk the same tiles and the same stages, counting every
     * use of the ring in `it`: slot it % G_STAGES, phase it / G_STAGES. */
    if (wg == 0) {
        regs_dec<40>();
        if (tid == 0) {
            unsigned it = 0;
            for (int pid = blockIdx.x; pid < tiles; pid += gridDim.x) {
                const int first_m = pid / per_group * GROUP_M;
                const int group_rows = tiles_m - first_m < GROUP_M ? tiles_m - first_m : GROUP_M;
                const int m0 = (first_m + pid % per_group % group_rows) * G_BM;
                const int n0 = pid % per_group / group_rows * G_BN;
                for (int st = 0; st < nst; st++, it++) {
                    const unsigned s = it % G_STAGES;
                    if (it >= G_STAGES) mbar_wait(empty + 8 * s, ((it / G_STAGES) - 1) & 1u);
                    const uint32_t a = base + s * G_STAGE_BYTES, bar = full + 8 * s;
                    mbar_expect_tx(bar, G_STAGE_BYTES); /* out-of-range elements count too */
                    tma_load_3d(a, &map_a, st * G_BK, m0, 0, bar);
                    tma_load_3d(a + G_A_BYTES, &map_b, st * G_BK, n0, 0, bar);
                }
            }
        }
    } else {
        regs_inc<232>();
        const uint32_t a_off = (uint32_t)(wg - 1) * (64 * 64); /* this warpgroup's 64 rows of each A piece */
        /* Where this warpgroup's chains end. Through a shuffle, so that the
         * compiler sees it uniform across the warp: a fold branch that
         * might diverge makes ptxas serialize every wgmma (C7518). */
        const int off = __shfl_sync(0xffffffffu, wg == 2 ? G_FOLD / 2 : 0, 0);
        const int warp = (tid % 128) / 32, lane = tid % 32;
        float d[88];
#pragma unroll
        for (int i = 0; i < 88; i++) d[i] = 0.0f; /* never read: each chain starts with scale-d 0 */
        unsigned it = 0;
        for (int pid = blockIdx.x; pid < tiles; pid += gridDim.x) {
            const int first_m = pid / per_group * GROUP_M;
            const int group_rows = tiles_m - first_m < GROUP_M ? tiles_m - first_m : GROUP_M;
            const int m0 = (first_m + pid % per_group % group_rows) * G_BM;
            const int n0 = pid % per_group / group_rows * G_BN;
            float tot[88];
#pragma unroll
            for (int i = 0; i < 88; i++) tot[i] = 0.0f;
            bool pend = false;  /* a stage waits to be freed: the one read by the group in flight */
            unsigned prev = 0;  /* ... that stage */
            int fresh = 1;      /* the next wgmma starts a chain */
            for (int st = 0; st < nst; st++, it++) {
                const unsigned s = it % G_STAGES;
                mbar_wait(full + 8 * s, (it / G_STAGES) & 1u);
                const uint32_t a = base + s * G_STAGE_BYTES + a_off, b = base + s * G_STAGE_BYTES + G_A_BYTES;
                wgmma_fence();
#pragma unroll
                for (int j = 0; j < 6; j++) {
                    /* (piece of A, piece of B): (2,0) (0,2) (1,1) (1,0) (0,1) (0,0) */
                    const uint32_t pa = j == 0 ? 2 : j == 2 || j == 3 ? 1 : 0;
                    const uint32_t pb = j == 1 ? 2 : j == 2 || j == 4 ? 1 : 0;
#pragma unroll
                    for (int kk = 0; kk < 2; kk++)
                        /* k16 step kk: 32 bytes along the swizzled 64-byte rows; 8-row groups 512 bytes apart */
                        wgmma_176(d, desc_sw64(a + pa * G_A_PIECE + 32 * kk), desc_sw64(b + pb * G_B_PIECE + 32 * kk),
                                  j == 0 && kk == 0 ? 1 - fresh : 1);
                }
                wgmma_commit();
                if ((st + 1 + off) % G_FOLD == 0 || st + 1 == nst) {
                    /* End of a chain: every group has finished, both stages are free. */
                    wgmma_wait<0>();
                    acc_fence(d);
                    if (pend) mbar_arrive(empty + 8 * prev);
                    mbar_arrive(empty + 8 * s);
                    pend = false;
#pragma unroll
                    for (int i = 0; i < 88; i++) tot[i] += d[i];
                    fresh = 1;
                } else {
                    /* Every group but this one has finished: the previous
                     * stage is no longer read. */
                    wgmma_wait<1>();
                    acc_fence(d);
                    if (pend) mbar_arrive(empty + 8 * prev);
                    pend = true;
                    prev = s;
                    fresh = 0;
                }
            }
            /* The last stage folded, so nothing is in flight here; without
             * this wait ptxas cannot see that, and drains every stage's
             * group where the fold branch rejoins the loop (C7517). */
            wgmma_wait<0>();
            /* Fragment layout (m64nNk16, f32): warp w of the warpgroup holds rows
             * 16w + lane/4 (+8); register 4j + {0,1} columns 8j + 2*(lane%4) + {0,1},
             * 4j + {2,3} the same columns 8 rows down. */
            const int r0 = m0 + (wg - 1) * 64 + warp * 16 + lane / 4;
            const int c0 = n0 + 2 * (lane % 4);
#pragma unroll
            for (int j = 0; j < 22; j++) {
                const int c = c0 + 8 * j;
                if (c >= N) continue;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int r = r0 + 8 * h;
                    if (r >= M) continue;
                    float *p = C + (int64_t)r * N + c;
                    if (VC) { /* C 8-byte aligned, N even: c < N means c + 1 < N */
                        *reinterpret_cast<float2 *>(p) = make_float2(tot[4 * j + 2 * h], tot[4 * j + 2 * h + 1]);
                    } else {
                        p[0] = tot[4 * j + 2 * h];
                        if (c + 1 < N) p[1] = tot[4 * j + 2 * h + 1];
                    }
                }
            }
        }
    }
#else
    /* wgmma and setmaxnreg exist only in sm_90a code (kproof builds
     * candidates for sm_90a); a plain sm_90 build must not run this path. */
    __trap();
#endif
}

/* ======================================================================
 * Without scratch memory: plain fp32 on the CUDA cores
 * ====================================================================== */

/* 16 x 16 output tiles, one element a thread, k in chunks of 16 through
 * shared memory; the FMA chain is added into a running total every 4096 k
 * (one long chain of positive terms loses its small addends). Slow, for
 * the case where the pool has no memory for the pieces. */
static __global__ __launch_bounds__(256) void sgemm_plain(const float *__restrict__ A, const float *__restrict__ B,
                                                         float *__restrict__ C, int64_t M, int64_t N, int64_t K) {
    __shared__ float as[16][17], bs[16][17];
    const int64_t tiles_n = (N + 15) / 16;
    const int64_t r = blockIdx.x / tiles_n * 16 + threadIdx.y, c = blockIdx.x % tiles_n * 16 + threadIdx.x;
    float acc = 0.0f, run = 0.0f;
    for (int64_t k0 = 0; k0 < K; k0 += 16) {
        const int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = r < M && ka < K ? A[r * K + ka] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = kb < K && c < N ? B[kb * N + c] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; k++) acc = fmaf(as[threadIdx.y][k], bs[k][threadIdx.x], acc);
        __syncthreads();
        if ((k0 / 16 + 1) % 256 == 0) {
            run += acc;
            acc = 0.0f;
        }
    }
    if (r < M && c < N) C[r * N + c] = run + acc;
}

/* ======================================================================
 * Host side
 * ====================================================================== */

/* The three piece matrices of an operand (rows x K, rows every ld elements,
 * piece p at p * rows * ld) as one 3-D tensor map (K, rows, 3) with box
 * (32, box_rows, 3) and the 64-byte swizzle; past K and past rows the copy
 * engine reads zeros, so no tile needs padding in memory. */
static int make_map(CUtensorMap *map, PFN_cuTensorMapEncodeTiled_v12000 encode, const void *p, int64_t rows,
                    int64_t K, int64_t ld, uint32_t box_rows) {
    const cuuint64_t dims[3] = {(cuuint64_t)K, (cuuint64_t)rows, 3};
    const cuuint64_t strides[2] = {(cuuint64_t)ld * 2, (cuuint64_t)(rows * ld * 2)};
    const cuuint32_t box[3] = {G_BK, box_rows, 3};
    const cuuint32_t estr[3] = {1, 1, 1};
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void *>(p), dims, strides, box, estr,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS
               ? 0
               : 1;
}

/* The size every call asks of the pool: the largest any call has needed.
 * The worker's pool keeps what it maps (as a long-running program's does),
 * and a block freed by one call serves the next call's request of the same
 * size; were each call to ask for its own size, a larger request would map
 * a second block beside the first, and the pool would keep the sum of the
 * sizes it has seen. When a call needs more than before, what the pool
 * holds unused (the smaller block, free since the last call returned) goes
 * back first, so it keeps one block, at most 768 MiB for the op's largest
 * buffers (6 bytes a value of A and of B). */
static size_t g_scratch_bytes = 0;

static void *scratch_alloc(size_t need, cudaStream_t stream) {
    if (need > g_scratch_bytes) {
        int dev = 0;
        cudaMemPool_t pool;
        if (KP_CUDA_OK(cudaGetDevice(&dev)) && KP_CUDA_OK(cudaDeviceGetMemPool(&pool, dev)))
            (void)cudaMemPoolTrimTo(pool, 0);
        (void)cudaGetLastError(); /* a pool that cannot be trimmed only keeps more */
        g_scratch_bytes = need;
    }
    void *p = NULL;
    if (!KP_CUDA_OK(cudaMallocAsync(&p, g_scratch_bytes, stream))) {
        (void)cudaGetLastError(); /* no memory: not this call's error, the plain kernel runs instead */
        return NULL;
    }
    return p;
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Split A and B into their pieces (scratch, in stream order), multiply,
 * free the scratch in stream order. 2: no scratch memory, nothing queued. */
static int launch_bf16x3(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K,
                         cudaStream_t stream) {
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    if (!KP_CUDA_OK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q)) ||
        q != cudaDriverEntryPointSuccess || !fn)
        return 1;
    PFN_cuTensorMapEncodeTiled_v12000 encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    int dev = 0, sms = 0;
    if (!KP_CUDA_OK(cudaGetDevice(&dev)) ||
        !KP_CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) || sms < 1)
        return 1;
    if (!KP_CUDA_OK(cudaFuncSetAttribute(gemm_bf16x3<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         G_SMEM_BYTES)) ||
        !KP_CUDA_OK(cudaFuncSetAttribute(gemm_bf16x3<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         G_SMEM_BYTES)))
        return 1;

    const int64_t ld = (K + 7) / 8 * 8; /* 16-byte rows for the copy engine */
    const int64_t a_bytes = (3 * M * ld * 2 + 255) / 256 * 256, b_bytes = 3 * N * ld * 2;
    unsigned char *scr = static_cast<unsigned char *>(scratch_alloc((size_t)(a_bytes + b_bytes), stream));
    if (!scr) return 2;
    unsigned short *ap = reinterpret_cast<unsigned short *>(scr), *bp = reinterpret_cast<unsigned short *>(scr + a_bytes);

    int rc = 0;
    CUtensorMap map_a, map_b;
    if (make_map(&map_a, encode, ap, M, K, ld, G_BM) || make_map(&map_b, encode, bp, N, K, ld, G_BN)) rc = 1;
    if (!rc) {
        const int64_t cap = (int64_t)sms * 8, chunks = M * (ld / 8);
        const int64_t ga = (chunks + 255) / 256 < cap ? (chunks + 255) / 256 : cap;
        if (aligned16(A) && K % 4 == 0)
            split_rows<true><<<(unsigned)ga, 256, 0, stream>>>(A, ap, M, K, ld);
        else
            split_rows<false><<<(unsigned)ga, 256, 0, stream>>>(A, ap, M, K, ld);
        const int64_t tb = (K + 63) / 64 * ((N + 31) / 32);
        split_cols<<<(unsigned)(tb < cap ? tb : cap), 256, 0, stream>>>(B, bp, K, N, ld);
        const int64_t tiles = ((M + G_BM - 1) / G_BM) * ((N + G_BN - 1) / G_BN);
        const unsigned blocks = (unsigned)(tiles < sms ? tiles : sms); /* one a SM: 172 KiB of shared memory each */
        if (((uintptr_t)C & 7u) == 0 && N % 2 == 0)
            gemm_bf16x3<true><<<blocks, G_THREADS, G_SMEM_BYTES, stream>>>(map_a, map_b, C, (int)M, (int)N, (int)K);
        else
            gemm_bf16x3<false><<<blocks, G_THREADS, G_SMEM_BYTES, stream>>>(map_a, map_b, C, (int)M, (int)N, (int)K);
        rc = KP_CUDA_OK(cudaGetLastError()) ? 0 : 1;
    }
    /* Freed in stream order, after the product has read it (also when a
     * step failed: nothing queued after the failure reads it). */
    if (!KP_CUDA_OK(cudaFreeAsync(scr, stream))) rc = 1;
    return rc;
}

KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K,
                           kp_stream stream) {
    if (M <= 0 || N <= 0) return 0; /* nothing to write; an empty grid is a launch error */
    cudaStream_t s = (cudaStream_t)stream;
    if (K <= 0) /* an empty sum: C = 0, whose bits are all zero */
        return KP_CUDA_OK(cudaMemsetAsync(C, 0, (size_t)(M * N) * sizeof(float), s)) ? 0 : 1;
    /* 32-bit tile indices and copy-engine coordinates (products are widened). */
    if (M > INT32_MAX - G_BM || N > INT32_MAX - G_BN || K > INT32_MAX - G_BK) return 1;
    if (((M + G_BM - 1) / G_BM) * ((N + G_BN - 1) / G_BN) > INT32_MAX) return 1;
    int rc = launch_bf16x3(A, B, C, M, N, K, s);
    if (rc == 2) {
        const int64_t blocks = ((M + 15) / 16) * ((N + 15) / 16);
        sgemm_plain<<<(unsigned)blocks, dim3(16, 16), 0, s>>>(A, B, C, M, N, K);
        rc = 0;
    }
    if (rc) return rc;
    return KP_CUDA_OK(cudaGetLastError()) ? 0 : 1;
}
