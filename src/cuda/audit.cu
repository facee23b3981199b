/* audit.cu: lists every piece of device work a candidate caused, on every
 * stream, with CUPTI's Activity API (threat 1: side-stream work; threat 15:
 * library fallback).
 *
 * Events on the given stream time only what runs on that stream; a record
 * per kernel, copy and memset, each with its stream id and device
 * timestamps, shows work hidden on other streams (including the legacy
 * default stream, which does not sync with the candidate's non-blocking
 * stream) and work still running after the entry point returned.
 *
 * CUPTI delivers record buffers through callbacks that may run on its own
 * thread, hence the mutex. Tracing is switched on only for the audited call
 * and CUPTI is detached afterwards (cuptiFinalize), so timed calls later in
 * the same worker pay no tracing overhead. When CUPTI cannot trace (another
 * profiler attached, no permission, ...) the report says supported = 0 and
 * why; the call itself still runs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "cuda_priv.h"
#include "worker/backend.h"

#define KP_CUPTI_BUF_BYTES ((size_t)1 << 20)

static const CUpti_ActivityKind k_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, /* peer copies */
    CUPTI_ACTIVITY_KIND_MEMSET,
};
#define KP_NKINDS ((int)(sizeof k_kinds / sizeof k_kinds[0]))

/* Guarded by g_mu: written by CUPTI's callback thread and by the worker. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_active;          /* records are collected only inside begin..end */
static uint64_t g_t0;         /* cuptiGetTimestamp at begin */
static int g_n;
static int64_t g_overflow;    /* records past KP_AUDIT_MAX */
static int64_t g_dropped;     /* records CUPTI lost (buffers full or missing) */
static kp_audit_rec g_rec[KP_AUDIT_MAX];

/* Worker thread only. */
static int g_registered;      /* callbacks registered since CUPTI was attached */
static int g_enabled[KP_NKINDS];
static int g_failed;          /* begin could not start tracing */
static char g_why[160];       /* why tracing is unavailable */
static uint32_t g_given;
static uint64_t g_t_ret;

static double kp_rel_s(uint64_t t, uint64_t t0) {
    if (t == 0)
        return -1.0; /* CUPTI could not time it */
    return (double)(int64_t)(t - t0) * 1e-9;
}

static void kp_add(const char *name, uint32_t stream, uint32_t kind, uint64_t start, uint64_t end) {
    if (g_n >= KP_AUDIT_MAX) {
        g_overflow++;
        return;
    }
    kp_audit_rec *r = &g_rec[g_n++];
    snprintf(r->name, sizeof r->name, "%s", name ? name : "(unnamed)");
    r->stream = stream;
    r->kind = kind;
    r->start_s = kp_rel_s(start, g_t0);
    r->end_s = kp_rel_s(end, g_t0);
}

static const char *kp_copy_kind(uint8_t k) {
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "array";
    }
}

/* Reads only kind, start, end, streamId, name and bytes, whose places have
 * not moved across the record versions; the structs are the ones this
 * toolkit's cupti_activity.h defines for these kinds. */
static void kp_note(const CUpti_Activity *a) {
    char name[96];
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
        kp_add(k->name, k->streamId, 0, k->start, k->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)a;
        snprintf(name, sizeof name, "[memcpy %s %llu B]", kp_copy_kind(m->copyKind), (unsigned long long)m->bytes);
        kp_add(name, m->streamId, 1, m->start, m->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)a;
        snprintf(name, sizeof name, "[memcpy peer %llu B]", (unsigned long long)m->bytes);
        kp_add(name, m->streamId, 1, m->start, m->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)a;
        snprintf(name, sizeof name, "[memset %llu B]", (unsigned long long)m->bytes);
        kp_add(name, m->streamId, 2, m->start, m->end);
        break;
    }
    default:
        break;
    }
}

static void CUPTIAPI kp_buf_requested(uint8_t **buf, size_t *size, size_t *max_records) {
    /* malloc's 16-byte alignment meets CUPTI's 8-byte requirement. A NULL
     * buffer makes CUPTI drop records, which it then counts. */
    *buf = (uint8_t *)malloc(KP_CUPTI_BUF_BYTES);
    *size = *buf ? KP_CUPTI_BUF_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI kp_buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t /*size*/,
                                      size_t valid) {
    pthread_mutex_lock(&g_mu);
    CUpti_Activity *a = NULL;
    if (buf && g_active)
        while (cuptiActivityGetNextRecord(buf, valid, &a) == CUPTI_SUCCESS)
            kp_note(a);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && g_active)
        g_dropped += (int64_t)dropped;
    pthread_mutex_unlock(&g_mu);
    free(buf);
}

