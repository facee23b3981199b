/* timing.c: phase 2 and the sanity bounds: interleaved timed calls on
 * fresh input sets until the noise criterion stops them, the statistics,
 * the speed of light and the parent's own clock. Part of the protocol
 * (eval.c tells the story). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/protocol/protocol_priv.h"
#include "kproof/backends.h"
#include "kproof/limits.h"

/* ---- phase 2: timing -------------------------------------------------------------- */

/* A reported CPU time as request_own takes it off: the worker's report,
 * at most the reported time it was measured in (-1: none, the time). */
static double capped(double cpu_s, double s) { return cpu_s >= 0 && cpu_s < s ? cpu_s : s; }

/* A timed RUN request's own time: the parent's clock around it, less the
 * call's reported time and the flush the worker reported (use_cpu 0). On
 * the host, also the worker process's CPU over the request (every thread,
 * from the kernel) less the CPU the worker reports for its main thread in
 * the call's window and the flush, each taken at most as long as its
 * reported time (use_cpu 1; NAN where the request's CPU was not read).
 * With the flush left in (with_flush), nothing of the flush is taken off.
 * Waiting for a CPU is in the wall times and not in the CPU: on a host
 * whose cores are all busy a request waits whole milliseconds at random,
 * before, in or after the call, in one worker's requests more than
 * another's. Work is in both: work on the worker's main thread in the
 * request outside the window lengthens the wall time and is CPU of the
 * process; work on other threads that the main thread waits for is their
 * CPU. Reports are the candidate's to forge, so none is taken beyond its
 * reported time: a longer call is a slower timed sample, a longer flush is
 * held to the baselines' (request_overhead). */
static double request_own(const run_out *ro, int with_flush, int use_cpu) {
    const kp_run_rep *r = &ro->rep;
    if (!use_cpu) return ro->wall - r->event_s - (with_flush ? 0 : r->flush_s);
    if (ro->cpu < 0) return NAN;
    return ro->cpu - capped(r->event_cpu_s, r->event_s) - (with_flush ? 0 : capped(r->flush_cpu_s, r->flush_s));
}

static int push_sample(part *p, double t, double th, const run_out *ro) {
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        double **arr[] = {&p->t, &p->th, &p->ov, &p->ovf, &p->ovc, &p->ovfc, &p->waited, &p->callc};
        for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
            double *a = (double *)realloc(*arr[i], (size_t)cap * sizeof *a);
            if (!a) return -1;
            *arr[i] = a;
        }
        p->cap = cap;
    }
    p->t[p->n] = t;
    p->th[p->n] = th;
    p->ov[p->n] = request_own(ro, 0, 0);
    p->ovf[p->n] = request_own(ro, 1, 0);
    p->ovc[p->n] = request_own(ro, 0, 1);
    p->ovfc[p->n] = request_own(ro, 1, 1);
    p->waited[p->n] = ro->cpu >= 0 && ro->wall > 0 ? (ro->cpu < ro->wall ? 1 - ro->cpu / ro->wall : 0) : NAN;
    p->callc[p->n] = ro->cpu >= 0 ? capped(ro->rep.event_cpu_s, ro->rep.event_s) : NAN;
    /* Threads other than the main one worked in the request (the kernel's
     * numbers): a parallel call, whose CPU outruns the main thread's. */
    if (ro->cpu >= 0 && (ro->main_cpu < 0 || ro->cpu - ro->main_cpu > 100e-6 + 0.05 * ro->cpu)) p->ov_parallel++;
    p->n++;
    return 0;
}

static int64_t set_bytes(const kp_op *op, const kp_shape *sh) {
    int64_t b = 0;
    for (int i = 0; i < op->nbufs; i++) b += op->buf_elems(sh, i) * (int64_t)kp_dtype_size(op->bufs[i].dtype);
    return b;
}

/* ---- the rotation's memory ---------------------------------------------------------- */

/* Bytes of one buffer's block in a worker: the data, a canary guard
 * either side and the misalignment room (src/worker/worker.c), rounded
 * up to whole pages with one more for the allocator. */
static int64_t block_bytes(int64_t data) {
    int64_t b = data + 2 * KP_CANARY_BYTES + 16;
    return (b + 4095) / 4096 * 4096 + 4096;
}

static int64_t output_bytes(const kp_op *op, const kp_shape *sh) {
    int ob = kp_op_output_buf(op);
    return op->buf_elems(sh, ob) * (int64_t)kp_dtype_size(op->bufs[ob].dtype);
}

/* Where the device's memory is the host's (the host backend), each
 * worker holds its sets' blocks, the output snapshot, the staging buffer
 * its largest fetch left (at most a frame) and the flush buffer (twice the
 * cache counted, at most 64 MiB). The parent holds every whole set
 * (inputs and float64 reference; a lazy set only its seed) and what one
 * check fetches (at most 64 MiB counted). */
void kp_timing_mem_of(const kp_eval_opts *o, const kp_shape *sh, kp_timing_mem *m) {
    const kp_op *op = o->op;
    ctx c;
    memset(&c, 0, sizeof c);
    c.flaws = o->flaws;
    memset(m, 0, sizeof *m);
    m->min_sets = GUARD(&c, KPP_G_ROTATE) ? 2 : 1;
    int64_t largest = 0;
    for (int b = 0; b < op->nbufs; b++) {
        int64_t bytes = op->buf_elems(sh, b) * (int64_t)kp_dtype_size(op->bufs[b].dtype);
        largest = bytes > largest ? bytes : largest;
        m->worker_set += block_bytes(bytes);
    }
    int64_t out = output_bytes(op, sh);
    m->worker_base = out + (largest < (int64_t)KP_FRAME_MAX ? largest : (int64_t)KP_FRAME_MAX) + ((int64_t)64 << 20);
    if (kp_backend_get(o->backend)->gpu) m->worker_set = m->worker_base = 0; /* device memory */
    m->parent_set = kpp_sets_lazy(op, sh) ? 0 : kpp_iset_host_bytes(op, sh);
    m->parent_base = out < ((int64_t)64 << 20) ? out : ((int64_t)64 << 20);
}

int64_t kp_timing_mem_need(const kp_timing_mem *m, int nworkers, int nsets) {
    return nworkers * (m->worker_base + nsets * m->worker_set) + m->parent_base + nsets * m->parent_set;
}

/* The rotation sized to this machine's memory: the most sets, up to
 * `want`, whose footprint (kp_timing_mem_of) stays within 3/4 of the
 * memory available now plus what the workers already hold and will reuse
 * or free (their last SETUP); else the fewest the protocol rotates over,
 * where they fit at all. Returns the count, or 0 with the shape decided
 * (ERROR memory) when even those do not fit. */
