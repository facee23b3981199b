/* trace.c: GPU kernel time per kernel name from a torch.profiler Chrome
 * trace (chrome://tracing's "Trace Event Format"), mapped onto kproof's
 * ops by name, so the ranking of what is worth optimising in a workload
 * comes from a real profile. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strcasestr */
#endif
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "kproof/worth.h"

/* ===== names onto ops ===================================================== */

/* Checked in order; the first pattern found in the name decides. A NULL
 * family says "known, and not a kproof op" (a scan is no sum). Names are
 * matched whole, template arguments included, hence the order. */
typedef struct pattern {
    const char *text;
    const char *family;
} pattern;

static const pattern PATTERNS[] = {
    /* Attention kernels hold a softmax and GEMMs (and cutlass in their
     * template arguments): none of kproof's ops. */
    {"flash", NULL},
    {"fmha", NULL},
    {"attention", NULL},
    {"softmax", "softmax"},      /* cunn_SoftMaxForward, softmax_warp_forward, triton_*_softmax */
    /* RMS norms before layer norms: an RMS norm's template arguments can
     * name layer-norm types (a library's shared kernel traits). */
    {"rms_norm", "rmsnorm"},     /* vectorized_rms_norm_kernel, triton_*_rms_norm */
    {"rmsnorm", "rmsnorm"},      /* RMSNormKernel, apex, TE's rmsnorm_fwd */
    {"layer_norm", "layernorm"}, /* vectorized_layer_norm_kernel, triton_*_native_layer_norm */
    {"layernorm", "layernorm"},  /* LayerNormForwardCUDAKernel, apex, TE */
    {"gemv", NULL},              /* matrix-vector: not kproof's GEMM */
    {"gemm", "matmul"},          /* sgemm, hgemm, cutlass gemm, ampere_*gemm */
    {"nvjet", "matmul"},         /* cuBLAS's Hopper GEMM kernels */
    {"xmma", "matmul"},
    {"cutlass", "matmul"},
    {"cublas", "matmul"},
    {"matmul", "matmul"},
    {"cumsum", NULL},            /* a scan */
    {"elementwise", NULL},       /* at::native::*elementwise_kernel: pointwise ops */
    {"reduce_kernel", "sum"},    /* at::native::reduce_kernel: sum, mean, norms (by name only) */
    {"reduce", "sum"},
    {"sum", "sum"},              /* triton_red_fused_sum, DeviceReduce sums */
};

/* Case-insensitive substring (glibc's strcasestr; _GNU_SOURCE is on). */
static int contains_nocase(const char *hay, const char *needle) { return strcasestr(hay, needle) != NULL; }

const char *kp_trace_family(const char *name, const char **why)
{
    if (why)
        *why = NULL;
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof PATTERNS / sizeof *PATTERNS; i++)
        if (contains_nocase(name, PATTERNS[i].text)) {
            if (why)
                *why = PATTERNS[i].text;
            return PATTERNS[i].family;
        }
    return NULL;
}

/* ===== reading ============================================================ */

/* Kernel names into slots, by hash: a trace of a few training steps has
 * hundreds of thousands of events and a few hundred distinct names. */
typedef struct table {
    size_t cap;     /* power of two */
    int *slot;      /* index into t->k, -1 empty */
} table;

static uint64_t hash(const char *s) { return kp_fnv1a_more(KP_FNV_START, s, strlen(s)); }

static int table_grow(table *tb, const kp_trace *t)
{
    size_t nc = tb->cap ? tb->cap * 2 : 256;
    int *ns = (int *)malloc(nc * sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < nc; i++)
        ns[i] = -1;
    for (int k = 0; k < t->n; k++) {
        size_t j = (size_t)hash(t->k[k].name) & (nc - 1);
        while (ns[j] >= 0)
            j = (j + 1) & (nc - 1);
        ns[j] = k;
    }
    free(tb->slot);
    tb->slot = ns;
    tb->cap = nc;
    return 0;
}

