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


static volatile uint32_t *hflag; static uint32_t *dflag; static uint32_t gen;
__global__ void holdk(volatile uint32_t *f, uint32_t g) { while (f[0] != g) __nanosleep(200); }
__global__ void markk() {}
static double run_cfg(int nk, long long ns, int held, int mark, int n) {
    std::vector<double> t;
    for (int i = 0; i < n; i++) {
        cudaDeviceSynchronize();
        if (held) holdk<<<1, 32, 0, S>>>(dflag, ++gen);
        cudaEventRecord(e0, S);
        for (int k = 0; k < nk; k++) spin<<<132, 128, 0, S>>>(ns, NULL);
        cudaEventRecord(e1, S);
        if (mark) markk<<<1, 1, 0, S>>>();
        if (held) { __sync_synchronize(); hflag[0] = gen; __sync_synchronize(); }
        cudaDeviceSynchronize();
        float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms * 1e3);
    }
    std::sort(t.begin(), t.end());
    return t[n / 2];
}
int main(int argc, char **argv) {
    main_tid = syscall(SYS_gettid);
    CK(cudaFree(0));
    CK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    void *h; CK(cudaHostAlloc(&h, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer((void **)&dflag, h, 0)); hflag = (volatile uint32_t *)h; hflag[0] = 0;
    const char *names[] = {"off", "activity", "activity+callbacks", "activity+mark", "kernel-only"};
    CK(cuptiActivityRegisterCallbacks(breq, bdone));
    CUpti_SubscriberHandle sub; int subbed = 0;
    for (int cfg = 0; cfg < 5; cfg++) {
        if (cfg == 1 || cfg == 4) { CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)); }
        if (cfg == 1) { CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY)); CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET)); }
        if (cfg == 2) { CK(cuptiSubscribe(&sub, (CUpti_CallbackFunc)cb, NULL)); subbed = 1; CK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API)); CK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API)); }
        if (cfg == 3 && subbed) { CK(cuptiUnsubscribe(sub)); subbed = 0; }
        if (cfg == 4) { CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY)); CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET)); }
        int mark = cfg == 3;
        for (int rep = 0; rep < 2; rep++)
        printf("cfg %-20s held: 1x2us %.3f  1x20us %.3f  3x2us %.3f | unheld 1x2us %.3f\n", names[cfg],
               run_cfg(1, 2000, 1, mark, 600), run_cfg(1, 20000, 1, mark, 300), run_cfg(3, 2000, 1, mark, 600), run_cfg(1, 2000, 0, mark, 600));
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        if (cfg >= 1) {
            // fork-join under this config, held
            size_t from = recs.size();
            cudaEvent_t f, j; cudaEventCreateWithFlags(&f, cudaEventDisableTiming); cudaEventCreateWithFlags(&j, cudaEventDisableTiming);
            holdk<<<1, 32, 0, S>>>(dflag, ++gen);
            cudaEventRecord(e0, S);
            cudaEventRecord(f, S); cudaStreamWaitEvent(side, f, 0);
            spin<<<1, 32, 0, S>>>(20000, NULL); spin<<<1, 32, 0, side>>>(30000, NULL);
            cudaEventRecord(j, side); cudaStreamWaitEvent(S, j, 0);
            cudaEventRecord(e1, S); markk<<<1, 1, 0, S>>>();
            hflag[0] = gen; __sync_synchronize();
            cudaDeviceSynchronize();
            float ms; cudaEventElapsedTime(&ms, e0, e1);
            char title[80]; snprintf(title, 80, "fork-join held, events %.3f us", ms * 1e3);
            dump(title, from);
            from = recs.size();
            holdk<<<1, 32, 0, S>>>(dflag, ++gen);
            cudaEventRecord(e0, S);
            spin<<<1, 32, 0, S>>>(20000, NULL); cudaEventRecord(f, S); cudaStreamWaitEvent(side, f, 0); spin<<<1, 32, 0, side>>>(30000, NULL);
            cudaEventRecord(e1, S); markk<<<1, 1, 0, S>>>();
            hflag[0] = gen; __sync_synchronize();
            cudaDeviceSynchronize();
            cudaEventElapsedTime(&ms, e0, e1);
            snprintf(title, 80, "chained held, events %.3f us", ms * 1e3);
            dump(title, from);
        }
    }
    double f0 = now(); cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); printf("flush %.1f us\n", (now() - f0) * 1e6);
    return 0;
}