static int fit_sets(ctx *c, part *parts, int np, const kp_shape *sh, int want, kp_shape_result *sr) {
    kp_timing_mem m;
    kp_timing_mem_of(c->o, sh, &m);
    int nw = 0;
    int64_t held = 0;
    for (int k = 0; k < np; k++) {
        if (k > 0 && !parts[k].alive) continue;
        nw++;
        if (m.worker_set > 0 && parts[k].held_sets > 0) {
            kp_timing_mem h;
            kp_timing_mem_of(c->o, &parts[k].held_shape, &h);
            held += parts[k].held_sets * h.worker_set + output_bytes(c->op, &parts[k].held_shape);
        }
    }
    double avail = (double)kp_host_mem_available() + (double)held;
    if ((double)kp_timing_mem_need(&m, nw, want) <= 0.75 * avail) return want;
    /* Tight: the references kept for later sets go first (a lazy rotation
     * never uses them; a whole one takes them back as it builds). */
    kpp_ref_pool_drain();
    avail = (double)kp_host_mem_available() + (double)held;
    int n = want;
    while (n > m.min_sets && (double)kp_timing_mem_need(&m, nw, n) > 0.75 * avail) n--;
    double need = (double)kp_timing_mem_need(&m, nw, n);
    if (need > avail) {
        kpp_decide(sr, KP_ERROR, "memory",
                   "timing needs %.1f GiB of host memory (%d input set(s) for %d worker(s) and the parent) and %.1f "
                   "GiB is available: %s",
                   need / 1073741824.0, n, nw, avail / 1073741824.0,
                   nw > 1 ? "--no-baseline times the candidate alone, or a smaller --shape fits" : "a smaller --shape fits");
        return 0;
    }
    if (n < want) {
        char st[64];
        kp_shape_format(sh, st, sizeof st);
        kpp_progress(c, "  timing: %d input sets instead of %d, to fit the host's memory (%.1f GiB for %d worker(s) "
                     "and the parent, of %.1f GiB available)",
                     n, want, need / 1073741824.0, nw, avail / 1073741824.0);
        kp_result_warn(c->r, "%s: timing rotated over %d input sets instead of %d, as many as %.1f GiB of available "
                       "host memory holds (%.1f GiB with %d worker(s))",
                       st, n, want, avail / 1073741824.0, need / 1073741824.0, nw);
    }
    return n;
}

/* The speed-of-light time at the measured peaks, and its fraction of the
 * median. */
static void sol_fill(ctx *c, const kp_shape *sh, kp_timing *t) {
    double sol = 0;
    if (c->calib.copy_gbs > 0) sol = c->op->min_bytes(sh) / (c->calib.copy_gbs * 1e9);
    double peak = 0;
    if (strcmp(c->op->family, "matmul") == 0)
        peak = c->op->dtype == KP_BF16 ? c->calib.gemm_bf16_gflops : c->calib.gemm_f32_gflops;
    /* The arithmetic ceiling is the chip's, not cuBLAS's: cuBLAS reaches
     * about 77-80% of the H200's datasheet rates (measured: 51.4 of ~67
     * TFLOP/s fp32, ~790 of ~990 bf16), so a kernel may beat it by ~1.3x. */
    peak *= 1.3;
    if (peak > 0 && c->op->flops(sh) / (peak * 1e9) > sol) sol = c->op->flops(sh) / (peak * 1e9);
    t->sol_time = sol;
    t->sol_fraction = (sol > 0 && t->median > 0) ? sol / t->median : 0;
}

static void fill_timing(ctx *c, const kp_shape *sh, part *p, kp_timing *t) {
    memset(t, 0, sizeof *t);
    if (p->n == 0) return;
    t->n = p->n;
    t->samples = (double *)malloc((size_t)p->n * sizeof(double));
    if (t->samples) memcpy(t->samples, p->t, (size_t)p->n * sizeof(double));
    t->median = kp_median(p->t, p->n);
    t->mean = kp_mean(p->t, p->n);
    t->min = kp_quantile(p->t, p->n, 0.0);
    kp_boot_median_ci(p->t, p->n, 0.95, 2000, kp_rng_next(&c->rng), &t->lo, &t->hi);
    t->host_median = kp_median(p->th, p->n);
    t->host_bound = p->host_bound;
    double rate = GUARD(c, KPP_G_MEDIAN) ? t->median : t->mean;
    if (rate > 0) {
        t->gbs = c->op->min_bytes(sh) / rate * 1e-9;
        t->gflops = c->op->flops(sh) / rate * 1e-9;
    }
    sol_fill(c, sh, t);
}

/* Parent-side clock. Batches of n calls, each on a freshly poisoned output
 * as in timed calls, and the same batches without the calls, timed from
 * this process (on the host, their CPU where that counts); the
 * difference per call is what a (warm) call really costs, at most what a
 * cold one does. The fastest of several of each is kept (preemption only
 * slows a batch down). The batch's last output is
 * checked too, so a candidate cannot idle through it.
 *
 * On the host, where nothing traces the work, each batch with calls runs
 * on sets of inputs made for it alone, its calls rotating over them (one
 * set a call where the batch has at most FLOOR_SETS calls), so no call of
 * those can be served from an answer kept from an earlier one; and every
 * set's last output of every such batch is checked. Returns 0 with *floor
 * set, or 1 when it decided the shape's verdict. */
#define FLOOR_SETS KP_MAX_SETS
#define LIGHT_CAP_NS 1000000 /* 1 ms: honest INPUTS requests took 12-363 us */

static int floor_batch(ctx *c, part *p, int n, int call, int rotate, double median, kp_shape_result *sr, double *w,
                       double *wc) {
    char err[300];
    kp_batch_req q = {0, n, call, rotate};
    kp_batch_rep rep;
    size_t got;
    int rc = kp_wk_call(p->w, KP_MSG_BATCH, &q, sizeof q, NULL, 0, &rep, sizeof rep, &got,
                        c->o->timeout_s + (median + 0.05) * n * 4, err, sizeof err);
    p->snap_set = -1; /* a batch takes no snapshot: its outputs are read where they are */
    if (rc) {
        p->alive = 0;
        return kpp_worker_failed(c, p, sr, rc, "timing a batch of calls with the parent's clock", err);
    }
    if (rep.rc)
        return kpp_decide(sr, KP_ERROR, "rc", "the entry point %s returned %d in a batch of calls", c->op->entry, rep.rc);
    /* And on the host the batch's CPU (-1 where not read): parent_floor_body
     * says which counts. */
    double cpu = kp_wk_last_cpu(p->w);
    *w = kp_wk_last_wall(p->w) / n;
    *wc = cpu >= 0 ? cpu / n : -1;
    return 0;
}

/* The batches without calls, on the host, where a candidate could tell
 * them from the others and slow them (a slower control shrinks the
 * floor): in a baseline's worker, which holds at least `ns` sets of this
 * shape and runs no code of the candidate's. NULL: none is standing. */
static part *control_part(part *parts, int np, const kp_shape *sh, int ns) {
    for (int k = 1; k < np; k++)
        if (parts[k].alive && parts[k].w && parts[k].held_sets >= ns &&
            memcmp(&parts[k].held_shape, sh, sizeof *sh) == 0)
            return &parts[k];
    return NULL;
}

