/* it_host.c: the whole protocol on the host backend, through real workers.
 * Good kernels PASS; broken ones get the right verdict, check and evidence. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/host_api.h"
#include "core/protocol/protocol_priv.h"
#include "test.h"

extern double kp_matmul_full_limit; /* src/ops/matmul.c */

static char g_root[1024], g_cache[1024];

static void opts(kp_eval_opts *o, const char *file, const char *op, const char *dtype) {
    kp_eval_opts_default(o);
    o->backend = KP_BACKEND_HOST;
    o->root = g_root;
    o->cache_dir = g_cache;
    o->candidate = file;
    o->op = kp_op_resolve(op, dtype);
    o->progress = 0;
    o->stop.budget_s = 0.25; /* verdicts and checks, not timing quality: NOISY is accepted */
    o->stop.min_samples = 5;
    o->stop.target = 0.05;
    o->timeout_s = 20;
}

/* One evaluation of the file at o->path (named rel in the log). */
static kp_verdict eval_run(const kp_eval_opts *o, const char *rel, kp_result *r) {
    char err[512] = "";
    int rc = kp_eval(o, r, err, sizeof err);
    if (rc) fprintf(stderr, "kp_eval(%s) failed: %s\n", rel, err);
    CHECK(rc == 0);
    fprintf(stderr, "  %-44s %-8s %-12s %.150s\n", rel, kp_verdict_name(r->verdict), r->check_name, r->detail);
    return r->verdict;
}

static kp_verdict eval_file(const char *rel, const char *op, const char *dtype, int flags, kp_result *r) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", g_root, rel);
    kp_eval_opts o;
    opts(&o, path, op, dtype);
    if (flags & 1) o.no_baseline = 1;
    if (flags & 2) o.timeout_s = 3;
    if (flags & 4) o.correctness_only = 1;
    return eval_run(&o, rel, r);
}

/* A correctness-only run with the naive flaws `flaws` and distribution
 * `dist` (-1: all). */
static kp_verdict eval_correct(const char *rel, const char *op, int flaws, int dist, kp_result *r) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", g_root, rel);
    kp_eval_opts o;
    opts(&o, path, op, NULL);
    o.no_baseline = 1;
    o.correctness_only = 1;
    o.flaws = flaws;
    o.dist = dist;
    return eval_run(&o, rel, r);
}

/* Whether kproof wrote the inputs into the worker itself (INPUTS requests):
 * where the machine does not allow it, it warns and sends none. */
static int writes_into_worker(const kp_result *r) {
    for (int w = 0; w < r->nwarn; w++)
        if (strstr(r->warn[w], "cannot write into")) return 0;
    return 1;
}

static void expect(const char *rel, const char *op, kp_verdict v, const char *check, const char *needle, int flags) {
    kp_result r;
    kp_verdict got = eval_file(rel, op, NULL, flags, &r);
    CHECK(got == v);
    if (check) CHECK(strcmp(r.check_name, check) == 0);
    if (needle) CHECK(strstr(r.detail, needle) != NULL);
    kp_result_free(&r);
}

/* The memory check charges a call with the resident memory its worker
 * gained across it, so the harness's own buffers must be resident before
 * that reading. The output snapshot was not: first written right after
 * the first guarded call of a shape, inside that call's reading, it was
 * charged to the candidate; an honest kernel with 1 GiB of output was
 * ERROR (memory), and across shapes the snapshots added up past 1 GiB.
 * Through a worker directly, at 64 and 80 MiB of output (the 1 GiB
 * threshold needs more memory than CI has): an honest kernel's first
 * guarded call at each shape keeps next to nothing, and memhog's leak
 * (512 MiB, touched, per call) is still seen whole. */
