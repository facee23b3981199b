/* trace.cu: accounts for every piece of device work the worker's process
 * causes, on every call of every phase (threat 19: work outside the
 * window; threats 1 and 15: side streams, library fallback).
 *
 * CUPTI runs from before the candidate is loaded until the worker exits:
 * activity records give each kernel, copy and memset its stream, its
 * device start and end, and the correlation id of the API call that
 * launched it; API callbacks give each correlation id its thread. Every
 * call owns
 *   - a window on the device: from the end of the mark before its start
 *     event (the stream hold when the call is held, else an empty mark
 *     kernel) to the start of the mark after its stop event; and
 *   - a launch range: the correlation ids issued between its start event
 *     and its stop event.
 * An operation launched inside a call's range must run inside that call's
 * window (work on other streams is fine: fork-join is honest), and when
 * another thread launched it, that launch must have returned before the
 * call did (else where it lands against the stop event is a race). One
 * launched outside every range, by any thread, is outside every call (work
 * enqueued after the return, or between calls), except the harness's own: launched
 * by the worker's thread outside the calls, on the backend's private
 * stream. Operations launched while the candidate loaded must be over by
 * the first call.
 *
 * Limits, stated in docs/protocol.md: the mark after the stop event starts
 * a few microseconds after it, so a tail of under about that much past the
 * stop event is not told apart; and code inside the worker can switch the
 * tracer off (the marks then go missing, which is itself REJECTED, and the
 * parent's clock still bounds the time from below).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cupti.h>

#include "cuda_priv.h"
#include "worker/backend.h"

#define KP_TRACE_BUF_BYTES ((size_t)4 << 20)
#define KP_MAX_PENDING (1 << 18) /* the candidate's records kept between two ACCOUNTs */
#define KP_MAX_OTHER 8192        /* API calls of threads other than the worker's */

static const CUpti_ActivityKind k_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, /* peer copies */
    CUPTI_ACTIVITY_KIND_MEMSET,
};
#define KP_NKINDS ((int)(sizeof k_kinds / sizeof k_kinds[0]))

typedef struct call_rec {
    uint32_t m0_lo, m0_hi; /* the start mark's correlation ids: (lo, hi] */
    uint64_t leave_seq;    /* g_seq when the entry point returned */
    uint32_t c_begin, c_end; /* the call's launch range: (begin, end] */
    uint32_t m1_lo, m1_hi; /* the stop mark's */
    uint64_t t0, t1;       /* the window, on the tracer's clock */
    int have0, have1;
} call_rec;

typedef struct op_rec {
    char name[96];
    uint32_t stream, kind, corr;
    uint64_t start, end;
} op_rec;

typedef struct other_rec {
    uint32_t corr;
    int32_t tid;
    uint64_t exit_seq; /* g_seq when the API call returned; 0 while it runs */
} other_rec;

/* Guarded by g_mu: written by CUPTI's threads and by the worker. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static call_rec *g_calls;
static int g_ncalls, g_capcalls;
static call_rec g_cur;         /* the call being made (not yet in g_calls) */
static int g_cur_open;         /* g_cur's range is open (its end not yet known) */
static op_rec *g_ops;
static int g_nops;
static int64_t g_ops_lost, g_dropped;
static other_rec g_other[KP_MAX_OTHER];
static int g_nother;
static int64_t g_other_lost;
static uint32_t g_load_lo, g_load_hi; /* the load's range: (lo, hi] */
static int g_loaded, g_first_done;     /* load range closed; first call judged */
static uint64_t g_first_t0;            /* the first call's window start */

/* Written by the worker thread, read by callbacks. */
static int g_on;
static char g_why[200];
static long g_main_tid;
static volatile int g_in_call;
static volatile uint32_t g_main_last; /* the newest correlation id of the worker's thread */
static uint32_t g_given, g_util;
static uint64_t g_seq; /* orders API returns of other threads against the entry point's return */
static __thread long t_tid;

__global__ void kp_mark_kernel(void) {}

static long kp_tid(void) {
    if (!t_tid)
        t_tid = (long)syscall(SYS_gettid);
    return t_tid;
}

static int in_range(uint32_t c, uint32_t lo, uint32_t hi) { return c > lo && c <= hi; }

/* The call whose launch range holds c (the open one counts to infinity). */
static call_rec *call_of(uint32_t c) {
    if (g_cur_open && c > g_cur.c_begin)
        return &g_cur;
    int lo = 0, hi = g_ncalls - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        call_rec *k = &g_calls[mid];
        if (c <= k->c_begin)
            hi = mid - 1;
        else if (c > k->c_end)
            lo = mid + 1;
        else
            return k;
    }
    return NULL;
}

