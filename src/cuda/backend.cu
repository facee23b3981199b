/* backend.cu: the NVIDIA GPU behind a worker (src/worker/backend.h).
 *
 * Everything here runs in the worker process, next to the untrusted
 * candidate, so the backend keeps its own work apart from the candidate's:
 *   - the candidate gets a stream created with cudaStreamNonBlocking, so
 *     work it puts on the legacy default stream is not silently ordered
 *     with it and shows up in the audit as a different stream;
 *   - the backend's helpers (fill, pattern, checksum, copies) run on a
 *     private stream and are fences: they wait for all earlier device work
 *     (any stream) before they start and for their own work before they
 *     return, so a straggling candidate kernel can never overwrite poison
 *     or race a checksum;
 *   - errors are recorded as text with file:line, and a sticky error (an
 *     illegal address, a trap) marks the context dead: every later call
 *     says so instead of reporting a confusing secondary failure.
 *
 * Compiled with --fmad=false (CMake) so kp_dev_fill produces the same bits
 * as the CPU's generator in gen.h.
 *
 * Other files of this backend: audit.cu (CUPTI), calibrate.cu (copy and
 * GEMM rates), nvml.c (clocks through NVML loaded at run time).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuda_priv.h"
#include "kproof/gen.h"
#include "worker/backend.h"

const kp_backend kp_dev_kind = KP_BACKEND_CUDA;

/* ===== state and errors ================================================== */

static char g_err[512];
static bool g_dead;           /* a sticky error was seen: the context is gone */
static int g_ready;
static cudaStream_t g_stream; /* handed to the candidate */
static cudaStream_t g_util;   /* the backend's own helpers */
static cudaEvent_t g_ev[2];   /* start/stop around the candidate's call */
static int g_sm_count;
static int64_t g_l2_bytes;
static void *g_flush_buf;
static size_t g_flush_bytes;
static uint32_t g_flush_gen;  /* changes what the flush writes every time */
static unsigned long long *g_cksum_acc;

static const char *kp_basename(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

void kp_cu_seterr(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_err, sizeof g_err, fmt, ap);
    va_end(ap);
}

void kp_cu_clearerr(void) {
    if (g_dead)
        return; /* keep saying why nothing works any more */
    g_err[0] = '\0';
}

bool kp_cu_is_sticky(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorExternalDevice:
        return true;
    default:
        return false;
    }
}

static const char k_dead_note[] = "; sticky error: the CUDA context is dead, restart the worker";

int kp_cu_check(cudaError_t e, const char *expr, const char *file, int line) {
    if (e == cudaSuccess)
        return 0;
    bool sticky = kp_cu_is_sticky(e);
    if (sticky)
        g_dead = true;
    snprintf(g_err, sizeof g_err, "%s:%d: %s: %s (%s)%s", kp_basename(file), line, expr, cudaGetErrorName(e),
             cudaGetErrorString(e), sticky ? k_dead_note : "");
    /* A non-sticky failure of our own must not be reported later as the
     * candidate's error by kp_dev_check_error. */
    if (!sticky)
        (void)cudaGetLastError();
    return -1;
}

int kp_cu_check(CUptiResult e, const char *expr, const char *file, int line) {
    if (e == CUPTI_SUCCESS)
        return 0;
    const char *msg = NULL;
    if (cuptiGetResultString(e, &msg) != CUPTI_SUCCESS || !msg)
        msg = "unknown CUPTI error";
    snprintf(g_err, sizeof g_err, "%s:%d: %s: %s (%d)", kp_basename(file), line, expr, msg, (int)e);
    return -1;
}

int kp_cu_check(cublasStatus_t e, const char *expr, const char *file, int line) {
    if (e == CUBLAS_STATUS_SUCCESS)
        return 0;
    snprintf(g_err, sizeof g_err, "%s:%d: %s: %s", kp_basename(file), line, expr, cublasGetStatusString(e));
    return -1;
}

cudaStream_t kp_cu_util_stream(void) { return g_util; }

unsigned kp_cu_grid(int64_t items, int threads) {
    int64_t blocks = (items + threads - 1) / threads;
    /* Enough blocks to fill every SM several times; grid-stride covers the rest. */
    int64_t cap = (int64_t)(g_sm_count > 0 ? g_sm_count : 132) * 16;
    if (blocks > cap)
        blocks = cap;
    return blocks < 1 ? 1u : (unsigned)blocks;
}