static int parent_floor_body(ctx *c, part *parts, int np, int nsets, double median, double fastest,
                             const kp_shape *sh, iset *tsets,
                             kp_shape_result *sr, double *floor) {
    part *p = &parts[0];
    *floor = 0;
    const int fresh = !kp_backend_get(c->o->backend)->has_tracer;
    /* A batch holds about 2 ms of calls. On the host a candidate that
     * reports a short median cannot lengthen it past its sets by that
     * alone (where calls repeat a set, only the last one's output can be
     * checked, and the calls before it could return at once): the batch
     * holds at most as many calls as the fastest baseline's 2 ms, or as
     * its sets, whichever is more. (`fastest`: the fastest baseline's
     * median when the timing ended, 0 for none.) */
    int n = median > 0 ? (int)(0.002 / median) : 100;
    if (fresh && fastest > 0) {
        int cap = (int)(0.002 / fastest), sets_most = nsets < FLOOR_SETS ? nsets : FLOOR_SETS;
        if (cap < sets_most) cap = sets_most;
        if (n > cap) n = cap;
    }
    if (n < 2) n = 2;
    if (n > 1000) n = 1000;
    double best[2] = {0, 0}, best_c[2] = {0, 0};
    int cpu_all = 1; /* every batch kept had its CPU read */
    int ns = 0; /* fresh sets a batch (host): its calls rotate over them */
    if (fresh) {
        /* One set a call where a batch has at most FLOOR_SETS calls. A
         * longer batch (calls under 2 ms / FLOOR_SETS) repeats its sets,
         * and only each set's last output can be checked: a candidate that
         * returns at once from the calls before it shrinks the floor to
         * FLOOR_SETS of its n calls (docs/protocol.md says what that
         * lets through). Batches of one call a set, however short, were
         * tried: at a few microseconds a call the round trip's noise
         * outweighed the calls, and honest kernels were REJECTED. */
        ns = n < FLOOR_SETS ? n : FLOOR_SETS;
        if (ns > nsets) ns = nsets; /* what the memory fit allowed each worker */
        if (ns < 1) ns = 1;
    }
    part *ctl = fresh ? control_part(parts, np, sh, ns) : NULL;
    iset sets[FLOOR_SETS];
    memset(sets, 0, sizeof sets);
    int m = 0; /* sets built */
    int bad = 0;
    /* A batch whose set-up's light request (INPUTS) took the worker's own
     * thread more than LIGHT_CAP_NS is not believed as the fastest: a
     * hooked call may have worked there on the batch's inputs. One such
     * request may be the kernel's doing; every one is the candidate's. */
    int calls = 0, tainted = 0;
    int64_t taint_ns = 0;
    /* LIGHT_CAP_NS, or where the account's control found the machine adding
     * its own time to every request (the shape is NOISY at best already)
     * the control's allowance a request. */
    const int64_t light_cap = c->light_ctl_ns > LIGHT_CAP_NS ? c->light_ctl_ns : LIGHT_CAP_NS;
    for (int b = 0; b < 18 && !bad; b++) {
        int call = b % 2;
        double w = 0, wc = -1;
        if (!call && ctl) {
            /* A baseline that fails here is dropped from the control, not
             * held against the candidate: its own control takes over. */
            kp_shape_result scratch;
            memset(&scratch, 0, sizeof scratch);
            if (floor_batch(c, ctl, n, 0, ns, median, &scratch, &w, &wc) == 0) {
                if (best[0] == 0 || w < best[0]) best[0] = w;
                if (wc < 0) cpu_all = 0;
                else if (best_c[0] == 0 || wc < best_c[0]) best_c[0] = wc;
                continue;
            }
            kp_result_warn(c->r, "baseline %s dropped from the parent clock's control batches: %s", ctl->name,
                           scratch.detail);
            ctl->alive = 0;
            ctl = NULL;
        }
        if (fresh && call) {
            /* Built without the device, as the timing passes build theirs;
             * set up in the worker before the clock. */
            char err[200];
            for (int i = 0; i < m; i++) kpp_iset_free(c->op, &sets[i]);
            m = 0;
            const int whole = !tsets[0].lazy;
            if (whole) kp_devlock_hold(0);
            int mk = kpp_iset_make_many(c, sh, 0, sets, ns, err, sizeof err);
            if (!mk) m = ns;
            if (whole && kp_devlock_hold(1)) {
                bad = kpp_decide(sr, KP_ERROR, "harness", "%s", kp_devlock_error());
                break;
            }
            if (mk) {
                bad = kpp_decide(sr, KP_ERROR, "harness", "%s", err);
                break;
            }
            const int64_t l0 = kp_wk_cpu_get(p->w, 0).light_ns;
            if (kpp_part_setup(c, p, sh, 0, sets, m, 1, NULL, sr)) {
                bad = 1;
                break;
            }
            const int64_t dl = kp_wk_cpu_get(p->w, 0).light_ns - l0;
            calls++;
            if (p->direct && dl > light_cap) {
                tainted++;
                if (dl > taint_ns) taint_ns = dl;
                w = -1; /* checked below, not believed */
            }
        }
        /* The batches without calls poison the same rotation of outputs
         * (the worker holds at least ns sets: the timing sets, or the last
         * batch's). */
        const int untrusted = w < 0;
        bad = floor_batch(c, p, n, call, fresh ? ns : 0, median, sr, &w, &wc);
        if (untrusted) w = wc = -1;
        /* Every batch with calls is checked, after its clock and before
         * the next batch poisons its outputs: each one's time may be the
         * fastest, so none may idle. */
        if (!bad && fresh && call && GUARD(c, KPP_G_CHECK_TIMED)) {
            c->check_what = "a call of a parent-clock batch";
            for (int i = 0; i < m && !bad; i++) bad = kpp_check_sampled(c, p, sh, &sets[i], i, sr);
            c->check_what = NULL;
        }
        if (!bad && w >= 0 && (best[call] == 0 || w < best[call])) best[call] = w;
        if (!bad && !untrusted) {
            if (wc < 0) cpu_all = 0;
            else if (best_c[call] == 0 || wc < best_c[call]) best_c[call] = wc;
        }
    }
    if (!bad && calls > 0 && tainted == calls)
        bad = kpp_decide(sr, KP_REJECTED, "account",
                         "before every parent-clock batch the worker's own thread used over %.1f ms of CPU in the "
                         "light request that hands over the batch's inputs (the most, %.2f ms), where the harness "
                         "stores a table of checksums: work done there on the batch's inputs is not timed",
                         light_cap * 1e-6, taint_ns * 1e-6);
    /* Without fresh sets the batches ran on set 0: its last output. */
    if (!bad && !fresh && GUARD(c, KPP_G_CHECK_TIMED)) {
        c->check_what = "the last call of a parent-clock batch";
        bad = kpp_check_sampled(c, p, sh, &tsets[0], 0, sr);
        c->check_what = NULL;
    }
    for (int i = 0; i < m; i++) kpp_iset_free(c->op, &sets[i]);
    if (bad) return 1;
    /* By the CPU where every batch's was read and the calls' is no more
     * than their wall time (one call on one thread): waiting for a CPU is
     * not work, and a busy host's batches wait milliseconds at random.
     * Every piece of a host call's work runs on a thread of the worker's
     * process, where the kernel counts it (the request's CPU is read once
     * every thread sleeps: kp_wk_last_cpu). A parallel call's threads make
     * the CPU more than the wall time: then both kinds of batch by the
     * wall. */
    if (cpu_all && best_c[1] > 0 && best_c[1] <= best[1])
        *floor = best_c[1] > best_c[0] ? best_c[1] - best_c[0] : 0;
    else
        *floor = best[1] > best[0] ? best[1] - best[0] : 0;
    return 0;
}

