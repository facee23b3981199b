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
 * On a held call the window also ends no later than its start plus the
 * events' time and a few microseconds: the stop mark, a kernel, would
 * start late behind work that fills every SM. An operation queued on the
 * given stream inside the range that alone ran longer than the events
 * report (OVERTIME) proves the reported time false: the parent names that
 * `timer`, not `account`. Operations the calling
 * thread ran synchronously inside the call (a cudaMemcpy to a symbol, say)
 * are inside too: they lie between the call's entry and its return on the
 * host's clock, and the call's time counts them through its enqueue time.
 *
 * Records are judged at each ACCOUNT, and whenever the kept ones fill up
 * (those whose call is complete: its range closed, its marks and events'
 * time seen), so what is kept between two ACCOUNTs stays bounded; work at
 * load is kept as a count and its latest-ending operation.
 *
 * Limits, stated in docs/protocol.md: the stop mark starts a few
 * microseconds after the stop event, so on an unheld call a tail of under
 * about that much is not told apart; and code inside the worker can switch
 * the tracer off, which only the missing marks and the parent's clock can
 * show.
 */
#include <math.h>
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
#define KP_MAX_PENDING (1 << 16) /* the candidate's records not yet decided */
#define KP_MAX_MARKS 4096        /* mark records not yet matched to their call */
#define KP_OTHER_SLOTS (1 << 17) /* API calls of other threads: an open-addressing table */
#define KP_OTHER_MAX (KP_OTHER_SLOTS / 2)
#define KP_CAP_TOL_S 5e-6        /* held calls: the window ends by start + events' time + this */

static const CUpti_ActivityKind k_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, /* peer copies */
    CUPTI_ACTIVITY_KIND_MEMSET,
};
#define KP_NKINDS ((int)(sizeof k_kinds / sizeof k_kinds[0]))

typedef struct call_rec {
    uint32_t m0_lo, m0_hi;   /* the start mark's correlation ids: (lo, hi] */
    uint32_t c_begin, c_end; /* the call's launch range: (begin, end] */
    uint32_t m1_lo, m1_hi;   /* the stop mark's */
    uint64_t leave_seq;      /* g_seq when the entry point returned */
    uint64_t h_enter, h_leave; /* the tracer's clock at the entry and the return */
    uint64_t t0, t1;         /* the window, on the tracer's clock */
    double event_s;          /* the events' time (RUN calls, once known) */
    int held, have0, have1, have_event;
} call_rec;

typedef struct op_rec {
    char name[96];
    uint32_t stream, kind, corr;
    uint64_t start, end;
} op_rec;

typedef struct mark_rec {
    uint32_t corr;
    uint64_t start, end;
} mark_rec;

typedef struct other_rec {
    uint32_t corr; /* 0: a free slot */
    int32_t tid;
    uint64_t exit_seq; /* g_seq when the API call returned; 0 while it runs */
} other_rec;

/* Guarded by g_mu: written by CUPTI's threads and by the worker. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static call_rec *g_calls; /* closed calls since the last ACCOUNT, in order */
static int g_ncalls, g_capcalls;
static int64_t g_calls_lost;
static call_rec g_cur;    /* the call being made */
static int g_cur_active;  /* between kp_dev_trace_begin and kp_dev_trace_end */
static op_rec *g_ops;
static int g_nops;
static mark_rec g_marks[KP_MAX_MARKS];
static int g_nmarks;
static other_rec *g_other;
static int g_nother;
static int64_t g_lost; /* records or ids kproof could not keep */
static int64_t g_dropped; /* records CUPTI lost */
static uint32_t g_load_lo, g_load_hi; /* the load's range: (lo, hi] */
static int g_loaded, g_first_done;    /* load range closed; the first call's start known */
static uint64_t g_first_t0;
static int64_t g_load_n;              /* operations launched while loading, not yet judged */
static op_rec g_load_last;            /* the one of them that ended last */
static int g_sweep_cool;              /* records to take before sweeping a full array again */
static kp_acct_rep g_acc;             /* decided so far since the last ACCOUNT */

/* Written by the worker thread, read by callbacks. */
static int g_on;
static char g_why[200];
static long g_main_tid;
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

static uint64_t now_ts(void) {
    uint64_t t = 0;
    (void)cuptiGetTimestamp(&t);
    return t;
}