/* The call whose start or stop mark has correlation id c; which = 0 / 1. */
static call_rec *mark_of(uint32_t c, int *which) {
    call_rec *cands[2] = {g_cur_open ? &g_cur : NULL, NULL};
    int lo = 0, hi = g_ncalls - 1;
    while (lo <= hi) { /* the last call whose start mark begins before c */
        int mid = (lo + hi) / 2;
        if (g_calls[mid].m0_lo < c)
            cands[1] = &g_calls[mid], lo = mid + 1;
        else
            hi = mid - 1;
    }
    for (int i = 0; i < 2; i++) {
        call_rec *k = cands[i];
        if (!k)
            continue;
        if (in_range(c, k->m0_lo, k->m0_hi)) {
            *which = 0;
            return k;
        }
        if (k != &g_cur && in_range(c, k->m1_lo, k->m1_hi)) {
            *which = 1;
            return k;
        }
    }
    return NULL;
}

static const other_rec *other_of(uint32_t c) {
    for (int i = g_nother - 1; i >= 0; i--)
        if (g_other[i].corr == c)
            return &g_other[i];
    return NULL;
}

static int other_tid(uint32_t c) {
    const other_rec *o = other_of(c);
    return o ? o->tid : 0;
}

static void note(const char *name, uint32_t stream, uint32_t kind, uint32_t corr, uint64_t start, uint64_t end) {
    /* A mark: the worker's own launch (no other thread's correlation id
     * falls in its range by accident) of the hold or the mark kernel. */
    if (kind == 0 && stream == g_given && !other_of(corr) && name &&
        (strstr(name, "kp_mark_kernel") || strstr(name, "kp_block_kernel"))) {
        int which = 0;
        call_rec *k = mark_of(corr, &which);
        if (k) {
            if (which == 0)
                k->t0 = end, k->have0 = 1;
            else
                k->t1 = start, k->have1 = 1;
            return;
        }
    }
    /* The harness: the worker's thread, outside every call and the load,
     * on its private stream. */
    if (stream == g_util && !call_of(corr) && !(in_range(corr, g_load_lo, g_load_hi) || (!g_loaded && corr > g_load_lo)) &&
        !other_tid(corr))
        return;
    if (g_nops >= KP_MAX_PENDING) {
        g_ops_lost++;
        return;
    }
    op_rec *o = &g_ops[g_nops++];
    snprintf(o->name, sizeof o->name, "%s", name ? name : "(unnamed)");
    o->stream = stream;
    o->kind = kind;
    o->corr = corr;
    o->start = start;
    o->end = end;
}

static const char *copy_kind(uint8_t k) {
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "array";
    }
}

/* Reads only kind, start, end, streamId, correlationId, name and bytes of
 * the record structs this toolkit's cupti_activity.h defines. */
static void record(const CUpti_Activity *a) {
    char name[96];
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
        note(k->name, k->streamId, 0, k->correlationId, k->start, k->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)a;
        snprintf(name, sizeof name, "[memcpy %s %llu B]", copy_kind(m->copyKind), (unsigned long long)m->bytes);
        note(name, m->streamId, 1, m->correlationId, m->start, m->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)a;
        snprintf(name, sizeof name, "[memcpy peer %llu B]", (unsigned long long)m->bytes);
        note(name, m->streamId, 1, m->correlationId, m->start, m->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)a;
        snprintf(name, sizeof name, "[memset %llu B]", (unsigned long long)m->bytes);
        note(name, m->streamId, 2, m->correlationId, m->start, m->end);
        break;
    }
    default:
        break;
    }
}

static void CUPTIAPI buf_requested(uint8_t **buf, size_t *size, size_t *max_records) {
    /* malloc's 16-byte alignment meets CUPTI's 8-byte requirement; a NULL
     * buffer makes CUPTI drop records, which it then counts. */
    *buf = (uint8_t *)malloc(KP_TRACE_BUF_BYTES);
    *size = *buf ? KP_TRACE_BUF_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t /*size*/, size_t valid) {
    pthread_mutex_lock(&g_mu);
    CUpti_Activity *a = NULL;
    if (buf)
        while (cuptiActivityGetNextRecord(buf, valid, &a) == CUPTI_SUCCESS)
            record(a);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        g_dropped += (int64_t)dropped;
    pthread_mutex_unlock(&g_mu);
    free(buf);
}

/* Every API call on entry: the worker's thread only moves the newest id;
 * any other thread's call is remembered with its thread id. */