/* The same, its seconds charged to the floor. */
static int parent_floor(ctx *c, part *parts, int np, int nsets, double median, double fastest, const kp_shape *sh,
                        iset *set0, kp_shape_result *sr, double *floor) {
    int was = kpp_work(c, KP_WORK_FLOOR);
    int rc = parent_floor_body(c, parts, np, nsets, median, fastest, sh, set0, sr, floor);
    kpp_work(c, was);
    return rc;
}

static int timing_locked(ctx *c, part *parts, int np, const kp_shape *sh, iset *sets, int nsets,
                         kp_shape_result *sr);

/* Each timed RUN request's own time (request_own): the harness's work in
 * it (poison, guards, snapshot, the round trip), the same in every worker
 * at a shape (host: 0.1-2.3 ms, honest candidates within 85 us of their
 * baselines with two evals sharing 2 cores). A candidate whose requests
 * take longer than the baselines' by more than half its median, and by
 * more than 200 us and a tenth of theirs, worked inside them, outside its
 * window (a hooked call before or after the call), which the floor
 * believes up to 2x (kpp_request_verdict; where the CPU judges and the
 * calls' CPU is less than their time, an excess over half that CPU is
 * NOISY already). Against the baseline that spends the most, by the
 * worker's CPU where every side has it for at least half of its requests
 * and five, and no thread but the candidate's main one worked in most of
 * its requests (one call on one thread; the kernel's numbers, not the
 * worker's), with waiting for a CPU left out. Otherwise (CPU readings
 * missing, or a parallel call, whose other threads' CPU is no part of the
 * harness's work but cannot be told from work hidden there) by the
 * parent's clock: the check as it was before the CPU was
 * counted, which is also all a candidate gets that makes its readings go
 * missing or its CPU large on purpose; there a parallel candidate on a
 * host whose cores are all busy may still wait longer than its baselines.
 * Either way each side's 10% quantile: a busy host only adds, to the CPU
 * too (a worker sharing its core with a program that fills the caches
 * spent twice its baseline's CPU on the same harness work in most of its
 * requests, beside CI's compiles: honest layernorm bf16-01-naive at
 * 100x1031, 772 us to 375 us by the medians). The flush's time is the worker's report, which the
 * candidate could lengthen to hide such work, so the request's own time
 * with the flush left in is held to the baselines' too, with the margin
 * a flush's noise needs (a flush reads 64 MiB: 3.6-5.1 ms, up to 1.4 ms
 * apart between honest workers on a 2-core host running the tests):
 * work hidden behind a longer flush report is caught beyond half a flush,
 * and believed below it. */
#define OVERHEAD_MIN_S 200e-6
/* Up to the baseline's own time more is NOISY, not REJECTED: honest
 * workers' requests took up to 1.8x their baseline's CPU on the same
 * harness work in clean-clone test runs beside the compiles (10%
 * quantiles; rmsnorm f32-01-naive at 384x768, 2.708 ms to 1.477 ms), and
 * 2.7x once on the quiet machine at 1000003 elements (results/
 * 2026-12-05-host-95abf2e/sum-1000003-quiet.txt). run_ahead's hidden
 * softmax at 257x1000 is 1.3-1.8x its baseline's own time more
 * (results/2026-12-05-host-b436556). */
#define OVERHEAD_LOADED 1.0
#define FLUSH_MIN_S 300e-6

/* The q quantile of x's values that are not NAN (NAN where none is). */
static double q_known(const double *x, int n, double q) {
    double *v = (double *)malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    int k = 0;
    if (v)
        for (int i = 0; i < n; i++)
            if (!isnan(x[i])) v[k++] = x[i];
    double r = k > 0 ? kp_quantile(v, k, q) : NAN;
    free(v);
    return r;
}

/* How many of x's values are not NAN. */
static int known(const double *x, int n) {
    int k = 0;
    for (int i = 0; i < n; i++) k += !isnan(x[i]);
    return k;
}

/* The CPU readings of a side are enough to go by. */
static int cpu_enough(const part *p) {
    const int used = known(p->ovc, p->n);
    return used >= 5 && 2 * used >= p->n;
}

static double most_of(part *parts, int np, int with_flush, int cpu, const char **who) {
    double best = -1;
    for (int k = 1; k < np; k++)
        if (parts[k].alive && parts[k].n >= 5) {
            double m = cpu ? q_known(with_flush ? parts[k].ovfc : parts[k].ovc, parts[k].n, 0.1)
                           : kp_quantile(with_flush ? parts[k].ovf : parts[k].ov, parts[k].n, 0.1);
            if (m > best) best = m, *who = parts[k].name;
        }
    return best;
}