static int64_t first_call_growth(kp_wk *w, int64_t rows, int64_t cols) {
    kp_setup_req q;
    memset(&q, 0, sizeof q);
    snprintf(q.op, sizeof q.op, "softmax_f32");
    q.shape.nd = 2;
    q.shape.d[0] = rows;
    q.shape.d[1] = cols;
    q.nsets = 1;
    q.seeds[0] = 12345;
    q.guards = 1;
    kp_setup_rep sr;
    size_t n = 0;
    char err[512] = "";
    if (kp_wk_call(w, KP_MSG_SETUP, &q, sizeof q, NULL, 0, &sr, sizeof sr, &n, 60, err, sizeof err)) {
        fprintf(stderr, "setup failed: %s\n", err);
        return -1;
    }
    /* The flags of a rigorous correctness call. */
    kp_run_req rq = {0, KP_RUN_POISON | KP_RUN_GUARDS | KP_RUN_SYNC | KP_RUN_THREADS | KP_RUN_SNAPSHOT};
    kp_run_rep rr;
    memset(&rr, 0, sizeof rr);
    if (kp_wk_call(w, KP_MSG_RUN, &rq, sizeof rq, NULL, 0, &rr, sizeof rr, &n, 60, err, sizeof err) || rr.rc) {
        fprintf(stderr, "run failed: %s (rc %d)\n", err, rr.rc);
        return -1;
    }
    return rr.mem_grown;
}

static void snapshot_memory(void) {
    static const char *files[] = {"kernels/softmax/host/f32-02-fused.c", "exploits/host/memhog.c"};
    static const int64_t shapes[][2] = {{4096, 4096}, {4096, 5120}};
    for (int f = 0; f < 2; f++) {
        char path[2048], so[2048], log[4096], err[512] = "";
        snprintf(path, sizeof path, "%s/%s", g_root, files[f]);
        int built = kp_build(KP_BACKEND_HOST, path, g_root, g_cache, so, sizeof so, log, sizeof log) == 0;
        CHECK(built);
        if (!built) continue;
        kp_wk_opts wo = {KP_BACKEND_HOST, "softmax_f32", so, 30, 1, (int64_t)16 << 30, 0};
        kp_wk *w = NULL;
        kp_hello h;
        int ok = kp_wk_start(&wo, &w, &h, err, sizeof err) == KP_WK_OK && h.status == KP_LOAD_OK;
        CHECK(ok);
        for (int s = 0; ok && s < 2; s++) {
            int64_t out = shapes[s][0] * shapes[s][1] * 4;
            int64_t kept = first_call_growth(w, shapes[s][0], shapes[s][1]);
            fprintf(stderr, "  %-44s first guarded call at %lldx%lld (%lld MiB of output) kept %.1f MiB\n", files[f],
                    (long long)shapes[s][0], (long long)shapes[s][1], (long long)(out >> 20), (double)kept / (1 << 20));
            CHECK(kept >= 0);
            if (f == 0)
                CHECK(kept < out / 16);
            else
                CHECK(kept >= ((int64_t)512 << 20));
        }
        if (w) kp_wk_stop(w);
    }
}

/* Which parts run: none named, all of them; else the named ones (ctest
 * runs the parts as tests of their own, side by side). The project
 * kernels are four parts: kernelsI holds every fourth one found, from the
 * I-th. */
static int g_nparts;
static char **g_parts;
static int in_part(const char *name) {
    if (g_nparts == 0) return 1;
    for (int i = 0; i < g_nparts; i++)
        if (strcmp(g_parts[i], name) == 0) return 1;
    return 0;
}

