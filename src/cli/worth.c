/* worth.c: kproof worth, kproof compare and kproof report: whether more
 * speed is worth chasing, whether two runs differ, and a page to show.
 * They read result files and profiles, never a candidate. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "cli/worth.h"
#include "core/host_api.h"
#include "core/json.h"
#include "kproof/worth.h"

#define MAX_FILES 16

/* ===== shared pieces ====================================================== */

/* A tiny JSON writer: commas and indentation by depth. */
typedef struct jout {
    FILE *f;
    int depth;
    int n[16];
} jout;

static void jk(jout *w, const char *key)
{
    if (w->depth > 0) {
        if (w->n[w->depth]++)
            fputc(',', w->f);
        fprintf(w->f, "\n%*s", 2 * w->depth, "");
    }
    if (key) {
        kp_json_str(w->f, key);
        fputs(": ", w->f);
    }
}
static void jopen(jout *w, const char *key, char c)
{
    jk(w, key);
    fputc(c, w->f);
    if (w->depth < 15)
        w->depth++;
    w->n[w->depth] = 0;
}
static void jclose(jout *w, char c)
{
    int had = w->n[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (had)
        fprintf(w->f, "\n%*s", 2 * w->depth, "");
    fputc(c, w->f);
}
static void jnum(jout *w, const char *key, double v)
{
    jk(w, key);
    if (isfinite(v))
        fprintf(w->f, "%.9g", v);
    else
        fputs("null", w->f);
}
/* 0 is "unknown" for times and rates. */
static void jpos(jout *w, const char *key, double v)
{
    jnum(w, key, v > 0 ? v : NAN);
}
static void jstr(jout *w, const char *key, const char *s)
{
    jk(w, key);
    kp_json_str(w->f, s);
}

static int is_flag(const char *a, const char *name)
{
    return strcmp(a, name) == 0;
}

/* A value must follow: NULL (and a message) otherwise. */
static const char *value(const char *cmd, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "kproof %s: %s needs a value\n", cmd, argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

/* An option that takes one value may come once: a second one silently
 * winning would answer another question than the one asked (as eval).
 * Aliases share a name (-o and --output are one option). */
typedef struct seen_opts {
    const char *name[16];
    int n;
} seen_opts;

static int once(const char *cmd, seen_opts *s, const char *name, const char *given)
{
    for (int k = 0; k < s->n; k++)
        if (!strcmp(s->name[k], name)) {
            fprintf(stderr, "kproof %s: %s given twice\n", cmd, given);
            return -1;
        }
    if (s->n < 16)
        s->name[s->n++] = name;
    return 0;
}

/* Output to a closed pipe (kproof compare ... | head -1) is a write error
 * that the command's exit status reports (70, as eval), not a death by
 * SIGPIPE. */
static void no_sigpipe(void)
{
    signal(SIGPIPE, SIG_IGN);
}

static int is_verdict_timed(kp_verdict v)
{
    return v == KP_PASS || v == KP_NOISY;
}

static void shape_str(const kp_shape *s, char *buf, size_t len)
{
    if (kp_shape_format(s, buf, len) < 0)
        snprintf(buf, len, "?");
}

static int same_shape(const kp_shape *a, const kp_shape *b)
{
    if (a->nd != b->nd)
        return 0;
    for (int d = 0; d < a->nd; d++)
        if (a->d[d] != b->d[d])
            return 0;
    return 1;
}

static const kp_shape_result *find_shape(const kp_result *r, const kp_shape *s)
{
    for (int i = 0; r->shapes && i < r->nshapes; i++)
        if (same_shape(&r->shapes[i].shape, s))
            return &r->shapes[i];
    return NULL;
}

/* "median [lo, hi]" in the median's unit. */
static void fmt_ci(char *buf, size_t len, double med, double lo, double hi)
{
    char m[32], l[32], h[32];
    kp_fmt_time(m, sizeof m, med, med);
    kp_fmt_time(l, sizeof l, lo, med);
    kp_fmt_time(h, sizeof h, hi, med);
    /* Bounds without their unit: it is the median's. */
    char *sp = strchr(l, ' ');
    if (sp)
        *sp = '\0';
    sp = strchr(h, ' ');
    if (sp)
        *sp = '\0';
    snprintf(buf, len, "%s [%s, %s]", m, l, h);
}

/* The calibration cache's format: "key value" lines (kproof calibrate). */
static int read_calib(const char *path, kp_env *e, char *err, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char name[64];
    double v;
    int got = 0, n;
    double f32 = 0, bf16 = 0;
    while ((n = fscanf(f, "%63s %lf", name, &v)) == 2) {
        if (!strcmp(name, "copy_gbs"))
            e->peak_gbs = v, got++;
        else if (!strcmp(name, "gemm_f32_gflops"))
            f32 = v;
        else if (!strcmp(name, "gemm_bf16_gflops"))
            bf16 = v;
    }
    fclose(f);
    if (!got || !(e->peak_gbs > 0.1 && e->peak_gbs < 1e5)) {
        snprintf(err, len, "%s: not a kproof calibration (no \"copy_gbs N\" line in range)", path);
        return -1;
    }
    /* A GEMM rate is 0 (not measured) or one a device reaches: the
     * calibration cache's own bounds, from 0.1 GFLOP/s. */
    if (!(f32 == 0 || (f32 >= 0.1 && f32 <= 1e7)) || !(bf16 == 0 || (bf16 >= 0.1 && bf16 <= 1e8))) {
        snprintf(err, len, "%s: not a kproof calibration (gemm_f32_gflops %g, gemm_bf16_gflops %g: each 0 or 0.1 "
                           "to 1e7 and 1e8)",
                 path, f32, bf16);
        return -1;
    }
    e->peak_gflops_f32 = f32;
    e->peak_gflops_bf16 = bf16;
    return 0;
}

/* ===== kproof worth ======================================================= */

/* A result's shape whose verdict (REJECTED, WRONG, ERROR) says its times
 * are no speeds: named beside the table instead of used. */
typedef struct void_shape {
    int file;
    const kp_shape_result *sr;
} void_shape;

static void void_line(FILE *f, const char *file, const void_shape *v)
{
    char st[64];
    shape_str(&v->sr->shape, st, sizeof st);
    fprintf(f, "%s at %s: %s by the %.*s check: no time of it is used\n", file, st, kp_verdict_name(v->sr->verdict),
            (int)sizeof v->sr->check_name, v->sr->check_name[0] ? v->sr->check_name : "?");
}

typedef struct best_time {
    double t;
    char name[96];
    double speedup; /* candidate vs its baseline where that result had one */
} best_time;

/* kproof's op families, in the registry's order (matmul, softmax,
 * layernorm, rmsnorm, sum): the columns of a trace's share by op. */
static int op_families(const char *fam[], int cap)
{
    int n = 0;
    for (int i = 0; i < kp_op_count(); i++) {
        const char *f = kp_op_at(i)->family;
        int dup = 0;
        for (int k = 0; k < n; k++)
            dup |= !strcmp(fam[k], f);
        if (!dup && n < cap)
            fam[n++] = f;
    }
    return n;
}

static void trace_print(FILE *f, const kp_trace *t, const char *path, int top)
{
    char tt[32], tm[32];
    kp_fmt_time(tt, sizeof tt, t->total_s, t->total_s);
    fprintf(f, "\ntrace %s: %lld kernel events, %s of GPU kernel time", path, (long long)t->events, tt);
    if (t->memcpy_s > 0) {
        kp_fmt_time(tm, sizeof tm, t->memcpy_s, t->memcpy_s);
        fprintf(f, " (memcpy and memset, %s, not counted)", tm);
    }
    fprintf(f, "\n\n%7s  %-10s  %7s  %-10s  %s\n", "share", "time", "calls", "kproof op", "kernel");
    int shown = t->n < top ? t->n : top;
    for (int i = 0; i < shown; i++) {
        const kp_trace_kernel *k = &t->k[i];
        char d[32];
        kp_fmt_time(d, sizeof d, k->total_s, k->total_s);
        fprintf(f, "%6.1f%%  %-10s  %7lld  %-10s  %.100s%s\n", 100 * k->total_s / t->total_s, d, (long long)k->calls,
                k->family ? k->family : "unknown", k->name, strlen(k->name) > 100 ? "..." : "");
    }
    if (t->n > shown) {
        double rest = 0;
        for (int i = shown; i < t->n; i++)
            rest += t->k[i].total_s;
        fprintf(f, "%6.1f%%  (%d more kernels; --top N shows more)\n", 100 * rest / t->total_s, t->n - shown);
    }
    const char *fam[32];
    int nfam = op_families(fam, 32);
    double known = 0;
    fputs("\nby kproof op:", f);
    for (int i = 0; i < nfam; i++) {
        double s = kp_trace_share(t, fam[i]);
        known += s;
        fprintf(f, " %s %.1f%%,", fam[i], 100 * s);
    }
    fprintf(f, " unknown %.1f%%\n", 100 * (1 - known > 0 ? 1 - known : 0));
}

static void trace_json(jout *w, const kp_trace *t, const char *path)
{
    jopen(w, "trace", '{');
    jstr(w, "file", path);
    jnum(w, "kernel_time_s", t->total_s);
    jnum(w, "memcpy_time_s", t->memcpy_s);
    jnum(w, "events", (double)t->events);
    jopen(w, "by_op", '{');
    const char *fam[32];
    int nfam = op_families(fam, 32);
    double known = 0;
    for (int i = 0; i < nfam; i++) {
        double s = kp_trace_share(t, fam[i]);
        known += s;
        jnum(w, fam[i], s);
    }
    jnum(w, "unknown", 1 - known > 0 ? 1 - known : 0);
    jclose(w, '}');
    jopen(w, "kernels", '[');
    for (int i = 0; i < t->n; i++) {
        const kp_trace_kernel *k = &t->k[i];
        jopen(w, NULL, '{');
        jstr(w, "name", k->name);
        jnum(w, "time_s", k->total_s);
        jnum(w, "share", k->total_s / t->total_s);
        jnum(w, "calls", (double)k->calls);
        if (k->family)
            jstr(w, "op", k->family);
        else
            jk(w, "op"), fputs("null", w->f);
        if (k->why)
            jstr(w, "matched", k->why);
        else
            jk(w, "matched"), fputs("null", w->f);
        jclose(w, '}');
    }
    jclose(w, ']');
    jclose(w, '}');
}

/* This machine's device facts and calibration (measured once and cached,
 * as kproof calibrate does), refused as calibrate refuses them: a cache
 * that others could write (64), a temporary folder that cannot be used or
 * a device lock that cannot be opened (70). Says why on stderr and
 * returns the exit status; 0 with e filled. */
static int this_device(const char *backend, kp_env *e)
{
    const char *root = kp_default_root(), *cache = kp_default_cache();
    if (!kp_cli_cache_ok("worth", cache))
        return KP_EXIT_USAGE;
    kp_backend be;
    if (backend && kp_backend_parse(backend, &be)) {
        fprintf(stderr, "kproof worth: unknown backend '%s' (host or cuda)\n", backend);
        return KP_EXIT_USAGE;
    }
    if (kp_cli_tmp_usable("worth"))
        return KP_EXIT_INTERNAL;
    if (!backend && kp_cli_auto_backend("worth", root, cache, &be))
        return KP_EXIT_INTERNAL;
    /* The calibration measures: nobody else on the device, or no measurement. */
    if (kp_devlock_open_backend(be)) {
        fprintf(stderr, "kproof worth: %s\n", kp_devlock_error());
        return KP_EXIT_INTERNAL;
    }
    char err[600] = "";
    kp_wk *w = NULL;
    if (kp_trusted_start(be, root, cache, &w, err, sizeof err)) {
        fprintf(stderr, "kproof worth: %s (--device NAME or --result FILE work without a device)\n", err);
        return KP_EXIT_INTERNAL;
    }
    kp_calib_rep c;
    int measured = 0;
    int rc = kp_device_facts(w, cache, 0, e, &c, &measured, err, sizeof err);
    kp_wk_stop(w);
    if (rc) {
        fprintf(stderr, "kproof worth: %s (--device NAME or --result FILE work without a device)\n", err);
        return KP_EXIT_INTERNAL;
    }
    e->peak_gbs = c.copy_gbs;
    e->peak_gflops_f32 = c.gemm_f32_gflops;
    e->peak_gflops_bf16 = c.gemm_bf16_gflops;
    fprintf(stderr, "kproof worth: %s (%s), calibration %s\n", e->gpu, kp_backend_name(be),
            measured ? "measured now and cached" : "from the cache");
    return 0;
}

int kp_cli_worth(int argc, char **argv)
{
    const char *cmd = "worth";
    const char *opname = NULL, *dtype = NULL, *device = NULL, *calib = NULL, *backend = NULL, *trace_path = NULL;
    const char *results[MAX_FILES], *shape_text[16];
    int nres = 0, nshape = 0, json = 0, top = 15;
    double share = 0, speedup = 0;
    seen_opts seen = {{NULL}, 0};
    no_sigpipe();
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (is_flag(a, "--op") || is_flag(a, "--dtype") || is_flag(a, "--shape") || is_flag(a, "--result") ||
            is_flag(a, "--device") || is_flag(a, "--calib") || is_flag(a, "--backend") || is_flag(a, "--share") ||
            is_flag(a, "--speedup") || is_flag(a, "--trace") || is_flag(a, "--top")) {
            if (!(v = value(cmd, argc, argv, &i)))
                return KP_EXIT_USAGE;
            if (!is_flag(a, "--shape") && !is_flag(a, "--result") && once(cmd, &seen, a, a))
                return KP_EXIT_USAGE;
        }
        if (is_flag(a, "--op")) {
            opname = v;
        } else if (is_flag(a, "--dtype")) {
            dtype = v;
        } else if (is_flag(a, "--shape")) {
            if (nshape == 16) {
                fprintf(stderr, "kproof worth: at most 16 --shape\n");
                return KP_EXIT_USAGE;
            }
            shape_text[nshape++] = v;
        } else if (is_flag(a, "--result")) {
            if (nres == MAX_FILES) {
                fprintf(stderr, "kproof worth: at most %d --result\n", MAX_FILES);
                return KP_EXIT_USAGE;
            }
            results[nres++] = v;
        } else if (is_flag(a, "--device")) {
            device = v;
        } else if (is_flag(a, "--calib")) {
            calib = v;
        } else if (is_flag(a, "--backend")) {
            backend = v;
        } else if (is_flag(a, "--trace")) {
            trace_path = v;
        } else if (is_flag(a, "--share")) {
            char *end = NULL;
            errno = 0;
            share = strtod(v, &end);
            if (errno || !end || *end || !(share > 0 && share <= 1)) {
                fprintf(stderr, "kproof worth: --share is the op's fraction of the workload's GPU time, in (0, 1]; "
                                "got '%s'\n",
                        v);
                return KP_EXIT_USAGE;
            }
        } else if (is_flag(a, "--speedup")) {
            if (kp_cli_parse_double(a, v, 1e-6, 1e6, &speedup))
                return KP_EXIT_USAGE;
        } else if (is_flag(a, "--top")) {
            uint64_t n = 0;
            if (kp_cli_parse_u64(a, v, &n))
                return KP_EXIT_USAGE;
            if (n < 1 || n > 100000) {
                fprintf(stderr, "kproof worth: --top expects 1 to 100000, got '%s'\n", v);
                return KP_EXIT_USAGE;
            }
            top = (int)n;
        } else if (is_flag(a, "--json")) {
            json = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "kproof worth: unknown option '%s' (kproof help worth)\n", a);
            return KP_EXIT_USAGE;
        } else if (!opname) {
            opname = a;
        } else {
            fprintf(stderr, "kproof worth: one op at a time ('%s' and '%s')\n", opname, a);
            return KP_EXIT_USAGE;
        }
    }

    int code = 0;
    char err[600] = "";
    kp_result rs[MAX_FILES];
    int nloaded = 0;
    kp_trace tr;
    memset(&tr, 0, sizeof tr);
    int have_trace = 0;
    kp_worth *ws = NULL;

    for (int i = 0; i < nres; i++) {
        if (kp_result_read_file(results[i], &rs[i], NULL, err, sizeof err)) {
            fprintf(stderr, "kproof worth: %s\n", err);
            code = KP_EXIT_USAGE;
            goto done;
        }
        nloaded++;
    }
    if (trace_path) {
        kp_json *root = NULL;
        if (kp_json_read_file(trace_path, 0, &root, err, sizeof err)) {
            fprintf(stderr, "kproof worth: %s\n", err);
            code = KP_EXIT_USAGE;
            goto done;
        }
        char e2[300];
        int rc = kp_trace_read(root, &tr, e2, sizeof e2);
        kp_json_free(root);
        if (rc) {
            fprintf(stderr, "kproof worth: %s: %s\n", trace_path, e2);
            code = KP_EXIT_USAGE;
            goto done;
        }
        have_trace = 1;
    }

    const kp_op *op = NULL;
    if (opname) {
        op = kp_cli_op(opname, dtype ? dtype : nloaded ? kp_dtype_name(rs[0].op->dtype) : NULL);
        if (!op) {
            code = KP_EXIT_USAGE;
            goto done;
        }
        /* "softmax" with an f32 result resolved the result's dtype; a
         * result of another op is refused, not silently ignored. */
    } else if (nloaded) {
        op = rs[0].op;
        if (dtype && strcmp(dtype, kp_dtype_name(op->dtype)) != 0) {
            fprintf(stderr, "kproof worth: %s is a %s result; --dtype %s asks for another op\n", results[0], op->name,
                    dtype);
            code = KP_EXIT_USAGE;
            goto done;
        }
    } else if (!have_trace) {
        fprintf(stderr, "kproof worth: which op? (kproof worth softmax, or --result FILE, or --trace FILE; "
                        "kproof help worth)\n");
        code = KP_EXIT_USAGE;
        goto done;
    }
    for (int i = 0; op && i < nloaded; i++)
        if (rs[i].op != op) {
            fprintf(stderr, "kproof worth: %s is a %s result, not %s\n", results[i], rs[i].op->name, op->name);
            code = KP_EXIT_USAGE;
            goto done;
        }

    /* The trace alone: the ranking of a workload's kernels. */
    if (!op) {
        if (json) {
            jout w = {stdout, 0, {0}};
            jopen(&w, NULL, '{');
            jstr(&w, "tool", "kproof");
            jstr(&w, "command", "worth");
            trace_json(&w, &tr, trace_path);
            jclose(&w, '}');
            fputc('\n', stdout);
        } else {
            trace_print(stdout, &tr, trace_path, top);
        }
        goto done;
    }

    /* The device: named, from a calibration file, from a result, or this one. */
    kp_env env;
    memset(&env, 0, sizeof env);
    const char *env_from = NULL;
    if (device) {
        if (!kp_limits_for(device)->known) {
            fprintf(stderr, "kproof worth: no limits for device '%s' (known:", device);
            for (int i = 0; i < kp_limits_count(); i++)
                fprintf(stderr, "%s %s", i ? "," : "", kp_limits_at(i)->name);
            fprintf(stderr, ")\n");
            code = KP_EXIT_USAGE;
            goto done;
        }
        snprintf(env.gpu, sizeof env.gpu, "%s", device);
        snprintf(env.runtime, sizeof env.runtime, "CUDA");
        env_from = "--device";
        if (nloaded && strcmp(kp_limits_for(rs[0].env.gpu)->name, kp_limits_for(device)->name) != 0)
            fprintf(stderr, "kproof worth: warning: %s ran on %s, not %s: its times are judged against %s's limits\n",
                    results[0], rs[0].env.gpu, device, kp_limits_for(device)->name);
        else if (nloaded && !calib) {
            env.peak_gbs = rs[0].env.peak_gbs;
            env.peak_gflops_f32 = rs[0].env.peak_gflops_f32;
            env.peak_gflops_bf16 = rs[0].env.peak_gflops_bf16;
            env_from = results[0];
        }
    } else if (nloaded) {
        env = rs[0].env;
        env_from = results[0];
    } else if (!calib) {
        int rc = this_device(backend, &env);
        if (rc) {
            code = rc;
            goto done;
        }
        env_from = "this device";
    }
    if (calib) {
        if (read_calib(calib, &env, err, sizeof err)) {
            fprintf(stderr, "kproof worth: %s\n", err);
            code = KP_EXIT_USAGE;
            goto done;
        }
        env_from = calib;
    }
    kp_ceilings c;
    kp_ceilings_for(op, &env, &c);

    /* Shapes: given, or the op's canonical ones. */
    kp_shape shapes[16];
    int ns = 0;
    for (int i = 0; i < nshape; i++) {
        char why[200];
        if (kp_op_parse_shape(op, shape_text[i], &shapes[ns], why, sizeof why)) {
            fprintf(stderr, "kproof worth: bad --shape '%s': %s\n", shape_text[i], why);
            code = KP_EXIT_USAGE;
            goto done;
        }
        ns++;
    }
    for (int i = 0; !nshape && i < op->canonical.n && i < 16; i++)
        shapes[ns++] = op->canonical.shapes[i];

    /* Share: given, or the trace's share of this op. */
    const char *share_from = share > 0 ? "given" : NULL;
    if (!(share > 0) && have_trace) {
        share = kp_trace_share(&tr, op->family);
        share_from = "the trace";
        if (!(share > 0))
            fprintf(stderr, "kproof worth: no kernel in %s maps onto %s: no end-to-end figures (pass --share P)\n",
                    trace_path, op->family);
    }

    ws = (kp_worth *)calloc((size_t)ns, sizeof *ws);
    if (!ws) {
        fprintf(stderr, "kproof worth: out of memory\n");
        code = KP_EXIT_INTERNAL;
        goto done;
    }
    void_shape voided[64];
    int nvoid = 0;
    for (int i = 0; i < ns; i++) {
        best_time b = {0, "", 0};
        for (int k = 0; k < nloaded; k++) {
            const kp_shape_result *sr = find_shape(&rs[k], &shapes[i]);
            if (sr && !is_verdict_timed(sr->verdict)) {
                /* Its candidate's and baseline's times alike: a run the
                 * verdict disowns measured nothing. */
                if (nvoid < (int)(sizeof voided / sizeof *voided))
                    voided[nvoid++] = (void_shape){k, sr};
                continue;
            }
            if (!sr || !sr->timed)
                continue;
            if (sr->verdict == KP_PASS && sr->cand.median > 0 && (!(b.t > 0) || sr->cand.median < b.t)) {
                b.t = sr->cand.median;
                kp_candidate_label(rs[k].candidate, b.name, sizeof b.name);
                b.speedup = sr->base_name[0] && sr->speedup > 0 ? sr->speedup : 0;
            }
            if (sr->base_name[0] && sr->base.median > 0 && (!(b.t > 0) || sr->base.median < b.t)) {
                b.t = sr->base.median;
                snprintf(b.name, sizeof b.name, "%.63s", sr->base_name);
                b.speedup = 0;
            }
        }
        double sp = speedup > 0 ? speedup : b.speedup;
        kp_worth_judge(op, &shapes[i], &c, b.t, b.name, share, sp,
                       speedup > 0 ? "given" : "measured (candidate vs baseline)", &ws[i]);
    }

    if (json) {
        jout w = {stdout, 0, {0}};
        jopen(&w, NULL, '{');
        jstr(&w, "tool", "kproof");
        jstr(&w, "command", "worth");
        jnum(&w, "schema", KP_SCHEMA_VERSION);
        jstr(&w, "op", op->name);
        jstr(&w, "dtype", kp_dtype_name(op->dtype));
        jopen(&w, "device", '{');
        jstr(&w, "gpu", env.gpu);
        jstr(&w, "limits", c.limits->name);
        jstr(&w, "source", c.limits->source);
        jstr(&w, "ceilings_from", env_from ? env_from : "datasheet");
        jpos(&w, "bandwidth_gbs", c.bw_gbs);
        jk(&w, "bandwidth_measured");
        fputs(c.bw_measured ? "true" : "false", stdout);
        jpos(&w, "datasheet_bandwidth_gbs", c.phys_bw_gbs);
        jpos(&w, "peak_gflops", c.peak_gflops);
        jpos(&w, "measured_gemm_gflops", c.gemm_gflops);
        jpos(&w, "launch_s", c.launch_s);
        jclose(&w, '}');
        if (share > 0) {
            jnum(&w, "share", share);
            jstr(&w, "share_from", share_from);
        } else {
            jk(&w, "share");
            fputs("null", stdout);
        }
        jopen(&w, "shapes", '[');
        for (int i = 0; i < ns; i++) {
            const kp_worth *x = &ws[i];
            char st[64];
            shape_str(&x->shape, st, sizeof st);
            jopen(&w, NULL, '{');
            jstr(&w, "shape_text", st);
            jnum(&w, "bytes", x->sol.bytes);
            jnum(&w, "flops", x->sol.flops);
            jnum(&w, "intensity", x->sol.intensity);
            jpos(&w, "ridge", x->sol.ridge);
            jstr(&w, "regime", kp_regime_name(x->sol.regime));
            jpos(&w, "memory_time_s", x->sol.mem_s);
            jpos(&w, "compute_time_s", x->sol.compute_s);
            jpos(&w, "sol_time_s", x->sol.sol_s);
            jpos(&w, "sol_time_physical_s", x->sol.phys_s);
            if (x->best_s > 0) {
                jopen(&w, "best", '{');
                jstr(&w, "name", x->best_name);
                jnum(&w, "median_s", x->best_s);
                jclose(&w, '}');
            } else {
                jk(&w, "best");
                fputs("null", stdout);
            }
            jnum(&w, "sol_fraction", x->sol_fraction);
            jnum(&w, "headroom", x->headroom);
            jnum(&w, "headroom_physical", x->headroom_phys);
            jnum(&w, "gain_at_headroom", x->gain_max);
            jpos(&w, "speedup", x->speedup);
            jnum(&w, "gain_at_speedup", x->gain_speedup);
            jstr(&w, "decision", x->decision);
            jstr(&w, "sentence", x->sentence);
            jclose(&w, '}');
        }
        jclose(&w, ']');
        jopen(&w, "not_used", '[');
        for (int i = 0; i < nvoid; i++) {
            char st[64];
            shape_str(&voided[i].sr->shape, st, sizeof st);
            jopen(&w, NULL, '{');
            jstr(&w, "file", results[voided[i].file]);
            jstr(&w, "shape_text", st);
            jstr(&w, "verdict", kp_verdict_name(voided[i].sr->verdict));
            jstr(&w, "check", voided[i].sr->check_name);
            jclose(&w, '}');
        }
        jclose(&w, ']');
        if (have_trace)
            trace_json(&w, &tr, trace_path);
        jclose(&w, '}');
        fputc('\n', stdout);
        goto done;
    }

    printf("kproof worth: %s on %s (limits: %s", op->name, env.gpu[0] ? env.gpu : "an unnamed device",
           c.limits->name);
    if (c.bw_measured)
        printf("; measured copy %.0f GB/s from %s", c.bw_gbs, env_from ? env_from : "?");
    if (c.phys_bw_gbs > 0)
        printf("; datasheet %.0f GB/s", c.phys_bw_gbs);
    if (c.peak_gflops > 0)
        printf(", %.0f TFLOP/s%s", c.peak_gflops / 1e3, c.peak_measured ? " (1.3x measured GEMM)" : "");
    printf(")\n");
    if (share > 0)
        printf("share of the workload: %.1f%% (%s)\n", 100 * share, share_from);
    printf("\n%-16s %-9s %-7s %-6s %-13s %-11s %-11s %-7s %-7s %s\n", "shape", "bytes", "FLOP/B", "ridge", "regime",
           "sol", "best", "of SoL", "left", share > 0 ? "end-to-end  decision" : "decision");
    for (int i = 0; i < ns; i++) {
        const kp_worth *x = &ws[i];
        char st[64], by[32], sol[32], best[32], ridge[16], frac[16], left[16], e2e[16];
        shape_str(&x->shape, st, sizeof st);
        double b = x->sol.bytes;
        snprintf(by, sizeof by, "%.3g %s", b >= 1e9 ? b / 1e9 : b >= 1e6 ? b / 1e6 : b / 1e3,
                 b >= 1e9 ? "GB" : b >= 1e6 ? "MB" : "kB");
        if (x->sol.sol_s > 0)
            kp_fmt_time(sol, sizeof sol, x->sol.sol_s, x->sol.sol_s);
        else
            snprintf(sol, sizeof sol, "-");
        if (x->best_s > 0)
            kp_fmt_time(best, sizeof best, x->best_s, x->best_s);
        else
            snprintf(best, sizeof best, "unknown");
        snprintf(ridge, sizeof ridge, x->sol.ridge > 0 ? "%.3g" : "-", x->sol.ridge);
        snprintf(frac, sizeof frac, isfinite(x->sol_fraction) ? "%.1f%%" : "-", 100 * x->sol_fraction);
        snprintf(left, sizeof left, isfinite(x->headroom) ? "%.2fx" : "-", x->headroom);
        snprintf(e2e, sizeof e2e, isfinite(x->gain_max) ? "%.3fx" : "-", x->gain_max);
        char ai[16];
        snprintf(ai, sizeof ai, x->sol.intensity >= 100 ? "%.0f" : "%.3g", x->sol.intensity);
        printf("%-16s %-9s %-7s %-6s %-13s %-11s %-11s %-7s %-7s ", st, by, ai, ridge,
               kp_regime_name(x->sol.regime), sol, best, frac, left);
        if (share > 0)
            printf("%-11s ", e2e);
        printf("%s\n", x->decision);
    }
    printf("\n");
    for (int i = 0; i < ns; i++)
        printf("%s\n", ws[i].sentence);
    if (nvoid)
        printf("\n");
    for (int i = 0; i < nvoid; i++)
        void_line(stdout, results[voided[i].file], &voided[i]);
    if (!nloaded)
        printf("\n(no measured times: pass --result FILE, a kproof eval --json of the best kernel with its baseline)\n");
    if (have_trace)
        trace_print(stdout, &tr, trace_path, top);

done:
    free(ws);
    for (int i = 0; i < nloaded; i++)
        kp_result_free(&rs[i]);
    kp_trace_free(&tr);
    return code;
}