static void request_overhead(ctx *c, part *parts, int np, kp_shape_result *sr) {
    const double med = sr->cand.median;
    if (kp_backend_get(c->o->backend)->has_tracer || parts[0].n < 5 || !(med > 0)) return;
    const char *who = NULL, *fwho = NULL;
    int cpu = cpu_enough(&parts[0]) && 2 * parts[0].ov_parallel < parts[0].n;
    for (int k = 1; k < np && cpu; k++)
        if (parts[k].alive && parts[k].n >= 5 && !cpu_enough(&parts[k])) cpu = 0;
    const double base = most_of(parts, np, 0, cpu, &who), fbase = most_of(parts, np, 1, cpu, &fwho);
    if (base < 0 || fbase < 0) {
        char st[64];
        kp_shape_format(&sr->shape, st, sizeof st);
        kp_result_warn(c->r, "%s: no baseline stood through the timing: the timed requests' own time was not "
                       "compared (work outside the window is bounded by the parent clock at 2x)", st);
        return;
    }
    const double cand = cpu ? q_known(parts[0].ovc, parts[0].n, 0.1) : kp_quantile(parts[0].ov, parts[0].n, 0.1);
    const double fcand =
        cpu ? q_known(parts[0].ovfc, parts[0].n, 0.1) : kp_quantile(parts[0].ovf, parts[0].n, 0.1);
    const char *how = cpu ? "the worker's CPU" : "the parent's clock";
    sr->cand.request_by = cpu ? 1 : 2;
    sr->cand.request_own = cand;
    sr->cand.request_own_base = base;
    sr->cand.cpu_readings = known(parts[0].ovc, parts[0].n);
    /* A host so busy that the baseline's requests spent most of their time
     * waiting for a CPU cannot tell work hidden in a request from a worker
     * that shares its core with another program (its CPU on the same
     * harness work grows too, by up to twice in the runs seen): there
     * the excess is NOISY, never PASS. A candidate cannot make the
     * baselines' requests wait: its threads would have to work between its
     * own requests, where the accounting allows 5 ms a phase. */
    double busy = NAN;
    const char *bwho = who;
    for (int k = 1; k < np; k++)
        if (parts[k].alive && parts[k].n >= 5 && (!strcmp(parts[k].name, who) || !strcmp(parts[k].name, fwho))) {
            double wq = q_known(parts[k].waited, parts[k].n, 0.5);
            if (!isnan(wq) && (isnan(busy) || wq > busy)) busy = wq, bwho = parts[k].name;
        }
    const int too_busy = !isnan(busy) && busy > 0.5;
    /* Half of the candidate's median call, taken by the measure the excess
     * is: by the CPU, its calls' median CPU (at most the timed median). A
     * call that waits for a time it measures on its own clock takes longer
     * by the wall on a loaded host, and work hidden in its requests does
     * not (run_ahead, whose call waits for 60% of the hidden work's time by
     * its own clock). Where the calls waited for a CPU, an excess over
     * half their CPU but under half the timed median is NOISY, not
     * REJECTED: an honest worker's harness CPU varies that much there. The
     * CPU report is the candidate's to forge up to the call's time, which
     * gives back the timed median: no more than before. */
    double ref = med;
    if (cpu) {
        const double cm = q_known(parts[0].callc, parts[0].n, 0.5);
        if (!isnan(cm) && cm < ref) ref = cm;
    }
    sr->cand.request_call = ref;
    const kpp_own v = kpp_request_verdict(cand - base, fcand - fbase, base, fbase, ref, med, too_busy);
    if (v == KPP_OWN_PASS) return;
    /* The evidence: the excess, without the flush or with it, then why it
     * is what it is. */
    const int fl = v >= KPP_OWN_FLUSH_REJECTED;
    char a[48], b[48], e[48], head[320], tail[320];
    kp_fmt_time(a, sizeof a, fl ? fcand : cand, fl ? fcand : cand);
    kp_fmt_time(b, sizeof b, fl ? fbase : base, fl ? fbase : base);
    kp_fmt_time(e, sizeof e, cand - base, cand - base);
    if (fl)
        snprintf(head, sizeof head,
                 "each timed request took %s beyond the call's reported time, the cache flush included (%s), "
                 "where %s's worker takes %s", a, how, fwho, b);
    else
        snprintf(head, sizeof head,
                 "each timed request took %s beyond the call's reported time and the cache flush (%s), %s more "
                 "than %s's worker%s (%s)", a, how, e, who, v == KPP_OWN_REJECTED ? " spends on the same requests" : "",
                 b);
    switch (v) {
    case KPP_OWN_REJECTED:
        snprintf(tail, sizeof tail, ": work done in the request outside the timed window (a hooked harness call "
                                    "before or after the call) is not timed");
        break;
    case KPP_OWN_FLUSH_REJECTED:
        snprintf(tail, sizeof tail, ": the flush the worker reports is the candidate's to rewrite, and work done in "
                                    "the request outside the timed window but reported as flushing is not timed");
        break;
    case KPP_OWN_BUSY:
    case KPP_OWN_FLUSH_BUSY:
        snprintf(tail, sizeof tail,
                 ", on a host so busy that %s's requests spent %.0f%% of their time waiting for a CPU: %s cannot be "
                 "told from a worker sharing its core; run again on a quieter machine",
                 bwho, 100 * busy, fl ? "a longer flush report" : "work hidden in the requests");
        break;
    case KPP_OWN_BAND:
    case KPP_OWN_FLUSH_BAND:
        snprintf(tail, sizeof tail, ": more than honest workers differ by on a quiet machine, within what they "
                                    "differ by on a loaded one; run again on a quieter machine");
        break;
    default: /* KPP_OWN_WAITED, KPP_OWN_FLUSH_WAITED */
        snprintf(tail, sizeof tail, ": over half the calls' CPU, under half their timed median (the calls waited "
                                    "for a CPU); run again on a quieter machine");
    }
    const int rejected = v == KPP_OWN_REJECTED || v == KPP_OWN_FLUSH_REJECTED;
    kpp_decide(sr, rejected ? KP_REJECTED : KP_NOISY, rejected ? "timer" : "noise", "%s%s", head, tail);
}

/* What an excess of the timed requests' own time over the baselines' comes
 * to (ex, without the flush; fex, with it; base and fbase the baseline's
 * own; ref the median call it is held to half of, med the timed median).
 * Over its margin (half of ref, and 200 us and a tenth of the baseline's;
 * 0.3 ms and half the baseline's flush with the flush) an excess is
 * REJECTED beyond the baseline's own time and 200 us more (0.3 ms with
 * the flush) and half the timed median, on a host not too busy to tell;
 * else NOISY: too busy, within the band loaded workers differ by, or (the
 * calls waited for a CPU) under half the timed median. The excess without
 * the flush decides where it is over half the timed median; in the band
 * below that the flush-included one is judged first, so that band never
 * hides a REJECTED the flush's check gives. */
kpp_own kpp_request_verdict(double ex, double fex, double base, double fbase, double ref, double med, int too_busy) {
    const int over = ex > 0.5 * ref && ex > OVERHEAD_MIN_S + 0.1 * base;
    const int fover = fex > 0.5 * ref && fex > FLUSH_MIN_S + 0.5 * (fbase > base ? fbase - base : 0);
    const int fband = fex <= FLUSH_MIN_S + OVERHEAD_LOADED * fbase;
    const int freject = fover && !too_busy && !fband && fex > 0.5 * med;
    if (over && (ex > 0.5 * med || !freject)) {
        if (too_busy) return KPP_OWN_BUSY;
        if (ex <= OVERHEAD_MIN_S + OVERHEAD_LOADED * base) return KPP_OWN_BAND;
        return ex > 0.5 * med ? KPP_OWN_REJECTED : KPP_OWN_WAITED;
    }
    if (!fover) return KPP_OWN_PASS;
    if (freject) return KPP_OWN_FLUSH_REJECTED;
    if (too_busy) return KPP_OWN_FLUSH_BUSY;
    return fband ? KPP_OWN_FLUSH_BAND : KPP_OWN_FLUSH_WAITED;
}

/* Before a median is called impossible at the measured peaks: the peaks
 * measured again, once an evaluation, the higher kept (and cached). A
 * cache measured while the device was busy holds peaks too low, which made
 * honest kernels impossible (docs/protocol.md). Returns 1 when a peak
 * rose. */