static int in_range(uint32_t c, uint32_t lo, uint32_t hi) { return c > lo && c <= hi; }
static double secs(uint64_t a, uint64_t b) { return (double)(int64_t)(a - b) * 1e-9; }

/* ---- other threads' API calls ----------------------------------------------------- */

static other_rec *other_slot(uint32_t c, int make) {
    if (!g_other || !c)
        return NULL;
    uint32_t i = (c * 2654435761u) & (KP_OTHER_SLOTS - 1);
    for (;;) {
        other_rec *o = &g_other[i];
        if (o->corr == c)
            return o;
        if (!o->corr) {
            if (!make)
                return NULL;
            if (g_nother >= KP_OTHER_MAX) {
                g_lost++; /* a thread attributed wrongly could hide a race: counted as lost */
                return NULL;
            }
            g_nother++;
            o->corr = c;
            return o;
        }
        i = (i + 1) & (KP_OTHER_SLOTS - 1);
    }
}

static const other_rec *other_of(uint32_t c) { return other_slot(c, 0); }
static int other_tid(uint32_t c) {
    const other_rec *o = other_of(c);
    return o ? o->tid : 0;
}

/* ---- calls -------------------------------------------------------------------------- */

/* The closed call whose launch range holds c. */
static call_rec *closed_call_of(uint32_t c) {
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

/* c lies in the call being made (its range open at the top). */
static int in_open_call(uint32_t c) { return g_cur_active && g_cur.c_begin && c > g_cur.c_begin; }

/* The closed call whose start or stop mark range holds c; *which 0 / 1. */
static call_rec *closed_mark_of(uint32_t c, int *which) {
    int lo = 0, hi = g_ncalls - 1, at = -1;
    while (lo <= hi) { /* the last call whose start mark begins before c */
        int mid = (lo + hi) / 2;
        if (g_calls[mid].m0_lo < c)
            at = mid, lo = mid + 1;
        else
            hi = mid - 1;
    }
    if (at < 0)
        return NULL;
    call_rec *k = &g_calls[at];
    if (in_range(c, k->m0_lo, k->m0_hi)) {
        *which = 0;
        return k;
    }
    if (in_range(c, k->m1_lo, k->m1_hi)) {
        *which = 1;
        return k;
    }
    return NULL;
}

static int in_load(uint32_t c) { return in_range(c, g_load_lo, g_load_hi) || (!g_loaded && c > g_load_lo); }

/* ---- judging a record ------------------------------------------------------------- */

/* Counts an operation outside; returns its shown record, or NULL once
 * KP_ACCT_SHOW are shown. */
static kp_acct_op *add_outside(const op_rec *o, int where, int call, double outside) {
    g_acc.ops_outside++;
    if (where == KP_ACCT_OVERTIME)
        g_acc.ops_overtime++;
    if (g_acc.nshow >= KP_ACCT_SHOW) {
        /* Full of OVERTIME ones: the first operation of another kind
         * takes the last slot, so the graver finding keeps its evidence. */
        int keep = where == KP_ACCT_OVERTIME;
        for (int i = 0; i < g_acc.nshow && !keep; i++)
            keep = g_acc.show[i].where != KP_ACCT_OVERTIME;
        if (keep)
            return NULL;
        g_acc.nshow--;
    }
    kp_acct_op *d = &g_acc.show[g_acc.nshow++];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", o->name);
    d->stream = o->stream;
    d->kind = o->kind;
    d->where = where;
    d->call = call;
    d->outside_s = outside;
    d->duration_s = secs(o->end, o->start);
    int tid = other_tid(o->corr);
    d->thread = tid ? KP_ACCT_THREAD_OTHER : where == KP_ACCT_BETWEEN ? KP_ACCT_THREAD_UNKNOWN : KP_ACCT_THREAD_CALLER;
    d->tid = tid;
    return d;
}

static void add_inside(const op_rec *o) {
    g_acc.ops_inside++;
    if (o->stream != g_given)
        g_acc.ops_other_stream++;
    if (o->kind == 0 && kp_is_library_kernel(o->name)) {
        if (!g_acc.library)
            snprintf(g_acc.library_name, sizeof g_acc.library_name, "%s", o->name);
        g_acc.library++;
    }
    for (int j = 0; j < g_acc.nkernels; j++)
        if (!strcmp(g_acc.kernels[j].name, o->name) && g_acc.kernels[j].stream == o->stream)
            return;
    if (g_acc.nkernels >= KP_ACCT_KERNELS)
        return;
    kp_acct_op *d = &g_acc.kernels[g_acc.nkernels++];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", o->name);
    d->stream = o->stream;
    d->kind = o->kind;
    d->duration_s = secs(o->end, o->start);
}

/* Decides one record when everything it needs is known, or at the final
 * ACCOUNT (final: no call is open and every record has arrived). Returns
 * 1 when decided (or dropped), 0 to keep it for later. */
static int judge(const op_rec *o, int final) {
    call_rec *k = closed_call_of(o->corr);
    if (k) {
        int call = (int)(k - g_calls);
        if (!k->have0 || !k->have1 || (k->held && !k->have_event))
            return final; /* at the end: the call counts as missing its marks */
        const other_rec *by = other_of(o->corr);
        if (by && (by->exit_seq == 0 || by->exit_seq > k->leave_seq)) {
            /* Another thread's launch that had not returned when the call
             * did: where it lands against the stop event is a race, and an
             * honest call has its work queued when it returns. */
            add_outside(o, KP_ACCT_RACE, call, secs(o->end, o->start));
            return 1;
        }
        if (!by && o->start >= k->h_enter && o->end <= k->h_leave) {
            add_inside(o); /* run synchronously by the calling thread */
            return 1;
        }
        uint64_t c1 = k->t1;
        double ev = 0, cap = 0; /* a held call's events' time; a reading of 0, less or NaN bounds nothing */
        if (k->held) {
            ev = isfinite(k->event_s) && k->event_s > 0 ? k->event_s : 0;
            cap = ev * (1 + 1e-4) + KP_CAP_TOL_S;
            uint64_t c = k->t0 + (uint64_t)(cap * 1e9);
            if (c < c1)
                c1 = c;
        }
        if (o->start < k->t0)
            add_outside(o, KP_ACCT_EARLY, call, secs(k->t0, o->start));
        else if (o->end > k->t1)
            add_outside(o, KP_ACCT_LATE, call, secs(o->end, k->t1));
        else if (o->end > c1 && o->stream == g_given && secs(o->end, o->start) > cap) {
            /* Queued on the given stream inside the range by a launch that
             * returned before the call did, so ahead of the stop event:
             * the events' interval contains it, yet it alone ran longer
             * than that interval's reported length (a bound that needs no
             * window edge). The events were not read honestly. */
            kp_acct_op *d = add_outside(o, KP_ACCT_OVERTIME, call, secs(o->end, o->start) - ev);
            if (d)
                d->event_s = ev;
        } else if (o->end > c1)
            add_outside(o, KP_ACCT_LATE, call, secs(o->end, c1));
        else
            add_inside(o);
        return 1;
    }
    if (in_open_call(o->corr))
        return final;
    add_outside(o, KP_ACCT_BETWEEN, -1, secs(o->end, o->start));
    return 1;
}

/* Work at load, once the first call's start is known: over by then, or
 * outside (the one that ended last stands for the rest). */
static void judge_load(void) {
    if (!g_load_n || !g_first_done)
        return;
    if (g_load_last.end <= g_first_t0) {
        g_acc.ops_load += (int32_t)g_load_n;
    } else {
        g_acc.ops_load += (int32_t)(g_load_n - 1);
        add_outside(&g_load_last, KP_ACCT_LOAD, -1, secs(g_load_last.end, g_first_t0));
    }
    g_load_n = 0;
}

/* Matches marks to their calls and decides what can be decided. */
static void sweep(int final) {
    int keep = 0;
    for (int i = 0; i < g_nmarks; i++) {
        mark_rec *m = &g_marks[i];
        int which = 0;
        call_rec *k = closed_mark_of(m->corr, &which);
        if (k) {
            if (which == 0)
                k->t0 = m->end, k->have0 = 1;
            else
                k->t1 = m->start, k->have1 = 1;
            if (!g_first_done && k == &g_calls[0] && which == 0) {
                g_first_t0 = m->end;
                g_first_done = 1;
            }
            continue;
        }
        if (!final && (in_open_call(m->corr) || (g_cur_active && m->corr > g_cur.m0_lo))) {
            g_marks[keep++] = *m; /* the call being made */
            continue;
        }
        /* Named like a mark, launched where no mark was: an operation. */
        if (g_nops < KP_MAX_PENDING) {
            op_rec *o = &g_ops[g_nops++];
            memset(o, 0, sizeof *o);
            snprintf(o->name, sizeof o->name, "kp_mark_kernel (not kproof's)");
            o->stream = g_given, o->corr = m->corr, o->start = m->start, o->end = m->end;
        } else {
            g_lost++;
        }
    }
    g_nmarks = keep;
    judge_load();
    keep = 0;
    for (int i = 0; i < g_nops; i++)
        if (!judge(&g_ops[i], final))
            g_ops[keep++] = g_ops[i];
    /* A sweep that freed little is not repeated at once: every record
     * would pay a pass over the whole array, under the lock. */
    g_sweep_cool = g_nops - keep < KP_MAX_PENDING / 8 ? KP_MAX_PENDING / 8 : 0;
    g_nops = keep;
}

static void note(const char *name, uint32_t stream, uint32_t kind, uint32_t corr, uint64_t start, uint64_t end) {
    /* A record handed out before its operation finished (a forced flush
     * while it ran) has no end: kproof cannot place it. */
    if (end == 0 || end < start) {
        g_lost++;
        return;
    }
    /* A mark: the worker's own launch of the hold or the mark kernel,
     * matched to its call when the call's ranges are known. */
    if (kind == 0 && stream == g_given && name && !other_of(corr) &&
        (strstr(name, "kp_mark_kernel") || strstr(name, "kp_block_kernel"))) {
        if (g_nmarks == KP_MAX_MARKS && g_sweep_cool == 0)
            sweep(0);
        if (g_nmarks < KP_MAX_MARKS)
            g_marks[g_nmarks++] = (mark_rec){corr, start, end};
        else
            g_lost++;
        return;
    }
    /* The harness: the worker's thread, outside every call and the load,
     * on its private stream. */
    if (stream == g_util && !closed_call_of(corr) && !in_open_call(corr) && !in_load(corr) && !other_of(corr))
        return;
    if (in_load(corr) && !closed_call_of(corr) && !in_open_call(corr)) {
        if (!g_load_n || end > g_load_last.end) {
            snprintf(g_load_last.name, sizeof g_load_last.name, "%s", name ? name : "(unnamed)");
            g_load_last.stream = stream, g_load_last.kind = kind, g_load_last.corr = corr;
            g_load_last.start = start, g_load_last.end = end;
        }
        g_load_n++;
        return;
    }
    if (g_nops == KP_MAX_PENDING) {
        if (g_sweep_cool > 0) {
            g_sweep_cool--;
            g_lost++;
            return;
        }
        sweep(0);
    }
    if (g_nops == KP_MAX_PENDING) {
        g_lost++;
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

/* Every API call: the worker's thread only moves the newest id; any other
 * thread's call is remembered with its thread id, and when it returned. */
static void CUPTIAPI on_api(void * /*ud*/, CUpti_CallbackDomain /*dom*/, CUpti_CallbackId /*id*/, const void *data) {
    const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;
    long tid = kp_tid();
    if (tid == g_main_tid) {
        if (cd->callbackSite == CUPTI_API_ENTER && cd->correlationId > g_main_last)
            g_main_last = cd->correlationId;
        return;
    }
    pthread_mutex_lock(&g_mu);
    other_rec *o = other_slot(cd->correlationId, cd->callbackSite == CUPTI_API_ENTER);
    if (o && cd->callbackSite == CUPTI_API_ENTER)
        o->tid = (int32_t)tid, o->exit_seq = 0;
    else if (o)
        o->exit_seq = __atomic_add_fetch(&g_seq, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&g_mu);
}

int kp_dev_trace_start(char *why, size_t len) {
    kp_cu_clearerr();
    g_main_tid = kp_tid();
    CUpti_SubscriberHandle sub;
    g_ops = (op_rec *)malloc(sizeof(op_rec) * KP_MAX_PENDING);
    g_other = (other_rec *)calloc(KP_OTHER_SLOTS, sizeof(other_rec));
    if (!g_ops || !g_other) {
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
    g_cur_active = 1;
    pthread_mutex_unlock(&g_mu);
}

void kp_dev_trace_mark(int held) {
    if (!g_on)
        return;
    if (!held) {
        cudaError_t prev = cudaPeekAtLastError();
        kp_mark_kernel<<<1, 1, 0, (cudaStream_t)kp_dev_stream()>>>();
        if (prev == cudaSuccess)
            (void)cudaGetLastError(); /* a failed mark shows as missing marks, not as the candidate's error */
    }
    pthread_mutex_lock(&g_mu);
    g_cur.m0_hi = g_main_last;
    g_cur.held = held;
    pthread_mutex_unlock(&g_mu);
}

void kp_dev_trace_enter(void) {
    if (!g_on)
        return;
    uint64_t t = now_ts();
    pthread_mutex_lock(&g_mu);
    g_cur.c_begin = g_main_last;
    g_cur.h_enter = t;
    pthread_mutex_unlock(&g_mu);
}

void kp_dev_trace_leave(void) {
    if (!g_on)
        return;
    uint64_t t = now_ts();
    pthread_mutex_lock(&g_mu);
    g_cur.leave_seq = __atomic_add_fetch(&g_seq, 1, __ATOMIC_SEQ_CST);
    g_cur.h_leave = t;
    pthread_mutex_unlock(&g_mu);
}

void kp_dev_trace_end(void) {
    if (!g_on)
        return;
    pthread_mutex_lock(&g_mu);
    g_cur.c_end = g_main_last;
    g_cur.m1_lo = g_main_last;
    pthread_mutex_unlock(&g_mu);
    /* An error the candidate's call left (a bad launch) stays for the
     * worker's check after the call: only the mark's own is cleared. */
    cudaError_t prev = cudaPeekAtLastError();
    kp_mark_kernel<<<1, 1, 0, (cudaStream_t)kp_dev_stream()>>>();
    if (prev == cudaSuccess)
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
    else
        g_calls_lost++; /* kproof's own shortage: reported as a harness fault */
    g_cur_active = 0;
    pthread_mutex_unlock(&g_mu);
}

void kp_dev_trace_event(double event_s) {
    if (!g_on)
        return;
    pthread_mutex_lock(&g_mu);
    if (g_ncalls > 0) {
        g_calls[g_ncalls - 1].event_s = event_s;
        g_calls[g_ncalls - 1].have_event = 1;
    }
    pthread_mutex_unlock(&g_mu);
}

int kp_dev_trace_account(kp_acct_rep *rep) {
    memset(rep, 0, sizeof *rep);
    if (!g_on) {
        snprintf(rep->error, sizeof rep->error, "%s", g_why[0] ? g_why : "the tracer is not running");
        return 0;
    }
    kp_cu_clearerr();
    int rc = 0;
    char err[200] = "";
    /* Everything queued, on any stream, must be over before its records
     * are complete. */
    if (KP_CU(cudaDeviceSynchronize()) || KP_CU(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED))) {
        snprintf(err, sizeof err, "%s", kp_dev_error());
        rc = -1;
    }
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < g_ncalls; i++) /* a RUN whose events never came: no cap to wait for */
        if (g_calls[i].held && !g_calls[i].have_event)
            g_calls[i].held = 0;
    sweep(1);
    *rep = g_acc;
    snprintf(rep->error, sizeof rep->error, "%s", err);
    rep->supported = 1;
    rep->given_stream = g_given;
    rep->calls = g_ncalls;
    for (int i = 0; i < g_ncalls; i++)
        if (!g_calls[i].have0 || !g_calls[i].have1)
            rep->missing_marks++;
    int64_t lost = g_dropped + g_lost;
    rep->dropped = lost > INT32_MAX ? INT32_MAX : (int32_t)lost;
    rep->harness_lost = g_calls_lost > INT32_MAX ? INT32_MAX : (int32_t)g_calls_lost;
    memset(&g_acc, 0, sizeof g_acc);
    g_nops = 0;
    g_nmarks = 0;
    g_ncalls = 0;
    if (g_nother) {
        memset(g_other, 0, sizeof(other_rec) * KP_OTHER_SLOTS);
        g_nother = 0;
    }
    g_dropped = g_lost = g_calls_lost = 0;
    g_sweep_cool = 0;
    pthread_mutex_unlock(&g_mu);
    return rc;
}