/* ===== kproof compare ===================================================== */

typedef struct cmp_row {
    kp_shape shape;
    const kp_shape_result *a, *b;
    kp_cmp c;
    int ok;            /* compared */
    int counted;       /* compared, both PASS: in the counts and a regression if SLOWER */
    char why[160];     /* when not compared, or why not counted */
    int regression;    /* SLOWER by more than --fail-on-regression */
} cmp_row;

/* "B REJECTED (timer)": a side's verdict where it is not PASS. */
static void side_verdict(char *buf, size_t len, const char *side, const kp_shape_result *sr)
{
    if (sr->check_name[0])
        snprintf(buf, len, "%s %s (%.*s)", side, kp_verdict_name(sr->verdict), (int)sizeof sr->check_name,
                 sr->check_name);
    else
        snprintf(buf, len, "%s %s", side, kp_verdict_name(sr->verdict));
}

static void append(char *buf, size_t len, const char *s)
{
    size_t n = strlen(buf);
    if (s[0] && n < len)
        snprintf(buf + n, len - n, "%s%s", n ? ", " : "", s);
}

/* What keeps a B from passing --fail-on-regression besides a regression:
 * a verdict other than PASS or NOISY (overall or at any shape), bit 1, or
 * no shape compared at all (NOISY ones included), bit 2. Each printed as
 * one line on stderr. */