/* Waits for all earlier device work on every stream. */
static int kp_fence(void) { return KP_CU(cudaDeviceSynchronize()); }

static int kp_not_ready(void) {
    if (g_ready)
        return 0;
    kp_cu_seterr("cuda backend: kp_dev_init was not called (or failed)");
    return -1;
}

/* Persisting L2 lines are the one way a candidate keeps data cached across a
 * flush (threat 11); a limit of 0 leaves no room for them. Devices without
 * the limit (older than sm_80, some MIG slices) have nothing to reset. */
static int kp_persist_off(void) {
    cudaError_t e = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    if (e == cudaErrorUnsupportedLimit || e == cudaErrorNotSupported) {
        (void)cudaGetLastError();
        return 0;
    }
    return KP_CU(e);
}

/* ===== kernels =========================================================== */

#define KP_THREADS 256

/* Element i of the generator, rounded to the buffer's dtype. */
template <int BF16>
__global__ void kp_fill_kernel(void *dst, kp_gen g, uint64_t seed, uint32_t stream, int64_t n) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        float v = kp_gen_value(&g, seed, stream, (uint64_t)i);
        if (BF16)
            ((uint16_t *)dst)[i] = kp_f32_to_bf16_bits(v);
        else
            ((float *)dst)[i] = v;
    }
}

/* Byte j of the region holds byte (j % 4) of `word` (pb divides 4, so that
 * is the pattern repeated). The 16-byte-aligned middle is written with
 * vector stores of the word rotated by the length of the unaligned head;
 * head and tail (< 16 bytes each) byte by byte. */
__global__ void kp_pattern_kernel(unsigned char *dst, size_t head, size_t nvec, size_t tail, uint32_t word,
                                  uint32_t rotated) {
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t step = (size_t)gridDim.x * blockDim.x;
    if (tid < head)
        dst[tid] = (unsigned char)(word >> (8 * (tid % 4)));
    size_t tail0 = head + nvec * 16;
    if (tid < tail) {
        size_t j = tail0 + tid;
        dst[j] = (unsigned char)(word >> (8 * (j % 4)));
    }
    uint4 v = make_uint4(rotated, rotated, rotated, rotated);
    uint4 *body = (uint4 *)(dst + head);
    for (size_t i = tid; i < nvec; i += step)
        body[i] = v;
}

/* Little-endian word `i` of the buffer, zero-padded past n. */
__device__ __forceinline__ uint32_t kp_word_at(const unsigned char *p, size_t n, size_t i) {
    uint32_t w = 0;
    size_t b = i * 4;
    for (int k = 0; k < 4; k++)
        if (b + k < n)
            w |= (uint32_t)p[b + k] << (8 * k);
    return w;
}

/* kp_cksum of gen.h: each thread sums groups of four words (one 16-byte
 * load where aligned), then a warp reduction, then one 64-bit atomicAdd per
 * block. Addition mod 2^64 is order-free, so the result equals the CPU's. */
__global__ void kp_cksum_kernel(const unsigned char *p, size_t n, int aligned16, unsigned long long *acc) {
    size_t nwords = (n + 3) / 4;
    size_t ngroups = (nwords + 3) / 4;
    size_t step = (size_t)gridDim.x * blockDim.x;
    uint64_t sum = 0;
    for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < ngroups; g += step) {
        size_t i0 = g * 4;
        if (aligned16 && g * 16 + 16 <= n) {
            uint4 v = ((const uint4 *)p)[g];
            sum += kp_cksum_word(v.x, i0) + kp_cksum_word(v.y, i0 + 1) + kp_cksum_word(v.z, i0 + 2) +
                   kp_cksum_word(v.w, i0 + 3);
        } else {
            for (size_t i = i0; i < i0 + 4 && i < nwords; i++)
                sum += kp_cksum_word(kp_word_at(p, n, i), i);
        }
    }
    for (int off = 16; off > 0; off /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, off);
    __shared__ uint64_t warp_sum[KP_THREADS / 32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0)
        warp_sum[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < (int)(blockDim.x / 32) ? warp_sum[lane] : 0;
        for (int off = 16; off > 0; off /= 2)
            sum += __shfl_down_sync(0xffffffffu, sum, off);
        if (lane == 0)
            atomicAdd(acc, (unsigned long long)sum);
    }
}

