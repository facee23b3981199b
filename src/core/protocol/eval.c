/* eval.c: the protocol. Parent side only: it picks seeds after the worker
 * has loaded the candidate, generates the same inputs on the CPU, computes
 * the float64 references, verifies every output it fetches, computes every
 * statistic and decides the verdict. Workers only run calls and report.
 *
 * Per shape:
 *   1. correctness (correctness.c): every distribution, 2 fresh input sets
 *      each, then a fresh round on the same pointers, some calls between on
 *      pointers that are not 16-byte aligned; poisoned outputs, canaries,
 *      input checksums, thread counts, end-of-window snapshot, full
 *      comparison.
 *   2. timing (timing.c, benchmark shapes): >= 8 input sets in shuffled
 *      rotation, a cache flush before every call, events + device sync +
 *      host clock, every timed output checked (sampled when large),
 *      baselines measured interleaved with the candidate, stopping on a
 *      noise criterion.
 *   3. sanity: the parent-side clock around a batch bounds the reported time
 *      from below, and the speed-of-light bound from measured peaks
 *      (timing.c); the activity audit (cuda) for work outside the calls,
 *      other streams and library kernels (account.c), after each phase.
 * The naive protocol switches groups of these off (kp_flaw_*), one flaw at
 * a time or all together, to show what each lets through.
 *
 * This file is the driver: kp_eval builds the participants, calibrates,
 * starts the candidate's worker, runs each shape's phases and folds the
 * shapes' verdicts into the run's. The rest of src/core/protocol/:
 *   baselines.c      the shapes, the baselines, the device's facts and peaks
 *   participants.c   a participant's build and worker: start, stop, input
 *                    setup, calls and their reports, fetches, worker errors
 *   inputs.c         input sets: seeds, generation, checksums, float64
 *                    references, lazy sets
 *   correctness.c    phase 1, and the full and sampled output checks
 *   timing.c         phase 2, the statistics, speed of light, parent clock
 *   account.c        the device-work account (cuda)
 *   protocol_priv.h  what they share: the context, participants, input sets
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/protocol/protocol_priv.h"
#include "kproof/backends.h"

/* ---- shared by the phases -------------------------------------------------------- */

void kpp_progress(const ctx *c, const char *fmt, ...) {
    if (!c->o->progress) return;
    va_list ap;
    va_start(ap, fmt);
    static double t0;
    if (t0 == 0) t0 = kp_wall_s();
    fprintf(stderr, "[kproof %6.1fs] ", kp_wall_s() - t0);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

int kpp_work(ctx *c, int work) {
    double now = kp_wall_s();
    if (c->work_sr) c->work_sr->work_s[c->work] += now - c->work_t0;
    int was = c->work;
    c->work = work;
    c->work_t0 = now;
    return was;
}

/* Sets a shape's verdict once: the first decisive finding is the evidence. */
int kpp_decide(kp_shape_result *sr, kp_verdict v, const char *check, const char *fmt, ...) {
    if (sr->verdict != KP_PASS) return 1;
    sr->verdict = v;
    snprintf(sr->check_name, sizeof sr->check_name, "%s", check);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sr->detail, sizeof sr->detail, fmt, ap);
    va_end(ap);
    return 1;
}

/* ---- the whole evaluation --------------------------------------------------------- */

static kp_verdict worse(kp_verdict a, kp_verdict b) {
    static const int rank[] = {0, 3, 4, 2, 1}; /* PASS, WRONG, REJECTED, ERROR, NOISY */
    return rank[b] > rank[a] ? b : a;
}

static void protocol_name(int flaws, char *buf, size_t len) {
    if (!flaws) {
        snprintf(buf, len, "rigorous");
        return;
    }
    if (flaws == KP_FLAW_ALL) {
        snprintf(buf, len, "naive");
        return;
    }
    size_t u = (size_t)snprintf(buf, len, "naive(");
    int first = 1;
    for (int b = 0; b < KP_NFLAWS; b++)
        if (flaws & (1 << b)) {
            u += (size_t)snprintf(buf + u, u < len ? len - u : 0, "%s%s", first ? "" : ",", kp_flaw_name(1 << b));
            first = 0;
        }
    snprintf(buf + u, u < len ? len - u : 0, ")");
}

