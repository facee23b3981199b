/* resultio.c: result files read back into a kp_result (the inverse of
 * kp_print_json), for compare, worth and the HTML report. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "kproof/worth.h"

/* Copies a JSON string into a fixed field, cut to fit. */
#define COPY_STR(dst, v) copy_str(dst, sizeof(dst), v)
static void copy_str(char *dst, size_t cap, const kp_json *v)
{
    const char *s = kp_json_text(v);
    snprintf(dst, cap, "%s", s ? s : "");
}

/* null (the writer's "unknown") reads back as NAN, absent too. */
static double num(const kp_json *obj, const char *key)
{
    return kp_json_num(kp_json_get(obj, key), NAN);
}

/* The reader's first fault: a number outside what its field can hold (a
 * count past INT_MAX, a negative bitmask, a bandwidth no device has) makes
 * the whole file unreadable, named by where it sits. */
typedef struct rd {
    char *err;
    size_t len;
    int bad;
} rd;

/* A number in [lo, hi]: absent, null or not a number is dflt; anything
 * else outside the range is the file's fault (dflt returned). JSON's
 * numbers are finite (the parser refuses the rest), the bounds keep every
 * later conversion to an integer type defined. */
static double ranged(rd *r, const char *where, const kp_json *obj, const char *key, double lo, double hi,
                     double dflt)
{
    const kp_json *v = kp_json_get(obj, key);
    if (!v || v->type != KP_JSON_NUM)
        return dflt;
    double x = v->num;
    if (isfinite(x) && x >= lo && x <= hi)
        return x;
    if (!r->bad)
        snprintf(r->err, r->len, "%s%s%s is %.6g, outside %.15g to %.15g", where, where[0] ? "." : "", key, x, lo, hi);
    r->bad = 1;
    return dflt;
}

/* A rate: 0 ("not measured"), or one some device could reach. */
static double rate(rd *r, const char *where, const kp_json *obj, const char *key, double lo, double hi,
                   const char *unit)
{
    double x = ranged(r, where, obj, key, 0, hi, 0);
    if (x > 0 && x < lo) {
        if (!r->bad)
            snprintf(r->err, r->len, "%s.%s is %.6g %s, below any device's %.6g %s", where, key, x, unit, lo, unit);
        r->bad = 1;
        return 0;
    }
    return x;
}

#define INT_MAX_D 2147483647.0
#define I64_MAX_D 9223372036854774784.0  /* the largest double below 2^63 */
#define U64_MAX_D 18446744073709549568.0 /* the largest double below 2^64 */

static int verdict_of(const char *s, kp_verdict *v)
{
    static const kp_verdict all[] = {KP_PASS, KP_WRONG, KP_REJECTED, KP_ERROR, KP_NOISY};
    for (size_t i = 0; s && i < sizeof all / sizeof *all; i++)
        if (strcmp(s, kp_verdict_name(all[i])) == 0) {
            *v = all[i];
            return 0;
        }
    return -1;
}

/* kp_shape_result.origin points at a static string. */
static const char *origin_of(const char *s)
{
    static const char *known[] = {"canonical", "edge", "quick", "drawn", "user"};
    for (size_t i = 0; s && i < sizeof known / sizeof *known; i++)
        if (strcmp(s, known[i]) == 0)
            return known[i];
    return "other";
}

static double *read_samples(const kp_json *arr, int *n)
{
    *n = 0;
    size_t m = kp_json_count(arr);
    if (!arr || arr->type != KP_JSON_ARR || m == 0 || m > 10000000)
        return NULL;
    double *x = (double *)malloc(m * sizeof *x);
    if (!x)
        return NULL;
    int k = 0;
    for (size_t i = 0; i < m; i++) {
        double v = kp_json_num(kp_json_at(arr, i), NAN);
        if (isfinite(v) && v > 0)
            x[k++] = v;
    }
    if (k == 0) {
        free(x);
        return NULL;
    }
    *n = k;
    return x;
}

