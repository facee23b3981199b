/* dev_backend_test.cu: exercises every kp_dev_* function of the CUDA backend
 * on a real GPU and exits non-zero on any mismatch. Not built by CTest (this
 * folder holds tests that need a device); build and run it with
 * tests/gpu/run_dev_backend_test.sh.
 *
 *   dev_backend_test [--no-calibrate] [--no-sticky] [--big]
 *                    [--cublas-f32 SO] [--cublas-bf16 SO]
 *
 * --big also fills past element 2^32 (8 GiB of bf16); --cublas-* check the
 * cuBLAS baseline candidates (kernels/matmul/cuda/) built as shared objects
 * against a float64 reference on odd shapes. The sticky-error check (an
 * illegal address, after which the context is dead) runs last.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kproof/gen.h"
#include "worker/backend.h"

static int g_fail;

#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        if (!(cond)) {                                                                                                \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                           \
            fprintf(stderr, __VA_ARGS__);                                                                             \
            fputc('\n', stderr);                                                                                      \
            g_fail++;                                                                                                 \
        }                                                                                                             \
    } while (0)

static uint64_t cpu_cksum(const unsigned char *p, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; 4 * i < n; i++) {
        uint32_t w = 0;
        for (size_t k = 0; k < 4; k++)
            if (4 * i + k < n)
                w |= (uint32_t)p[4 * i + k] << (8 * k);
        s += kp_cksum_word(w, i);
    }
    return s;
}

static int count_threads(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* ---- kernels the tests launch as a candidate would ---------------------- */

__global__ void audit_given_kernel(float *p) { p[threadIdx.x] = 1.0f; }
__global__ void audit_side_kernel(float *p) { p[threadIdx.x] = 2.0f; }
__global__ void spin_kernel(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}
__global__ void bad_write_kernel(int *p) { *p = 1; }

/* ---- fill ---------------------------------------------------------------- */

static void test_fill(void) {
    const kp_gen gens[] = {{KP_GEN_NORMAL, 0.5f, 3.0f, 0, 0.0f}, {KP_GEN_UNIFORM, -1.0f, 2.0f, 0, 0.0f},
                           {KP_GEN_SIGNED, 1000.0f, 1e-3f, 0, 0.0f}, {KP_GEN_NORMAL, 0.0f, 1.0f, 4099, 1000.0f}};
    const int64_t n = 1000003;
    void *d = kp_dev_alloc((size_t)n * 4);
    unsigned char *h = (unsigned char *)malloc((size_t)n * 4);
    CHECK(d && h, "alloc");
    if (!d || !h)
        return;
    for (int t = 0; t < 2; t++) {
        for (int gi = 0; gi < 4; gi++) {
            uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)gi;
            uint32_t stream = 3u + (uint32_t)gi;
            CHECK(kp_dev_fill(d, (kp_dtype)t, &gens[gi], seed, stream, n) == 0, "%s", kp_dev_error());
            CHECK(kp_dev_to_host(h, d, (size_t)n * (t ? 2 : 4)) == 0, "%s", kp_dev_error());
            int64_t bad = 0, first = -1;
            for (int64_t i = 0; i < n; i++) {
                float v = kp_gen_value(&gens[gi], seed, stream, (uint64_t)i);
                int ok;
                if (t == KP_BF16) {
                    uint16_t got;
                    memcpy(&got, h + 2 * i, 2);
                    ok = got == kp_f32_to_bf16_bits(v);
                } else {
                    uint32_t got, want;
                    memcpy(&got, h + 4 * i, 4);
                    memcpy(&want, &v, 4);
                    ok = got == want;
                }
                if (!ok && bad++ == 0)
                    first = i;
            }
            CHECK(bad == 0, "fill dtype %d gen %d: %lld elements differ from the CPU, first %lld", t, gi,
                  (long long)bad, (long long)first);
        }
    }
    CHECK(kp_dev_fill(d, KP_F32, &gens[0], 1, 0, 0) == 0, "n = 0 must be a no-op");
    CHECK(kp_dev_fill(d, KP_F32, &gens[0], 1, 0, -1) != 0, "n < 0 must fail");
    kp_dev_free(d);
    free(h);
    printf("fill: f32 and bf16 bits equal the CPU's for 4 distributions (one with spikes)\n");
}

/* Indices past 2^32: the counter's high word. 8 GiB of bf16. */
static void test_fill_big(void) {
    const int64_t n = ((int64_t)1 << 32) + 4099;
    const kp_gen g = {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f};
    uint16_t *d = (uint16_t *)kp_dev_alloc((size_t)n * 2);
    if (!d) {
        printf("fill big: skipped (cannot allocate 8 GiB)\n");
        return;
    }
    CHECK(kp_dev_fill(d, KP_BF16, &g, 77, 1, n) == 0, "%s", kp_dev_error());
    const int64_t starts[] = {0, ((int64_t)1 << 32) - 2048, n - 2048};
    uint16_t h[2048];
    for (int s = 0; s < 3; s++) {
        CHECK(kp_dev_to_host(h, d + starts[s], sizeof h) == 0, "%s", kp_dev_error());
        int bad = 0;
        for (int i = 0; i < 2048; i++)
            bad += h[i] != kp_f32_to_bf16_bits(kp_gen_value(&g, 77, 1, (uint64_t)(starts[s] + i)));
        CHECK(bad == 0, "big fill near %lld: %d differ", (long long)starts[s], bad);
    }
    kp_dev_free(d);
    printf("fill big: indices past 2^32 match\n");
}

/* ---- checksum ------------------------------------------------------------ */