/* Real stores of a value that changes every flush: a memset of a constant
 * is something a driver could turn into a no-op or a compressed clear. */
__global__ void kp_flush_kernel(uint4 *p, size_t nvec, uint32_t gen) {
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec; i += step) {
        uint32_t x = gen ^ (uint32_t)i;
        p[i] = make_uint4(x, x + 1, x + 2, x + 3);
    }
}

/* Then every line read back: the writes left L2 full of dirty lines, whose
 * write-back would land in the timed call (about 60 MiB, ~15 us of DRAM
 * time on the H200), charged to whichever candidate comes next. Reading
 * evicts them, so the call starts with its data in DRAM and a clean L2. The
 * sum lands in *sink (the buffer itself) only when impossible, so the
 * loads stay. */
__global__ void kp_flush_read_kernel(const uint4 *p, size_t nvec, uint32_t gen, uint32_t *sink) {
    size_t step = (size_t)gridDim.x * blockDim.x;
    uint32_t acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec; i += step) {
        uint4 v = p[i];
        acc += v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == gen + 0x9e3779b9u && sink)
        *sink = acc;
}

/* ===== lifetime and facts ================================================ */

int kp_dev_init(char *err, size_t len) {
    kp_cu_clearerr();
    if (g_ready)
        return 0;
    int ndev = 0;
    if (KP_CU(cudaGetDeviceCount(&ndev)))
        goto fail;
    if (ndev < 1) {
        kp_cu_seterr("no CUDA device visible");
        goto fail;
    }
    if (KP_CU(cudaSetDevice(0)) || KP_CU(cudaFree(0))) /* cudaFree(0): create the context now */
        goto fail;
    if (KP_CU(cudaDeviceGetAttribute(&g_sm_count, cudaDevAttrMultiProcessorCount, 0)))
        goto fail;
    {
        int l2 = 0;
        if (KP_CU(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0)))
            goto fail;
        g_l2_bytes = l2;
    }
    if (KP_CU(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking)) ||
        KP_CU(cudaStreamCreateWithFlags(&g_util, cudaStreamNonBlocking)) || KP_CU(cudaEventCreate(&g_ev[0])) ||
        KP_CU(cudaEventCreate(&g_ev[1])))
        goto fail;
    if (kp_persist_off())
        goto fail;
    {
        /* The default pool of cudaMallocAsync keeps what it has mapped: by
         * default it gives memory back at every synchronize, and each timed
         * call (which synchronizes) would map its scratch again, about
         * 0.1 ms for 64 MiB on the H200 where a long-running program pays
         * it once. What the pool keeps counts against the memory-kept
         * guard like any other allocation. */
        cudaMemPool_t pool;
        uint64_t keep = UINT64_MAX;
        if (cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess ||
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess)
            (void)cudaGetLastError(); /* no pool on this device: nothing to keep */
    }
    g_ready = 1;
    return 0;
fail:
    if (err && len)
        snprintf(err, len, "%s", g_err);
    return -1;
}

void kp_dev_env(kp_env *e) {
    if (!g_ready)
        return;
    cudaDeviceProp p;
    if (KP_CU(cudaGetDeviceProperties(&p, 0)) == 0) {
        const unsigned char *u = (const unsigned char *)p.uuid.bytes;
        snprintf(e->gpu, sizeof e->gpu, "%.*s", (int)sizeof e->gpu - 1, p.name);
        snprintf(e->gpu_uuid, sizeof e->gpu_uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
                 u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    }
    e->sm_count = g_sm_count;
    e->l2_bytes = g_l2_bytes;
    int v = 0;
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        snprintf(e->runtime, sizeof e->runtime, "CUDA %d.%d", v / 1000, (v % 1000) / 10);
    kp_nvml_now now;
    kp_nvml_query(e->gpu_uuid, &now);
    if (now.driver[0]) {
        snprintf(e->driver, sizeof e->driver, "%s", now.driver);
    } else if (cudaDriverGetVersion(&v) == cudaSuccess) {
        /* Without NVML only the CUDA version the driver supports is known. */
        snprintf(e->driver, sizeof e->driver, "CUDA %d.%d", v / 1000, (v % 1000) / 10);
    }
    if (now.ok) {
        /* The worker asks twice and keeps the first answer as "before". */
        e->sm_mhz_before = e->sm_mhz_after = (int)now.sm_mhz;
        e->mem_mhz_before = e->mem_mhz_after = (int)now.mem_mhz;
        e->throttle_before = e->throttle_after = now.reasons;
    }
}

const char *kp_dev_error(void) { return g_err; }

/* ===== memory ============================================================ */

void *kp_dev_alloc(size_t bytes) {
    kp_cu_clearerr();
    if (kp_not_ready())
        return NULL;
    void *p = NULL;
    /* cudaMalloc(0) succeeds with NULL, which the caller reads as failure. */
    if (KP_CU(cudaMalloc(&p, bytes ? bytes : 1)))
        return NULL;
    return p;
}

void kp_dev_free(void *p) {
    if (p)
        (void)KP_CU(cudaFree(p));
}

static int kp_copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind) {
    kp_cu_clearerr();
    if (kp_not_ready())
        return -1;
    if (n == 0)
        return 0;
    if (kp_fence() || KP_CU(cudaMemcpyAsync(dst, src, n, kind, g_util)))
        return -1;
    /* A device-to-device cudaMemcpy may return before the copy is done. */
    return KP_CU(cudaStreamSynchronize(g_util));
}

