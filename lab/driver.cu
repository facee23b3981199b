/* lab/driver.cu: one kernel file's entry point, called in a loop on one
 * shape, for a profiler (ncu) or a quick screen of variants (lab/screen.sh).
 * Not a harness: no checks, inputs from kproof's generator (gen.h); each call starts with a
 * cold L2 (a 256 MiB read before it). kproof's numbers come from kproof.
 *   nvcc ... -DLAB_OP=LAB_SOFTMAX_BF16 lab/driver.cu KERNEL.cu -o drv -lcupti
 *   ./drv ROWS COLS [CALLS [copy]]   (copy: cudaMemcpy of the same bytes)
 * LAB_TRACE=activity|api|both switches on, before the first call, what
 * kproof's worker switches on for the whole eval (src/cuda/trace.cu): the
 * activity records of kernels, copies and memsets (their buffers read as
 * they complete), the runtime and driver API callbacks (each takes a lock
 * and notes its thread), or both; lab/tracecost.sh times each against
 * none. Sum takes ROWS x COLS elements as its n.
 */
#include <kproof/gen.h>
#include <kproof/kernel.h>

#include <cuda_bf16.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <cupti.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LAB_SOFTMAX_F32 1
#define LAB_SOFTMAX_BF16 2
#define LAB_LAYERNORM_F32 3
#define LAB_LAYERNORM_BF16 4
#define LAB_RMSNORM_F32 5
#define LAB_RMSNORM_BF16 6
#define LAB_SUM_F32 7
#ifndef LAB_OP
#error "define LAB_OP"
#endif
#if LAB_OP == LAB_SOFTMAX_F32 || LAB_OP == LAB_LAYERNORM_F32 || LAB_OP == LAB_RMSNORM_F32 || LAB_OP == LAB_SUM_F32
#define LAB_F32 1
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

/* The inputs from kproof's own generator (normal values, offset and
 * scale as given), not a second one. */
__global__ void lab_fill(elem *p, long long n, unsigned seed, float scale, float offset) {
    const kp_gen g = {KP_GEN_NORMAL, offset, scale, 0, 0.0f};
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float v = kp_gen_value(&g, seed, 0, (uint64_t)i);
#if LAB_F32
        p[i] = v;
#else
        p[i] = __bfloat16_as_ushort(__float2bfloat16_rn(v));
#endif
    }
}

/* Reads a buffer larger than L2 so the next call starts cold with no dirty
 * lines to write back (a clean flush, as kproof's timing does). */
__global__ void lab_flush(const float4 *p, long long n, float *sink) {
    float acc = 0.0f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        acc += p[i].x;
    if (acc == 12345.0f) *sink = acc; /* keeps the loads */
}

/* ---- the tracer's load, as kproof's worker puts it on the process ------- */

static unsigned long long g_records, g_api; /* what the callbacks saw */
static unsigned g_regs, g_smem;             /* the most registers a thread and shared bytes a block in a kernel record */
static long g_last_tid;                     /* the worker notes each call's thread: so does this */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static void CUPTIAPI buf_requested(uint8_t **buf, size_t *size, size_t *max_records) {
    *size = (size_t)4 << 20;
    *buf = (uint8_t *)aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid) {
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
        pthread_mutex_lock(&g_mu);
        g_records++;
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            const bool own = k->name && strstr(k->name, "lab_"); /* the driver's own fill and flush */
            if (!own && k->registersPerThread > g_regs) g_regs = k->registersPerThread;
            if (!own && k->staticSharedMemory + k->dynamicSharedMemory > g_smem)
                g_smem = k->staticSharedMemory + k->dynamicSharedMemory;
        }
        pthread_mutex_unlock(&g_mu);
    }
    free(buf);
}

static void CUPTIAPI on_api(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *data) {
    const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;
    long tid = syscall(SYS_gettid);
    pthread_mutex_lock(&g_mu);
    if (cd->callbackSite == CUPTI_API_ENTER) g_api++;
    g_last_tid = tid;
    pthread_mutex_unlock(&g_mu);
}

/* 0 on success; says what failed otherwise. */
static int trace_on(const char *mode) {
    const int act = !strcmp(mode, "activity") || !strcmp(mode, "both");
    const int api = !strcmp(mode, "api") || !strcmp(mode, "both");
    if (!act && !api) {
        fprintf(stderr, "lab driver: LAB_TRACE is activity, api or both, not '%s'\n", mode);
        return 1;
    }
    const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                        CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};
    if (act) {
        if (cuptiActivityRegisterCallbacks(buf_requested, buf_completed) != CUPTI_SUCCESS) goto fail;
        for (CUpti_ActivityKind k : kinds)
            if (cuptiActivityEnable(k) != CUPTI_SUCCESS) goto fail;
    }
    if (api) {
        CUpti_SubscriberHandle sub;
        if (cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_api, NULL) != CUPTI_SUCCESS ||
            cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS ||
            cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS)
            goto fail;
    }
    return 0;