int main(int argc, char **argv) {
    g_nparts = argc - 1;
    g_parts = argv + 1;
    for (int i = 0; i < g_nparts; i++) {
        static const char *known[] = {"kernels0", "kernels1", "kernels2", "kernels3",
                                       "broken",   "dists",    "lazy",     "memory"};
        int ok = 0;
        for (size_t k = 0; k < sizeof known / sizeof *known; k++) ok |= strcmp(g_parts[i], known[k]) == 0;
        if (!ok) {
            fprintf(stderr, "it_host: unknown part '%s' (kernels0..kernels3, broken, dists, lazy, memory)\n",
                    g_parts[i]);
            return 2;
        }
    }
    /* The naive mode's policy table: every guard named once and dropped by
     * some flaw, every flaw drops some guard (a flaw that dropped nothing
     * would be a demo column that shows nothing). */
    for (int g = 0; g < KPP_G_COUNT; g++) {
        CHECK(kpp_guards[g].name != NULL && kpp_guards[g].what != NULL);
        CHECK((kpp_guards[g].off_by & ~KP_FLAW_ALL) == 0 && kpp_guards[g].off_by != 0);
        for (int h = 0; h < g; h++) CHECK(strcmp(kpp_guards[g].name, kpp_guards[h].name) != 0);
    }
    for (int f = 1; f <= KP_FLAW_WEAK_BASE; f <<= 1) {
        int drops = 0;
        for (int g = 0; g < KPP_G_COUNT; g++) drops += (kpp_guards[g].off_by & f) != 0;
        CHECK(drops > 0);
    }

    /* A phase's light requests (kpp_light_verdict), 300 us allowed each:
     * five of 15 us; four quick and one the machine charged 31.8 ms (a
     * burst: NOISY, not REJECTED); that one at 150 ms, or 8 ms in the
     * four others (REJECTED); the longest at the bounds, 20 ms (within
     * the allowance), 100 ms (a burst) and 1 ns more (past it). */
    {
        const int64_t US = 1000, MS = 1000000, PER = 300 * US;
        CHECK(kpp_light_verdict(5, 75 * US, 15 * US, PER) == KPP_LIGHT_OK);
        CHECK(kpp_light_verdict(5, 60 * US + 31800 * US, 31800 * US, PER) == KPP_LIGHT_BURST);
        CHECK(kpp_light_verdict(5, 60 * US + 150 * MS, 150 * MS, PER) == KPP_LIGHT_OVER);
        CHECK(kpp_light_verdict(5, 8 * MS + 31800 * US, 31800 * US, PER) == KPP_LIGHT_OVER);
        CHECK(kpp_light_verdict(5, 8 * MS + 15 * US, 2 * MS, PER) == KPP_LIGHT_OVER);
        CHECK(kpp_light_verdict(0, 0, 0, PER) == KPP_LIGHT_OK);
        CHECK(kpp_light_verdict(5, 60 * US + 20 * MS, 20 * MS, PER) == KPP_LIGHT_OK);
        CHECK(kpp_light_verdict(5, 60 * US + 100 * MS, 100 * MS, PER) == KPP_LIGHT_BURST);
        CHECK(kpp_light_verdict(5, 60 * US + 100 * MS + 1, 100 * MS + 1, PER) == KPP_LIGHT_OVER);
    }

    /* The timed requests' own time judged (kpp_request_verdict): a baseline
     * spending 0.4 ms a request (4.4 ms with its flush), a timed median of
     * 2 ms by the wall whose calls took 0.9 ms of CPU (they waited). */
    {
        const double B = 0.4e-3, FB = 4.4e-3, MED = 2e-3, REF = 0.9e-3;
        CHECK(kpp_request_verdict(0.1e-3, 0.1e-3, B, FB, REF, MED, 0) == KPP_OWN_PASS);
        CHECK(kpp_request_verdict(1.2e-3, 1.2e-3, B, FB, REF, MED, 0) == KPP_OWN_REJECTED);
        CHECK(kpp_request_verdict(1.2e-3, 1.2e-3, B, FB, REF, MED, 1) == KPP_OWN_BUSY);
        CHECK(kpp_request_verdict(0.5e-3, 0.5e-3, B, FB, REF, MED, 0) == KPP_OWN_BAND);
        /* Over half the calls' CPU, under half the timed median: NOISY, where
         * half the timed median alone passed it. */
        CHECK(kpp_request_verdict(0.8e-3, 0.8e-3, B, FB, REF, MED, 0) == KPP_OWN_WAITED);
        CHECK(kpp_request_verdict(0.8e-3, 0.8e-3, B, FB, MED, MED, 0) == KPP_OWN_PASS);
        CHECK(kpp_request_verdict(0.8e-3, 0.8e-3, B, FB, REF, MED, 1) == KPP_OWN_BUSY);
        /* With a flush-included excess over its margin but not rejected, the
         * excess without the flush speaks. */
        CHECK(kpp_request_verdict(0.8e-3, 4.6e-3, B, FB, REF, MED, 0) == KPP_OWN_WAITED);
        /* That band never hides the flush-included check's REJECTED. */
        CHECK(kpp_request_verdict(0.8e-3, 6e-3, B, FB, REF, MED, 0) == KPP_OWN_FLUSH_REJECTED);
        /* Over half the timed median and within the loaded band, NOISY as
         * before, whatever the flush. */
        CHECK(kpp_request_verdict(1.2e-3, 20e-3, 1.5e-3, 5.5e-3, REF, MED, 0) == KPP_OWN_BAND);
        /* The flush-included excess alone. */
        CHECK(kpp_request_verdict(0.1e-3, 6e-3, B, FB, REF, MED, 0) == KPP_OWN_FLUSH_REJECTED);
        CHECK(kpp_request_verdict(0.1e-3, 6e-3, B, FB, REF, MED, 1) == KPP_OWN_FLUSH_BUSY);
        CHECK(kpp_request_verdict(0.1e-3, 4.6e-3, B, FB, REF, MED, 0) == KPP_OWN_FLUSH_BAND);
        CHECK(kpp_request_verdict(0.1e-3, 6e-3, B, FB, 2e-3, 20e-3, 0) == KPP_OWN_FLUSH_WAITED);
        CHECK(kpp_request_verdict(0.1e-3, 2.0e-3, B, FB, REF, MED, 0) == KPP_OWN_PASS);
    }

    const char *root = getenv("KPROOF_ROOT"), *cache = getenv("KPROOF_CACHE");
    snprintf(g_root, sizeof g_root, "%s", root ? root : ".");
    snprintf(g_cache, sizeof g_cache, "%s", cache ? cache : "/tmp/kproof-test-cache");

    /* Every project host kernel PASSes every shape of its op: every
     * kernels/<family>/host/<dtype>-NN-<idea>.c of every op the registry
     * holds, found on disk, and at least the naive one (kproof init's)
     * for each op. */
    int nkernels = 0;
    for (int o = 0; o < kp_op_count(); o++) {
        const kp_op *op = kp_op_at(o);
        char dir[1400], naive[1500], prefix[16];
        snprintf(dir, sizeof dir, "%s/kernels/%s/host", g_root, op->family);
        snprintf(naive, sizeof naive, "%s/%s-01-naive.c", dir, kp_dtype_name(op->dtype));
        if (!kp_file_exists(naive)) {
            fprintf(stderr, "missing project kernel %s\n", naive);
            CHECK(0);
        }
        snprintf(prefix, sizeof prefix, "%s-", kp_dtype_name(op->dtype));
        kp_name *names = NULL;
        int n = kp_list_dir(dir, &names);
        for (int j = 0; j < n; j++) {
            const size_t len = strlen(names[j]), pl = strlen(prefix);
            if (strncmp(names[j], prefix, pl) != 0 || names[j][pl] < '0' || names[j][pl] > '9' || len < 3 ||
                strcmp(names[j] + len - 2, ".c") != 0)
                continue;
            char rel[1400];
            snprintf(rel, sizeof rel, "kernels/%s/host/%s", op->family, names[j]);
            char kpart[16];
            snprintf(kpart, sizeof kpart, "kernels%d", nkernels++ % 4);
            if (!in_part(kpart)) continue;
            kp_result r;
            kp_verdict v = eval_file(rel, op->family, kp_dtype_name(op->dtype), 0, &r);
            CHECK(v == KP_PASS || v == KP_NOISY); /* NOISY: correct, the CI machine is noisy */
            CHECK(r.nshapes >= 3);
            int timed = 0;
            for (int s = 0; s < r.nshapes; s++) {
                CHECK(r.shapes[s].verdict == KP_PASS || r.shapes[s].verdict == KP_NOISY);
                if (r.shapes[s].timed) {
                    timed++;
                    CHECK(r.shapes[s].cand.n >= 5);
                    CHECK(r.shapes[s].cand.lo <= r.shapes[s].cand.median);
                    CHECK(r.shapes[s].cand.median <= r.shapes[s].cand.hi);
                }
            }
            CHECK(timed >= 1);
            kp_result_free(&r);
        }
        free(names);
    }
    CHECK(nkernels >= 2 * kp_op_count()); /* a naive and a faster one per op, at least */

    /* Broken candidates: verdict, the check that decided, and the evidence. */
    if (in_part("broken")) {
        expect("tests/candidates/softmax_unwritten.c", "softmax", KP_WRONG, "poison", "never written", 1);
        expect("tests/candidates/softmax_odd_index.c", "softmax", KP_WRONG, "poison", "never written", 1);
        expect("tests/candidates/softmax_half.c", "softmax", KP_WRONG, "tolerance", "want", 1);
        expect("tests/candidates/softmax_crash.c", "softmax", KP_ERROR, "crash", "signal 11", 1);
        expect("tests/candidates/softmax_hang.c", "softmax", KP_ERROR, "timeout", "no answer within", 3);
        expect("tests/candidates/softmax_rc.c", "softmax", KP_ERROR, "rc", "returned 7", 1);
        expect("tests/candidates/softmax_nosym.c", "softmax", KP_ERROR, "load", "kp_softmax_f32", 1);
        expect("tests/candidates/softmax_syntax.c", "softmax", KP_ERROR, "build", "error", 1);

        /* kernel.h promises element alignment only, and the rigorous mode calls
         * with pointers one element past a 16-byte boundary between its first
         * and last rounds: a candidate that is right only on 16-byte-aligned
         * pointers is caught there, and the evidence says the pointers were
         * off (and which, when some stayed aligned). */
        expect("tests/candidates/softmax_aligned_only.c", "softmax", KP_WRONG, "tolerance",
               "pointers not 16-byte aligned (x, y start one element, 4 bytes, past a 16-byte boundary)", 1);
        expect("tests/candidates/softmax_aligned_rc.c", "softmax", KP_ERROR, "rc", "not 16-byte aligned", 1);
        expect("tests/candidates/softmax_aligned_fault.c", "softmax", KP_ERROR, "crash",
               "(y starts one element, 4 bytes, past a 16-byte boundary; x is aligned)", 1);
        /* The guards sit right before the data wherever it starts. */
        expect("tests/candidates/layernorm_misaligned_underrun.c", "layernorm", KP_REJECTED, "canary",
               "not 16-byte aligned", 1);
        /* A 16-byte path that checks its pointers passes every call. */
        expect("tests/candidates/softmax_vec_checked.c", "softmax", KP_PASS, NULL, NULL, 1 | 4);
        /* Light requests past their allowance are held to PINGs sent right
         * after, as a control. A worker whose every PING and INPUTS takes
         * 3 ms of its thread (as on a machine that adds its own time to
         * every request) is NOISY at every shape, never PASS; inputs_ahead,
         * whose PINGs stay quick, is REJECTED with the control's numbers. */
        {
            kp_result r;
            kp_verdict v = eval_file("tests/candidates/softmax_light_burn.c", "softmax", NULL, 1 | 4, &r);
            const int direct = writes_into_worker(&r); /* else there are no INPUTS requests */
            if (direct) {
                CHECK(v == KP_NOISY);
                CHECK(strcmp(r.check_name, "noise") == 0);
                CHECK(strstr(r.detail, "PING requests sent to it right after") != NULL);
                CHECK(strstr(r.detail, "run again on a quieter machine") != NULL);
                CHECK(r.nshapes >= 3);
                for (int s = 0; s < r.nshapes; s++) CHECK(r.shapes[s].verdict == KP_NOISY);
            } else {
                CHECK(v == KP_PASS);
            }
            kp_result_free(&r);
        }
        expect("exploits/host/inputs_ahead.c", "softmax", KP_REJECTED, "account",
               "PING requests sent to it right after", 1 | 4);
        /* A worker that fails the control requests (here it leaves at the
         * first PING) is judged on the excess already measured. */
        {
            kp_result r;
            kp_verdict v = eval_file("tests/candidates/softmax_light_exit.c", "softmax", NULL, 1 | 4, &r);
            const int direct = writes_into_worker(&r);
            if (direct) {
                CHECK(v == KP_REJECTED);
                CHECK(strcmp(r.check_name, "account") == 0);
                CHECK(strstr(r.detail, "failed the PING requests") != NULL);
            } else {
                CHECK(v == KP_PASS);
            }
            kp_result_free(&r);
        }
        /* The light requests' NOISY waits for every other check of the
         * shape: a tampered timer behind the same slow requests is still
         * REJECTED by the timer, never NOISY. And timed, the burner alone
         * stays NOISY: the parent-clock batches hold its INPUTS to the
         * control's allowance, not to their fixed 1 ms. */
        expect("tests/candidates/timer_tamper_light_burn.c", "softmax", KP_REJECTED, "timer", NULL, 0);
        {
            kp_result r;
            kp_verdict v = eval_file("tests/candidates/softmax_light_burn.c", "softmax", NULL, 1, &r);
            const int direct = writes_into_worker(&r);
            if (direct) {
                CHECK(v == KP_NOISY);
                for (int s = 0; s < r.nshapes; s++) CHECK(r.shapes[s].verdict == KP_NOISY);
            } else {
                CHECK(v == KP_PASS || v == KP_NOISY);
            }
            kp_result_free(&r);
        }
        {
            kp_result r;
            /* One distribution asked for: a misaligned round is added. */
            CHECK(eval_correct("tests/candidates/softmax_aligned_only.c", "softmax", 0, 0, &r) == KP_WRONG);
            CHECK(strstr(r.detail, "not 16-byte aligned") != NULL);
            kp_result_free(&r);
            /* The naive modes keep their aligned calls. */
            kp_verdict v =
                eval_correct("tests/candidates/softmax_aligned_only.c", "softmax", KP_FLAW_LOOSE_TOL, -1, &r);
            CHECK(v == KP_PASS);
            kp_result_free(&r);
            /* The last round still sees pointers seen before: a cache keyed
             * on them is caught in the correctness phase, not only in timing. */
            CHECK(eval_correct("exploits/host/cache_pointer.c", "matmul", 0, -1, &r) == KP_WRONG);
            CHECK(strcmp(r.check_name, "tolerance") == 0);
            CHECK(strstr(r.detail, "distribution 'normal'") != NULL);
            kp_result_free(&r);
        }
    }

    /* A variance in one pass about the row's first value: it passes the
     * normal and offset inputs, and the spike inputs (an outlier first
     * value) are what make it WRONG. */
    if (in_part("dists")) {
        /* A set's reference from the reference pool (inputs.c) holds only
         * its own values: a freed set's arrays, overwritten with NaN, then
         * taken by a new set of a smaller shape and another seed, on one
         * thread and on two (the row-block path), match a reference the op
         * computes afresh. */
        const kp_op *sm = kp_op_find("softmax_f32");
        ctx c;
        memset(&c, 0, sizeof c);
        c.op = sm;
        const kp_shape big = {2, {64, 300}}, small = {2, {37, 250}};
        char perr[200];
        for (int threads = 1; threads <= 2; threads++) {
            iset a, b;
            CHECK(kpp_iset_make(&c, &big, 0, 11, &a, threads, perr, sizeof perr) == 0);
            for (int64_t i = 0; i < a.ref.n; i++) a.ref.want[i] = a.ref.tol[i] = NAN;
            const double *was = a.ref.want;
            kpp_iset_free(sm, &a);
            CHECK(kpp_iset_make(&c, &small, 0, 12, &b, threads, perr, sizeof perr) == 0);
            CHECK(b.ref.want == was); /* the freed set's arrays, taken again */
            kp_ref fresh;
            memset(&fresh, 0, sizeof fresh);
            CHECK(sm->reference(sm, &small, (const void *const *)b.in, &fresh) == 0);
            CHECK(b.ref.n == fresh.n && fresh.n == 37 * 250);
            CHECK(memcmp(b.ref.want, fresh.want, (size_t)fresh.n * sizeof(double)) == 0);
            CHECK(memcmp(b.ref.tol, fresh.tol, (size_t)fresh.n * sizeof(double)) == 0);
            kp_ref_free(&fresh);
            kpp_iset_free(sm, &b);
        }
        kpp_ref_pool_drain();

        char path[2048];
        snprintf(path, sizeof path, "%s/tests/candidates/layernorm_pivot_onepass.c", g_root);
        const kp_op *op = kp_op_resolve("layernorm", "f32");
        int spike = -1;
        for (int d = 0; op && d < op->ndists; d++)
            if (strcmp(op->dists[d].name, "spike") == 0) spike = d;
        CHECK(spike >= 0);
        for (int d = 0; op && d < op->ndists; d++) {
            kp_eval_opts o;
            opts(&o, path, "layernorm", "f32");
            o.no_baseline = 1;
            o.correctness_only = 1;
            o.dist = d;
            kp_result r;
            char err[512] = "";
            int rc = kp_eval(&o, &r, err, sizeof err);
            CHECK(rc == 0);
            if (rc) continue;
            fprintf(stderr, "  %-44s %-8s %-12s %.150s\n", op->dists[d].name, kp_verdict_name(r.verdict), r.check_name,
                    r.detail);
            if (d != spike) {
                CHECK(r.verdict == KP_PASS);
            } else {
                CHECK(r.verdict == KP_WRONG);
                CHECK(strcmp(r.check_name, "tolerance") == 0);
            }
            kp_result_free(&r);
        }
    }

    /* Timed outputs on lazy matmul sets: where the parent holds no full
     * reference (the limit lowered here so a CPU shape gets there), the
     * timing phase's inputs exist only on the worker and each timed output
     * is checked from whole rows and a grid of recomputed elements. The
     * candidates below are right through the correctness phase and cheat
     * only in timing: the sampled check must catch each one, and honest
     * kernels (with their baselines) must pass it. M is above the rows
     * fetched, N above the grid's columns, so both are really sampled. */
    if (in_part("lazy")) {
        double keep = kp_matmul_full_limit;
        kp_matmul_full_limit = 1e6;
        const kp_shape lazy_shape = {3, {1031, 200, 129}};
        static const struct {
            const char *rel, *check;
        } late[] = {
            {"tests/candidates/matmul_timed_skip.c", "poison"},
            {"tests/candidates/matmul_timed_tile.c", "poison"},
            {"tests/candidates/matmul_timed_cache.c", "tolerance"},
            {"tests/candidates/matmul_timed_otherset.c", "tolerance"},
            {"tests/candidates/matmul_timed_tf32.c", "tolerance"},
        };
        for (size_t i = 0; i < sizeof late / sizeof late[0]; i++) {
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", g_root, late[i].rel);
            kp_eval_opts o;
            opts(&o, path, "matmul", "f32");
            o.no_baseline = 1;
            o.nshapes = 1;
            o.shapes[0] = lazy_shape;
            o.max_sets = 8;          /* eight sets, whatever the machine's cache ... */
            o.stop.min_samples = 10; /* ... so two passes over them at least: the cache's second pass */
            o.stop.budget_s = 0.5;   /* five budgets before a loaded machine may stop short of them */
            kp_result r;
            CHECK(eval_run(&o, late[i].rel, &r) == KP_WRONG);
            CHECK(strcmp(r.check_name, late[i].check) == 0);
            CHECK(strstr(r.detail, "a timed call") != NULL);
            CHECK(r.nshapes == 1 && strstr(r.shapes[0].check.method, " rows + 64 x 64 sampled") != NULL);
            kp_result_free(&r);
        }
        static const char *honest[][2] = {{"kernels/matmul/host/f32-02-blocked.c", "f32"},
                                          {"kernels/matmul/host/bf16-02-blocked.c", "bf16"}};
        for (size_t i = 0; i < sizeof honest / sizeof honest[0]; i++) {
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", g_root, honest[i][0]);
            kp_eval_opts o;
            opts(&o, path, "matmul", honest[i][1]);
            o.nshapes = 1;
            o.shapes[0] = lazy_shape;
            kp_result r;
            kp_verdict v = eval_run(&o, honest[i][0], &r);
            CHECK(v == KP_PASS || v == KP_NOISY);
            CHECK(r.nshapes == 1 && r.shapes[0].timed && r.shapes[0].wall_s > 0);
            /* Its seconds by kind of work add up to its wall time. */
            double work = 0;
            for (int k = 0; k < KP_NWORK; k++) work += r.shapes[0].work_s[k];
            CHECK(fabs(work - r.shapes[0].wall_s) < 0.01 && r.shapes[0].work_s[KP_WORK_CHECK] > 0 &&
                  r.shapes[0].work_s[KP_WORK_FETCH] > 0);
            /* The baselines' timed outputs pass the same check. */
            for (int w = 0; w < r.nwarn; w++) CHECK(strstr(r.warn[w], "dropped") == NULL);
            CHECK(r.shapes[0].base_name[0] != '\0');
            kp_result_free(&r);
        }
        kp_matmul_full_limit = keep;
    }

    if (in_part("memory")) snapshot_memory();
    TEST_MAIN_END();
}