static void test_checksum(void) {
    const size_t cap = ((size_t)1 << 20) + 64;
    unsigned char *h = (unsigned char *)malloc(cap);
    unsigned char *d = (unsigned char *)kp_dev_alloc(cap);
    CHECK(h && d, "alloc");
    if (!h || !d)
        return;
    uint64_t s = 42;
    for (size_t i = 0; i < cap; i++)
        h[i] = (unsigned char)lcg(&s);
    CHECK(kp_dev_from_host(d, h, cap) == 0, "%s", kp_dev_error());
    const size_t sizes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 1000, 4096, 65537, (size_t)1 << 20};
    int tried = 0;
    for (size_t off = 0; off < 8; off++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            uint64_t got = kp_dev_checksum(d + off, n), want = cpu_cksum(h + off, n);
            CHECK(got == want, "checksum offset %zu n %zu: got %016llx want %016llx (%s)", off, n,
                  (unsigned long long)got, (unsigned long long)want, kp_dev_error());
            tried++;
        }
    /* A large generated buffer, as the worker checksums inputs. */
    const int64_t big = 64 << 20; /* 256 MiB of f32 */
    const kp_gen g = {KP_GEN_SIGNED, 0.0f, 1.0f, 0, 0.0f};
    void *db = kp_dev_alloc((size_t)big * 4);
    unsigned char *hb = (unsigned char *)malloc((size_t)big * 4);
    if (db && hb) {
        CHECK(kp_dev_fill(db, KP_F32, &g, 5, 0, big) == 0, "%s", kp_dev_error());
        CHECK(kp_dev_to_host(hb, db, (size_t)big * 4) == 0, "%s", kp_dev_error());
        uint64_t t0 = kp_now_ns();
        uint64_t got = kp_dev_checksum(db, (size_t)big * 4);
        double dt = (double)(kp_now_ns() - t0) * 1e-9;
        CHECK(got == cpu_cksum(hb, (size_t)big * 4), "checksum of 256 MiB differs");
        printf("checksum: 256 MiB in %.2f ms on the device\n", dt * 1e3);
        /* One flipped bit must change it. */
        hb[12345] ^= 0x10;
        CHECK(kp_dev_from_host((char *)db + 12345, hb + 12345, 1) == 0, "%s", kp_dev_error());
        CHECK(kp_dev_checksum(db, (size_t)big * 4) != got, "one flipped bit left the checksum unchanged");
    }
    kp_dev_free(db);
    free(hb);
    kp_dev_free(d);
    free(h);
    printf("checksum: %d offset/size pairs equal the CPU's\n", tried);
}

/* ---- pattern ------------------------------------------------------------- */

static void test_pattern(void) {
    const size_t cap = ((size_t)1 << 20) + 64;
    unsigned char *h = (unsigned char *)malloc(cap);
    unsigned char *d = (unsigned char *)kp_dev_alloc(cap);
    CHECK(h && d, "alloc");
    if (!h || !d)
        return;
    const struct {
        int pb;
        uint32_t pat;
    } pats[] = {{1, KP_CANARY_BYTE}, {2, KP_POISON_BF16_BITS}, {4, KP_POISON_F32_BITS}};
    const size_t sizes[] = {0, 1, 2, 3, 5, 15, 16, 17, 33, 100, 4099, ((size_t)1 << 20) + 7};
    int tried = 0;
    for (int p = 0; p < 3; p++)
        for (size_t off = 0; off < 8; off++)
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                size_t n = sizes[k];
                if (off + n + 16 > cap)
                    continue;
                memset(h, 0x11, cap);
                CHECK(kp_dev_from_host(d, h, cap) == 0, "%s", kp_dev_error());
                CHECK(kp_dev_pattern(d + off, pats[p].pat, pats[p].pb, n) == 0, "%s", kp_dev_error());
                CHECK(kp_dev_to_host(h, d, cap) == 0, "%s", kp_dev_error());
                size_t bad = 0;
                for (size_t i = 0; i < cap; i++) {
                    unsigned char want = 0x11;
                    if (i >= off && i < off + n)
                        want = (unsigned char)(pats[p].pat >> (8 * ((i - off) % (size_t)pats[p].pb)));
                    bad += h[i] != want;
                }
                CHECK(bad == 0, "pattern %d bytes at offset %zu n %zu: %zu bytes wrong", pats[p].pb, off, n, bad);
                tried++;
            }
    CHECK(kp_dev_pattern(d, 0, 3, 16) != 0, "a 3-byte pattern must be refused");
    kp_dev_free(d);
    free(h);
    printf("pattern: %d cases right, bytes outside untouched\n", tried);
}

/* ---- flush, events, sync, errors ---------------------------------------- */

static void test_flush(void) {
    /* What an exploit would do: persisting lines and a window on the stream. */
    cudaStream_t s = (cudaStream_t)kp_dev_stream();
    size_t lim = 0;
    if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)30 << 20) == cudaSuccess) {
        cudaStreamAttrValue w;
        memset(&w, 0, sizeof w);
        void *buf = NULL;
        cudaMalloc(&buf, (size_t)16 << 20);
        w.accessPolicyWindow.base_ptr = buf;
        w.accessPolicyWindow.num_bytes = (size_t)16 << 20;
        w.accessPolicyWindow.hitRatio = 1.0f;
        w.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        w.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w) == cudaSuccess, "set window");
        CHECK(kp_dev_flush() == 0, "%s", kp_dev_error());
        CHECK(cudaDeviceGetLimit(&lim, cudaLimitPersistingL2CacheSize) == cudaSuccess && lim == 0,
              "persisting limit %zu after flush", lim);
        memset(&w, 0xff, sizeof w);
        CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w) == cudaSuccess &&
                  w.accessPolicyWindow.num_bytes == 0,
              "window of %zu bytes left on the stream", (size_t)w.accessPolicyWindow.num_bytes);
        cudaFree(buf);
    } else {
        (void)cudaGetLastError();
        printf("flush: persisting L2 not supported here\n");
    }
    double best = 1e9;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = kp_now_ns();
        CHECK(kp_dev_flush() == 0, "%s", kp_dev_error());
        double dt = (double)(kp_now_ns() - t0) * 1e-9;
        best = dt < best ? dt : best;
    }
    printf("flush: ok, best %.1f us\n", best * 1e6);
}