fail:
    fprintf(stderr, "lab driver: CUPTI cannot trace this process (LAB_TRACE=%s)\n", mode);
    return 1;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s ROWS COLS [CALLS [copy]]\n", argv[0]);
        return 64;
    }
    const long long rows = atoll(argv[1]), cols = atoll(argv[2]);
    const int calls = argc > 3 ? atoi(argv[3]) : 20;
    const int copy = argc > 4 && argv[4][0] == 'c'; /* cudaMemcpy of the same bytes instead */
    if (rows <= 0 || cols <= 0 || calls < 2 || calls > 100000) {
        fprintf(stderr, "lab driver: bad ROWS COLS CALLS\n");
        return 64;
    }
    const char *trace = getenv("LAB_TRACE");
    if (trace && *trace && strcmp(trace, "off") && trace_on(trace)) return 1;
    const long long n = rows * cols;
    /* two input/output pairs, alternated, and a 256 MiB flush read before
     * every call: each call starts with a cold L2 */
    elem *x[2], *y[2], *w, *b;
    float4 *fl;
    float *sink;
    const long long fl_n = (256ll << 20) / 16;
    for (int k = 0; k < 2; k++) {
        CK(cudaMalloc(&x[k], n * sizeof(elem)));
        CK(cudaMalloc(&y[k], n * sizeof(elem)));
    }
    CK(cudaMalloc(&w, cols * sizeof(elem)));
    CK(cudaMalloc(&b, cols * sizeof(elem)));
    CK(cudaMalloc(&fl, fl_n * 16));
    CK(cudaMalloc(&sink, sizeof(float)));
    CK(cudaMemset(fl, 0, fl_n * 16));
    for (int k = 0; k < 2; k++) lab_fill<<<1024, 256>>>(x[k], n, 1u + k, 1.0f, 0.0f);
    lab_fill<<<64, 256>>>(w, cols, 7u, 0.5f, 1.0f);
    lab_fill<<<64, 256>>>(b, cols, 8u, 1.0f, 0.0f);
    CK(cudaDeviceSynchronize());
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float *t = (float *)malloc(sizeof(float) * calls);
    if (!t) return 1;
    for (int c = 0; c < calls; c++) {
        const int k = c & 1;
        lab_flush<<<132 * 8, 256, 0, s>>>(fl, fl_n, sink);
        CK(cudaEventRecord(e0, s));
        int rc = 0;
        if (copy) {
            CK(cudaMemcpyAsync(y[k], x[k], n * sizeof(elem), cudaMemcpyDeviceToDevice, s));
        } else {
#if LAB_OP == LAB_SOFTMAX_F32
            rc = kp_softmax_f32(x[k], y[k], rows, cols, s);
#elif LAB_OP == LAB_SOFTMAX_BF16
            rc = kp_softmax_bf16(x[k], y[k], rows, cols, s);
#elif LAB_OP == LAB_LAYERNORM_F32
            rc = kp_layernorm_f32(x[k], w, b, y[k], rows, cols, s);
#elif LAB_OP == LAB_LAYERNORM_BF16
            rc = kp_layernorm_bf16(x[k], w, b, y[k], rows, cols, s);
#elif LAB_OP == LAB_RMSNORM_F32
            rc = kp_rmsnorm_f32(x[k], w, y[k], rows, cols, s);
#elif LAB_OP == LAB_RMSNORM_BF16
            rc = kp_rmsnorm_bf16(x[k], w, y[k], rows, cols, s);
#else
            rc = kp_sum_f32(x[k], (float *)y[k], n, s);
#endif
        }
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        if (rc) {
            fprintf(stderr, "the entry point returned %d\n", rc);
            return 1;
        }
        CK(cudaEventElapsedTime(&t[c], e0, e1));
    }
    /* the summary line stays last: lab/screen.sh reads it */
    if (trace && *trace && strcmp(trace, "off")) {
        CK(cudaDeviceSynchronize());
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        printf("trace %s: %llu records, %llu API calls seen (the last from thread %ld); kernel records: at most %u registers a thread, %u shared bytes a block\n",
               trace, g_records, g_api, g_last_tid, g_regs, g_smem);
    }
    /* the first call loads the module: left out */
    qsort(t + 1, calls - 1, sizeof(float), cmp_float);
    const int m = calls - 1;
    const float med = t[1 + m / 2], q1 = t[1 + m / 4], q3 = t[1 + (3 * m) / 4];
#if LAB_OP == LAB_SUM_F32
    const double bytes = copy ? 2.0 * (double)n * sizeof(elem) : (double)n * sizeof(elem);
#else
    const double bytes = 2.0 * (double)n * sizeof(elem);
#endif
    printf("%s %lldx%lld: %d calls, cold L2, median %.2f us [q1 %.2f, q3 %.2f] (%.0f GB/s)\n", copy ? "copy" : "kernel",
           rows, cols, m, 1e3 * med, 1e3 * q1, 1e3 * q3, bytes / (med * 1e-3) / 1e9);
    free(t);
    return 0;
}
