/* worth.c: speed of light, regime, headroom, Amdahl, SOL score, the
 * decision and its sentence, and comparing two timings (see kproof/worth.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kproof/worth.h"

/* ===== 1. ceilings and the speed of light ================================= */

const char *kp_regime_name(kp_regime r)
{
    switch (r) {
    case KP_REGIME_MEMORY: return "memory-bound";
    case KP_REGIME_COMPUTE: return "compute-bound";
    case KP_REGIME_LAUNCH: return "launch-bound";
    case KP_REGIME_UNKNOWN: break;
    }
    return "unknown";
}

static int is_matmul(const kp_op *op)
{
    return op && op->family && strcmp(op->family, "matmul") == 0;
}

/* The eval's own bound: a kernel may beat cuBLAS by about 1.3x (cuBLAS
 * reaches 77-80% of the datasheet rates on Hopper). */
#define MEASURED_GEMM_HEADROOM 1.3
/* A GPU's launch cost when the table does not know the GPU. */
#define GPU_LAUNCH_S 3e-6

void kp_ceilings_for(const kp_op *op, const kp_env *env, kp_ceilings *c)
{
    memset(c, 0, sizeof *c);
    c->limits = kp_limits_for(env ? env->gpu : NULL);
    c->phys_bw_gbs = c->limits->hbm_gbs;
    if (env && isfinite(env->peak_gbs) && env->peak_gbs > 0) {
        c->bw_gbs = env->peak_gbs;
        c->bw_measured = 1;
    } else {
        c->bw_gbs = c->phys_bw_gbs;
    }
    if (env && op) {
        double g = is_matmul(op) && op->dtype == KP_BF16 ? env->peak_gflops_bf16 : env->peak_gflops_f32;
        c->gemm_gflops = isfinite(g) && g > 0 ? g : 0;
    }
    c->peak_gflops = kp_limits_sol_gflops(c->limits, op);
    if (c->peak_gflops <= 0 && c->gemm_gflops > 0) {
        c->peak_gflops = MEASURED_GEMM_HEADROOM * c->gemm_gflops;
        c->peak_measured = 1;
    }
    if (c->limits->known)
        c->launch_s = c->limits->launch_s;
    else if (env && strncmp(env->runtime, "CUDA", 4) == 0)
        c->launch_s = GPU_LAUNCH_S;
}

void kp_sol_compute(const kp_op *op, const kp_shape *s, const kp_ceilings *c, kp_sol *o)
{
    memset(o, 0, sizeof *o);
    if (!op || !s || !c || s->nd <= 0 || s->nd > KP_MAX_DIMS)
        return;
    o->bytes = op->min_bytes ? op->min_bytes(s) : 0;
    o->flops = op->flops ? op->flops(s) : 0;
    if (!(o->bytes > 0))
        return; /* no cost model: nothing to bound */
    o->intensity = o->flops / o->bytes;
    if (c->bw_gbs > 0)
        o->mem_s = o->bytes / (c->bw_gbs * 1e9);
    if (c->peak_gflops > 0)
        o->compute_s = o->flops / (c->peak_gflops * 1e9);
    if (c->bw_gbs > 0 && c->peak_gflops > 0)
        o->ridge = c->peak_gflops / c->bw_gbs;
    /* A matmul's arithmetic is its ceiling: without a compute peak its
     * speed of light is unknown, not its bytes' time. */
    if (o->mem_s > 0 && (o->compute_s > 0 || !is_matmul(op)))
        o->sol_s = o->mem_s > o->compute_s ? o->mem_s : o->compute_s;
    if (c->phys_bw_gbs > 0 && o->sol_s > 0) {
        double pm = o->bytes / (c->phys_bw_gbs * 1e9);
        o->phys_s = pm > o->compute_s ? pm : o->compute_s;
    }
    if (o->sol_s > 0 && c->launch_s > 0 && o->sol_s < c->launch_s)
        o->regime = KP_REGIME_LAUNCH;
    else if (o->ridge > 0)
        o->regime = o->intensity < o->ridge ? KP_REGIME_MEMORY : KP_REGIME_COMPUTE;
    else
        o->regime = KP_REGIME_UNKNOWN;
}