/* The run's wall time and its share of the device lock, since t0 / w0 / h0;
 * held seconds not yet given a phase are the start's (a worker's stop). */
static void finish_times(kp_result *r, double t0, double w0, double h0) {
    double w, h;
    kp_devlock_times(&w, &h);
    r->wall_s = kp_wall_s() - t0;
    r->lock_wait_s = w - w0;
    r->lock_held_s = h - h0;
    double given = 0;
    for (int ph = 0; ph < KP_NPHASES; ph++) given += r->lock_held_phase_s[ph];
    if (r->lock_held_s > given) r->lock_held_phase_s[KP_PH_START] += r->lock_held_s - given;
}

static int eval_body(const kp_eval_opts *o, kp_result *r, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.op = o->op;
    c.r = r;
    c.flaws = o->flaws;
    r->op = o->op;
    r->backend = o->backend;
    r->seed = o->seed ? o->seed : kp_entropy_seed();
    c.rng.s = r->seed;
    snprintf(r->candidate, sizeof r->candidate, "%s", o->candidate);
    protocol_name(c.flaws, r->protocol, sizeof r->protocol);
    kp_now_iso(r->env.date, sizeof r->env.date);
    double t_start = kp_wall_s(), lock_w0, lock_h0;
    kp_devlock_times(&lock_w0, &lock_h0);

    part parts[MAX_PART];
    memset(parts, 0, sizeof parts);
    int np = 1;
    snprintf(parts[0].name, sizeof parts[0].name, "candidate");
    snprintf(parts[0].path, sizeof parts[0].path, "%s", o->candidate);
    if (!kp_file_exists(o->candidate)) {
        snprintf(err, errlen, "cannot read %s: no such file", o->candidate);
        return -1;
    }
    if (kp_wk_available(o->backend, err, errlen)) return -1;
    kp_devlock_open_backend(o->backend);
    kpp_progress(&c, "building %s for the %s backend", o->candidate, kp_backend_name(o->backend));
    double tp = t_start, hp = lock_h0;
    kp_shape_result *cur = NULL; /* the shape in progress, whose phases these are too */
    /* A phase's wall seconds, and those of them the device lock was held. */
#define PHASE(ph)                                                                                              \
    do {                                                                                                       \
        double now_ = kp_wall_s(), w_, h_;                                                                     \
        kp_devlock_times(&w_, &h_);                                                                            \
        r->phase_s[ph] += now_ - tp;                                                                           \
        r->lock_held_phase_s[ph] += h_ - hp;                                                                   \
        if (cur) {                                                                                             \
            cur->phase_s[ph] += now_ - tp;                                                                     \
            cur->lock_held_s += h_ - hp;                                                                       \
        }                                                                                                      \
        tp = now_;                                                                                             \
        hp = h_;                                                                                               \
    } while (0)
    int brc = kpp_build_part(&c, &parts[0], r, 1);
    PHASE(KP_PH_BUILD);
    if (brc) {
        finish_times(r, t_start, lock_w0, lock_h0);
        return 0;
    }
    /* Baselines (and the trusted worker used for calibration). */
    part trusted;
    memset(&trusted, 0, sizeof trusted);
    int nb = 0;
    if (!o->no_baseline && !o->correctness_only) {
        nb = kpp_find_baselines(&c, parts + 1, MAX_PART - 1, kp_file_hash(o->candidate));
        for (int i = 1; i <= nb; i++) {
            if (kpp_build_part(&c, &parts[i], r, 0) == 0) parts[np++] = parts[i];
        }
    }
    PHASE(KP_PH_BUILD);
    /* Calibration runs in a worker that holds a project kernel, never the candidate. */
    if (o->env_hint) {
        /* Facts and peaks read once by the caller, held in memory: nothing a
         * candidate writes to the cache between evaluations reaches them. */
        r->env = *o->env_hint;
        kp_now_iso(r->env.date, sizeof r->env.date);
        c.calib.copy_gbs = r->env.peak_gbs;
        c.calib.gemm_f32_gflops = r->env.peak_gflops_f32;
        c.calib.gemm_bf16_gflops = r->env.peak_gflops_bf16;
        if (c.calib.copy_gbs <= 0) kp_result_warn(r, "no calibration for this device: no speed-of-light bound");
    } else {
        if (kp_trusted_start(o->backend, o->root, o->cache_dir ? o->cache_dir : kp_default_cache(), &trusted.w, err,
                             errlen))
            return -1;
        trusted.alive = 1;
        kpp_calibrate(&c, &trusted);
        c.trusted = &trusted;
    }

    /* Seeds are drawn only after the candidate's worker has loaded it. */
    char e3[600];
    int rc = kpp_part_start(&c, &parts[0], e3, sizeof e3);
    if (rc != KP_WK_OK) {
        r->verdict = KP_ERROR;
        if (rc >= 100) {
            snprintf(r->check_name, sizeof r->check_name, "load");
            snprintf(r->detail, sizeof r->detail, "%s", e3);
        } else if (rc == KP_WK_SYS) {
            kpp_part_stop(&parts[0]);
            if (trusted.w) kp_wk_stop(trusted.w);
            if (kp_backend_get(o->backend)->gpu && parts[0].hello.status == KP_LOAD_DEVICE)
                snprintf(err, errlen, "%s (where this GPU works outside kproof, run again with --no-sandbox to see "
                         "whether the worker's sandbox is the cause)", e3);
            else
                snprintf(err, errlen, "%s", e3);
            return -1;
        } else {
            kp_shape_result tmp;
            memset(&tmp, 0, sizeof tmp);
            kpp_worker_failed(&c, &parts[0], &tmp, rc, "loading the candidate", e3);
            snprintf(r->check_name, sizeof r->check_name, "%s", tmp.check_name);
            snprintf(r->detail, sizeof r->detail, "%s", tmp.detail);
        }
        kpp_part_stop(&parts[0]);
        if (trusted.w) kp_wk_stop(trusted.w);
        finish_times(r, t_start, lock_w0, lock_h0);
        return 0;
    }
    /* No account, no PASS: on a GPU a time is vouched for only when every
     * piece of device work the candidate causes can be seen. */
    if (kp_backend_get(o->backend)->has_tracer && !o->unaudited && !parts[0].hello.traced) {
        r->verdict = KP_ERROR;
        snprintf(r->check_name, sizeof r->check_name, "harness");
        snprintf(r->detail, sizeof r->detail,
                 "device activity tracing is unavailable (%s), and kproof does not vouch for device work it cannot "
                 "see. Detach other profilers (Nsight, other CUPTI clients) or allow profiling for this user; "
                 "--unaudited times without tracing (every row then says so); --no-sandbox tells whether the "
                 "sandbox stops it",
                 parts[0].hello.trace_error[0] ? parts[0].hello.trace_error : "no reason given");
        kpp_part_stop(&parts[0]);
        if (trusted.w) kp_wk_stop(trusted.w);
        finish_times(r, t_start, lock_w0, lock_h0);
        return 0;
    }
    r->unaudited = kp_backend_get(o->backend)->has_tracer && o->unaudited;
    if (r->unaudited)
        kp_result_warn(r, "unaudited: device work was not traced (--unaudited), so work outside the timed calls "
                       "would go unseen");
    /* Baselines start before the first timing phase, not here: a candidate
     * that fails its correctness (most of the exploit corpus) never needs
     * them, and a worker start holds the device lock. */
    int baselines_started = 0;

    PHASE(KP_PH_START);
    shape_item items[64];
    int ns = kpp_pick_shapes(&c, items, 64);
    r->shapes = (kp_shape_result *)calloc((size_t)(ns ? ns : 1), sizeof *r->shapes);
    if (!r->shapes) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int stop = 0;
    for (int i = 0; i < ns && !stop; i++) {
        kp_shape_result *sr = &r->shapes[r->nshapes++];
        double shape_start = kp_wall_s();
        PHASE(KP_PH_START); /* what ran between shapes */
        cur = sr;
        c.work_sr = sr;
        c.work = KP_WORK_OTHER;
        c.work_t0 = shape_start;
        sr->shape = items[i].s;
        sr->origin = items[i].origin;
        c.light_noise[0] = 0;
        c.light_ctl_ns = 0;
        char st[64];
        kp_shape_format(&sr->shape, st, sizeof st);
        char why[200];
        if (c.op->shape_ok && c.op->shape_ok(&sr->shape, why, sizeof why)) {
            snprintf(err, errlen, "shape %s is not valid for %s: %s", st, c.op->name, why);
            return -1;
        }
        kpp_progress(&c, "shape %d/%d %s (%s): correctness", i + 1, ns, st, items[i].origin);
        int bad = !GUARD(&c, KPP_G_ROUNDS) ? kpp_correctness_one_input(&c, &parts[0], &sr->shape, sr)
                                               : kpp_correctness(&c, &parts[0], &sr->shape, sr);
        PHASE(KP_PH_CORRECT);
        /* Every call of the correctness phase, accounted before timing. */
        if (!bad) {
            int was = kpp_work(&c, KP_WORK_ACCOUNT);
            bad = kpp_account(&c, &parts[0], sr, "the correctness calls", 0, NULL, 0);
            kpp_work(&c, was);
        }
        PHASE(KP_PH_AUDIT);
        if (!bad && items[i].timed && !o->correctness_only && !baselines_started) {
            baselines_started = 1;
            /* A worker's start forks this process, and the fork that keeps
             * the worker keeps what this process holds then for as long as
             * the worker runs: the references kept for later sets go
             * first (the timing phase sizes its sets to what is left). */
            kpp_ref_pool_drain();
            for (int k = 1; k < np; k++) {
                char e4[600];
                if (kpp_part_start(&c, &parts[k], e4, sizeof e4) != KP_WK_OK) {
                    kp_result_warn(r, "baseline %s did not start: %s", parts[k].name, e4);
                    kpp_part_stop(&parts[k]);
                }
            }
            PHASE(KP_PH_START);
        }
        if (!bad && items[i].timed && !o->correctness_only) bad = kpp_timing(&c, parts, np, &sr->shape, sr);
        PHASE(KP_PH_TIMING);
        /* Light requests the machine's own noise may explain (account.c):
         * a shape every other check let pass is NOISY, never PASS. */
        if (c.light_noise[0] && sr->verdict == KP_PASS) kpp_decide(sr, KP_NOISY, "noise", "%s", c.light_noise);
        kpp_work(&c, KP_WORK_OTHER);
        c.work_sr = NULL;
        cur = NULL;
        sr->wall_s = kp_wall_s() - shape_start;
        kpp_progress(&c, "shape %d/%d %s: %s in %.1f s", i + 1, ns, st, kp_verdict_name(sr->verdict), sr->wall_s);
        r->verdict = worse(r->verdict, sr->verdict);
        if (sr->verdict != KP_PASS && sr->verdict != KP_NOISY) {
            if (!r->check_name[0] || !strcmp(r->check_name, "noise")) { /* a failure outranks noise */
                snprintf(r->check_name, sizeof r->check_name, "%s", sr->check_name);
                snprintf(r->detail, sizeof r->detail, "at %s: %s", st, sr->detail);
            }
            stop = 1;
        } else if (sr->verdict == KP_NOISY && !r->check_name[0]) {
            snprintf(r->check_name, sizeof r->check_name, "%s", sr->check_name);
            snprintf(r->detail, sizeof r->detail, "at %s: %s", st, sr->detail);
        }
        for (int k = 0; k < np; k++) parts[k].n = parts[k].host_bound = parts[k].ov_parallel = parts[k].retired = 0;
        if (!parts[0].alive) stop = 1;
    }
    if (stop && r->nshapes < ns)
        kp_result_warn(r, "%d shape(s) not run after the first failure", ns - r->nshapes);
    kpp_env_after(&c, trusted.alive ? &trusted : &parts[0]);
    for (int k = 0; k < np; k++) kpp_part_stop(&parts[k]);
    if (trusted.w) kp_wk_stop(trusted.w);
    PHASE(KP_PH_START);
#undef PHASE
    finish_times(r, t_start, lock_w0, lock_h0);
    return 0;
}

int kp_eval(const kp_eval_opts *o, kp_result *r, char *err, size_t errlen) {
    const int rc = eval_body(o, r, err, errlen);
    kpp_ref_pool_drain(); /* references kept set to set live within one evaluation */
    return rc;
}