__global__ void stamp_kernel(unsigned long long *out) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    *out = t;
}

static void test_events(void) {
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    long long cycles = (long long)(khz > 0 ? khz : 1500000); /* about 1 ms */
    CHECK(kp_dev_event_start() == 0, "%s", kp_dev_error());
    spin_kernel<<<1, 1, 0, (cudaStream_t)kp_dev_stream()>>>(cycles);
    CHECK(kp_dev_event_stop() == 0, "%s", kp_dev_error());
    CHECK(kp_dev_sync() == 0, "%s", kp_dev_error());
    double t = kp_dev_event_elapsed();
    CHECK(t > 0.3e-3 && t < 50e-3, "event time %.3f ms for a ~1 ms kernel", t * 1e3);
    printf("events: %.3f ms for a ~1 ms spin\n", t * 1e3);

    /* Held stream: 5 ms of host time between the launch and the release
     * are not in the events, only the ~0.1 ms kernel. */
    CHECK(kp_dev_block_begin() == 0, "block: %s", kp_dev_error());
    CHECK(kp_dev_event_start() == 0, "%s", kp_dev_error());
    spin_kernel<<<1, 1, 0, (cudaStream_t)kp_dev_stream()>>>(cycles / 10);
    CHECK(kp_dev_event_stop() == 0, "%s", kp_dev_error());
    usleep(5000);
    kp_dev_block_end();
    CHECK(kp_dev_sync() == 0, "%s", kp_dev_error());
    double tb = kp_dev_event_elapsed();
    CHECK(kp_dev_block_state() == 1, "block state %d after a release", kp_dev_block_state());
    CHECK(tb > 0.03e-3 && tb < 2e-3, "held: event time %.3f ms for a ~0.1 ms kernel after 5 ms on the host", tb * 1e3);
    /* A call that waits on the device while held: the hold times out. */
    CHECK(kp_dev_block_begin() == 0, "block: %s", kp_dev_error());
    uint64_t w0 = kp_now_ns();
    CHECK(kp_dev_sync() == 0, "%s", kp_dev_error());
    double waited = (double)(kp_now_ns() - w0) * 1e-9;
    kp_dev_block_end();
    CHECK(kp_dev_block_state() == 2, "block state %d after a wait inside the hold", kp_dev_block_state());
    CHECK(waited > 0.5 * KP_BLOCK_TIMEOUT_S && waited < 3 * KP_BLOCK_TIMEOUT_S, "hold timed out after %.3f s", waited);
    printf("block: %.3f ms held (5 ms host gap not counted); a wait inside the hold ends at %.2f s\n", tb * 1e3,
           waited);

    /* The hold fills every SM: a kernel on another stream, launched during
     * the hold, starts no earlier than the held stream's next kernel (it
     * would otherwise run 5 ms before it, during the hold). */
    unsigned long long *st = (unsigned long long *)kp_dev_alloc(2 * sizeof(unsigned long long));
    cudaStream_t side = NULL;
    CHECK(st && cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) == cudaSuccess, "side stream");
    CHECK(kp_dev_block_begin() == 0, "block: %s", kp_dev_error());
    stamp_kernel<<<1, 1, 0, side>>>(st);
    stamp_kernel<<<1, 1, 0, (cudaStream_t)kp_dev_stream()>>>(st + 1);
    usleep(5000);
    kp_dev_block_end();
    CHECK(kp_dev_sync() == 0, "%s", kp_dev_error());
    unsigned long long hs[2] = {0, 0};
    CHECK(kp_dev_to_host(hs, st, sizeof hs) == 0, "%s", kp_dev_error());
    double lead_us = ((double)hs[1] - (double)hs[0]) * 1e-3; /* > 0: the side kernel started first */
    CHECK(kp_dev_block_state() == 1, "block state %d", kp_dev_block_state());
    CHECK(lead_us < 100.0, "a kernel on another stream started %.1f us before the held stream's: the hold does not "
          "fill the device", lead_us);
    printf("block: a side-stream kernel launched during the hold started %.1f us after the held stream's\n",
           -lead_us);
    cudaStreamDestroy(side);
    kp_dev_free(st);

    /* The given stream must not be ordered with the legacy default stream. */
    unsigned int flags = 0;
    CHECK(cudaStreamGetFlags((cudaStream_t)kp_dev_stream(), &flags) == cudaSuccess &&
              (flags & cudaStreamNonBlocking),
          "given stream is blocking (flags %u)", flags);
}

/* What the protocol's timing choices cost, measured on a plain copy of
 * 128 MiB (256 MiB moved), median of 21 each: the flush that only writes
 * (leaving L2 full of dirty lines) against kp_dev_flush (writes, then
 * reads back), and events on an idle stream against a held one. Printed,
 * not asserted: a measurement for the record. */