static int peaks_again(ctx *c) {
    if (c->peaks_again || !c->trusted || !c->trusted->alive || !c->trusted->w) return 0;
    c->peaks_again = 1;
    char err[300] = "";
    const kp_calib_rep was = c->calib;
    int rc = kp_device_remeasure(c->trusted->w, c->o->cache_dir ? c->o->cache_dir : kp_default_cache(), &c->r->env,
                                 &c->calib, err, sizeof err);
    if (rc < 0) {
        kp_result_warn(c->r, "measuring the peaks again failed (%s)", err);
        if (rc == -1) c->trusted->alive = 0; /* the worker did not answer: not asked again */
        return 0;
    }
    if (rc == 0) return 0;
    c->r->env.peak_gbs = c->calib.copy_gbs;
    c->r->env.peak_gflops_f32 = c->calib.gemm_f32_gflops;
    c->r->env.peak_gflops_bf16 = c->calib.gemm_bf16_gflops;
    kp_result_warn(c->r, "the cached peaks were below this device's, measured again: copy %.3g GB/s (cached %.3g), "
                   "GEMM fp32 %.4g GFLOP/s (%.4g), bf16 %.4g (%.4g); the higher kept%s%s", c->calib.copy_gbs,
                   was.copy_gbs, c->calib.gemm_f32_gflops, was.gemm_f32_gflops, c->calib.gemm_bf16_gflops,
                   was.gemm_bf16_gflops, err[0] ? "; " : "", err);
    return 1;
}

/* Speed of light. With the device's datasheet limits (kproof/limits.h):
 * a median below min_bytes / HBM bandwidth, or below the FLOPs over the
 * fastest unit that could do them, is physically impossible (REJECTED);
 * a median faster than the measured copy rate or library (cuBLAS) rate
 * allows, by more than its own interval, is possible and suspicious: PASS
 * with a warning that names the margin. Without datasheet limits (the
 * host, an unknown GPU) the measured rates with a margin decide: 1.25x on
 * CUDA (a read-only kernel streams a little faster than a copy, and the
 * arithmetic ceiling is taken as 1.3x cuBLAS), 2x on the host, whose
 * caches are large and shared. */
static void speed_of_light(ctx *c, const kp_shape *sh, kp_shape_result *sr, const double *t, int n) {
    double med = sr->cand.median;
    if (!(med > 0)) return;
    const kp_limits *lim = kp_limits_for(c->r->env.gpu);
    double phys = kp_backend_get(c->o->backend)->physical_limits ? kp_limits_floor_s(lim, c->op, sh) : 0;
    if (phys > 0) {
        if (med < phys) {
            kpp_decide(sr, KP_REJECTED, "speed-of-light",
                       "the median %.3g s is %.2fx faster than this device can physically go (%.3g s: %s, %.0f GB/s "
                       "HBM, FLOPs at the fastest unit that could do them): the time is not real",
                       med, phys / med, phys, lim->source, lim->hbm_gbs);
            return;
        }
        double meas = 0;
        const char *what = "the measured copy rate";
        if (c->calib.copy_gbs > 0) meas = c->op->min_bytes(sh) / (c->calib.copy_gbs * 1e9);
        double lib = 0;
        if (strcmp(c->op->family, "matmul") == 0)
            lib = c->op->dtype == KP_BF16 ? c->calib.gemm_bf16_gflops : c->calib.gemm_f32_gflops;
        if (lib > 0 && c->op->flops(sh) / (lib * 1e9) > meas) {
            meas = c->op->flops(sh) / (lib * 1e9);
            what = "the measured cuBLAS rate";
        }
        /* The noise here is the eval's interval and the calibration's own
         * (a separate measurement, within about 1% of the eval's on the
         * H200: cuBLAS SGEMM 0.1%): 2% at least. */
        double half = kp_rel_halfwidth(t, n, 2);
        if (half < 0.02) half = 0.02;
        if (meas > 0 && med * (1 + half) < meas) {
            char st[64];
            kp_shape_format(sh, st, sizeof st);
            kp_result_warn(c->r, "%s: %.1f%% faster than %s allows (%.3g s against %.3g s), within the physical "
                           "limit (%.3g s): possible, but worth a second look",
                           st, 100 * (meas / med - 1), what, med, meas, phys);
        }
        return;
    }
    double margin = kp_backend_get(c->o->backend)->sol_margin;
    if (sr->cand.sol_time > 0 && med * margin < sr->cand.sol_time && peaks_again(c)) {
        sol_fill(c, sh, &sr->cand);
        if (sr->base_name[0]) sol_fill(c, sh, &sr->base);
    }
    if (sr->cand.sol_time > 0 && med * margin < sr->cand.sol_time)
        kpp_decide(sr, KP_REJECTED, "speed-of-light",
                   "the median %.3g s is %.1fx faster than the speed of light of this device (%.3g s at the "
                   "measured peaks): physically impossible, so the time is not real",
                   med, sr->cand.sol_time / med, sr->cand.sol_time);
}

/* The timing phase holds the device from the first upload to the last
 * sample and the parent-clock batches: no other kproof process runs
 * anything on it meanwhile. The first pass's input sets are built before
 * (CPU work that needs no device). */
int kpp_timing(ctx *c, part *parts, int np, const kp_shape *sh, kp_shape_result *sr) {
    int64_t sb = set_bytes(c->op, sh);
    int nsets = c->o->nsets < 8 ? 8 : c->o->nsets;
    int64_t l2 = c->r->env.l2_bytes > 0 ? c->r->env.l2_bytes : (64 << 20);
    int maxsets = c->o->max_sets > 0 && c->o->max_sets < KP_MAX_SETS ? c->o->max_sets : KP_MAX_SETS;
    while (nsets < maxsets && (int64_t)nsets * sb < 3 * l2) nsets++;
    if (!GUARD(c, KPP_G_ROTATE)) nsets = 1;
    nsets = fit_sets(c, parts, np, sh, nsets, sr);
    if (!nsets) return 1;
    iset *sets = (iset *)calloc((size_t)nsets, sizeof *sets);
    if (!sets) return kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
    char err[200];
    kpp_progress(c, "  timing: %d input set(s) of %.1f MiB each, %d participant(s)", nsets, sb / 1048576.0, np);
    if (kpp_iset_make_many(c, sh, 0, sets, nsets, err, sizeof err)) {
        free(sets);
        return kpp_decide(sr, KP_ERROR, "harness", "%s", err);
    }
    kp_devlock_hold(1);
    int bad = timing_locked(c, parts, np, sh, sets, nsets, sr);
    kp_devlock_hold(0);
    return bad;
}

/* The strongest baseline is the one with the lowest median. A baseline
 * whose fastest kept sample is more than twice another baseline's median
 * (both with three or more) has a median over twice that one's, so it
 * cannot be the strongest; it is no longer called this shape: at 8192^3 a
 * naive matmul takes a tenth of a second a call or more, and called as
 * often as the candidate it was most of the eval's time. Its samples stay;
 * should a baseline be dropped, every retired one is judged again
 * (unretire_baselines). */