static void CUPTIAPI on_api(void * /*ud*/, CUpti_CallbackDomain /*dom*/, CUpti_CallbackId /*id*/, const void *data) {
    const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;
    long tid = kp_tid();
    if (tid == g_main_tid) {
        if (cd->callbackSite == CUPTI_API_ENTER && cd->correlationId > g_main_last)
            g_main_last = cd->correlationId;
        return;
    }
    pthread_mutex_lock(&g_mu);
    if (cd->callbackSite == CUPTI_API_ENTER) {
        if (g_nother < KP_MAX_OTHER)
            g_other[g_nother++] = (other_rec){cd->correlationId, (int32_t)tid, 0};
        else
            g_other_lost++;
    } else {
        for (int i = g_nother - 1; i >= 0; i--)
            if (g_other[i].corr == cd->correlationId && g_other[i].tid == (int32_t)tid) {
                g_other[i].exit_seq = __atomic_add_fetch(&g_seq, 1, __ATOMIC_SEQ_CST);
                break;
            }
    }
    pthread_mutex_unlock(&g_mu);
}

int kp_dev_trace_start(char *why, size_t len) {
    kp_cu_clearerr();
    g_main_tid = kp_tid();
    CUpti_SubscriberHandle sub;
    g_ops = (op_rec *)malloc(sizeof(op_rec) * KP_MAX_PENDING);
    if (!g_ops) {
        kp_cu_seterr("out of host memory for the trace");
        goto fail;
    }
    if (KP_CU(cuptiActivityRegisterCallbacks(buf_requested, buf_completed)))
        goto fail;
    for (int i = 0; i < KP_NKINDS; i++)
        if (KP_CU(cuptiActivityEnable(k_kinds[i])))
            goto fail;
    if (KP_CU(cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_api, NULL)) ||
        KP_CU(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API)) ||
        KP_CU(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API)))
        goto fail;
    if (KP_CU(cuptiGetStreamIdEx(NULL, (CUstream)kp_dev_stream(), 0, &g_given)) ||
        KP_CU(cuptiGetStreamIdEx(NULL, (CUstream)kp_cu_util_stream(), 0, &g_util)))
        goto fail;
    g_on = 1;
    return 0;
fail:
    snprintf(g_why, sizeof g_why, "CUPTI cannot trace this process: %s", kp_dev_error());
    snprintf(why, len, "%s", g_why);
    for (int i = 0; i < KP_NKINDS; i++)
        (void)cuptiActivityDisable(k_kinds[i]);
    return -1;
}

void kp_dev_trace_load(int loading) {
    if (!g_on)
        return;
    pthread_mutex_lock(&g_mu);
    if (loading) {
        g_load_lo = g_main_last;
    } else {
        g_load_hi = g_main_last;
        g_loaded = 1;
    }
    pthread_mutex_unlock(&g_mu);
}

void kp_dev_trace_begin(void) {
    if (!g_on)
        return;
    pthread_mutex_lock(&g_mu);
    memset(&g_cur, 0, sizeof g_cur);
    g_cur.m0_lo = g_main_last;
    pthread_mutex_unlock(&g_mu);
}

void kp_dev_trace_mark(int held) {
    if (!g_on)
        return;
    if (!held) {
        kp_mark_kernel<<<1, 1, 0, (cudaStream_t)kp_dev_stream()>>>();
        (void)cudaGetLastError();
    }
    pthread_mutex_lock(&g_mu);
    g_cur.m0_hi = g_main_last;
    pthread_mutex_unlock(&g_mu);
}

void kp_dev_trace_enter(void) {
    if (!g_on)
        return;
    pthread_mutex_lock(&g_mu);
    g_cur.c_begin = g_main_last;
    g_cur_open = 1;
    pthread_mutex_unlock(&g_mu);
    g_in_call = 1;
}

void kp_dev_trace_leave(void) {
    g_in_call = 0;
    if (!g_on)
        return;
    pthread_mutex_lock(&g_mu);
    g_cur.leave_seq = __atomic_add_fetch(&g_seq, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&g_mu);
}

void kp_dev_trace_end(void) {
    if (!g_on)
        return;
    pthread_mutex_lock(&g_mu);
    g_cur.c_end = g_main_last;
    g_cur.m1_lo = g_main_last;
    pthread_mutex_unlock(&g_mu);
    kp_mark_kernel<<<1, 1, 0, (cudaStream_t)kp_dev_stream()>>>();
    (void)cudaGetLastError();
    pthread_mutex_lock(&g_mu);
    g_cur.m1_hi = g_main_last;
    if (g_ncalls == g_capcalls) {
        int cap = g_capcalls ? 2 * g_capcalls : 1024;
        call_rec *n = (call_rec *)realloc(g_calls, sizeof(call_rec) * (size_t)cap);
        if (n)
            g_calls = n, g_capcalls = cap;
    }
    if (g_ncalls < g_capcalls)
        g_calls[g_ncalls++] = g_cur;
    g_cur_open = 0;
    pthread_mutex_unlock(&g_mu);
}