static int fail_reasons(FILE *f, const char *fileb, const kp_result *rb, int ncmp, int print)
{
    int n = 0;
    for (int i = 0; rb->shapes && i < rb->nshapes; i++) {
        const kp_shape_result *sr = &rb->shapes[i];
        if (is_verdict_timed(sr->verdict))
            continue;
        n |= 1;
        if (print) {
            char st[64];
            shape_str(&sr->shape, st, sizeof st);
            fprintf(f, "kproof compare: --fail-on-regression: B (%s) is %s at %s (%.*s check)\n", fileb,
                    kp_verdict_name(sr->verdict), st, (int)sizeof sr->check_name,
                    sr->check_name[0] ? sr->check_name : "?");
        }
    }
    /* A run that stopped before any shape (a build that failed) says so
     * only in its overall verdict. */
    if (!n && !is_verdict_timed(rb->verdict)) {
        n |= 1;
        if (print) {
            fprintf(f, "kproof compare: --fail-on-regression: B (%s) is %s", fileb, kp_verdict_name(rb->verdict));
            if (rb->check_name[0])
                fprintf(f, " (%.*s check)", (int)sizeof rb->check_name, rb->check_name);
            fputc('\n', f);
        }
    }
    if (ncmp == 0) {
        n |= 2;
        if (print)
            fprintf(f, "kproof compare: --fail-on-regression: no shape could be compared (none is PASS or NOISY "
                       "with a time in both A and B)\n");
    }
    return n;
}