double kp_sol_score(double t_k, double t_b, double t_sol)
{
    if (!(isfinite(t_k) && isfinite(t_b) && isfinite(t_sol)) || t_k <= 0 || t_sol <= 0 || t_b <= t_sol)
        return NAN;
    return 1.0 / (1.0 + (t_k - t_sol) / (t_b - t_sol));
}

double kp_headroom(double t, double t_sol)
{
    if (!(isfinite(t) && isfinite(t_sol)) || t <= 0 || t_sol <= 0)
        return NAN;
    return t / t_sol;
}

double kp_amdahl(double share, double speedup)
{
    if (!(isfinite(share) && isfinite(speedup)) || !(share > 0 && share <= 1) || !(speedup > 0))
        return NAN;
    return 1.0 / ((1.0 - share) + share / speedup);
}

/* ===== 2. the judgement =================================================== */

/* "125.2 us", "3.18 ms": three or four significant digits. */
static void fmt_t(char *buf, size_t len, double t)
{
    kp_fmt_time(buf, len, t, t);
}

/* "537 MB", "1.07 GB", "4.19 MB". */
static void fmt_bytes(char *buf, size_t len, double b)
{
    const char *u = "B";
    double v = b;
    if (b >= 1e9) {
        u = "GB";
        v = b / 1e9;
    } else if (b >= 1e6) {
        u = "MB";
        v = b / 1e6;
    } else if (b >= 1e3) {
        u = "kB";
        v = b / 1e3;
    }
    snprintf(buf, len, "%.*f %s", v >= 100 ? 0 : v >= 10 ? 1 : 2, v, u);
}

/* "0.62", "15.6", "1365". */
static void fmt_num(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.*f", v >= 100 ? 0 : v >= 10 ? 1 : 2, v);
}

static int level(double h, double not_below, double yes_at)
{
    return h < not_below ? 0 : h < yes_at ? 1 : 2;
}

static const char *LEVELS[3] = {"not worth it", "marginal", "worth it"};

/* Appends to a fixed buffer, never past it. */
#if defined(__GNUC__)
static void add(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
static void add(char *buf, size_t len, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, len - n, fmt, ap);
    va_end(ap);
}