__global__ void copy_kernel(const float4 *src, float4 *dst, size_t n) {
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) dst[i] = src[i];
}
__global__ void dirty_kernel(uint4 *p, size_t n, uint32_t g) {
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) p[i] = make_uint4(g, g, g, i);
}
static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
/* One call's device time between kproof's events, on the held stream
 * (the worker's way) or an idle one. */
template <class F> static double timed_call(bool hold, F launch) {
    int held = hold && kp_dev_block_begin() == 0;
    kp_dev_event_start();
    launch();
    kp_dev_event_stop();
    if (held) kp_dev_block_end();
    CHECK(kp_dev_sync() == 0, "%s", kp_dev_error());
    return kp_dev_event_elapsed();
}
static void test_timing_ab(void) {
    size_t bytes = (size_t)128 << 20, n = bytes / 16, dn = ((size_t)128 << 20) / 16;
    float4 *src = (float4 *)kp_dev_alloc(bytes), *dst = (float4 *)kp_dev_alloc(bytes);
    uint4 *dirt = (uint4 *)kp_dev_alloc(dn * 16);
    CHECK(src && dst && dirt, "alloc");
    cudaStream_t s = (cudaStream_t)kp_dev_stream();
    const char *names[3] = {"write-only flush, idle stream", "write-only flush, held stream",
                            "write+read flush, held stream"};
    double med[3];
    for (int mode = 0; mode < 3; mode++) {
        double t[21];
        for (int i = 0; i < 21; i++) {
            if (mode < 2) { /* the old flush: 2x L2 of stores, nothing after */
                dirty_kernel<<<1056, 256, 0, s>>>(dirt, dn, (uint32_t)i);
                CHECK(kp_dev_sync() == 0, "%s", kp_dev_error());
            } else {
                CHECK(kp_dev_flush() == 0, "%s", kp_dev_error());
            }
            t[i] = timed_call(mode > 0, [&] { copy_kernel<<<1056, 256, 0, s>>>(src, dst, n); });
        }
        qsort(t, 21, sizeof t[0], cmp_d);
        med[mode] = t[10];
        printf("timing a/b: %-32s %8.2f us  (%.0f GB/s, min %.2f us)\n", names[mode], t[10] * 1e6,
               2.0 * bytes / t[10] * 1e-9, t[0] * 1e6);
    }
    CHECK(med[2] > 0 && med[2] < 10 * med[0], "copy medians %.2f / %.2f us", med[0] * 1e6, med[2] * 1e6);
    kp_dev_free(src);
    kp_dev_free(dst);
    kp_dev_free(dirt);
}

/* Lines a kernel loads under an L2 evict_last policy (createpolicy, as
 * Triton's eviction_policy='evict_last' and some project kernels do) have
 * priority over the flush's own lines: if they outlived kp_dev_flush, a
 * candidate could keep its data in L2 across the cold start. A buffer of
 * 3/4 of L2 is read with that policy, then flushed, then read again and
 * timed; the same after a plain read (the flush surely evicts it) is the
 * cold time, and a read right after a read, with no flush, the warm time.
 * The evict_last read after the flush must take the cold time, not the warm
 * one. Median of 11 each. */
template <bool LAST> __global__ void l2_read_kernel(const uint4 *p, size_t n, uint32_t *sink) {
    uint64_t pol = 0;
    if (LAST) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    size_t step = (size_t)gridDim.x * blockDim.x;
    uint32_t acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        uint4 v;
        if (LAST)
            asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                         : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p + i), "l"(pol));
        else
            v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u && sink) *sink = acc; /* keeps the loads */
}
static void test_flush_evict_last(void) {
    kp_env env;
    memset(&env, 0, sizeof env);
    kp_dev_env(&env);
    size_t l2 = env.l2_bytes > 0 ? (size_t)env.l2_bytes : (size_t)50 << 20;
    size_t bytes = (l2 * 3 / 4) & ~(size_t)4095, n = bytes / 16;
    uint4 *a = (uint4 *)kp_dev_alloc(bytes);
    uint32_t *sink = (uint32_t *)kp_dev_alloc(sizeof(uint32_t));
    CHECK(a && sink, "alloc");
    if (!a || !sink) return;
    const kp_gen g = {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f};
    CHECK(kp_dev_fill(a, KP_F32, &g, 7, 0, (int64_t)n * 4) == 0, "%s", kp_dev_error());
    cudaStream_t s = (cudaStream_t)kp_dev_stream();
    const char *names[3] = {"after an evict_last read and a flush", "after a plain read and a flush",
                            "after a plain read, no flush"};
    double med[3];
    for (int mode = 0; mode < 3; mode++) {
        double t[11];
        for (int i = 0; i < 11; i++) {
            if (mode == 0) l2_read_kernel<true><<<1056, 256, 0, s>>>(a, n, sink);
            else l2_read_kernel<false><<<1056, 256, 0, s>>>(a, n, sink);
            CHECK(kp_dev_sync() == 0, "%s", kp_dev_error());
            if (mode < 2) CHECK(kp_dev_flush() == 0, "%s", kp_dev_error());
            t[i] = timed_call(true, [&] { l2_read_kernel<false><<<1056, 256, 0, s>>>(a, n, sink); });
        }
        qsort(t, 11, sizeof t[0], cmp_d);
        med[mode] = t[5];
        printf("flush vs evict_last: read of %zu MiB %-40s %7.2f us\n", bytes >> 20, names[mode], t[5] * 1e6);
    }
    /* cold must be clearly slower than warm for the check to mean anything */
    CHECK(med[1] > 1.3 * med[2], "cold read %.2f us not slower than warm %.2f us: the check cannot tell",
          med[1] * 1e6, med[2] * 1e6);
    /* passes while at most about a quarter of the buffer stayed in L2; the
     * printed times say how much did */
    CHECK(med[0] > med[2] + 0.75 * (med[1] - med[2]),
          "evict_last lines outlived the flush: %.2f us, cold %.2f, warm %.2f", med[0] * 1e6, med[1] * 1e6,
          med[2] * 1e6);
    kp_dev_free(a);
    kp_dev_free(sink);
}

