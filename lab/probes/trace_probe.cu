// Probe: what CUPTI gives for continuous window accounting on this machine.
#include <cuda_runtime.h>
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>
#include <vector>
#include <algorithm>

#define CK(x) do { auto e_ = (x); if ((int)e_ != 0) { printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); } } while (0)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
struct Rec { int kind; char name[64]; uint32_t stream, corr, eventId; uint64_t start, end; };
static std::vector<Rec> recs;
struct Api { uint32_t corr; long tid; int domain, cbid; };
static std::vector<Api> apis;
static long main_tid;

static void CUPTIAPI breq(uint8_t **b, size_t *s, size_t *m) { *b = (uint8_t *)malloc(1 << 22); *s = 1 << 22; *m = 0; }
static void CUPTIAPI bdone(CUcontext c, uint32_t sid, uint8_t *buf, size_t size, size_t valid) {
    CUpti_Activity *a = NULL;
    pthread_mutex_lock(&mu);
    while (cuptiActivityGetNextRecord(buf, valid, &a) == CUPTI_SUCCESS) {
        Rec r; memset(&r, 0, sizeof r); r.kind = a->kind;
        if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            auto *k = (CUpti_ActivityKernel10 *)a;
            snprintf(r.name, 64, "%s", k->name); r.stream = k->streamId; r.corr = k->correlationId; r.start = k->start; r.end = k->end;
        } else if (a->kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT) {
            auto *e = (CUpti_ActivityCudaEvent2 *)a;
            snprintf(r.name, 64, "event"); r.stream = e->streamId; r.corr = e->correlationId; r.eventId = e->eventId; r.start = r.end = e->deviceTimestamp;
        } else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            auto *m = (CUpti_ActivityMemcpy6 *)a;
            snprintf(r.name, 64, "memcpy"); r.stream = m->streamId; r.corr = m->correlationId; r.start = m->start; r.end = m->end;
        } else if (a->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            auto *m = (CUpti_ActivityMemset4 *)a;
            snprintf(r.name, 64, "memset"); r.stream = m->streamId; r.corr = m->correlationId; r.start = m->start; r.end = m->end;
        } else continue;
        recs.push_back(r);
    }
    size_t dropped = 0; cuptiActivityGetNumDroppedRecords(c, sid, &dropped);
    if (dropped) printf("DROPPED %zu\n", dropped);
    pthread_mutex_unlock(&mu);
    free(buf);
}
static void CUPTIAPI cb(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data) {
    const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;
    if (cd->callbackSite != CUPTI_API_ENTER) return;
    long tid = syscall(SYS_gettid);
    pthread_mutex_lock(&mu);
    apis.push_back({cd->correlationId, tid, (int)d, (int)id});
    pthread_mutex_unlock(&mu);
}

__global__ void spin(long long ns, float *p) {
    long long t0 = clock64();
    long long cyc = ns * 2; // ~2 GHz
    while (clock64() - t0 < cyc) {}
    if (p && threadIdx.x == 0) p[blockIdx.x] += 1.f;
}
__global__ void tiny(float *p) { if (p) p[threadIdx.x] += 1.f; }

static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static cudaStream_t S, side;
static cudaEvent_t e0, e1;
static volatile int go_thread = 0;
static void *thr(void *) {
    while (!go_thread) usleep(10);
    spin<<<1, 32, 0, S>>>(30000, NULL);
    go_thread = 0;
    return NULL;
}

static void dump(const char *title, size_t from) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&mu);
    printf("== %s (%zu records)\n", title, recs.size() - from);
    uint64_t base = 0;
    for (size_t i = from; i < recs.size(); i++) if (!base || (recs[i].start && recs[i].start < base)) base = recs[i].start;
    std::vector<Rec> v(recs.begin() + from, recs.end());
    std::sort(v.begin(), v.end(), [](const Rec &a, const Rec &b) { return a.start < b.start; });
    for (auto &r : v) {
        long tid = -1;
        for (auto &a : apis) if (a.corr == r.corr) tid = a.tid;
        printf("  %-8s %-20.20s stream %3u corr %6u ev %3u  %10.3f .. %10.3f us  tid %s\n", r.kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT ? "EVENT" : "op", r.name, r.stream, r.corr, r.eventId,
               (double)(int64_t)(r.start - base) * 1e-3, (double)(int64_t)(r.end - base) * 1e-3, tid < 0 ? "?" : tid == main_tid ? "main" : "other");
    }
    pthread_mutex_unlock(&mu);
}