void kp_worth_judge(const kp_op *op, const kp_shape *s, const kp_ceilings *c, double best_s, const char *best_name,
                    double share, double speedup, const char *speedup_from, kp_worth *w)
{
    memset(w, 0, sizeof *w);
    w->shape = *s;
    kp_sol_compute(op, s, c, &w->sol);
    const kp_sol *o = &w->sol;
    w->best_s = isfinite(best_s) && best_s > 0 ? best_s : 0;
    snprintf(w->best_name, sizeof w->best_name, "%s", best_name && best_name[0] ? best_name : "the best kernel");
    w->sol_fraction = w->best_s > 0 && o->sol_s > 0 ? o->sol_s / w->best_s : NAN;
    w->headroom = kp_headroom(w->best_s, o->sol_s);
    w->headroom_phys = kp_headroom(w->best_s, o->phys_s);
    w->share = share > 0 ? share : 0;
    w->speedup = speedup > 0 ? speedup : 0;
    snprintf(w->speedup_from, sizeof w->speedup_from, "%s", speedup_from ? speedup_from : "given");
    /* In the launch regime the floor is the launch, not the work. */
    double floor_s = o->sol_s;
    if (o->regime == KP_REGIME_LAUNCH && c->launch_s > floor_s)
        floor_s = c->launch_s;
    double h_eff = kp_headroom(w->best_s, floor_s);
    double h_cap = isfinite(h_eff) ? (h_eff > 1 ? h_eff : 1) : NAN;
    w->gain_max = w->share > 0 && isfinite(h_cap) ? kp_amdahl(w->share, h_cap) : NAN;
    w->gain_speedup = w->share > 0 && w->speedup > 0 ? kp_amdahl(w->share, w->speedup) : NAN;

    if (o->sol_s <= 0 || !isfinite(h_cap)) {
        w->decision = "unknown";
    } else {
        int lv = level(h_cap, KP_WORTH_KERNEL_NOT, KP_WORTH_KERNEL_YES);
        if (w->share > 0) {
            int le = level(w->gain_max, KP_WORTH_E2E_NOT, KP_WORTH_E2E_YES);
            if (le < lv)
                lv = le;
        }
        w->decision = LEVELS[lv];
    }

    /* The sentence. */
    char st[64], t1[32], t2[32], b1[32], x1[32], x2[32];
    if (kp_shape_format(s, st, sizeof st) < 0)
        snprintf(st, sizeof st, "?");
    char *out = w->sentence;
    size_t len = sizeof w->sentence;
    out[0] = '\0';
    add(out, len, "%s %s", op && op->name ? op->name : "?", st);
    if (o->sol_s <= 0) {
        add(out, len, ": no speed of light on %s (no datasheet figures and no calibration)",
            c->limits->known ? c->limits->name : "this device");
        if (w->best_s > 0) {
            fmt_t(t1, sizeof t1, w->best_s);
            add(out, len, "; %s runs %s", w->best_name, t1);
        }
        add(out, len, "; headroom unknown.");
        return;
    }
    fmt_t(t1, sizeof t1, o->sol_s);
    fmt_bytes(b1, sizeof b1, o->bytes);
    fmt_num(x1, sizeof x1, o->intensity);
    if (o->regime == KP_REGIME_LAUNCH) {
        add(out, len, ": launch-bound (its work takes %s at the speed of light, under a launch's ~%.0f us)", t1,
            c->launch_s * 1e6);
    } else if (o->regime != KP_REGIME_UNKNOWN) {
        fmt_num(x2, sizeof x2, o->ridge);
        add(out, len, ": %s (%s FLOP/B against a ridge of %s)", kp_regime_name(o->regime), x1, x2);
        if (o->regime == KP_REGIME_MEMORY)
            add(out, len, "; speed of light %s (%s at %s %.0f GB/s)", t1, b1,
                c->bw_measured ? "the measured copy's" : "the datasheet's", c->bw_gbs);
        else
            add(out, len, "; speed of light %s (%.3g TFLOP at %.0f TFLOP/s%s)", t1, o->flops / 1e12,
                c->peak_gflops / 1e3, c->peak_measured ? ", 1.3x the measured GEMM" : "");
    } else {
        add(out, len, ": speed of light %s (%s at %.0f GB/s)", t1, b1, c->bw_gbs);
    }
    if (w->best_s <= 0) {
        add(out, len, "; no measured time (pass --result FILE), so the headroom is unknown.");
        return;
    }
    fmt_t(t2, sizeof t2, w->best_s);
    /* Near the ceiling a tenth of a percent is the news. */
    double pct = 100 * w->sol_fraction;
    add(out, len, "; %s runs %s = %.*f%% of speed of light", w->best_name, t2, pct >= 90 && pct < 110 ? 1 : 0, pct);
    if (o->regime == KP_REGIME_LAUNCH) {
        add(out, len, "; at most %.2fx left above the launch; fuse it or capture it in a CUDA graph to go further",
            h_cap);
    } else if (w->headroom < 1) {
        add(out, len, ", past the %s ceiling", c->bw_measured ? "measured copy's" : "modelled");
        if (isfinite(w->headroom_phys))
            add(out, len, "; the datasheet leaves at most %.2fx", w->headroom_phys > 1 ? w->headroom_phys : 1.0);
    } else {
        add(out, len, "; at most %.2fx left", w->headroom);
        if (c->bw_measured && o->regime == KP_REGIME_MEMORY && isfinite(w->headroom_phys))
            add(out, len, " (%.2fx to the datasheet's %.0f GB/s)", w->headroom_phys, c->phys_bw_gbs);
    }
    if (w->share > 0) {
        add(out, len, "; at %.3g%% of the workload, at most %.3fx end to end", 100 * w->share, w->gain_max);
        if (isfinite(w->gain_speedup))
            add(out, len, " (%.3fx for the %s %.2fx)", w->gain_speedup, w->speedup_from, w->speedup);
    }
    add(out, len, "; %s.", w->decision);
}

void kp_shape_worth_of(const kp_result *r, const kp_shape_result *sr, kp_shape_worth *out)
{
    memset(out, 0, sizeof *out);
    out->score = NAN;
    out->headroom = NAN;
    if (!r || !sr || !r->op)
        return;
    kp_ceilings c;
    kp_ceilings_for(r->op, &r->env, &c);
    kp_sol_compute(r->op, &sr->shape, &c, &out->sol);
    out->known = out->sol.sol_s > 0;
    if (!out->known || !sr->timed)
        return;
    out->headroom = kp_headroom(sr->cand.median, out->sol.sol_s);
    if (sr->base_name[0])
        out->score = kp_sol_score(sr->cand.median, sr->base.median, out->sol.sol_s);
}