static void test_copies(void) {
    unsigned char h[1000], back[1000];
    for (int i = 0; i < 1000; i++)
        h[i] = (unsigned char)(i * 7);
    unsigned char *a = (unsigned char *)kp_dev_alloc(1000), *b = (unsigned char *)kp_dev_alloc(1000);
    CHECK(a && b, "alloc");
    CHECK(kp_dev_from_host(a, h, 1000) == 0, "%s", kp_dev_error());
    CHECK(kp_dev_to_dev(b + 1, a, 999) == 0, "%s", kp_dev_error());
    CHECK(kp_dev_to_host(back, b + 1, 999) == 0, "%s", kp_dev_error());
    CHECK(memcmp(back, h, 999) == 0, "round trip differs");
    void *z = kp_dev_alloc(0);
    CHECK(z != NULL, "alloc(0) returned NULL");
    kp_dev_free(z);
    kp_dev_free(a);
    kp_dev_free(b);
    printf("copies: round trip ok\n");
}

static void test_check_error(void) {
    char text[256];
    CHECK(kp_dev_check_error(text, sizeof text) == 0, "stale error before the test: %s", text);
    audit_given_kernel<<<1, 4096, 0, (cudaStream_t)kp_dev_stream()>>>(NULL); /* invalid configuration */
    int e = kp_dev_check_error(text, sizeof text);
    CHECK(e != 0 && text[0], "a bad launch was not reported");
    CHECK(!strstr(text, "dead"), "a launch error is not sticky: %s", text);
    printf("check_error: '%s'\n", text);
    CHECK(kp_dev_check_error(text, sizeof text) == 0, "error not cleared: %s", text);
    CHECK(kp_dev_sync() == 0, "context should survive: %s", kp_dev_error());
}

/* ---- the device-work tracer ------------------------------------------------ */

static cudaStream_t g_side;
static void *launch_on_given(void *) {
    spin_kernel<<<1, 1, 0, (cudaStream_t)kp_dev_stream()>>>(100000);
    return NULL;
}

/* The factor on the events' time the call reports (a tampered clock: below 1). */
static double g_report_scale = 1;

/* One call as the worker makes it; body() is the candidate. */
static void traced_call(int hold, void (*body)(float *), float *p, void (*after_return)(void)) {
    kp_dev_trace_begin();
    int held = hold && kp_dev_block_begin() == 0;
    kp_dev_trace_mark(held);
    kp_dev_event_start();
    kp_dev_trace_enter();
    body(p);
    kp_dev_trace_leave();
    kp_dev_event_stop();
    if (after_return) after_return(); /* enqueued after the stop event: outside the call */
    kp_dev_trace_end();
    if (held) kp_dev_block_end();
    CHECK(kp_dev_sync() == 0, "%s", kp_dev_error());
    kp_dev_trace_event(kp_dev_event_elapsed() * g_report_scale);
}

static void body_spin_given(float *p) {
    (void)p;
    spin_kernel<<<1, 1, 0, (cudaStream_t)kp_dev_stream()>>>(200000);
}
static void body_spin_side_joined(float *p) {
    (void)p;
    cudaStream_t s = (cudaStream_t)kp_dev_stream();
    cudaEvent_t f, j;
    cudaEventCreateWithFlags(&f, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&j, cudaEventDisableTiming);
    cudaEventRecord(f, s);
    cudaStreamWaitEvent(g_side, f, 0);
    spin_kernel<<<1, 1, 0, g_side>>>(200000);
    cudaEventRecord(j, g_side);
    cudaStreamWaitEvent(s, j, 0);
    cudaEventDestroy(f);
    cudaEventDestroy(j);
}