int kp_cli_compare(int argc, char **argv)
{
    const char *cmd = "compare";
    const char *files[2] = {NULL, NULL};
    int nf = 0, json = 0, md = 0, force = 0;
    double margin = 0.02, fail_pct = -1;
    seen_opts seen = {{NULL}, 0};
    no_sigpipe();
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (is_flag(a, "--margin") || is_flag(a, "--fail-on-regression")) {
            if (!(v = value(cmd, argc, argv, &i)))
                return KP_EXIT_USAGE;
            if (once(cmd, &seen, a, a))
                return KP_EXIT_USAGE;
            double pct;
            if (kp_cli_parse_double(a, v, 0, 1000, &pct))
                return KP_EXIT_USAGE;
            if (is_flag(a, "--margin"))
                margin = pct / 100;
            else
                fail_pct = pct;
        } else if (is_flag(a, "--json")) {
            json = 1;
        } else if (is_flag(a, "--md")) {
            md = 1;
        } else if (is_flag(a, "--force")) {
            force = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "kproof compare: unknown option '%s' (kproof help compare)\n", a);
            return KP_EXIT_USAGE;
        } else if (nf < 2) {
            files[nf++] = a;
        } else {
            fprintf(stderr, "kproof compare: two results, A and B ('%s' is a third)\n", a);
            return KP_EXIT_USAGE;
        }
    }
    if (nf != 2) {
        fprintf(stderr, "kproof compare: needs two result files, A.json B.json (kproof help compare)\n");
        return KP_EXIT_USAGE;
    }
    if (json && md) {
        fprintf(stderr, "kproof compare: --json or --md, not both\n");
        return KP_EXIT_USAGE;
    }
    kp_result ra, rb;
    int sa = 0, sb = 0;
    char err[600];
    if (kp_result_read_file(files[0], &ra, &sa, err, sizeof err)) {
        fprintf(stderr, "kproof compare: %s\n", err);
        return KP_EXIT_USAGE;
    }
    if (kp_result_read_file(files[1], &rb, &sb, err, sizeof err)) {
        fprintf(stderr, "kproof compare: %s\n", err);
        kp_result_free(&ra);
        return KP_EXIT_USAGE;
    }
    int code = 0;
    cmp_row *rows = NULL;
    if (kp_compare_refusal(&ra, sa, &rb, sb, err, sizeof err) && !force) {
        fprintf(stderr, "kproof compare: refused: %s (--force compares anyway)\n", err);
        code = KP_EXIT_USAGE;
        goto done;
    }
    /* Rows: A's shapes in order, then B's that A lacks. */
    int cap = ra.nshapes + rb.nshapes, nr = 0;
    rows = (cmp_row *)calloc((size_t)(cap > 0 ? cap : 1), sizeof *rows);
    if (!rows) {
        fprintf(stderr, "kproof compare: out of memory\n");
        code = KP_EXIT_INTERNAL;
        goto done;
    }
    for (int i = 0; i < ra.nshapes; i++) {
        cmp_row *r = &rows[nr++];
        r->shape = ra.shapes[i].shape;
        r->a = &ra.shapes[i];
        r->b = find_shape(&rb, &r->shape);
    }
    for (int i = 0; i < rb.nshapes; i++)
        if (!find_shape(&ra, &rb.shapes[i].shape)) {
            cmp_row *r = &rows[nr++];
            r->shape = rb.shapes[i].shape;
            r->b = &rb.shapes[i];
        }
    /* Only times the verdicts stand behind are compared: a REJECTED,
     * WRONG or ERROR side has none (the reader drops them). NOISY sides
     * are compared and shown, marked, and never counted: their intervals
     * never settled. */
    int counts[4] = {0, 0, 0, 0}, nreg = 0, ncmp = 0, nnoisy = 0;
    for (int i = 0; i < nr; i++) {
        cmp_row *r = &rows[i];
        char va[64] = "", vb[64] = "";
        if (r->a && r->a->verdict != KP_PASS)
            side_verdict(va, sizeof va, "A", r->a);
        if (r->b && r->b->verdict != KP_PASS)
            side_verdict(vb, sizeof vb, "B", r->b);
        if (!r->a || !r->b) {
            snprintf(r->why, sizeof r->why, "%s", r->a ? "only in A" : "only in B");
            append(r->why, sizeof r->why, r->a ? va : vb);
            continue;
        }
        if (!is_verdict_timed(r->a->verdict) || !is_verdict_timed(r->b->verdict)) {
            append(r->why, sizeof r->why, va);
            append(r->why, sizeof r->why, vb);
            continue;
        }
        if (!r->a->timed || !r->b->timed) {
            snprintf(r->why, sizeof r->why, "%s",
                     !r->a->timed && !r->b->timed ? "timed in neither" : !r->a->timed ? "not timed in A" : "not timed in B");
            continue;
        }
        if (kp_compare_timing(&r->a->cand, &r->b->cand, margin, 0x6b70726f6f66ull + (uint64_t)i, &r->c)) {
            snprintf(r->why, sizeof r->why, "no median");
            continue;
        }
        r->ok = 1;
        if (va[0] || vb[0]) {
            append(r->why, sizeof r->why, va);
            append(r->why, sizeof r->why, vb);
            append(r->why, sizeof r->why, "not counted");
            nnoisy++;
            continue;
        }
        r->counted = 1;
        ncmp++;
        counts[r->c.status]++;
        if (fail_pct >= 0 && r->c.status == KP_CMP_SLOWER && r->c.ratio > 1 + fail_pct / 100) {
            r->regression = 1;
            nreg++;
        }
    }
    int nfail = fail_pct >= 0 ? fail_reasons(stderr, files[1], &rb, ncmp + nnoisy, 0) : 0;
    if (fail_pct >= 0 && (nreg || nfail))
        code = 1;
    char la[96], lb[96];
    kp_candidate_label(ra.candidate, la, sizeof la);
    kp_candidate_label(rb.candidate, lb, sizeof lb);

    if (json) {
        jout w = {stdout, 0, {0}};
        jopen(&w, NULL, '{');
        jstr(&w, "tool", "kproof");
        jstr(&w, "command", "compare");
        jnum(&w, "schema", KP_SCHEMA_VERSION);
        jstr(&w, "op", ra.op->name);
        jstr(&w, "device", ra.env.gpu);
        jnum(&w, "margin", margin);
        jnum(&w, "fail_on_regression_pct", fail_pct >= 0 ? fail_pct : NAN);
        const kp_result *both[2] = {&ra, &rb};
        for (int k = 0; k < 2; k++) {
            jopen(&w, k ? "b" : "a", '{');
            jstr(&w, "file", files[k]);
            jstr(&w, "candidate", both[k]->candidate);
            jstr(&w, "op", both[k]->op->name);
            jstr(&w, "gpu", both[k]->env.gpu);
            jstr(&w, "date", both[k]->env.date);
            jnum(&w, "schema", k ? sb : sa);
            jstr(&w, "verdict", kp_verdict_name(both[k]->verdict));
            jclose(&w, '}');
        }
        jopen(&w, "shapes", '[');
        for (int i = 0; i < nr; i++) {
            const cmp_row *r = &rows[i];
            char st[64];
            shape_str(&r->shape, st, sizeof st);
            jopen(&w, NULL, '{');
            jstr(&w, "shape_text", st);
            const kp_shape_result *side[2] = {r->a, r->b};
            for (int k = 0; k < 2; k++) {
                if (side[k]) {
                    jstr(&w, k ? "b_verdict" : "a_verdict", kp_verdict_name(side[k]->verdict));
                } else {
                    jk(&w, k ? "b_verdict" : "a_verdict");
                    fputs("null", stdout);
                }
            }
            if (r->ok) {
                jstr(&w, "status", kp_cmp_status_name(r->c.status));
                jnum(&w, "a_median_s", r->c.a_med);
                jnum(&w, "a_lo_s", r->c.a_lo);
                jnum(&w, "a_hi_s", r->c.a_hi);
                jnum(&w, "b_median_s", r->c.b_med);
                jnum(&w, "b_lo_s", r->c.b_lo);
                jnum(&w, "b_hi_s", r->c.b_hi);
                jnum(&w, "ratio", r->c.ratio);
                jnum(&w, "ratio_lo", r->c.ratio_lo);
                jnum(&w, "ratio_hi", r->c.ratio_hi);
                jstr(&w, "interval_from", r->c.from_samples ? "samples" : "stored intervals");
                jk(&w, "counted");
                fputs(r->counted ? "true" : "false", stdout);
                jk(&w, "regression");
                fputs(r->regression ? "true" : "false", stdout);
            } else {
                jk(&w, "status");
                fputs("null", stdout);
                jstr(&w, "why", r->why);
            }
            jclose(&w, '}');
        }
        jclose(&w, ']');
        jnum(&w, "compared", ncmp);
        jopen(&w, "counts", '{');
        for (int s = 0; s < 4; s++)
            jnum(&w, kp_cmp_status_name((kp_cmp_status)s), counts[s]);
        jclose(&w, '}');
        jnum(&w, "regressions", nreg);
        jk(&w, "failed");
        fputs(code == 1 ? "true" : "false", stdout);
        jclose(&w, '}');
        fputc('\n', stdout);
        goto report;
    }

    const char *sep = md ? " | " : "  ";
    char ha[64] = "", hb[64] = "";
    if (ra.verdict != KP_PASS)
        snprintf(ha, sizeof ha, ", %s", kp_verdict_name(ra.verdict));
    if (rb.verdict != KP_PASS)
        snprintf(hb, sizeof hb, ", %s", kp_verdict_name(rb.verdict));
    if (md) {
        printf("**kproof compare** `%s` on %s: A `%s` (%s%s), B `%s` (%s%s)\n\n", ra.op->name, ra.env.gpu, la,
               ra.env.date, ha, lb, rb.env.date, hb);
        printf("| shape | A median [95%% CI] | B median [95%% CI] | B/A [95%% CI] | status |\n");
        printf("| --- | --- | --- | --- | --- |\n");
    } else {
        printf("kproof compare: %s on %s (B against A; within +-%.3g%% is SAME)\n", ra.op->name, ra.env.gpu,
               100 * margin);
        printf("  A %s: %s, %s%s\n", files[0], la, ra.env.date, ha);
        printf("  B %s: %s, %s%s\n\n", files[1], lb, rb.env.date, hb);
        printf("%-16s  %-28s  %-28s  %-24s  %s\n", "shape", "A median [95% CI]", "B median [95% CI]",
               "B/A [95% CI]", "status");
    }
    for (int i = 0; i < nr; i++) {
        const cmp_row *r = &rows[i];
        char st[64], ca[64] = "-", cb[64] = "-", cr[64] = "-", status[256];
        shape_str(&r->shape, st, sizeof st);
        if (r->ok) {
            fmt_ci(ca, sizeof ca, r->c.a_med, r->c.a_lo, r->c.a_hi);
            fmt_ci(cb, sizeof cb, r->c.b_med, r->c.b_lo, r->c.b_hi);
            if (isfinite(r->c.ratio_lo))
                snprintf(cr, sizeof cr, "%.3f [%.3f, %.3f]%s", r->c.ratio, r->c.ratio_lo, r->c.ratio_hi,
                         r->c.from_samples ? "" : "*");
            else
                snprintf(cr, sizeof cr, "%.3f [?]", r->c.ratio);
        }
        if (r->ok && r->why[0])
            snprintf(status, sizeof status, "%s (%s)", kp_cmp_status_name(r->c.status), r->why);
        else
            snprintf(status, sizeof status, "%s%s", r->ok ? kp_cmp_status_name(r->c.status) : r->why,
                     r->regression ? " (regression)" : "");
        if (md)
            printf("| %s | %s | %s | %s | %s |\n", st, ca, cb, cr, status);
        else
            printf("%-16s%s%-28s%s%-28s%s%-24s%s%s\n", st, sep, ca, sep, cb, sep, cr, sep, status);
    }
    printf("\n%d compared: %d SAME, %d FASTER, %d SLOWER, %d AMBIGUOUS", ncmp, counts[KP_CMP_SAME],
           counts[KP_CMP_FASTER], counts[KP_CMP_SLOWER], counts[KP_CMP_AMBIGUOUS]);
    if (nnoisy)
        printf(" (%d NOISY not counted)", nnoisy);
    if (fail_pct >= 0)
        printf("; %d regression%s beyond %.3g%%", nreg, nreg == 1 ? "" : "s", fail_pct);
    if (nfail)
        printf("; fails --fail-on-regression: %s%s%s", nfail & 1 ? "B did not pass" : "",
               nfail == 3 ? " and " : "", nfail & 2 ? "nothing compared" : "");
    printf("\n");
    int any_star = 0;
    for (int i = 0; i < nr; i++)
        any_star |= rows[i].ok && !rows[i].c.from_samples;
    if (any_star)
        printf("%s* ratio interval from the stored intervals (the files hold no samples), not a bootstrap\n",
               md ? "\n" : "");

