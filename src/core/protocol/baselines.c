/* baselines.c: what a run measures against and on: the shapes, the
 * baselines found among the project's kernels, the device's facts and
 * measured peaks (from the trusted worker), and its clocks at the end.
 * Part of the protocol (eval.c tells the story). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/protocol/protocol_priv.h"
#include "kproof/backends.h"

/* ---- shapes, baselines, calibration ----------------------------------------------- */

static int64_t largest_buf(const kp_op *op, const kp_shape *s) {
    int64_t m = 0;
    for (int b = 0; b < op->nbufs; b++)
        if (op->buf_elems(s, b) > m) m = op->buf_elems(s, b);
    return m;
}

/* The backend's cap on edge shapes (what a CPU can afford in a test run);
 * and the caller's own cap. */
static int skip_shape(const ctx *c, const kp_shape *s) {
    if (c->o->max_elems > 0 && largest_buf(c->op, s) > c->o->max_elems) return 1;
    const kp_backend_info *bi = kp_backend_get(c->o->backend);
    return (bi->edge_max_flops > 0 && c->op->flops(s) > bi->edge_max_flops) ||
           (bi->edge_max_bytes > 0 && c->op->min_bytes(s) > bi->edge_max_bytes);
}

int kpp_pick_shapes(ctx *c, shape_item *items, int cap) {
    const kp_eval_opts *o = c->o;
    int n = 0;
    const kp_backend_info *bi = kp_backend_get(o->backend);
    int sets = o->shape_sets;
    int fixed_only = !GUARD(c, KPP_G_SHAPES);
    if (o->nshapes > 0) {
        for (int i = 0; i < o->nshapes && n < cap; i++) items[n++] = (shape_item){o->shapes[i], "user", 1};
        if (!o->user_shapes_plus) return n;
        sets &= 2 | 8;
    }
    const kp_shape_set *timed = bi->timed_quick ? &c->op->quick : &c->op->canonical;
    if ((sets & 1) || (sets & 4))
        for (int i = 0; i < timed->n && n < cap; i++) items[n++] = (shape_item){timed->shapes[i], timed->label, 1};
    if ((sets & 2) && !fixed_only)
        for (int i = 0; i < c->op->edge.n && n < cap; i++) {
            if (skip_shape(c, &c->op->edge.shapes[i])) continue;
            items[n++] = (shape_item){c->op->edge.shapes[i], "edge", 0};
        }
    if ((sets & 8) && !fixed_only)
        for (int i = 0; i < 2 && n < cap; i++) {
            kp_shape s;
            int64_t most = bi->drawn_max_elems;
            if (o->max_elems > 0 && o->max_elems < most) most = o->max_elems;
            c->op->draw_shape(kp_rng_next(&c->rng), most, &s);
            items[n++] = (shape_item){s, "drawn", 0};
        }
    return n;
}

/* kernels/<family>/<backend>/<dtype>-NN-*.{c,cu}: the naive one (lowest NN),
 * the project's best (highest NN), and library wrappers (<dtype>-<lib>). */