static void body_plain(float *p) { audit_given_kernel<<<1, 32, 0, (cudaStream_t)kp_dev_stream()>>>(p); }
static void body_fork_join(float *p) {
    cudaStream_t s = (cudaStream_t)kp_dev_stream();
    cudaEvent_t f, j;
    cudaEventCreateWithFlags(&f, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&j, cudaEventDisableTiming);
    cudaEventRecord(f, s);
    cudaStreamWaitEvent(g_side, f, 0);
    audit_given_kernel<<<1, 32, 0, s>>>(p);
    spin_kernel<<<1, 1, 0, g_side>>>(50000);
    cudaEventRecord(j, g_side);
    cudaStreamWaitEvent(s, j, 0);
    cudaEventDestroy(f);
    cudaEventDestroy(j);
}
static void body_chained_tail(float *p) {
    cudaStream_t s = (cudaStream_t)kp_dev_stream();
    cudaEvent_t f;
    cudaEventCreateWithFlags(&f, cudaEventDisableTiming);
    audit_given_kernel<<<1, 32, 0, s>>>(p);
    cudaEventRecord(f, s);
    cudaStreamWaitEvent(g_side, f, 0);
    spin_kernel<<<1, 1, 0, g_side>>>(200000); /* still running at the stop event */
    cudaEventDestroy(f);
}
static void body_graph(float *p) {
    static cudaGraphExec_t ge;
    if (!ge) {
        cudaGraph_t g;
        cudaStream_t cap;
        cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking);
        cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal);
        audit_given_kernel<<<1, 32, 0, cap>>>(p);
        audit_side_kernel<<<1, 32, 0, cap>>>(p + 64);
        cudaStreamEndCapture(cap, &g);
        cudaGraphInstantiate(&ge, g, 0);
    }
    cudaGraphLaunch(ge, (cudaStream_t)kp_dev_stream());
}
static void body_malloc_async(float * /*p*/) {
    cudaStream_t s = (cudaStream_t)kp_dev_stream();
    float *tmp = NULL;
    cudaMallocAsync((void **)&tmp, 64 << 20, s);
    audit_given_kernel<<<1, 32, 0, s>>>(tmp);
    cudaFreeAsync(tmp, s);
}
static void body_sync_copy(float *p) {
    static float *host; /* pinned: a copy from pageable memory may return before it is done */
    if (!host) cudaMallocHost((void **)&host, 64 * sizeof(float));
    cudaMemcpy(p + 256, host, 64 * sizeof(float), cudaMemcpyHostToDevice); /* synchronous, legacy stream */
    audit_given_kernel<<<1, 32, 0, (cudaStream_t)kp_dev_stream()>>>(p);
}
static void thread_after_return(void) {
    pthread_t t;
    pthread_create(&t, NULL, launch_on_given, NULL);
    pthread_join(t, NULL);
}

static void expect_account(const char *what, int inside, int other_stream, int outside, int where) {
    kp_acct_rep *r = (kp_acct_rep *)calloc(1, sizeof *r);
    CHECK(kp_dev_trace_account(r) == 0, "account: %s", r->error);
    printf("trace %-22s calls %d inside %d (other streams %d) outside %d load %d missing %d dropped %d\n", what,
           r->calls, r->ops_inside, r->ops_other_stream, r->ops_outside, r->ops_load, r->missing_marks, r->dropped);
    for (int i = 0; i < r->nshow; i++)
        printf("  outside: %s stream %u where %d thread %d (tid %d) call no. %d, %.1f us outside, %.1f us long\n",
               r->show[i].name, r->show[i].stream, r->show[i].where, r->show[i].thread, r->show[i].tid, r->show[i].call,
               r->show[i].outside_s * 1e6, r->show[i].duration_s * 1e6);
    CHECK(r->supported == 1 && r->missing_marks == 0 && r->dropped == 0, "%s: trace incomplete", what);
    CHECK(r->ops_inside == inside, "%s: %d inside, want %d", what, r->ops_inside, inside);
    CHECK(r->ops_other_stream == other_stream, "%s: %d on other streams, want %d", what, r->ops_other_stream,
          other_stream);
    CHECK(r->ops_outside == outside, "%s: %d outside, want %d", what, r->ops_outside, outside);
    if (outside) CHECK(r->show[0].where == where, "%s: outside kind %d, want %d", what, r->show[0].where, where);
    free(r);
}

static void test_trace(void) {
    char why[200];
    CHECK(kp_dev_trace_start(why, sizeof why) == 0, "tracer: %s", why);
    float *p = (float *)kp_dev_alloc(4096);
    CHECK(cudaStreamCreateWithFlags(&g_side, cudaStreamNonBlocking) == cudaSuccess, "side stream");
    kp_dev_trace_load(1);
    audit_given_kernel<<<1, 32, 0, g_side>>>(p); /* work at load, over before the first call */
    kp_dev_sync();
    kp_dev_trace_load(0);
    /* The harness's own work between calls is not the candidate's. */
    kp_dev_pattern(p, 0x7fc00000u, 4, 4096);
    kp_dev_flush();
    for (int hold = 0; hold < 2; hold++) {
        traced_call(hold, body_plain, p, NULL);
        expect_account(hold ? "plain, held" : "plain", 1, 0, 0, 0);
        traced_call(hold, body_fork_join, p, NULL);
        expect_account(hold ? "fork-join, held" : "fork-join", 2, 1, 0, 0);
        traced_call(hold, body_graph, p, NULL);
        expect_account(hold ? "graph, held" : "graph", 2, 0, 0, 0);
        traced_call(hold, body_malloc_async, p, NULL);
        expect_account(hold ? "mallocAsync, held" : "mallocAsync", 1, 0, 0, 0);
        traced_call(hold, body_sync_copy, p, NULL);
        expect_account(hold ? "synchronous copy, held" : "synchronous copy", 2, 1, 0, 0);
        traced_call(hold, body_chained_tail, p, NULL);
        expect_account(hold ? "chained tail, held" : "chained tail", 1, 0, 1, KP_ACCT_LATE);
        traced_call(hold, body_plain, p, thread_after_return);
        expect_account(hold ? "thread after return, held" : "thread after return", 1, 0, 1, KP_ACCT_BETWEEN);
        traced_call(hold, body_plain, p, NULL);
        spin_kernel<<<1, 1, 0, g_side>>>(20000); /* between calls, not the harness's stream */
        kp_dev_sync();
        expect_account(hold ? "between calls, held" : "between calls", 1, 0, 1, KP_ACCT_BETWEEN);
    }
    /* Held calls whose events report less than the device ran: work on
     * the given stream that alone outlasts the report proves the clock
     * false (OVERTIME, the parent's `timer`); on another stream, joined
     * back, it is work past the window (LATE). */
    g_report_scale = 0.25;
    traced_call(1, body_spin_given, p, NULL);
    expect_account("events cut to 1/4, held", 0, 0, 1, KP_ACCT_OVERTIME);
    traced_call(1, body_spin_side_joined, p, NULL);
    expect_account("side work, events cut", 0, 0, 1, KP_ACCT_LATE);
    g_report_scale = 0;
    traced_call(1, body_spin_given, p, NULL);
    expect_account("events report 0, held", 0, 0, 1, KP_ACCT_OVERTIME);
    g_report_scale = 1;
    traced_call(1, body_spin_given, p, NULL);
    expect_account("long given work, held", 1, 0, 0, 0);
    cudaStreamDestroy(g_side);
    kp_dev_free(p);
}

