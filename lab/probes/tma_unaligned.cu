// Probe: does the copy engine take a 2-D tile box whose first column is
// not on a 16-byte boundary (x = 1, 3, 5, 7 bf16 elements), for loads and
// for stores, with the 128-byte swizzle or none? A fault ends the process
// (a CUDA context does not survive it), so each case may run in a process
// of its own: `tma_probe MODE SWIZZLE X` (MODE load or store, SWIZZLE 128
// or none) runs one; no arguments runs them all, 128-byte swizzle first,
// until the first fault. The map itself keeps the rules
// (base 16-byte aligned, row stride a multiple of 16). A store must write
// exactly the box's elements (its neighbours keep their sentinel), a load
// must read exactly them. Prints one line a case and "ALL OK" or "FAILED".
//   nvcc -O2 -std=c++17 -arch=sm_90a lab/probes/tma_unaligned.cu -o /tmp/tma_probe && /tmp/tma_probe
//   for m in load store; do for w in 128 none; do for x in 0 1 8; do /tmp/tma_probe $m $w $x; done; done; done
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

enum { ROWS = 32, COLS = 512, BOXC = 64, BOXR = 8 };

static __device__ __forceinline__ uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// One block of 32 threads. Load: the box at (x, y) into shared memory,
// then out to dst as a dense BOXR x BOXC array (un-swizzled by hand).
// Store: a dense src array swizzled into shared memory, then stored at (x, y).
__global__ void probe(const __grid_constant__ CUtensorMap map, int x, int y, int store, int swz, const uint16_t *src,
                      uint16_t *dst) {
    __shared__ alignas(1024) uint16_t tile[BOXR * BOXC];
    __shared__ alignas(8) uint64_t bar;
    const int t = threadIdx.x;
    // 128-byte swizzle: row r (128 bytes) at 128 r, its 16-byte chunk c at c ^ (r % 8); none: plain rows.
    auto at = [swz](int r, int c) { return swz ? r * BOXC + ((((c / 8) ^ (r % 8)) * 8) + c % 8) : r * BOXC + c; };
    if (store) {
        for (int i = t; i < BOXR * BOXC; i += 32) tile[at(i / BOXC, i % BOXC)] = src[i];
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        if (t == 0) {
            asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(&map),
                         "r"(x), "r"(y), "r"(sa(tile))
                         : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        }
        return;
    }
    if (t == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar)));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (t == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar)), "r"(BOXR * BOXC * 2)
                     : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::
                "r"(sa(tile)),
            "l"(&map), "r"(x), "r"(y), "r"(sa(&bar))
            : "memory");
    }
    asm volatile(
        "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W; }" ::"r"(sa(&bar))
        : "memory");
    for (int i = t; i < BOXR * BOXC; i += 32) dst[i] = tile[at(i / BOXC, i % BOXC)];
}

int main(int argc, char **argv) {
    // argv: MODE SWIZZLE X, one case; none: every case (128-byte swizzle, then none).
    if (argc != 1 && argc != 4) {
        fprintf(stderr, "usage: tma_probe [load|store 128|none X]\n");
        return 2;
    }
    struct Case { int store, swz, x; };
    std::vector<Case> cases;
    if (argc == 4) {
        const bool mode_ok = !strcmp(argv[1], "load") || !strcmp(argv[1], "store");
        const bool swz_ok = !strcmp(argv[2], "128") || !strcmp(argv[2], "none");
        char *end = nullptr;
        const long x = strtol(argv[3], &end, 10);
        if (!mode_ok || !swz_ok || *end || end == argv[3] || x < 0 || x > COLS - BOXC) {
            fprintf(stderr, "usage: tma_probe [load|store 128|none X], X in 0..%d\n", COLS - BOXC);
            return 2;
        }
        cases.push_back({!strcmp(argv[1], "store"), !strcmp(argv[2], "128"), (int)x});
    } else {
        for (int swz = 1; swz >= 0; swz--)
            for (int store = 0; store < 2; store++)
                for (int x : {0, 1, 3, 5, 7, 8, 65, 130}) cases.push_back({store, swz, x});
    }
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        !fn) {
        printf("no cuTensorMapEncodeTiled\nFAILED\n");
        return 1;
    }
    auto encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    uint16_t *g, *src, *dst;
    cudaMalloc(&g, ROWS * COLS * 2);
    cudaMalloc(&src, BOXR * BOXC * 2);
    cudaMalloc(&dst, BOXR * BOXC * 2);
    CUtensorMap maps[2]; // [0] no swizzle, [1] 128-byte swizzle
    const cuuint64_t dims[2] = {COLS, ROWS};
    const cuuint64_t strides[1] = {COLS * 2};
    const cuuint32_t box[2] = {BOXC, BOXR}, estr[2] = {1, 1};
    for (int w = 0; w < 2; w++)
        if (encode(&maps[w], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, g, dims, strides, box, estr,
                   CU_TENSOR_MAP_INTERLEAVE_NONE, w ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
            printf("encode failed\nFAILED\n");
            return 1;
        }
    std::vector<uint16_t> host(ROWS * COLS), box_h(BOXR * BOXC), got(BOXR * BOXC);
    int bad_total = 0;
    for (const Case &cs : cases) {
        const int store = cs.store, swz = cs.swz, x = cs.x;
        {
            const int y = 3;
            for (int i = 0; i < ROWS * COLS; i++) host[i] = (uint16_t)(i * 7 + 1);
            for (int i = 0; i < BOXR * BOXC; i++) box_h[i] = (uint16_t)(0x8000 | i);
            cudaMemcpy(g, host.data(), host.size() * 2, cudaMemcpyHostToDevice);
            cudaMemcpy(src, box_h.data(), box_h.size() * 2, cudaMemcpyHostToDevice);
            cudaMemset(dst, 0, BOXR * BOXC * 2);
            probe<<<1, 32>>>(maps[swz], x, y, store, swz, src, dst);
            cudaError_t e = cudaDeviceSynchronize();
            if (e != cudaSuccess) {
                printf("%s swizzle %s x=%d: %s\nFAILED\n", store ? "store" : "load", swz ? "128" : "none", x,
                       cudaGetErrorString(e));
                return 1;
            }
            int bad = 0;
            if (store) {
                std::vector<uint16_t> after(ROWS * COLS);
                cudaMemcpy(after.data(), g, after.size() * 2, cudaMemcpyDeviceToHost);
                for (int r = 0; r < ROWS; r++)
                    for (int c = 0; c < COLS; c++) {
                        const bool in = r >= y && r < y + BOXR && c >= x && c < x + BOXC;
                        const uint16_t want = in ? box_h[(r - y) * BOXC + (c - x)] : host[r * COLS + c];
                        bad += after[r * COLS + c] != want;
                    }
            } else {
                cudaMemcpy(got.data(), dst, got.size() * 2, cudaMemcpyDeviceToHost);
                for (int r = 0; r < BOXR; r++)
                    for (int c = 0; c < BOXC; c++) bad += got[r * BOXC + c] != host[(y + r) * COLS + x + c];
            }
            printf("%s swizzle %s x=%d y=%d: %d elements wrong\n", store ? "store" : "load", swz ? "128" : "none", x, y,
                   bad);
            bad_total += bad;
        }
    }
    printf(bad_total ? "FAILED\n" : "ALL OK\n");
    return bad_total != 0;
}