static void retire_slow_baselines(ctx *c, part *parts, int np, kp_shape_result *sr) {
    for (int k = 1; k < np; k++) {
        part *p = &parts[k];
        if (!p->alive || p->retired || p->n < 3) continue;
        double fastest = p->t[0];
        for (int i = 1; i < p->n; i++) fastest = p->t[i] < fastest ? p->t[i] : fastest;
        for (int j = 1; j < np; j++) {
            const part *q = &parts[j];
            if (j == k || !q->alive || q->n < 3) continue;
            double med = kp_median(q->t, q->n);
            if (2 * med < fastest) {
                p->retired = 1;
                size_t u = strlen(sr->retired);
                snprintf(sr->retired + u, sizeof sr->retired - u, "%s%s", u ? "," : "", p->name);
                kpp_progress(c, "  timing: baseline %s stops after %d samples (fastest %.3g s, over twice %s's median %.3g s)",
                             p->name, p->n, fastest, q->name, med);
                break;
            }
        }
    }
}

/* A baseline was dropped: the ones retired against it are called again. */
static void unretire_baselines(part *parts, int np, kp_shape_result *sr) {
    for (int k = 1; k < np; k++) parts[k].retired = 0;
    sr->retired[0] = 0;
}

/* Frees sets. */
static int timing_locked(ctx *c, part *parts, int np, const kp_shape *sh, iset *sets, int nsets,
                         kp_shape_result *sr) {
    int warm = !GUARD(c, KPP_G_FLUSH);
    kp_env env;
    memset(&env, 0, sizeof env);
    char err[200];
    int bad = 0;
    kp_shape_result bsr[MAX_PART]; /* baselines' own findings */
    memset(bsr, 0, sizeof bsr);
    for (int k = 0; k < np && !bad; k++) {
        if (k > 0 && !parts[k].alive) continue; /* a baseline that did not start */
        kp_shape_result *tgt = k == 0 ? sr : &bsr[k];
        if (kpp_part_setup(c, &parts[k], sh, 0, sets, nsets, GUARD(c, KPP_G_POISON), NULL, tgt) && k == 0) bad = 1;
        if (k > 0 && bsr[k].verdict != KP_PASS) parts[k].alive = 0;
    }
    int flags = kpp_rigorous_flags(c);
    if (!warm) flags |= KP_RUN_FLUSH;
    /* The device's time for what the call enqueued, not the host's launch
     * latency (a harness that times launches is the launch flaw). */
    if (GUARD(c, KPP_G_HOLD)) flags |= KP_RUN_BLOCK;
    int check_timed = GUARD(c, KPP_G_CHECK_TIMED);
    int *perm = (int *)malloc((size_t)nsets * sizeof(int));
    if (!perm) bad = kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
    double t0 = 0; /* the budget starts after the warm-up */
    double paused = 0; /* and leaves out waiting to take the lock back after a rebuild */
    int pass = -1, settled = 0;
    for (int it = 0; !bad; it++) {
        int slot = it % nsets;
        if (slot == 0) {
            pass++;
            /* Fresh inputs every pass (the warm flaw keeps one set): a
             * cache keyed on pointers or on the data never sees the same
             * input twice. Same shape, so the pooled pointers stay. */
            if (pass > 0 && GUARD(c, KPP_G_FRESH_SETS)) {
                /* Whole sets are built on the CPU with no worker request in
                 * flight: the device is given up meanwhile (lazy sets
                 * build nothing here). */
                int whole = !sets[0].lazy;
                for (int i = 0; i < nsets; i++) kpp_iset_free(c->op, &sets[i]);
                if (whole) kp_devlock_hold(0);
                int mk = kpp_iset_make_many(c, sh, 0, sets, nsets, err, sizeof err);
                double p0 = kp_wall_s();
                if (whole && kp_devlock_hold(1)) {
                    bad = kpp_decide(sr, KP_ERROR, "harness", "%s", kp_devlock_error());
                    break;
                }
                if (whole && t0 > 0) paused += kp_wall_s() - p0;
                if (mk) {
                    bad = kpp_decide(sr, KP_ERROR, "harness", "%s", err);
                    break;
                }
                for (int k = 0; k < np && !bad; k++) {
                    /* retired ones too: one called again after a drop needs this pass's sets */
                    if (!parts[k].alive) continue;
                    kp_shape_result *tgt = k == 0 ? sr : &bsr[k];
                    if (kpp_part_setup(c, &parts[k], sh, 0, sets, nsets, 1, NULL, tgt)) {
                        if (k == 0) bad = 1;
                        else {
                            parts[k].alive = 0;
                            unretire_baselines(parts, np, sr);
                        }
                    }
                }
                if (bad) break;
            }
            for (int i = 0; i < nsets; i++) perm[i] = i;
            for (int i = nsets - 1; i > 0; i--) {
                int j = (int)kp_rng_below(&c->rng, (uint64_t)i + 1), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
        }
        int set = perm[slot];
        /* The first calls are the warm-up (each participant's first three,
         * at least one per set on small rotations): checked, not kept. */
        int keep = it >= (nsets < 3 ? nsets : 3);
        if (keep && t0 == 0) t0 = kp_wall_s();
        int act[MAX_PART], na = 0; /* who is called this round */
        for (int k = 0; k < np; k++)
            if (k == 0 || (parts[k].alive && !parts[k].retired)) act[na++] = k;
        for (int kk = 0; kk < na && !bad; kk++) {
            int k = act[(kk + it) % na]; /* rotate who goes first: drift hits everyone */
            part *p = &parts[k];
            if (!p->alive) continue;
            kp_shape_result *tgt = k == 0 ? sr : &bsr[k];
            run_out ro;
            /* Each participant's first call here is not held: a first use
             * (a library's setup, a module loaded lazily) may wait on the
             * device, which a hold would turn into a 1 s stall. It is a
             * warm-up call either way. */
            int f = it == 0 ? flags & ~KP_RUN_BLOCK : flags;
            /* No honest pair of events around real work reads zero, less,
             * or not a number: only a tampered clock does. */
            if (kpp_part_run(c, p, set, f, &ro, tgt) || kpp_judge_run(c, p, &ro, f, tgt) ||
                (check_timed && kpp_check_sampled(c, p, sh, &sets[set], set, tgt)) ||
                (!(ro.rep.event_s > 0 && isfinite(ro.rep.event_s)) &&
                 kpp_decide(tgt, KP_REJECTED, "timer", "a timed call's events reported %g s: not a time",
                            ro.rep.event_s))) {
                if (k == 0) bad = 1;
                else {
                    p->alive = 0;
                    unretire_baselines(parts, np, sr);
                    kp_result_warn(c->r, "baseline %s dropped: %s", p->name, tgt->detail);
                }
                continue;
            }
            /* Launch flaw on cuda: events on the given stream only (no
             * device sync in the window); on the host the host clock is all
             * there is, and it stops when the call returns. */
            double t = ro.rep.event_s;
            if (ro.rep.blocked == 1 && ro.rep.enqueue_s > t) {
                /* Held: the device ran the call's work back to back; host
                 * work that took longer than that is the call's real cost. */
                t = ro.rep.enqueue_s;
                if (keep) p->host_bound++;
            } else if (ro.rep.blocked == 2) {
                /* The call waited on the device while the stream was held:
                 * this sample timed the hold. The worker stops holding. */
                kp_result_warn(c->r, "%s stalled for a second while its stream was held (it waits on the "
                               "device inside its call): its times from here on are events around the call, host "
                               "launch latency included", p->name);
                continue;
            }
            if (keep && push_sample(p, t, ro.rep.host_s, &ro))
                bad = kpp_decide(sr, KP_ERROR, "harness", "out of memory");
        }
        if (bad || !keep) continue;
        retire_slow_baselines(c, parts, np, sr);
        double el = kp_wall_s() - t0 - paused;
        /* The budget may not cut a run short of its minimum samples, unless
         * the candidate is so slow that five budgets have passed. */
        if (parts[0].n < c->o->stop.min_samples && el < 5 * c->o->stop.budget_s) continue;
        if (kp_stop_check(&c->o->stop, parts[0].t, parts[0].n, el, &settled)) break;
        if (c->o->progress && parts[0].n % 50 == 0)
            kpp_progress(c, "  %d samples, %.1f s, interval +-%.2f%%", parts[0].n, el,
                         100 * kp_rel_halfwidth(parts[0].t, parts[0].n, 1));
    }
    free(perm);
    /* Every timed call of every participant, accounted: the candidate's
     * findings decide, a baseline's drop it. */
    char timer_ev[400] = ""; /* judged after the speed-of-light bound */
    int was = kpp_work(c, KP_WORK_ACCOUNT);
    if (!bad) bad = kpp_account(c, &parts[0], sr, "the timed calls", 0, timer_ev, sizeof timer_ev);
    for (int k = 1; k < np && !bad; k++) kpp_account_baseline(c, &parts[k], &bsr[k]);
    kpp_work(c, was);
    /* A slow candidate may run out of budget before the minimum sample
     * count; its timing still settled if even those few samples agree. */
    if (!bad && !settled && parts[0].n >= 3 && kp_rel_halfwidth(parts[0].t, parts[0].n, 3) <= c->o->stop.target)
        settled = 1;
    if (!bad) {
        fill_timing(c, sh, &parts[0], &sr->cand);
        sr->cand.input_sets = nsets;
        sr->cand.settled = settled;
        sr->timed = 1;
        /* Strongest baseline: the lowest median among those still standing. */
        int best = -1;
        for (int k = 1; k < np; k++) {
            if (!parts[k].alive || parts[k].n < 3) continue;
            double m = kp_median(parts[k].t, parts[k].n);
            if (best < 0 || m < kp_median(parts[best].t, parts[best].n)) best = k;
        }
        if (best > 0) {
            fill_timing(c, sh, &parts[best], &sr->base);
            snprintf(sr->base_name, sizeof sr->base_name, "%s", parts[best].name);
            int weak = !GUARD(c, KPP_G_MEDIAN);
            double bm = weak ? sr->base.mean : sr->base.median, cm = weak ? sr->cand.mean : sr->cand.median;
            sr->speedup = cm > 0 ? bm / cm : 0;
            kp_boot_ratio_ci(parts[best].t, parts[best].n, parts[0].t, parts[0].n, 0.95, 2000, kp_rng_next(&c->rng),
                             &sr->speedup_lo, &sr->speedup_hi);
        }
        /* The fastest baseline's median, fixed for all three floors: one
         * dropped from their control batches does not lengthen the next. */
        const double fastest = best > 0 ? kp_median(parts[best].t, parts[best].n) : 0;
        /* Sanity bounds. Speed of light first: an impossible time is the
         * plainer evidence. The parent-side clock belongs to two flaws: a
         * harness that times the launch has none, and neither has one that
         * trusts whatever the process reports. */
        if (GUARD(c, KPP_G_SOL)) speed_of_light(c, sh, sr, parts[0].t, parts[0].n);
        if (timer_ev[0] && sr->verdict == KP_PASS) kpp_decide(sr, KP_REJECTED, "timer", "%s", timer_ev);
        if (GUARD(c, KPP_G_TIMER) && sr->verdict == KP_PASS &&
            parent_floor(c, parts, np, nsets, sr->cand.median, fastest, sh, &sets[0], sr, &sr->cand.parent_floor) == 0) {
            /* A machine busy with other work can slow every batch of one
             * measurement (seen on a 2-core host running tests side by
             * side); a forged clock is short on every one. So a floor that
             * would reject is measured twice more, and the least kept. */
            for (int again = 0; again < 2 && sr->verdict == KP_PASS && sr->cand.parent_floor > 0 &&
                                sr->cand.median < 0.5 * sr->cand.parent_floor;
                 again++) {
                double f2 = 0;
                if (parent_floor(c, parts, np, nsets, sr->cand.median, fastest, sh, &sets[0], sr, &f2) == 0 &&
                    f2 < sr->cand.parent_floor)
                    sr->cand.parent_floor = f2;
            }
            if (sr->verdict == KP_PASS && sr->cand.parent_floor > 0 && sr->cand.median < 0.5 * sr->cand.parent_floor)
                kpp_decide(sr, KP_REJECTED, "timer",
                           "the reported median %.3g s is below half of what the parent's own clock measured "
                           "around a batch of calls (%.3g s per call): the time was not measured honestly",
                           sr->cand.median, sr->cand.parent_floor);
        }
        if (sr->verdict == KP_PASS) {
            int w2 = kpp_work(c, KP_WORK_ACCOUNT);
            kpp_account(c, &parts[0], sr, "the parent-clock batches", 0, NULL, 0);
            kpp_work(c, w2);
        }
        /* After the account: a busy host makes this check's excess NOISY,
         * which must not stand in for a finding of the account's. */
        if (GUARD(c, KPP_G_TIMER) && sr->verdict == KP_PASS) request_overhead(c, parts, np, sr);
        if (sr->verdict == KP_PASS && !settled)
            kpp_decide(sr, KP_NOISY, "noise",
                       "correct, but the timing never settled: the median's 95%% interval is +-%.2f%% after %d samples "
                       "(target +-%.2f%%); pass --time-budget with more seconds or quiet the machine",
                       100 * kp_rel_halfwidth(parts[0].t, parts[0].n, 2), parts[0].n, 100 * c->o->stop.target);
    }
    for (int i = 0; i < nsets; i++) kpp_iset_free(c->op, &sets[i]);
    free(sets);
    return sr->verdict != KP_PASS && sr->verdict != KP_NOISY;
}