int kp_dev_to_dev(void *dst, const void *src, size_t n) { return kp_copy(dst, src, n, cudaMemcpyDeviceToDevice); }
int kp_dev_to_host(void *dst, const void *src, size_t n) { return kp_copy(dst, src, n, cudaMemcpyDeviceToHost); }
int kp_dev_from_host(void *dst, const void *src, size_t n) { return kp_copy(dst, src, n, cudaMemcpyHostToDevice); }

int kp_dev_fill(void *dst, kp_dtype t, const kp_gen *g, uint64_t seed, uint32_t stream, int64_t n) {
    kp_cu_clearerr();
    if (kp_not_ready())
        return -1;
    if (n < 0 || (t != KP_F32 && t != KP_BF16)) {
        kp_cu_seterr("kp_dev_fill: bad arguments (n %lld, dtype %d)", (long long)n, (int)t);
        return -1;
    }
    if (n == 0)
        return 0;
    if (kp_fence())
        return -1;
    unsigned grid = kp_cu_grid(n, KP_THREADS);
    if (t == KP_BF16)
        kp_fill_kernel<1><<<grid, KP_THREADS, 0, g_util>>>(dst, *g, seed, stream, n);
    else
        kp_fill_kernel<0><<<grid, KP_THREADS, 0, g_util>>>(dst, *g, seed, stream, n);
    if (KP_CU(cudaGetLastError()))
        return -1;
    return KP_CU(cudaStreamSynchronize(g_util));
}

int kp_dev_pattern(void *dst, uint32_t pattern, int pattern_bytes, size_t n) {
    kp_cu_clearerr();
    if (kp_not_ready())
        return -1;
    uint32_t word;
    switch (pattern_bytes) {
    case 1: word = (pattern & 0xffu) * 0x01010101u; break;
    case 2: word = (pattern & 0xffffu) * 0x00010001u; break;
    case 4: word = pattern; break;
    default:
        kp_cu_seterr("kp_dev_pattern: pattern of %d bytes (want 1, 2 or 4)", pattern_bytes);
        return -1;
    }
    if (n == 0)
        return 0;
    uintptr_t a = (uintptr_t)dst;
    size_t head = (16 - (size_t)(a % 16)) % 16;
    if (head > n)
        head = n;
    size_t nvec = (n - head) / 16, tail = (n - head) % 16;
    /* Byte k of an aligned word holds byte (head + k) % 4 of the pattern. */
    unsigned s = (unsigned)(head % 4) * 8;
    uint32_t rotated = s ? (word >> s) | (word << (32 - s)) : word;
    if (kp_fence())
        return -1;
    int64_t items = (int64_t)(nvec > 16 ? nvec : 16);
    kp_pattern_kernel<<<kp_cu_grid(items, KP_THREADS), KP_THREADS, 0, g_util>>>((unsigned char *)dst, head, nvec,
                                                                                 tail, word, rotated);
    if (KP_CU(cudaGetLastError()))
        return -1;
    return KP_CU(cudaStreamSynchronize(g_util));
}

