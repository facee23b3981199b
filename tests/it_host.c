/* it_host.c: the whole protocol on the host backend, through real workers.
 * Good kernels PASS; broken ones get the right verdict, check and evidence. */
#include <stdlib.h>
#include <string.h>

#include "core/host_api.h"
#include "test.h"

static char g_root[1024], g_cache[1024];

static void opts(kp_eval_opts *o, const char *file, const char *op, const char *dtype) {
    kp_eval_opts_default(o);
    o->backend = KP_BACKEND_HOST;
    o->root = g_root;
    o->cache_dir = g_cache;
    o->candidate = file;
    o->op = kp_op_resolve(op, dtype);
    o->progress = 0;
    o->stop.budget_s = 0.5;
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

static void expect(const char *rel, const char *op, kp_verdict v, const char *check, const char *needle, int flags) {
    kp_result r;
    kp_verdict got = eval_file(rel, op, NULL, flags, &r);
    CHECK(got == v);
    if (check) CHECK(strcmp(r.check_name, check) == 0);
    if (needle) CHECK(strstr(r.detail, needle) != NULL);
    kp_result_free(&r);
}

int main(void) {
    const char *root = getenv("KPROOF_ROOT"), *cache = getenv("KPROOF_CACHE");
    snprintf(g_root, sizeof g_root, "%s", root ? root : ".");
    snprintf(g_cache, sizeof g_cache, "%s", cache ? cache : "/tmp/kproof-test-cache");

    /* Every project host kernel PASSes every shape of its op. */
    static const struct { const char *file, *op, *dtype; } good[] = {
        {"kernels/softmax/host/f32-01-naive.c", "softmax", "f32"},
        {"kernels/softmax/host/f32-02-fused.c", "softmax", "f32"},
        {"kernels/softmax/host/bf16-01-naive.c", "softmax", "bf16"},
        {"kernels/softmax/host/bf16-02-fused.c", "softmax", "bf16"},
        {"kernels/layernorm/host/f32-01-naive.c", "layernorm", "f32"},
        {"kernels/layernorm/host/f32-02-fused.c", "layernorm", "f32"},
        {"kernels/layernorm/host/bf16-01-naive.c", "layernorm", "bf16"},
        {"kernels/layernorm/host/bf16-02-fused.c", "layernorm", "bf16"},
        {"kernels/sum/host/f32-01-naive.c", "sum", "f32"},
        {"kernels/sum/host/f32-02-tree.c", "sum", "f32"},
        {"kernels/matmul/host/f32-01-naive.c", "matmul", "f32"},
        {"kernels/matmul/host/f32-02-blocked.c", "matmul", "f32"},
        {"kernels/matmul/host/bf16-01-naive.c", "matmul", "bf16"},
        {"kernels/matmul/host/bf16-02-blocked.c", "matmul", "bf16"},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", g_root, good[i].file);
        if (!kp_file_exists(path)) {
            fprintf(stderr, "missing project kernel %s\n", good[i].file);
            CHECK(0);
            continue;
        }
        kp_result r;
        kp_verdict v = eval_file(good[i].file, good[i].op, good[i].dtype, 0, &r);
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

    /* Broken candidates: verdict, the check that decided, and the evidence. */
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
    {
        kp_result r;
        /* One distribution asked for: a misaligned round is added. */
        CHECK(eval_correct("tests/candidates/softmax_aligned_only.c", "softmax", 0, 0, &r) == KP_WRONG);
        CHECK(strstr(r.detail, "not 16-byte aligned") != NULL);
        kp_result_free(&r);
        /* The naive modes keep their aligned calls. */
        kp_verdict v = eval_correct("tests/candidates/softmax_aligned_only.c", "softmax", KP_FLAW_LOOSE_TOL, -1, &r);
        CHECK(v == KP_PASS);
        kp_result_free(&r);
        /* The last round still sees pointers seen before: a cache keyed
         * on them is caught in the correctness phase, not only in timing. */
        CHECK(eval_correct("exploits/host/cache_pointer.c", "matmul", 0, -1, &r) == KP_WRONG);
        CHECK(strcmp(r.check_name, "tolerance") == 0);
        CHECK(strstr(r.detail, "distribution 'normal'") != NULL);
        kp_result_free(&r);
    }

    /* A variance in one pass about the row's first value: it passes the
     * normal and offset inputs, and the spike inputs (an outlier first
     * value) are what make it WRONG. */
    {
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
    TEST_MAIN_END();
}