static void fill_op(kp_acct_op *d, const op_rec *o, int where, int call, double outside) {
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", o->name);
    d->stream = o->stream;
    d->kind = o->kind;
    d->where = where;
    d->call = call;
    d->outside_s = outside;
    d->duration_s = (double)(int64_t)(o->end - o->start) * 1e-9;
    int tid = other_tid(o->corr);
    d->thread = tid ? KP_ACCT_THREAD_OTHER : where == KP_ACCT_BETWEEN ? KP_ACCT_THREAD_UNKNOWN : KP_ACCT_THREAD_CALLER;
    d->tid = tid;
}

int kp_dev_trace_account(kp_acct_rep *rep) {
    memset(rep, 0, sizeof *rep);
    if (!g_on) {
        snprintf(rep->error, sizeof rep->error, "%s", g_why[0] ? g_why : "the tracer is not running");
        return 0;
    }
    kp_cu_clearerr();
    int rc = 0;
    /* Everything queued, on any stream, must be over before its records
     * are complete. */
    if (KP_CU(cudaDeviceSynchronize()) || KP_CU(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED))) {
        snprintf(rep->error, sizeof rep->error, "%s", kp_dev_error());
        rc = -1;
    }
    pthread_mutex_lock(&g_mu);
    rep->supported = 1;
    rep->given_stream = g_given;
    rep->calls = g_ncalls;
    for (int i = 0; i < g_ncalls; i++)
        if (!g_calls[i].have0 || !g_calls[i].have1)
            rep->missing_marks++;
    if (!g_first_done && g_ncalls > 0 && g_calls[0].have0) {
        g_first_t0 = g_calls[0].t0;
        g_first_done = 1;
    }
    for (int i = 0; i < g_nops; i++) {
        const op_rec *o = &g_ops[i];
        call_rec *k = call_of(o->corr);
        int where = KP_ACCT_INSIDE, call = k ? (int)(k - g_calls) : -1;
        double outside = 0;
        const other_rec *by = other_of(o->corr);
        if (k && by && (by->exit_seq == 0 || by->exit_seq > k->leave_seq)) {
            /* Another thread's launch that had not returned when the call
             * did: where it lands on the stream against the stop event is
             * a race, and an honest call has its work queued when it
             * returns. */
            where = KP_ACCT_BETWEEN, outside = (double)(int64_t)(o->end - o->start) * 1e-9;
        } else if (k && k->have0 && k->have1) {
            if (o->start < k->t0)
                where = KP_ACCT_EARLY, outside = (double)(int64_t)(k->t0 - o->start) * 1e-9;
            else if (o->end > k->t1)
                where = KP_ACCT_LATE, outside = (double)(int64_t)(o->end - k->t1) * 1e-9;
        } else if (k) {
            continue; /* counted as missing marks */
        } else if (in_range(o->corr, g_load_lo, g_load_hi)) {
            if (!g_first_done || o->end <= g_first_t0) {
                rep->ops_load++;
                continue;
            }
            where = KP_ACCT_LOAD, outside = (double)(int64_t)(o->end - g_first_t0) * 1e-9;
        } else {
            where = KP_ACCT_BETWEEN, outside = (double)(int64_t)(o->end - o->start) * 1e-9;
        }
        if (where != KP_ACCT_INSIDE) {
            rep->ops_outside++;
            if (rep->nshow < KP_ACCT_SHOW)
                fill_op(&rep->show[rep->nshow++], o, where, call, outside);
            continue;
        }
        rep->ops_inside++;
        if (o->stream != g_given)
            rep->ops_other_stream++;
        if (o->kind == 0 && kp_is_library_kernel(o->name)) {
            if (!rep->library)
                snprintf(rep->library_name, sizeof rep->library_name, "%s", o->name);
            rep->library++;
        }
        int seen = 0;
        for (int j = 0; j < rep->nkernels && !seen; j++)
            seen = !strcmp(rep->kernels[j].name, o->name) && rep->kernels[j].stream == o->stream;
        if (!seen && rep->nkernels < KP_ACCT_KERNELS)
            fill_op(&rep->kernels[rep->nkernels++], o, where, call, 0);
    }
    int64_t lost = g_dropped + g_ops_lost;
    rep->dropped = lost > INT32_MAX ? INT32_MAX : (int32_t)lost;
    g_nops = 0;
    g_ncalls = 0;
    g_nother = 0;
    g_dropped = g_ops_lost = 0;
    pthread_mutex_unlock(&g_mu);
    return rc;
}