/* ---- calibrate and env --------------------------------------------------- */

static void test_env(void) {
    kp_env e;
    memset(&e, 0, sizeof e);
    kp_dev_env(&e);
    printf("env: %s %s, %d SMs, L2 %lld B, driver %s, runtime %s, SM %d MHz, mem %d MHz, reasons %#llx\n", e.gpu,
           e.gpu_uuid, e.sm_count, (long long)e.l2_bytes, e.driver, e.runtime, e.sm_mhz_before, e.mem_mhz_before,
           (unsigned long long)e.throttle_before);
    CHECK(e.gpu[0] && strncmp(e.gpu_uuid, "GPU-", 4) == 0 && strlen(e.gpu_uuid) == 40, "name/uuid");
    CHECK(e.sm_count > 0 && e.l2_bytes > 0, "sm count / l2");
    CHECK(e.runtime[0] && e.driver[0], "versions");
    CHECK(e.sm_mhz_before > 0 && e.mem_mhz_before > 0, "no clocks from NVML");
}

static void test_calibrate(void) {
    kp_calib_rep c;
    uint64_t t0 = kp_now_ns();
    int rc = kp_dev_calibrate(&c);
    double dt = (double)(kp_now_ns() - t0) * 1e-9;
    CHECK(rc == 0, "%s", kp_dev_error());
    printf("calibrate (%.1f s): copy %.0f GB/s, sgemm %.0f GFLOP/s, tf32 %.0f, bf16 %.0f\n  note: %s\n", dt,
           c.copy_gbs, c.gemm_f32_gflops, c.gemm_tf32_gflops, c.gemm_bf16_gflops, c.note);
    CHECK(c.copy_gbs > 500 && c.copy_gbs < 20000, "copy %.0f GB/s", c.copy_gbs);
    CHECK(c.gemm_f32_gflops > 1000 && c.gemm_f32_gflops < c.gemm_tf32_gflops, "f32 %.0f tf32 %.0f",
          c.gemm_f32_gflops, c.gemm_tf32_gflops);
    CHECK(c.gemm_bf16_gflops > c.gemm_f32_gflops, "bf16 %.0f", c.gemm_bf16_gflops);
}

/* ---- the cuBLAS baseline candidates ------------------------------------- */

typedef int (*mm_f32_fn)(const float *, const float *, float *, int64_t, int64_t, int64_t, cudaStream_t);
typedef int (*mm_bf16_fn)(const uint16_t *, const uint16_t *, uint16_t *, int64_t, int64_t, int64_t, cudaStream_t);

/* A cuBLAS wrapper candidate (so), or with so NULL the backend's own
 * in-worker reference (kp_dev_reference, the one-input flaw's). */