static void read_timing(rd *r, const char *where, const kp_json *t, kp_timing *o)
{
    memset(o, 0, sizeof *o);
    o->median = num(t, "median_s");
    o->lo = num(t, "lo_s");
    o->hi = num(t, "hi_s");
    o->min = num(t, "min_s");
    o->mean = num(t, "mean_s");
    o->n = (int)ranged(r, where, t, "samples", 0, INT_MAX_D, 0);
    o->host_median = num(t, "host_median_s");
    o->host_bound = (int)ranged(r, where, t, "host_bound_samples", 0, INT_MAX_D, 0);
    o->parent_floor = num(t, "parent_floor_s");
    o->settled = kp_json_bool(kp_json_get(t, "settled"), 0);
    o->sol_time = kp_json_num(kp_json_get(t, "sol_time_s"), 0);
    o->sol_fraction = kp_json_num(kp_json_get(t, "sol_fraction"), 0);
    o->gbs = num(t, "gbs");
    o->gflops = num(t, "gflops");
    o->input_sets = (int)ranged(r, where, t, "input_sets", 0, 32, 0); /* KP_MAX_SETS (proto/proto.h) */
    const char *by = kp_json_text(kp_json_get(t, "request_own_by"));
    if (!by) by = "";
    o->request_by = !strcmp(by, "cpu") ? 1 : !strcmp(by, "wall") ? 2 : 0;
    if (o->request_by) {
        o->request_own = kp_json_num(kp_json_get(t, "request_own_s"), 0);
        o->request_own_base = kp_json_num(kp_json_get(t, "request_own_baseline_s"), 0);
        o->request_call = kp_json_num(kp_json_get(t, "request_call_s"), NAN);
        o->cpu_readings = (int)ranged(r, where, t, "cpu_readings", 0, INT_MAX_D, 0);
    }
    int n = 0;
    o->samples = read_samples(kp_json_get(t, "samples_s"), &n);
    if (o->samples)
        o->n = n;
}

static int read_shape(const kp_op *op, const kp_json *s, kp_shape_result *sr, char *err, size_t errlen, size_t idx)
{
    memset(sr, 0, sizeof *sr);
    rd r = {err, errlen, 0};
    char where[64];
    const kp_json *dims = kp_json_get(s, "shape");
    size_t nd = kp_json_count(dims);
    if (!dims || dims->type != KP_JSON_ARR || nd < 1 || nd > KP_MAX_DIMS || (int)nd != op->nd) {
        snprintf(err, errlen, "shape %zu has no valid \"shape\" array of %d dims", idx, op->nd);
        return -1;
    }
    sr->shape.nd = (int)nd;
    for (size_t d = 0; d < nd; d++) {
        double v = kp_json_num(kp_json_at(dims, d), -1);
        if (!(v >= 1 && v <= 9.0e15 && v == floor(v))) {
            snprintf(err, errlen, "shape %zu: dimension %zu is not a positive integer", idx, d);
            return -1;
        }
        sr->shape.d[d] = (int64_t)v;
    }
    sr->origin = origin_of(kp_json_text(kp_json_get(s, "origin")));
    if (verdict_of(kp_json_text(kp_json_get(s, "verdict")), &sr->verdict)) {
        snprintf(err, errlen, "shape %zu has no verdict", idx);
        return -1;
    }
    COPY_STR(sr->check_name, kp_json_get(s, "check"));
    COPY_STR(sr->detail, kp_json_get(s, "detail"));
    const kp_json *c = kp_json_get(s, "correctness");
    sr->check.ok = kp_json_bool(kp_json_get(c, "ok"), 0);
    snprintf(where, sizeof where, "shape %zu: correctness", idx);
    sr->check.checked = (int64_t)ranged(&r, where, c, "checked", 0, I64_MAX_D, 0);
    sr->check.bad = (int64_t)ranged(&r, where, c, "bad", 0, I64_MAX_D, 0);
    sr->check.poisoned = (int64_t)ranged(&r, where, c, "poisoned", 0, I64_MAX_D, 0);
    sr->check.nonfinite = (int64_t)ranged(&r, where, c, "nonfinite", 0, I64_MAX_D, 0);
    sr->check.first_bad = (int64_t)ranged(&r, where, c, "first_bad", -1, I64_MAX_D, -1);
    sr->check.got = num(c, "got");
    sr->check.want = num(c, "want");
    sr->check.tol = num(c, "tol");
    sr->check.max_ratio = num(c, "max_ratio");
    sr->check.rms_ratio = num(c, "rms_ratio");
    sr->check.rms_limit = num(c, "rms_limit");
    COPY_STR(sr->check.method, kp_json_get(c, "method"));
    COPY_STR(sr->check.why, kp_json_get(c, "why"));
    /* Timing is a speed only where the verdict stands behind it: a shape
     * that is REJECTED (a timer or speed-of-light check, which judge the
     * timing after it was taken), WRONG or ERROR reads back untimed, so
     * that no reader shows its time, plots it or compares it. PASS and
     * NOISY (correct, honestly timed, unsettled) keep theirs. */
    const kp_json *t = kp_json_get(s, "timing");
    if (t && t->type == KP_JSON_OBJ && (sr->verdict == KP_PASS || sr->verdict == KP_NOISY)) {
        sr->timed = 1;
        snprintf(where, sizeof where, "shape %zu: timing", idx);
        read_timing(&r, where, t, &sr->cand);
    }
    const kp_json *b = kp_json_get(s, "baseline");
    if (sr->timed && b && b->type == KP_JSON_OBJ) {
        COPY_STR(sr->base_name, kp_json_get(b, "name"));
        COPY_STR(sr->retired, kp_json_get(b, "others_retired"));
        snprintf(where, sizeof where, "shape %zu: baseline", idx);
        read_timing(&r, where, b, &sr->base);
        sr->speedup = num(b, "speedup");
        sr->speedup_lo = num(b, "speedup_lo");
        sr->speedup_hi = num(b, "speedup_hi");
        if (!sr->base_name[0])
            snprintf(sr->base_name, sizeof sr->base_name, "baseline");
    }
    const kp_json *au = kp_json_get(s, "audit");
    size_t nk = kp_json_count(au);
    for (size_t k = 0; k < nk && k < 16; k++) {
        const kp_json *kk = kp_json_at(au, k);
        kp_audit_kernel *o = &sr->kernels[sr->nkernels++];
        COPY_STR(o->name, kp_json_get(kk, "name"));
        snprintf(where, sizeof where, "shape %zu: audit[%zu]", idx, k);
        o->stream = (uint32_t)ranged(&r, where, kk, "stream", 0, 4294967295.0, 0);
        o->on_given_stream = kp_json_bool(kp_json_get(kk, "on_given_stream"), 0);
        o->duration_s = num(kk, "duration_s");
    }
    return r.bad ? -1 : 0;
}