static int add_kernel(kp_trace *t, table *tb, int *kcap, const char *name, double dur_s)
{
    if ((size_t)(t->n + 1) * 2 > tb->cap && table_grow(tb, t))
        return -1;
    size_t j = (size_t)hash(name) & (tb->cap - 1);
    while (tb->slot[j] >= 0) {
        kp_trace_kernel *k = &t->k[tb->slot[j]];
        if (strcmp(k->name, name) == 0) {
            k->total_s += dur_s;
            k->calls++;
            return 0;
        }
        j = (j + 1) & (tb->cap - 1);
    }
    if (t->n == *kcap) {
        int nc = *kcap ? *kcap * 2 : 64;
        kp_trace_kernel *nk = (kp_trace_kernel *)realloc(t->k, (size_t)nc * sizeof *nk);
        if (!nk)
            return -1;
        t->k = nk;
        *kcap = nc;
    }
    kp_trace_kernel *k = &t->k[t->n];
    memset(k, 0, sizeof *k);
    size_t len = strlen(name);
    k->name = (char *)malloc(len + 1);
    if (!k->name)
        return -1;
    memcpy(k->name, name, len + 1);
    k->total_s = dur_s;
    k->calls = 1;
    k->family = kp_trace_family(name, &k->why);
    tb->slot[j] = t->n++;
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const kp_trace_kernel *x = (const kp_trace_kernel *)a, *y = (const kp_trace_kernel *)b;
    if (x->total_s != y->total_s)
        return x->total_s < y->total_s ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int eq_nocase(const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

int kp_trace_read(const kp_json *root, kp_trace *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const kp_json *ev = root && root->type == KP_JSON_ARR ? root : kp_json_get(root, "traceEvents");
    if (!ev || ev->type != KP_JSON_ARR) {
        snprintf(err, errlen, "not a Chrome trace: no \"traceEvents\" array (torch.profiler's "
                              "export_chrome_trace writes one)");
        return -1;
    }
    /* A bare array is a trace only if it holds events. */
    size_t n = kp_json_count(ev), with_ph = 0;
    for (size_t i = 0; i < n; i++)
        if (kp_json_text(kp_json_get(kp_json_at(ev, i), "ph")))
            with_ph++;
    if (n > 0 && with_ph == 0) {
        snprintf(err, errlen, "not a Chrome trace: its events have no \"ph\" (event type)");
        return -1;
    }
    table tb = {0, NULL};
    int kcap = 0;
    for (size_t i = 0; i < n; i++) {
        const kp_json *e = kp_json_at(ev, i);
        const char *ph = kp_json_text(kp_json_get(e, "ph"));
        const char *cat = kp_json_text(kp_json_get(e, "cat"));
        double dur = kp_json_num(kp_json_get(e, "dur"), NAN);
        /* A duration past a year (in microseconds) is no kernel's: it
         * would swamp every share. */
        if (!ph || strcmp(ph, "X") != 0 || !cat || !(isfinite(dur) && dur >= 0 && dur <= 3.2e13))
            continue;
        if (eq_nocase(cat, "gpu_memcpy") || eq_nocase(cat, "gpu_memset")) {
            t->memcpy_s += dur * 1e-6;
            continue;
        }
        if (!eq_nocase(cat, "kernel"))
            continue;
        const char *name = kp_json_text(kp_json_get(e, "name"));
        if (add_kernel(t, &tb, &kcap, name ? name : "(unnamed kernel)", dur * 1e-6)) {
            free(tb.slot);
            kp_trace_free(t);
            snprintf(err, errlen, "out of memory reading the trace");
            return -1;
        }
        t->events++;
        t->total_s += dur * 1e-6;
    }
    free(tb.slot);
    if (t->events == 0 || !(t->total_s > 0)) {
        kp_trace_free(t);
        snprintf(err, errlen, "no GPU kernel time in the trace (no events with \"cat\": \"kernel\" and a duration): "
                              "profile with ProfilerActivity.CUDA");
        return -1;
    }
    qsort(t->k, (size_t)t->n, sizeof *t->k, by_time);
    return 0;
}

void kp_trace_free(kp_trace *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        free(t->k[i].name);
    free(t->k);
    memset(t, 0, sizeof *t);
}

double kp_trace_share(const kp_trace *t, const char *family)
{
    if (!t || !family || !(t->total_s > 0))
        return 0;
    double s = 0;
    for (int i = 0; i < t->n; i++)
        if (t->k[i].family && strcmp(t->k[i].family, family) == 0)
            s += t->k[i].total_s;
    return s / t->total_s;
}