/* ===== 4. comparing two timings =========================================== */

const char *kp_cmp_status_name(kp_cmp_status s)
{
    switch (s) {
    case KP_CMP_SAME: return "SAME";
    case KP_CMP_FASTER: return "FASTER";
    case KP_CMP_SLOWER: return "SLOWER";
    case KP_CMP_AMBIGUOUS: break;
    }
    return "AMBIGUOUS";
}

static int pos(double v)
{
    return isfinite(v) && v > 0;
}

int kp_compare_timing(const kp_timing *a, const kp_timing *b, double margin, uint64_t seed, kp_cmp *o)
{
    memset(o, 0, sizeof *o);
    o->ratio = o->ratio_lo = o->ratio_hi = NAN;
    o->status = KP_CMP_AMBIGUOUS;
    if (!a || !b || !pos(a->median) || !pos(b->median))
        return -1;
    o->a_med = a->median;
    o->a_lo = a->lo;
    o->a_hi = a->hi;
    o->b_med = b->median;
    o->b_lo = b->lo;
    o->b_hi = b->hi;
    o->ratio = b->median / a->median;
    if (a->samples && b->samples && a->n >= 2 && b->n >= 2) {
        kp_boot_ratio_ci(b->samples, b->n, a->samples, a->n, 0.95, 2000, seed, &o->ratio_lo, &o->ratio_hi);
        o->from_samples = 1;
    } else if (pos(a->lo) && pos(a->hi) && pos(b->lo) && pos(b->hi) && a->lo <= a->median &&
               a->median <= a->hi && b->lo <= b->median && b->median <= b->hi) {
        /* Each stored interval read as a normal one on the log scale, its
         * two halves apart; the ratio's halves add in quadrature. */
        double bl = log(b->median / b->lo), bh = log(b->hi / b->median);
        double al = log(a->median / a->lo), ah = log(a->hi / a->median);
        double lr = log(o->ratio);
        o->ratio_lo = exp(lr - sqrt(bl * bl + ah * ah));
        o->ratio_hi = exp(lr + sqrt(bh * bh + al * al));
    }
    if (!(isfinite(o->ratio_lo) && isfinite(o->ratio_hi)))
        return 0; /* no interval: the medians alone cannot tell */
    int apart_slow = pos(a->hi) && pos(b->lo) ? b->lo > a->hi : 0;
    int apart_fast = pos(a->lo) && pos(b->hi) ? b->hi < a->lo : 0;
    if (o->ratio_lo >= 1 - margin && o->ratio_hi <= 1 + margin)
        o->status = KP_CMP_SAME;
    else if (o->ratio_lo > 1 && apart_slow)
        o->status = KP_CMP_SLOWER;
    else if (o->ratio_hi < 1 && apart_fast)
        o->status = KP_CMP_FASTER;
    else
        o->status = KP_CMP_AMBIGUOUS;
    return 0;
}

int kp_compare_refusal(const kp_result *a, int schema_a, const kp_result *b, int schema_b, char *why, size_t len)
{
    const char *oa = a && a->op ? a->op->name : "?", *ob = b && b->op ? b->op->name : "?";
    if (schema_a != schema_b) {
        snprintf(why, len, "different schema versions: A is schema %d, B is schema %d", schema_a, schema_b);
        return -1;
    }
    if (!a || !b || !a->op || !b->op || a->op != b->op) {
        snprintf(why, len, "different ops: A is %s, B is %s", oa, ob);
        return -1;
    }
    if (a->backend != b->backend || strncmp(a->env.gpu, b->env.gpu, sizeof a->env.gpu) != 0) {
        snprintf(why, len, "different devices: A ran on %.96s (%s), B on %.96s (%s)", a->env.gpu[0] ? a->env.gpu : "?",
                 kp_backend_name(a->backend), b->env.gpu[0] ? b->env.gpu : "?", kp_backend_name(b->backend));
        return -1;
    }
    return 0;
}