int main() {
    main_tid = syscall(SYS_gettid);
    CK(cudaFree(0));
    CK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    float *buf; CK(cudaMalloc(&buf, 1 << 20));
    // overhead baseline before tracing
    auto bench = [&](const char *label, int n) {
        std::vector<double> t, h;
        for (int i = 0; i < n; i++) {
            CK(cudaDeviceSynchronize());
            double h0 = now();
            cudaEventRecord(e0, S);
            spin<<<132, 128, 0, S>>>(5000, buf);
            cudaEventRecord(e1, S);
            CK(cudaDeviceSynchronize());
            h.push_back(now() - h0);
            float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms * 1e3);
        }
        std::sort(t.begin(), t.end()); std::sort(h.begin(), h.end());
        printf("%s: event median %.3f us, host median %.3f us\n", label, t[n / 2], h[n / 2] * 1e6);
    };
    bench("untraced 5us kernel", 2000);

    CK(cuptiActivityRegisterCallbacks(breq, bdone));
    CUpti_SubscriberHandle sub;
    CK(cuptiSubscribe(&sub, (CUpti_CallbackFunc)cb, NULL));
    CK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
    CK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API));
    CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CUDA_EVENT));
    CK(cuptiActivityEnableCudaEventDeviceTimestamps(1));
    uint32_t sid = 0, sideid = 0;
    CK(cuptiGetStreamIdEx(NULL, (CUstream)S, 0, &sid));
    CK(cuptiGetStreamIdEx(NULL, (CUstream)side, 0, &sideid));
    printf("given stream id %u, side %u\n", sid, sideid);

    size_t from = recs.size();
    // A: plain
    cudaEventRecord(e0, S); spin<<<1, 32, 0, S>>>(20000, NULL); cudaEventRecord(e1, S); cudaDeviceSynchronize();
    dump("A plain call", from);
    // B: fork-join
    from = recs.size();
    cudaEvent_t f, j; cudaEventCreateWithFlags(&f, cudaEventDisableTiming); cudaEventCreateWithFlags(&j, cudaEventDisableTiming);
    cudaEventRecord(e0, S);
    cudaEventRecord(f, S); cudaStreamWaitEvent(side, f, 0);
    spin<<<1, 32, 0, S>>>(20000, NULL); spin<<<1, 32, 0, side>>>(30000, NULL);
    cudaEventRecord(j, side); cudaStreamWaitEvent(S, j, 0);
    cudaEventRecord(e1, S); cudaDeviceSynchronize();
    dump("B fork-join", from);
    // C: chained after (cheat)
    from = recs.size();
    cudaEventRecord(e0, S);
    spin<<<1, 32, 0, S>>>(20000, NULL); cudaEventRecord(f, S); cudaStreamWaitEvent(side, f, 0); spin<<<1, 32, 0, side>>>(30000, NULL);
    cudaEventRecord(e1, S); cudaDeviceSynchronize();
    dump("C chained after the stop (cheat)", from);
    // D: thread enqueues after return
    pthread_t th; pthread_create(&th, NULL, thr, NULL);
    usleep(1000);
    from = recs.size();
    cudaEventRecord(e0, S); spin<<<1, 32, 0, S>>>(20000, NULL); go_thread = 1; while (go_thread) {} cudaEventRecord(e1, S);
    tiny<<<1, 1, 0, S>>>(NULL);
    cudaDeviceSynchronize();
    pthread_join(th, NULL);
    dump("D thread launch racing the stop", from);
    // E: graph
    from = recs.size();
    cudaGraph_t g; cudaGraphExec_t ge;
    cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal);
    spin<<<1, 32, 0, side>>>(5000, NULL); spin<<<1, 32, 0, side>>>(5000, NULL);
    cudaStreamEndCapture(side, &g); CK(cudaGraphInstantiate(&ge, g, 0));
    cudaEventRecord(e0, S); CK(cudaGraphLaunch(ge, S)); cudaEventRecord(e1, S); cudaDeviceSynchronize();
    dump("E graph on the given stream", from);
    // F: mallocAsync per call
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 1) {
            cudaMemPool_t pool; CK(cudaDeviceGetDefaultMemPool(&pool, 0));
            uint64_t thr = UINT64_MAX; CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
        }
        std::vector<double> t;
        for (int i = 0; i < 50; i++) {
            cudaDeviceSynchronize();
            cudaEventRecord(e0, S);
            void *p; cudaMallocAsync(&p, 64 << 20, S); tiny<<<1, 32, 0, S>>>((float *)p); cudaFreeAsync(p, S);
            cudaEventRecord(e1, S); cudaDeviceSynchronize();
            float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms * 1e3);
        }
        std::sort(t.begin(), t.end());
        printf("mallocAsync 64 MiB per call, release threshold %s: median %.2f us\n", mode ? "max" : "default", t[25]);
    }
    // G: cost of tracing
    bench("traced 5us kernel", 2000);
    double f0 = now(); cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); double f1 = now();
    printf("flush after 2000 calls: %.3f ms, %zu records, %zu api\n", (f1 - f0) * 1e3, recs.size(), apis.size());
    std::vector<double> fl;
    for (int i = 0; i < 50; i++) {
        spin<<<1, 32, 0, S>>>(1000, NULL); cudaDeviceSynchronize();
        double a = now(); cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); fl.push_back(now() - a);
    }
    std::sort(fl.begin(), fl.end());
    printf("flush per call: median %.1f us\n", fl[25] * 1e6);
    // cuptiGetTimestamp vs event timestamp on the same clock?
    uint64_t ts; cuptiGetTimestamp(&ts);
    printf("cuptiGetTimestamp %llu (last rec start %llu)\n", (unsigned long long)ts, (unsigned long long)recs.back().start);
    return 0;
}