uint64_t kp_dev_checksum(const void *p, size_t n) {
    kp_cu_clearerr();
    if (kp_not_ready() || n == 0)
        return 0; /* the sum over no words */
    if (!g_cksum_acc && KP_CU(cudaMalloc((void **)&g_cksum_acc, sizeof *g_cksum_acc))) {
        g_cksum_acc = NULL;
        return 0;
    }
    if (kp_fence() || KP_CU(cudaMemsetAsync(g_cksum_acc, 0, sizeof *g_cksum_acc, g_util)))
        return 0;
    size_t ngroups = ((n + 3) / 4 + 3) / 4;
    int aligned16 = (uintptr_t)p % 16 == 0;
    kp_cksum_kernel<<<kp_cu_grid((int64_t)ngroups, KP_THREADS), KP_THREADS, 0, g_util>>>(
        (const unsigned char *)p, n, aligned16, g_cksum_acc);
    unsigned long long sum = 0;
    if (KP_CU(cudaGetLastError()) ||
        KP_CU(cudaMemcpyAsync(&sum, g_cksum_acc, sizeof sum, cudaMemcpyDeviceToHost, g_util)) ||
        KP_CU(cudaStreamSynchronize(g_util)))
        return 0; /* kp_dev_error() is non-empty: the caller can tell */
    return (uint64_t)sum;
}

/* ===== timing ============================================================ */

int kp_dev_flush(void) {
    kp_cu_clearerr();
    if (kp_not_ready())
        return -1;
    if (KP_CU(cudaCtxResetPersistingL2Cache()) || kp_persist_off())
        return -1;
    /* A window a candidate left on the given stream: the limit of 0 already
     * makes it harmless, removing it makes it gone. Best effort, since the
     * limit is the defense that counts. */
    cudaStreamAttrValue w;
    memset(&w, 0, sizeof w);
    w.accessPolicyWindow.num_bytes = 0;
    if (cudaStreamSetAttribute(g_stream, cudaStreamAttributeAccessPolicyWindow, &w) != cudaSuccess)
        (void)cudaGetLastError();
    if (!g_flush_buf) {
        size_t l2 = g_l2_bytes > 0 ? (size_t)g_l2_bytes : (size_t)64 << 20;
        size_t bytes = 2 * l2;
        if (bytes < ((size_t)32 << 20))
            bytes = (size_t)32 << 20;
        bytes = (bytes + 4095) & ~(size_t)4095;
        if (KP_CU(cudaMalloc(&g_flush_buf, bytes))) {
            g_flush_buf = NULL;
            return -1;
        }
        g_flush_bytes = bytes;
    }
    size_t nvec = g_flush_bytes / 16;
    kp_flush_kernel<<<kp_cu_grid((int64_t)nvec, KP_THREADS), KP_THREADS, 0, g_util>>>((uint4 *)g_flush_buf, nvec,
                                                                                      ++g_flush_gen);
    kp_flush_read_kernel<<<kp_cu_grid((int64_t)nvec, KP_THREADS), KP_THREADS, 0, g_util>>>(
        (const uint4 *)g_flush_buf, nvec, g_flush_gen, (uint32_t *)g_flush_buf);
    if (KP_CU(cudaGetLastError()))
        return -1;
    return KP_CU(cudaDeviceSynchronize());
}

int kp_dev_sync(void) {
    kp_cu_clearerr();
    if (kp_not_ready())
        return -1;
    return KP_CU(cudaDeviceSynchronize());
}

void *kp_dev_stream(void) { return (void *)g_stream; }

int kp_dev_persist_state(void) {
    size_t limit = 0;
    if (cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize) != cudaSuccess) {
        (void)cudaGetLastError();
        limit = 0;
    }
    cudaStreamAttrValue w;
    memset(&w, 0, sizeof w);
    if (cudaStreamGetAttribute(g_stream, cudaStreamAttributeAccessPolicyWindow, &w) != cudaSuccess) {
        (void)cudaGetLastError();
        w.accessPolicyWindow.num_bytes = 0;
    }
    return limit > 0 || w.accessPolicyWindow.num_bytes > 0;
}

int64_t kp_dev_mem_used(void) {
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return (int64_t)(total_b - free_b);
}

int kp_dev_event_start(void) {
    kp_cu_clearerr();
    if (kp_not_ready())
        return -1;
    return KP_CU(cudaEventRecord(g_ev[0], g_stream));
}

int kp_dev_event_stop(void) {
    kp_cu_clearerr();
    if (kp_not_ready())
        return -1;
    return KP_CU(cudaEventRecord(g_ev[1], g_stream));
}