static void test_matmul(const char *so, int bf16) {
    void *fn = NULL;
    if (so) {
        void *lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
        CHECK(lib, "dlopen %s: %s", so, dlerror());
        if (!lib)
            return;
        fn = dlsym(lib, bf16 ? "kp_matmul_bf16" : "kp_matmul_f32");
        CHECK(fn, "no entry point in %s", so);
        if (!fn)
            return;
    } else {
        so = "kp_dev_reference";
    }
    const int64_t shapes[][3] = {{1, 1, 1},    {1, 7, 1},     {3, 5, 7},     {7, 3, 5},       {17, 1, 33},
                                 {1, 129, 2},  {64, 64, 64},  {127, 255, 63}, {257, 129, 513}, {1000, 3, 1001},
                                 {2, 1000, 9}, {333, 77, 4097}};
    const size_t es = bf16 ? 2 : 4;
    const kp_gen g = {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        int64_t M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
        void *A = kp_dev_alloc((size_t)(M * K) * es), *B = kp_dev_alloc((size_t)(K * N) * es);
        void *C = kp_dev_alloc((size_t)(M * N) * es);
        unsigned char *hA = (unsigned char *)malloc((size_t)(M * K) * es);
        unsigned char *hB = (unsigned char *)malloc((size_t)(K * N) * es);
        unsigned char *hC = (unsigned char *)malloc((size_t)(M * N) * es);
        kp_dtype t = bf16 ? KP_BF16 : KP_F32;
        CHECK(kp_dev_fill(A, t, &g, 11, 0, M * K) == 0 && kp_dev_fill(B, t, &g, 11, 1, K * N) == 0, "fill");
        CHECK(kp_dev_pattern(C, bf16 ? KP_POISON_BF16_BITS : KP_POISON_F32_BITS, (int)es, (size_t)(M * N) * es) == 0,
              "poison");
        int rc;
        if (!fn) {
            kp_op op;
            memset(&op, 0, sizeof op);
            op.family = "matmul";
            op.dtype = t;
            kp_shape sh;
            memset(&sh, 0, sizeof sh);
            sh.nd = 3;
            sh.d[0] = M, sh.d[1] = N, sh.d[2] = K;
            void *bufs[3] = {A, B, C};
            rc = kp_dev_reference(&op, &sh, bufs, C);
        } else {
            rc = bf16 ? ((mm_bf16_fn)fn)((const uint16_t *)A, (const uint16_t *)B, (uint16_t *)C, M, N, K,
                                         (cudaStream_t)kp_dev_stream())
                      : ((mm_f32_fn)fn)((const float *)A, (const float *)B, (float *)C, M, N, K,
                                        (cudaStream_t)kp_dev_stream());
        }
        CHECK(rc == 0, "%s returned %d at %lldx%lldx%lld", so, rc, (long long)M, (long long)N, (long long)K);
        CHECK(kp_dev_sync() == 0, "%s", kp_dev_error());
        CHECK(kp_dev_to_host(hA, A, (size_t)(M * K) * es) == 0 && kp_dev_to_host(hB, B, (size_t)(K * N) * es) == 0 &&
                  kp_dev_to_host(hC, C, (size_t)(M * N) * es) == 0,
              "copy back");
        int64_t bad = 0;
        double worst = 0.0;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double ref = 0.0, mag = 0.0;
                for (int64_t k = 0; k < K; k++) {
                    double a, b;
                    if (bf16) {
                        uint16_t x, y;
                        memcpy(&x, hA + 2 * (i * K + k), 2);
                        memcpy(&y, hB + 2 * (k * N + j), 2);
                        a = kp_bf16_bits_to_f32(x);
                        b = kp_bf16_bits_to_f32(y);
                    } else {
                        float x, y;
                        memcpy(&x, hA + 4 * (i * K + k), 4);
                        memcpy(&y, hB + 4 * (k * N + j), 4);
                        a = x;
                        b = y;
                    }
                    ref += a * b;
                    mag += fabs(a * b);
                }
                double got;
                if (bf16) {
                    uint16_t x;
                    memcpy(&x, hC + 2 * (i * N + j), 2);
                    got = kp_bf16_bits_to_f32(x);
                } else {
                    float x;
                    memcpy(&x, hC + 4 * (i * N + j), 4);
                    got = x;
                }
                /* fp32: accumulation error only; bf16: one output rounding
                 * (2^-8 relative) on top. NaN (poison) fails both. */
                double tol = bf16 ? 4.0e-3 * fabs(ref) + 1e-5 * mag : 2e-6 * mag + 1e-30;
                double err = fabs(got - ref);
                if (!(err <= tol))
                    bad++;
                if (err / (tol > 0 ? tol : 1) > worst)
                    worst = err / (tol > 0 ? tol : 1);
            }
        CHECK(bad == 0, "%s at %lldx%lldx%lld: %lld elements out of tolerance (worst err/tol %.2f)", so,
              (long long)M, (long long)N, (long long)K, (long long)bad, worst);
        kp_dev_free(A);
        kp_dev_free(B);
        kp_dev_free(C);
        free(hA);
        free(hB);
        free(hC);
    }
    printf("matmul %s: %zu shapes right\n", bf16 ? "bf16" : "f32", sizeof shapes / sizeof shapes[0]);
}

/* ---- last: a sticky error kills the context ----------------------------- */

static void test_sticky(void) {
    void *buf = kp_dev_alloc(64);
    bad_write_kernel<<<1, 1, 0, (cudaStream_t)kp_dev_stream()>>>((int *)(uintptr_t)16);
    CHECK(kp_dev_sync() != 0, "an illegal address went unnoticed");
    CHECK(strstr(kp_dev_error(), "dead") != NULL, "sync error does not say the context is dead: %s", kp_dev_error());
    printf("sticky: '%s'\n", kp_dev_error());
    char text[256];
    int e = kp_dev_check_error(text, sizeof text);
    printf("sticky check_error: %d '%s'\n", e, text);
    CHECK(kp_dev_pattern(buf, 0, 1, 1) != 0, "helpers must fail after a sticky error");
}

int main(int argc, char **argv) {
    int calibrate = 1, sticky = 1, big = 0;
    const char *so_f32 = NULL, *so_bf16 = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-calibrate"))
            calibrate = 0;
        else if (!strcmp(argv[i], "--no-sticky"))
            sticky = 0;
        else if (!strcmp(argv[i], "--big"))
            big = 1;
        else if (!strcmp(argv[i], "--cublas-f32") && i + 1 < argc)
            so_f32 = argv[++i];
        else if (!strcmp(argv[i], "--cublas-bf16") && i + 1 < argc)
            so_bf16 = argv[++i];
        else {
            fprintf(stderr, "unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    char err[512];
    int th = count_threads();
    if (kp_dev_init(err, sizeof err)) {
        fprintf(stderr, "FAIL kp_dev_init: %s\n", err);
        return 1;
    }
    CHECK(kp_dev_kind == KP_BACKEND_CUDA, "kind");
    printf("init: ok (threads %d -> %d)\n", th, count_threads());
    test_env();
    test_copies();
    test_fill();
    if (big)
        test_fill_big();
    test_checksum();
    test_pattern();
    test_flush();
    test_events();
    test_timing_ab();
    test_flush_evict_last();
    test_check_error();
    test_trace();
    test_matmul(NULL, 0); /* the one-input flaw's in-worker reference */
    test_matmul(NULL, 1);
    if (so_f32)
        test_matmul(so_f32, 0);
    if (so_bf16)
        test_matmul(so_bf16, 1);
    if (calibrate)
        test_calibrate();
    if (sticky)
        test_sticky();
    if (g_fail) {
        fprintf(stderr, "dev_backend_test: %d FAILED\n", g_fail);
        return 1;
    }
    printf("dev_backend_test: all passed\n");
    return 0;
}