int kpp_find_baselines(ctx *c, part *parts, int maxp, uint64_t cand_hash) {
    char dir[PATH_MAX];
    const char *be = kp_backend_name(c->o->backend);
    snprintf(dir, sizeof dir, "%s/kernels/%s/%s", c->o->root, c->op->family, be);
    const char *dt = kp_dtype_name(c->op->dtype);
    size_t dl = strlen(dt);
    char lo[256] = "", hi[256] = "", lib[256] = "";
    int nlo = INT_MAX, nhi = -1;
    kp_name *names = NULL;
    int nn = kp_list_dir(dir, &names);
    for (int f = 0; f < nn; f++) {
        const char *nm = names[f];
        if (strncmp(nm, dt, dl) != 0 || nm[dl] != '-') continue;
        const char *ext = strrchr(nm, '.');
        if (!ext || (strcmp(ext, ".c") && strcmp(ext, ".cu"))) continue;
        const char *rest = nm + dl + 1;
        if (rest[0] >= '0' && rest[0] <= '9') {
            int num = (int)strtol(rest, NULL, 10);
            if (num < nlo) nlo = num, snprintf(lo, sizeof lo, "%s", nm);
            char path[PATH_MAX + 256];
            snprintf(path, sizeof path, "%s/%s", dir, nm);
            if (num > nhi && !kp_kernel_not_best(path)) nhi = num, snprintf(hi, sizeof hi, "%s", nm);
        } else if (!lib[0]) {
            snprintf(lib, sizeof lib, "%s", nm);
        }
    }
    free(names);
    int np = 0;
    const char *pick[3];
    int npick = 0;
    if (!GUARD(c, KPP_G_STRONG_BASE)) {
        if (lo[0]) pick[npick++] = lo;
    } else {
        if (lib[0]) pick[npick++] = lib;
        if (hi[0]) pick[npick++] = hi;
        if (lo[0] && strcmp(lo, hi)) pick[npick++] = lo;
    }
    if (c->o->max_baselines > 0 && maxp > c->o->max_baselines) maxp = c->o->max_baselines;
    for (int i = 0; i < npick && np < maxp; i++) {
        part *p = &parts[np];
        memset(p, 0, sizeof *p);
        snprintf(p->path, sizeof p->path, "%s/%s", dir, pick[i]);
        if (kp_file_hash(p->path) == cand_hash) continue; /* the candidate itself */
        snprintf(p->name, sizeof p->name, "%.*s", (int)(strrchr(pick[i], '.') - pick[i]), pick[i]);
        np++;
    }
    return np;
}

/* Device facts and measured peaks into the result, from the trusted worker. */
void kpp_calibrate(ctx *c, part *p) {
    char err[300] = "";
    kp_env e;
    int measured = 0;
    const char *cache = c->o->cache_dir ? c->o->cache_dir : kp_default_cache();
    if (kp_device_facts(p->w, cache, 0, &e, &c->calib, &measured, err, sizeof err))
        kp_result_warn(c->r, "calibration failed (%s): no speed-of-light bound", err);
    if (measured) kpp_progress(c, "measured this device's peaks once (cached in %s)", cache);
    char date[32];
    memcpy(date, c->r->env.date, sizeof date);
    c->r->env = e;
    memcpy(c->r->env.date, date, sizeof date);
    c->r->env.peak_gbs = c->calib.copy_gbs;
    c->r->env.peak_gflops_f32 = c->calib.gemm_f32_gflops;
    c->r->env.peak_gflops_bf16 = c->calib.gemm_bf16_gflops;
}

void kpp_env_after(ctx *c, part *p) {
    char err[200];
    size_t got;
    kp_env e;
    memset(&e, 0, sizeof e);
    if (!p->alive || kp_wk_call(p->w, KP_MSG_ENV, NULL, 0, NULL, 0, &e, sizeof e, &got, 30, err, sizeof err)) return;
    kp_env *r = &c->r->env;
    r->sm_mhz_after = e.sm_mhz_before;
    r->mem_mhz_after = e.mem_mhz_before;
    r->throttle_after = e.throttle_before;
    if (r->sm_mhz_before > 0 && r->sm_mhz_after > 0) {
        double ch = (double)r->sm_mhz_after / r->sm_mhz_before - 1;
        if (fabs(ch) > 0.10)
            kp_result_warn(c->r, "SM clock moved %+.0f%% during the run (%d -> %d MHz): compare numbers with care",
                           100 * ch, r->sm_mhz_before, r->sm_mhz_after);
    }
}

int kp_eval_participants(const kp_eval_opts *o) {
    if (o->correctness_only) return 0;
    if (o->no_baseline) return 1;
    ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.op = o->op;
    c.flaws = o->flaws;
    part parts[MAX_PART - 1];
    return 1 + kpp_find_baselines(&c, parts, MAX_PART - 1, kp_file_hash(o->candidate));
}