report:
    if (nfail)
        fail_reasons(stderr, files[1], &rb, ncmp + nnoisy, 1);
done:
    free(rows);
    kp_result_free(&ra);
    kp_result_free(&rb);
    return code;
}

/* ===== kproof report ====================================================== */

int kp_cli_report(int argc, char **argv)
{
    const char *cmd = "report";
    const char *files[MAX_FILES], *out = NULL;
    int nf = 0;
    seen_opts seen = {{NULL}, 0};
    no_sigpipe();
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (is_flag(a, "-o") || is_flag(a, "--output")) {
            if (!(out = value(cmd, argc, argv, &i)))
                return KP_EXIT_USAGE;
            if (once(cmd, &seen, "-o", a))
                return KP_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "kproof report: unknown option '%s' (kproof help report)\n", a);
            return KP_EXIT_USAGE;
        } else if (nf == MAX_FILES) {
            fprintf(stderr, "kproof report: at most %d results in one page\n", MAX_FILES);
            return KP_EXIT_USAGE;
        } else {
            files[nf++] = a;
        }
    }
    if (nf == 0) {
        fprintf(stderr, "kproof report: which results? (kproof report RESULT.json ... -o report.html)\n");
        return KP_EXIT_USAGE;
    }
    for (int i = 0; out && i < nf; i++)
        if (kp_cli_out_clash(cmd, "-o", out, "result", files[i]))
            return KP_EXIT_USAGE;
    kp_result rs[MAX_FILES];
    const kp_result *ptrs[MAX_FILES];
    int nl = 0, code = 0;
    char err[600];
    for (int i = 0; i < nf; i++) {
        if (kp_result_read_file(files[i], &rs[i], NULL, err, sizeof err)) {
            fprintf(stderr, "kproof report: %s\n", err);
            code = KP_EXIT_USAGE;
            goto done;
        }
        ptrs[i] = &rs[i];
        nl++;
    }
    if (!out) {
        kp_print_html(stdout, ptrs, files, nl);
        goto done;
    }
    /* Whole or not at all (as eval --out): a page cut short by a full disk
     * never replaces the one before it. */
    char tmp[PATH_MAX + 32], why[300];
    FILE *f = kp_cli_atomic_open(out, tmp, sizeof tmp, why, sizeof why);
    if (f)
        kp_print_html(f, ptrs, files, nl);
    if (!f || kp_cli_atomic_close(f, tmp, out, why, sizeof why)) {
        fprintf(stderr, "kproof report: cannot write %s: %s\n", out, why);
        code = KP_EXIT_USAGE;
        goto done;
    }
    fprintf(stderr, "kproof report: wrote %s (%d result%s)\n", out, nl, nl == 1 ? "" : "s");
done:
    for (int i = 0; i < nl; i++)
        kp_result_free(&rs[i]);
    return code;
}