double kp_dev_event_elapsed(void) {
    kp_cu_clearerr();
    if (kp_not_ready())
        return -1.0;
    float ms = 0.0f;
    if (KP_CU(cudaEventElapsedTime(&ms, g_ev[0], g_ev[1])))
        return -1.0; /* negative: no time (kp_dev_error says why) */
    return (double)ms * 1e-3;
}

/* ===== the stream blocker ================================================
 * Without it the start event fires on an idle device the moment it is
 * recorded, and the first kernel starts only when the host's launch reaches
 * the device: the time includes launch latency and whatever host work the
 * candidate does before it (cuBLAS's heuristics: ~90 us at 4096^3 on the
 * H200). With it the stream waits until the call has enqueued everything,
 * as in a pipeline where the host runs ahead of the device, and the parent
 * takes the larger of the device time and the host's enqueue time, so host
 * work that cannot hide behind the device still counts. The flag lives in
 * mapped pinned memory: the host writes the release, the kernel writes
 * back how it ended. */
static volatile uint32_t *g_block;  /* [0] release generation (host), [1] state (device) */
static uint32_t *g_block_dev;
static uint32_t g_block_gen;
static int g_block_smem; /* bytes of shared memory each of the hold's CTAs takes */

/* One CTA per SM, each taking all the shared memory a CTA may have: while
 * the hold lasts no other kernel, on any stream, can start a CTA anywhere
 * (a call could otherwise run its real work on a private stream during the
 * hold, chain the given stream to it, and report a fraction of its time).
 * Every CTA waits for the release; CTA 0 writes how it ended. */
__global__ void kp_block_kernel(volatile uint32_t *flag, uint32_t gen, unsigned long long timeout_ns) {
    extern __shared__ unsigned char kp_block_smem[]; /* never touched: its size is the point */
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        if (flag[0] == gen) {
            if (blockIdx.x == 0 && threadIdx.x == 0)
                flag[1] = 1;
            return;
        }
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) {
            if (blockIdx.x == 0 && threadIdx.x == 0)
                flag[1] = 2;
            return;
        }
        __nanosleep(500);
    }
}

int kp_dev_block_begin(void) { return kp_cu_block_on(g_stream); }

int kp_cu_block_on(cudaStream_t stream) {
    kp_cu_clearerr();
    if (kp_not_ready())
        return -1;
    if (!g_block) {
        void *h = NULL;
        if (KP_CU(cudaHostAlloc(&h, 64, cudaHostAllocMapped)))
            return -1;
        if (KP_CU(cudaHostGetDevicePointer((void **)&g_block_dev, h, 0))) {
            cudaFreeHost(h);
            return -1;
        }
        g_block = (volatile uint32_t *)h;
        g_block[0] = 0;
    }
    if (!g_block_smem) {
        int dev = 0, optin = 0;
        if (KP_CU(cudaGetDevice(&dev)) ||
            KP_CU(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) ||
            KP_CU(cudaFuncSetAttribute(kp_block_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin)) ||
            KP_CU(cudaFuncSetAttribute(kp_block_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       cudaSharedmemCarveoutMaxShared)))
            return -1;
        g_block_smem = optin;
    }
    g_block[1] = 0;
    __sync_synchronize();
    kp_block_kernel<<<(unsigned)g_sm_count, 32, (size_t)g_block_smem, stream>>>(
        (volatile uint32_t *)g_block_dev, ++g_block_gen, (unsigned long long)(KP_BLOCK_TIMEOUT_S * 1e9));
    return KP_CU(cudaGetLastError());
}

void kp_dev_block_end(void) {
    if (!g_block)
        return;
    __sync_synchronize();
    g_block[0] = g_block_gen;
    __sync_synchronize();
}

int kp_dev_block_state(void) { return g_block ? (int)g_block[1] : 0; }

int kp_dev_check_error(char *text, size_t len) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) {
        if (text && len)
            text[0] = '\0';
        return 0;
    }
    /* A sticky error survives cudaGetLastError; the peek catches codes the
     * list does not know yet. */
    bool sticky = kp_cu_is_sticky(e) || cudaPeekAtLastError() != cudaSuccess;
    if (sticky)
        g_dead = true;
    snprintf(g_err, sizeof g_err, "%s: %s%s", cudaGetErrorName(e), cudaGetErrorString(e), sticky ? k_dead_note : "");
    if (text && len)
        snprintf(text, len, "%s", g_err);
    return (int)e;
}