static void kp_disable_all(void) {
    for (int i = 0; i < KP_NKINDS; i++)
        if (g_enabled[i]) {
            (void)cuptiActivityDisable(k_kinds[i]);
            g_enabled[i] = 0;
        }
}

/* Returns 0 whether or not tracing could start: when it cannot, the call is
 * still made and kp_dev_audit_end reports supported = 0 with the reason. */
int kp_dev_audit_begin(void) {
    kp_cu_clearerr();
    pthread_mutex_lock(&g_mu);
    g_active = 0;
    g_n = 0;
    g_overflow = g_dropped = 0;
    pthread_mutex_unlock(&g_mu);
    g_failed = 0;
    g_why[0] = '\0';
    g_given = 0;
    g_t_ret = 0;

    uint64_t t0 = 0;
    if (!g_registered) {
        if (KP_CU(cuptiActivityRegisterCallbacks(kp_buf_requested, kp_buf_completed)))
            goto fail;
        g_registered = 1;
    }
    for (int i = 0; i < KP_NKINDS; i++) {
        if (KP_CU(cuptiActivityEnable(k_kinds[i])))
            goto fail;
        g_enabled[i] = 1;
    }
    /* NULL context: the stream is looked up in whatever context owns it. */
    if (KP_CU(cuptiGetStreamIdEx(NULL, (CUstream)kp_dev_stream(), 0, &g_given)) || KP_CU(cuptiGetTimestamp(&t0)))
        goto fail;
    pthread_mutex_lock(&g_mu);
    g_t0 = t0;
    g_active = 1;
    pthread_mutex_unlock(&g_mu);
    return 0;
fail:
    snprintf(g_why, sizeof g_why, "CUPTI unavailable: %s", kp_dev_error());
    g_failed = 1;
    kp_disable_all();
    return 0;
}

void kp_dev_audit_returned(void) {
    uint64_t t = 0;
    if (!g_failed && cuptiGetTimestamp(&t) == CUPTI_SUCCESS)
        g_t_ret = t;
}

int kp_dev_audit_end(kp_audit_rep *rep) {
    /* Only this function's fields: the worker fills threads_before/after. */
    rep->n = 0;
    rep->dropped = 0;
    rep->given_stream = 0;
    rep->return_s = -1.0;
    rep->error[0] = '\0';
    if (g_failed) {
        rep->supported = 0;
        snprintf(rep->error, sizeof rep->error, "%s", g_why);
        return 0;
    }
    kp_cu_clearerr();
    int rc = 0;
    char sync_err[160] = "";
    /* Everything the candidate queued, on any stream, must have finished
     * before its records are complete. */
    if (KP_CU(cudaDeviceSynchronize())) {
        snprintf(sync_err, sizeof sync_err, "%s", kp_dev_error());
        rc = -1;
    }
    if (KP_CU(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) && !sync_err[0]) {
        snprintf(sync_err, sizeof sync_err, "%s", kp_dev_error());
        rc = -1;
    }
    pthread_mutex_lock(&g_mu);
    g_active = 0;
    rep->supported = 1;
    rep->n = g_n;
    memcpy(rep->rec, g_rec, sizeof(kp_audit_rec) * (size_t)g_n);
    int64_t lost = g_dropped + g_overflow;
    rep->dropped = lost > INT32_MAX ? INT32_MAX : (int32_t)lost;
    pthread_mutex_unlock(&g_mu);
    rep->given_stream = g_given;
    if (g_t_ret)
        rep->return_s = (double)(int64_t)(g_t_ret - g_t0) * 1e-9;
    snprintf(rep->error, sizeof rep->error, "%s", sync_err);

    kp_disable_all();
    /* Detach so later timed calls run without CUPTI's hooks; preconditions
     * (device synchronized, buffers flushed) hold here. A failure only means
     * CUPTI stays attached, which costs speed, not correctness. */
    if (cuptiFinalize() == CUPTI_SUCCESS)
        g_registered = 0;
    return rc;
}