int kp_result_from_json(const kp_json *root, kp_result *r, int *schema, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (schema)
        *schema = 0;
    const char *tool = kp_json_text(kp_json_get(root, "tool"));
    double sch = kp_json_num(kp_json_get(root, "schema"), -1);
    const kp_json *shapes = kp_json_get(root, "shapes");
    if (!root || root->type != KP_JSON_OBJ || !tool || strcmp(tool, "kproof") != 0 || !(sch >= 1) ||
        !shapes || shapes->type != KP_JSON_ARR) {
        snprintf(err, errlen, "not a kproof result (no \"tool\": \"kproof\", \"schema\" and \"shapes\")");
        return -1;
    }
    /* kproof worth, compare and the rest print "command"; an eval's result
     * has none. */
    const char *command = kp_json_text(kp_json_get(root, "command"));
    if (command) {
        snprintf(err, errlen, "not an eval result: this is the output of kproof %.32s --json (compare, report and "
                              "worth --result read kproof eval --json)",
                 command);
        return -1;
    }
    if (!(sch <= 1e6 && sch == floor(sch))) {
        snprintf(err, errlen, "schema %.6g is not a schema version", sch);
        return -1;
    }
    if (schema)
        *schema = (int)sch;
    const char *opname = kp_json_text(kp_json_get(root, "op"));
    r->op = opname ? kp_op_find(opname) : NULL;
    if (!r->op) {
        snprintf(err, errlen, "op '%s' is not one this kproof knows", opname ? opname : "(none)");
        return -1;
    }
    if (verdict_of(kp_json_text(kp_json_get(root, "verdict")), &r->verdict)) {
        snprintf(err, errlen, "not an eval result: no verdict in it");
        return -1;
    }
    const char *be = kp_json_text(kp_json_get(root, "backend"));
    if (!be || kp_backend_parse(be, &r->backend)) {
        snprintf(err, errlen, "backend '%s' is not one this kproof knows", be ? be : "(none)");
        return -1;
    }
    COPY_STR(r->candidate, kp_json_get(root, "candidate"));
    COPY_STR(r->protocol, kp_json_get(root, "protocol"));
    COPY_STR(r->check_name, kp_json_get(root, "check"));
    COPY_STR(r->detail, kp_json_get(root, "detail"));
    const char *seed = kp_json_text(kp_json_get(root, "seed"));
    r->seed = seed ? strtoull(seed, NULL, 10) : 0;
    r->wall_s = num(root, "wall_s");
    const kp_json *ph = kp_json_get(root, "phase_s");
    for (int p = 0; p < KP_NPHASES; p++)
        r->phase_s[p] = num(ph, kp_phase_name(p));
    const kp_json *lock = kp_json_get(root, "device_lock");
    r->lock_wait_s = num(lock, "wait_s");
    r->lock_held_s = num(lock, "held_s");
    const kp_json *hp = kp_json_get(lock, "held_phase_s");
    for (int p = 0; p < KP_NPHASES; p++) r->lock_held_phase_s[p] = num(hp, kp_phase_name(p));

    const kp_json *e = kp_json_get(root, "env");
    kp_env *o = &r->env;
    COPY_STR(o->gpu, kp_json_get(e, "gpu"));
    COPY_STR(o->gpu_uuid, kp_json_get(e, "gpu_uuid"));
    COPY_STR(o->driver, kp_json_get(e, "driver"));
    COPY_STR(o->runtime, kp_json_get(e, "runtime"));
    rd rr = {err, errlen, 0};
    o->sm_count = (int)ranged(&rr, "env", e, "sm_count", 0, INT_MAX_D, 0);
    o->l2_bytes = (int64_t)ranged(&rr, "env", e, "l2_bytes", 0, I64_MAX_D, 0);
    /* 0 is "not measured" in kp_env; the file says null. The ranges are
     * the calibration cache's (a measured copy of 0.1 GB/s to 100 TB/s,
     * GEMM rates to 10 and 100 PFLOP/s): a ceiling outside them draws no
     * roofline and bounds no time. */
    o->peak_gbs = rate(&rr, "env", e, "peak_gbs", 0.1, 1e5, "GB/s");
    o->peak_gflops_f32 = rate(&rr, "env", e, "peak_gflops_f32", 0.1, 1e7, "GFLOP/s");
    o->peak_gflops_bf16 = rate(&rr, "env", e, "peak_gflops_bf16", 0.1, 1e8, "GFLOP/s");
    o->sm_mhz_before = (int)ranged(&rr, "env", e, "sm_mhz_before", 0, INT_MAX_D, 0);
    o->sm_mhz_after = (int)ranged(&rr, "env", e, "sm_mhz_after", 0, INT_MAX_D, 0);
    o->mem_mhz_before = (int)ranged(&rr, "env", e, "mem_mhz_before", 0, INT_MAX_D, 0);
    o->mem_mhz_after = (int)ranged(&rr, "env", e, "mem_mhz_after", 0, INT_MAX_D, 0);
    o->throttle_before = (uint64_t)ranged(&rr, "env", e, "throttle_before", 0, U64_MAX_D, 0);
    o->throttle_after = (uint64_t)ranged(&rr, "env", e, "throttle_after", 0, U64_MAX_D, 0);
    COPY_STR(o->host, kp_json_get(e, "host"));
    COPY_STR(o->date, kp_json_get(e, "date"));
    if (rr.bad)
        return -1;

    const kp_json *w = kp_json_get(root, "warnings");
    for (size_t i = 0; i < kp_json_count(w); i++) {
        const char *s = kp_json_text(kp_json_at(w, i));
        if (s)
            kp_result_warn(r, "%s", s);
    }

    size_t n = kp_json_count(shapes);
    if (n > 100000) {
        snprintf(err, errlen, "more shapes (%zu) than any kproof run has", n);
        return -1;
    }
    if (n) {
        r->shapes = (kp_shape_result *)calloc(n, sizeof *r->shapes);
        if (!r->shapes) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        r->nshapes = (int)i + 1; /* read so far: kp_result_free frees them */
        if (read_shape(r->op, kp_json_at(shapes, i), &r->shapes[i], err, errlen, i)) {
            kp_result_free(r);
            return -1;
        }
    }
    return 0;
}

int kp_result_read_file(const char *path, kp_result *r, int *schema, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    kp_json *root = NULL;
    char e[300];
    int rc = kp_json_read_file(path, 0, &root, e, sizeof e);
    if (rc) {
        /* kp_json_read_file's message starts with the path already. */
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    rc = kp_result_from_json(root, r, schema, e, sizeof e);
    kp_json_free(root);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, e);
        return -1;
    }
    return 0;
}

void kp_candidate_label(const char *path, char *buf, size_t len)
{
    const char *s = path ? path : "";
    const char *slash = strrchr(s, '/');
    if (slash)
        s = slash + 1;
    size_t n = strlen(s);
    const char *dot = strrchr(s, '.');
    if (dot && dot != s)
        n = (size_t)(dot - s);
    if (n == 0)
        snprintf(buf, len, "candidate");
    else
        snprintf(buf, len, "%.*s", (int)n, s);
}
