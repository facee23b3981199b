/* test_ops.c: the op registry, shapes, every op's float64 references
 * against hand-computed values, the cost model, invoke, and the output
 * check's bookkeeping and messages.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kernel.h" /* KP_RMSNORM_EPS */
#include "kproof/kproof.h"
#include "test.h"

extern double kp_matmul_full_limit; /* src/ops/matmul.c */

/* ===== registry =========================================================== */

static void test_registry(void) {
    /* The ops any build has; the registry may hold more, and every op it
     * holds, known here or not, is checked the same way below. */
    static const char *known[] = {"matmul_f32",    "matmul_bf16",    "softmax_f32", "softmax_bf16",
                                  "layernorm_f32", "layernorm_bf16", "sum_f32"};
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) CHECK(kp_op_find(known[k]) != NULL);
    const int nops = kp_op_count();
    CHECK(nops >= (int)(sizeof known / sizeof known[0]));
    CHECK(kp_op_at(-1) == NULL && kp_op_at(nops) == NULL);
    for (int i = 0; i < nops; i++) {
        const kp_op *op = kp_op_at(i);
        CHECK(op != NULL);
        if (!op) continue;
        CHECK(kp_op_find(op->name) == op);
        for (int j = 0; j < i; j++) CHECK(strcmp(kp_op_at(j)->name, op->name) != 0);
        char entry[64];
        snprintf(entry, sizeof entry, "kp_%s", op->name);
        CHECK(strcmp(op->entry, entry) == 0);
        char fam[64];
        snprintf(fam, sizeof fam, "%s_%s", op->family, kp_dtype_name(op->dtype));
        CHECK(strcmp(fam, op->name) == 0);
        /* A family's f32 variant comes first: kp_op_resolve falls back to it. */
        if (op->dtype != KP_F32) CHECK(kp_op_resolve(op->family, NULL) != NULL);
        CHECK(kp_op_resolve(op->family, kp_dtype_name(op->dtype)) == op);
        /* inputs first, then the one output, last */
        const int outbuf = kp_op_output_buf(op);
        CHECK(outbuf == op->nbufs - 1);
        for (int b = 0; b < op->nbufs; b++) {
            CHECK(op->bufs[b].output == (b == outbuf));
            CHECK(op->bufs[b].dtype == op->dtype);
        }
        CHECK(op->ndists >= 2 && op->dists[0].name && strcmp(op->dists[0].name, "normal") == 0);
        CHECK(op->rms_limit > 0 && op->rms_limit < 1);
        CHECK(op->summary && op->proto && strstr(op->proto, op->entry) != NULL);
        CHECK(op->invoke && op->reference && op->gen && op->draw_shape && op->shape_ok && op->flops &&
              op->min_bytes && op->buf_elems);
    }
    CHECK(kp_op_output_buf(kp_op_find("matmul_f32")) == 2 && kp_op_output_buf(kp_op_find("layernorm_f32")) == 3 &&
          kp_op_output_buf(kp_op_find("softmax_bf16")) == 1 && kp_op_output_buf(kp_op_find("sum_f32")) == 1);
    CHECK(kp_op_find("softmax") == NULL);
    CHECK(kp_op_find(NULL) == NULL);
    CHECK(kp_op_resolve("softmax", NULL) == kp_op_find("softmax_f32"));
    CHECK(kp_op_resolve("softmax", "bf16") == kp_op_find("softmax_bf16"));
    CHECK(kp_op_resolve("softmax", "bfloat16") == kp_op_find("softmax_bf16"));
    CHECK(kp_op_resolve("softmax", "fp32") == kp_op_find("softmax_f32"));
    CHECK(kp_op_resolve("softmax_bf16", NULL) == kp_op_find("softmax_bf16"));
    CHECK(kp_op_resolve("softmax_bf16", "bf16") == kp_op_find("softmax_bf16"));
    CHECK(kp_op_resolve("softmax_bf16", "f32") == NULL); /* contradiction */
    CHECK(kp_op_resolve("matmul", "") == kp_op_find("matmul_f32"));
    CHECK(kp_op_resolve("sum", "bf16") == NULL);
    CHECK(kp_op_resolve("matmul", "fp16") == NULL);
    CHECK(kp_op_resolve("conv", NULL) == NULL);
    CHECK(kp_op_resolve(NULL, NULL) == NULL);

    CHECK(kp_dtype_size(KP_F32) == 4 && kp_dtype_size(KP_BF16) == 2);
    CHECK(strcmp(kp_dtype_name(KP_F32), "f32") == 0 && strcmp(kp_dtype_name(KP_BF16), "bf16") == 0);
    kp_backend b = KP_BACKEND_HOST;
    CHECK(kp_backend_parse("cuda", &b) == 0 && b == KP_BACKEND_CUDA);
    CHECK(kp_backend_parse("host", &b) == 0 && b == KP_BACKEND_HOST);
    CHECK(kp_backend_parse("tpu", &b) == -1 && b == KP_BACKEND_HOST);
    CHECK(strcmp(kp_backend_name(KP_BACKEND_CUDA), "cuda") == 0);
    CHECK(strcmp(kp_backend_name(KP_BACKEND_HOST), "host") == 0);
}

/* ===== shape sets ========================================================= */

static int same_shape(const kp_shape *a, int nd, int64_t d0, int64_t d1, int64_t d2) {
    return a->nd == nd && a->d[0] == d0 && (nd < 2 || a->d[1] == d1) && (nd < 3 || a->d[2] == d2);
}

static int64_t largest_buf(const kp_op *op, const kp_shape *s) {
    int64_t m = 0;
    for (int b = 0; b < op->nbufs; b++)
        if (op->buf_elems(s, b) > m) m = op->buf_elems(s, b);
    return m;
}

static void test_shape_sets(void) {
    /* canonical: the benchmark shapes each op is timed at */
    const kp_op *mm = kp_op_find("matmul_bf16"), *sm = kp_op_find("softmax_f32"), *ln = kp_op_find("layernorm_bf16"),
                *su = kp_op_find("sum_f32");
    CHECK(mm->canonical.n == 4);
    CHECK(same_shape(&mm->canonical.shapes[0], 3, 4096, 4096, 4096));
    CHECK(same_shape(&mm->canonical.shapes[1], 3, 8192, 8192, 8192));
    CHECK(same_shape(&mm->canonical.shapes[2], 3, 4095, 4095, 4095));
    CHECK(same_shape(&mm->canonical.shapes[3], 3, 8192, 1024, 8192)); /* M N K */
    CHECK(sm->canonical.n == 3);
    CHECK(same_shape(&sm->canonical.shapes[0], 2, 8192, 8192, 0));
    CHECK(same_shape(&sm->canonical.shapes[1], 2, 65536, 1024, 0));
    CHECK(same_shape(&sm->canonical.shapes[2], 2, 4096, 32768, 0));
    CHECK(ln->canonical.n == 3);
    CHECK(same_shape(&ln->canonical.shapes[0], 2, 16384, 4096, 0));
    CHECK(same_shape(&ln->canonical.shapes[1], 2, 65536, 1024, 0));
    CHECK(same_shape(&ln->canonical.shapes[2], 2, 4096, 16384, 0));
    const kp_op *rn = kp_op_find("rmsnorm_bf16");
    CHECK(rn->canonical.n == 3);
    CHECK(same_shape(&rn->canonical.shapes[0], 2, 16384, 4096, 0));
    CHECK(same_shape(&rn->canonical.shapes[1], 2, 65536, 1024, 0));
    CHECK(same_shape(&rn->canonical.shapes[2], 2, 4096, 16384, 0));
    CHECK(su->canonical.n == 3);
    CHECK(same_shape(&su->canonical.shapes[0], 1, 1 << 28, 0, 0));
    CHECK(same_shape(&su->canonical.shapes[1], 1, 1 << 24, 0, 0));
    CHECK(same_shape(&su->canonical.shapes[2], 1, 1 << 20, 0, 0));

    for (int o = 0; o < kp_op_count(); o++) {
        const kp_op *op = kp_op_at(o);
        const kp_shape_set *sets[3] = {&op->canonical, &op->edge, &op->quick};
        char why[200];
        for (int k = 0; k < 3; k++) {
            CHECK(sets[k]->n > 0 && sets[k]->label);
            for (int i = 0; i < sets[k]->n; i++) CHECK(op->shape_ok(&sets[k]->shapes[i], why, sizeof why) == 0);
        }
        CHECK(strcmp(op->canonical.label, "canonical") == 0 && strcmp(op->edge.label, "edge") == 0);
        /* edge: small enough to check in full or cheaply, and awkward */
        int has_one = 0, has_long = 0, awkward = 0;
        for (int i = 0; i < op->edge.n; i++) {
            const kp_shape *s = &op->edge.shapes[i];
            CHECK(largest_buf(op, s) < (64 << 20));
            if (op->nd == 3) CHECK((double)s->d[0] * s->d[1] * s->d[2] < 2147483648.0);
            for (int d = 0; d < s->nd; d++) {
                has_one |= s->d[d] == 1;
                awkward += s->d[d] > 8 && s->d[d] % 8 != 0;
            }
            if (op->nd == 2) has_long |= s->d[1] >= 1048576;
            if (op->nd == 3) has_long |= s->d[2] >= 1000000;
        }
        CHECK(has_one);
        CHECK(has_long || op->nd == 1);
        CHECK(awkward >= 5);
        /* quick: a naive loop on one core takes well under 50 ms */
        for (int i = 0; i < op->quick.n; i++) {
            const kp_shape *s = &op->quick.shapes[i];
            CHECK(op->flops(s) < 2e7 || op->nd == 1);
            CHECK(largest_buf(op, s) <= 1100000);
        }
    }
    CHECK(same_shape(&kp_op_find("matmul_f32")->quick.shapes[0], 3, 96, 80, 112));
    CHECK(same_shape(&kp_op_find("sum_f32")->quick.shapes[0], 1, 1000003, 0, 0));

    /* The edge sets reach every launch branch of the best softmax and
     * layernorm kernels (they switch at these row lengths), each with a
     * width the 16-byte path takes (a multiple of 8) that fills only part
     * of it; layernorm also at each branch's full width, where 11 takes
     * its one-reduction path. */
    static const int64_t top[] = {128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
    for (int k = 0; k < 9; k++) {
        int64_t lo = k ? top[k - 1] : 0;
        int partial_sm = 0, partial_ln = 0, full_ln = 0, partial_rn = 0, full_rn = 0;
        for (int i = 0; i < rn->edge.n; i++) {
            int64_t c = rn->edge.shapes[i].d[1];
            partial_rn |= c > lo && c < top[k] && c % 8 == 0;
            full_rn |= c == top[k];
        }
        CHECK(partial_rn);
        CHECK(full_rn);
        for (int i = 0; i < sm->edge.n; i++) {
            int64_t c = sm->edge.shapes[i].d[1];
            partial_sm |= c > lo && c < top[k] && c % 8 == 0;
        }
        for (int i = 0; i < ln->edge.n; i++) {
            int64_t c = ln->edge.shapes[i].d[1];
            partial_ln |= c > lo && c < top[k] && c % 8 == 0;
            full_ln |= c == top[k];
        }
        CHECK(partial_sm);
        CHECK(partial_ln);
        CHECK(full_ln);
    }
    /* softmax bf16 12's 16K bulk-copy branch with full rows (its 32K
     * branch has them in the canonical 4096x32768). */
    int full16k = 0;
    for (int i = 0; i < sm->edge.n; i++) full16k |= sm->edge.shapes[i].d[1] == 16384;
    CHECK(full16k);
}

static void test_draw(void) {
    for (int o = 0; o < kp_op_count(); o++) {
        const kp_op *op = kp_op_at(o);
        int dims = 0, odd = 0;
        int64_t maxes[] = {1, 100, 1 << 18, 1 << 24};
        for (int m = 0; m < 4; m++)
            for (uint64_t seed = 0; seed < 200; seed++) {
                kp_shape s;
                char why[200];
                op->draw_shape(seed * 7919 + 3, maxes[m], &s);
                CHECK(s.nd == op->nd);
                CHECK(op->shape_ok(&s, why, sizeof why) == 0);
                CHECK(largest_buf(op, &s) <= maxes[m]);
                for (int d = 0; d < s.nd; d++)
                    if (s.d[d] > 2) dims++, odd += (int)(s.d[d] & 1);
            }
        CHECK(odd >= dims * 9 / 10);
        /* the draw is a function of the seed */
        kp_shape a, b;
        op->draw_shape(42, 1 << 20, &a);
        op->draw_shape(42, 1 << 20, &b);
        CHECK(same_shape(&b, a.nd, a.d[0], a.d[1], a.d[2]));
    }
}

/* ===== shape parsing ====================================================== */

static void parse_fails(const kp_op *op, const char *text, const char *needle) {
    kp_shape s;
    char why[256] = "";
    int rc = kp_op_parse_shape(op, text, &s, why, sizeof why);
    CHECK(rc != 0);
    if (!strstr(why, needle)) {
        fprintf(stderr, "  parse '%s': message '%s' lacks '%s'\n", text ? text : "(null)", why, needle);
        kp_test_failures++;
    }
}

static void test_parse(void) {
    const kp_op *mm = kp_op_find("matmul_f32"), *sm = kp_op_find("softmax_f32"), *su = kp_op_find("sum_f32");
    kp_shape s;
    char why[256];
    CHECK(kp_op_parse_shape(mm, "4096x4096x4096", &s, why, sizeof why) == 0 && same_shape(&s, 3, 4096, 4096, 4096));
    CHECK(kp_op_parse_shape(mm, "8192,1024,8192", &s, why, sizeof why) == 0 && same_shape(&s, 3, 8192, 1024, 8192));
    CHECK(kp_op_parse_shape(mm, " 3 x 5 X 7 ", &s, why, sizeof why) == 0 && same_shape(&s, 3, 3, 5, 7));
    CHECK(kp_op_parse_shape(sm, "65536x1024", &s, why, sizeof why) == 0 && same_shape(&s, 2, 65536, 1024, 0));
    CHECK(kp_op_parse_shape(su, "268435456", &s, why, sizeof why) == 0 && same_shape(&s, 1, 268435456, 0, 0));
    CHECK(kp_op_parse_shape(su, "+17", &s, why, sizeof why) == 0 && same_shape(&s, 1, 17, 0, 0));

    parse_fails(mm, "4096x4096", "matmul takes 3 dimensions (M x N x K), got 2");
    parse_fails(sm, "1x2x3", "softmax takes 2 dimensions (rows x cols), got 3");
    parse_fails(sm, "1x2x3x4x5", "got 5");
    parse_fails(su, "10,20", "sum takes 1 dimension (n), got 2");
    parse_fails(sm, "0x5", "dimension rows is 0");
    parse_fails(mm, "8x8x0", "dimension K is 0");
    parse_fails(sm, "-5x3", "dimension rows is negative");
    parse_fails(sm, "5x-3", "dimension cols is negative");
    parse_fails(su, "99999999999999999999", "dimension n does not fit in 64 bits");
    parse_fails(sm, "2000000x2000000", "buffer x would hold 4000000000000 elements (limit 2^40)");
    parse_fails(mm, "2000000x2000000x2000000", "8e+18 elements of work is too large");
    parse_fails(sm, "2000000000000x1", "dimension rows = 2000000000000 is too large");
    parse_fails(mm, "4096xx4096", "bad shape '4096xx4096'");
    parse_fails(mm, "4096x", "expected M x N x K");
    parse_fails(sm, "abc", "e.g. 8192x8192");
    parse_fails(sm, "1e3x5", "unexpected 'e'");
    parse_fails(sm, "12;5", "unexpected ';'");
    parse_fails(sm, "", "empty shape");
    parse_fails(sm, NULL, "empty shape");

    char buf[64];
    kp_shape f = {3, {4096, 1024, 8192}};
    CHECK(kp_shape_format(&f, buf, sizeof buf) == 14 && strcmp(buf, "4096x1024x8192") == 0);
    CHECK(kp_shape_format(&f, buf, 5) == 14 && strcmp(buf, "4096") == 0); /* truncated like snprintf */
    kp_shape one = {1, {1000003}};
    CHECK(kp_shape_format(&one, buf, sizeof buf) == 7 && strcmp(buf, "1000003") == 0);
}

/* ===== references against hand-computed values ============================ */

static void put(const kp_op *op, void *buf, int64_t i, double v) {
    if (op->dtype == KP_BF16) ((uint16_t *)buf)[i] = kp_f32_to_bf16_bits((float)v);
    else ((float *)buf)[i] = (float)v;
}

/* A reference whose inputs are given, checked against want[], and whose
 * tolerances are tight: every tol below rel * |want| + abs. */
static void ref_case_abs(const kp_op *op, const kp_shape *s, const double *const *vals, const double *want,
                         double tol, double rel, double abs) {
    void *in[KP_MAX_BUFS] = {0};
    for (int b = 0; b < op->nbufs; b++) {
        if (op->bufs[b].output) continue;
        int64_t n = op->buf_elems(s, b);
        in[b] = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) put(op, in[b], i, vals[b][i]);
    }
    kp_ref r;
    memset(&r, 0, sizeof r);
    CHECK(op->reference(op, s, (const void *const *)in, &r) == 0);
    int64_t n = op->buf_elems(s, kp_op_output_buf(op));
    CHECK(r.n == n && r.want && r.tol);
    for (int64_t i = 0; i < n && r.want; i++) {
        CHECK_NEAR(r.want[i], want[i], tol);
        CHECK(r.tol[i] > 0 && r.tol[i] <= rel * fabs(want[i]) + abs);
    }
    kp_ref_free(&r);
    CHECK(r.want == NULL && r.tol == NULL);
    for (int b = 0; b < KP_MAX_BUFS; b++) free(in[b]);
}
static void ref_case(const kp_op *op, const kp_shape *s, const double *const *vals, const double *want, double tol,
                     double rel) {
    ref_case_abs(op, s, vals, want, tol, rel, 1e-30);
}

static void test_references(void) {
    /* softmax of [0, ln 2, ln 3] is [1, 2, 3] / 6; of [0, 1, 2] it is
     * e^k / (1 + e + e^2) = 0.0900305731703805, 0.244728471054798,
     * 0.665240955774822. The f32 inputs round ln 2 and ln 3 by 3e-8. */
    {
        const kp_op *op = kp_op_find("softmax_f32");
        kp_shape s = {2, {2, 3}};
        double x[] = {0, log(2.0), log(3.0), 0, 1, 2};
        const double *vals[] = {x};
        double want[] = {1.0 / 6, 2.0 / 6, 3.0 / 6, 0.0900305731703805, 0.244728471054798, 0.665240955774822};
        ref_case(op, &s, vals, want, 2e-8, 1e-4);
        /* bf16: 0, 1, 2 are exact */
        const kp_op *bf = kp_op_find("softmax_bf16");
        kp_shape s1 = {2, {1, 3}};
        const double *vals1[] = {x + 3};
        ref_case(bf, &s1, vals1, want + 3, 1e-15, 0.05);
        /* a row of 1 is always 1, whatever x is */
        kp_shape s2 = {2, {2, 1}};
        double x2[] = {-1e30, 1e30}, w2[] = {1, 1};
        const double *vals2[] = {x2};
        ref_case(op, &s2, vals2, w2, 0, 1e-4);
    }
    /* layernorm of [1, 2, 3, 4]: mean 2.5, var 1.25, rstd 1/sqrt(1.25001)
     * = 0.894423613, z = [-1.5, -0.5, 0.5, 1.5] rstd; with w = [1, 2, 0.5, 1]
     * and b = [0, 1, 0, -1]: y = [-1.34163542, 0.105576387, 0.223605903,
     * 0.341635420]. Second row [5, 5, 5, 5]: var 0, so y = b; its
     * tolerance is wider (rstd = 1/sqrt(eps) = 316 amplifies any error in
     * the mean) but stays under 1e-2 |w|. */
    {
        const kp_op *op = kp_op_find("layernorm_f32");
        kp_shape s = {2, {2, 4}};
        double x[] = {1, 2, 3, 4, 5, 5, 5, 5}, w[] = {1, 2, 0.5, 1}, b[] = {0, 1, 0, -1};
        const double *vals[] = {x, w, b};
        double want[] = {-1.3416354199689269, 0.105576386687382, 0.2236059033281545, 0.3416354199689269, 0, 1, 0,
                         -1};
        ref_case_abs(op, &s, vals, want, 1e-15, 1e-3, 1e-2); /* y[0,1] = -0.89 + 1 cancels */
        ref_case_abs(kp_op_find("layernorm_bf16"), &s, vals, want, 1e-15, 0.05, 1e-2);
        kp_shape s1 = {2, {1, 4}};
        ref_case(op, &s1, vals, want, 1e-15, 1e-3);
    }
    /* rmsnorm of [1, 2, 3, 4]: mean square 7.5, rstd 1/sqrt(7.50001); with
     * w = [1, 2, 0.5, 1]: y = [0.365148128, 1.46059251, 0.547722192,
     * 1.46059251]. Second row all zeros: y is exactly 0, and so is its
     * tolerance but for the floor. One column: y = x / sqrt(x^2 + eps) w. */
    {
        const kp_op *op = kp_op_find("rmsnorm_f32");
        kp_shape s = {2, {2, 4}};
        double x[] = {1, 2, 3, 4, 0, 0, 0, 0}, w[] = {1, 2, 0.5, 1};
        const double *vals[] = {x, w};
        double want[] = {0.3651481282381064, 1.4605925129524255, 0.5477221923571596, 1.4605925129524255, 0, 0, 0, 0};
        ref_case_abs(op, &s, vals, want, 1e-15, 1e-4, 1e-36);
        ref_case_abs(kp_op_find("rmsnorm_bf16"), &s, vals, want, 1e-15, 0.05, 1e-36);
        kp_shape s1 = {2, {1, 1}};
        double x1[] = {-3}, w1[] = {2}, want1[] = {-1.9999988888898148};
        const double *vals1[] = {x1, w1};
        ref_case(op, &s1, vals1, want1, 1e-15, 1e-5);
    }
    /* [[1,2,3],[4,5,6]] [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] */
    {
        const kp_op *op = kp_op_find("matmul_f32");
        kp_shape s = {3, {2, 2, 3}};
        double A[] = {1, 2, 3, 4, 5, 6}, B[] = {7, 8, 9, 10, 11, 12};
        const double *vals[] = {A, B};
        double want[] = {58, 64, 139, 154};
        ref_case(op, &s, vals, want, 0, 1e-4);
        ref_case(kp_op_find("matmul_bf16"), &s, vals, want, 0, 0.05);
        /* cancellation: [1, -1] . [1e4, 1e4] = 0 exactly; tol from S = 2e4 */
        kp_shape c = {3, {1, 1, 2}};
        double a2[] = {1, -1}, b2[] = {1e4, 1e4}, w2[] = {0};
        const double *v2[] = {a2, b2};
        void *in[2] = {malloc(8), malloc(8)};
        for (int i = 0; i < 2; i++) put(op, in[0], i, a2[i]), put(op, in[1], i, b2[i]);
        kp_ref r;
        memset(&r, 0, sizeof r);
        CHECK(op->reference(op, &c, (const void *const *)in, &r) == 0);
        CHECK(r.want[0] == 0 && r.tol[0] > 2e4 * KP_U32 && r.tol[0] < 2e4 * 1e-5);
        kp_ref_free(&r);
        free(in[0]);
        free(in[1]);
        (void)v2;
        (void)w2;
    }
    /* sums: 1 + 2 + 3 + 4.5 = 10.5; 1e8 + 1 - 1e8 = 1 (exact in double,
     * lost by a float chain); one element is itself */
    {
        const kp_op *op = kp_op_find("sum_f32");
        kp_shape s = {1, {4}};
        double x[] = {1, 2, 3, 4.5}, w[] = {10.5};
        const double *vals[] = {x};
        ref_case(op, &s, vals, w, 0, 1e-4);
        kp_shape s3 = {1, {3}};
        double x3[] = {1e8, 1, -1e8}, w3[] = {1};
        const double *v3[] = {x3};
        ref_case(op, &s3, v3, w3, 0, 1000.0); /* tol comes from |x|: 30 float ulps of 1e8 */
        kp_shape s1 = {1, {1}};
        double x1[] = {-2.25}, w1[] = {-2.25};
        const double *v1[] = {x1};
        ref_case(op, &s1, v1, w1, 0, 1e-4);
    }
}

/* ===== cost model ========================================================= */

static void test_cost(void) {
    const kp_op *mm = kp_op_find("matmul_f32"), *mb = kp_op_find("matmul_bf16");
    kp_shape c = {3, {4096, 4096, 4096}};
    CHECK(mm->flops(&c) == 137438953472.0);       /* 2 * 4096^3 */
    CHECK(mm->min_bytes(&c) == 201326592.0);      /* 3 * 4096^2 * 4 */
    CHECK(mb->flops(&c) == 137438953472.0);
    CHECK(mb->min_bytes(&c) == 100663296.0);
    kp_shape r = {3, {8192, 1024, 8192}};
    CHECK(mm->flops(&r) == 2.0 * 8192 * 1024 * 8192);
    CHECK(mm->min_bytes(&r) == (8192.0 * 8192 + 8192.0 * 1024 + 8192.0 * 1024) * 4); /* A, B, C */
    CHECK(mm->buf_elems(&r, 0) == 8192LL * 8192 && mm->buf_elems(&r, 1) == 8192LL * 1024 &&
          mm->buf_elems(&r, 2) == 8192LL * 1024);

    const kp_op *sm = kp_op_find("softmax_f32"), *sb = kp_op_find("softmax_bf16");
    kp_shape q = {2, {8192, 8192}};
    CHECK(sm->min_bytes(&q) == 536870912.0); /* read x, write y */
    CHECK(sb->min_bytes(&q) == 268435456.0);
    CHECK(sm->flops(&q) == 5.0 * 67108864);

    const kp_op *ln = kp_op_find("layernorm_f32"), *lb = kp_op_find("layernorm_bf16");
    kp_shape l = {2, {16384, 4096}};
    CHECK(ln->min_bytes(&l) == 536903680.0); /* x, y, w, b */
    CHECK(lb->min_bytes(&l) == 268451840.0);
    CHECK(ln->flops(&l) == 8.0 * 67108864);
    CHECK(ln->buf_elems(&l, 1) == 4096 && ln->buf_elems(&l, 2) == 4096 && ln->buf_elems(&l, 3) == 67108864);

    const kp_op *rn = kp_op_find("rmsnorm_f32"), *rb = kp_op_find("rmsnorm_bf16");
    CHECK(rn->min_bytes(&l) == (2.0 * 67108864 + 4096) * 4); /* read x and w, write y */
    CHECK(rb->min_bytes(&l) == (2.0 * 67108864 + 4096) * 2);
    CHECK(rn->flops(&l) == 4.0 * 67108864);
    CHECK(rn->buf_elems(&l, 0) == 67108864 && rn->buf_elems(&l, 1) == 4096 && rn->buf_elems(&l, 2) == 67108864);

    const kp_op *su = kp_op_find("sum_f32");
    kp_shape n = {1, {1 << 28}};
    CHECK(su->min_bytes(&n) == 1073741828.0);
    CHECK(su->flops(&n) == 268435456.0);
    CHECK(su->buf_elems(&n, 1) == 1);
}

/* ===== invoke ============================================================= */

static void *seen_stream;
static int fake_sum(const float *x, float *out, int64_t n) {
    float s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    *out = s;
    return 7;
}
static int fake_sum_s(const float *x, float *out, int64_t n, void *stream) {
    seen_stream = stream;
    return fake_sum(x, out, n) + 1;
}
static int fake_ln(const uint16_t *x, const uint16_t *w, const uint16_t *b, uint16_t *y, int64_t rows, int64_t cols) {
    (void)x;
    for (int64_t i = 0; i < rows * cols; i++) y[i] = (uint16_t)(w[i % cols] + b[i % cols]);
    return (int)(rows * 100 + cols);
}
static int fake_rn(const float *x, const float *w, float *y, int64_t rows, int64_t cols, void *stream) {
    seen_stream = stream;
    for (int64_t i = 0; i < rows * cols; i++) y[i] = x[i] * w[i % cols];
    return (int)(rows * 100 + cols);
}
static int fake_mm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K, void *stream) {
    seen_stream = stream;
    C[0] = A[0] * B[0];
    return (int)(M * 10000 + N * 100 + K);
}

static void test_invoke(void) {
    void *fn;
    float x[3] = {1, 2, 4}, out = 0;
    void *bufs[KP_MAX_BUFS] = {x, &out};
    kp_shape s = {1, {3}};
    int (*f1)(const float *, float *, int64_t) = fake_sum;
    memcpy(&fn, &f1, sizeof fn);
    const kp_op *su = kp_op_find("sum_f32");
    CHECK(su->invoke(fn, bufs, &s, NULL, 0) == 7 && out == 7.0f);
    int (*f2)(const float *, float *, int64_t, void *) = fake_sum_s;
    memcpy(&fn, &f2, sizeof fn);
    out = 0;
    CHECK(su->invoke(fn, bufs, &s, (void *)&s, 1) == 8 && out == 7.0f && seen_stream == (void *)&s);

    uint16_t xx[6] = {0}, w[3] = {1, 2, 3}, b[3] = {10, 20, 30}, y[6] = {0};
    void *lb[KP_MAX_BUFS] = {xx, w, b, y};
    kp_shape ls = {2, {2, 3}};
    int (*f3)(const uint16_t *, const uint16_t *, const uint16_t *, uint16_t *, int64_t, int64_t) = fake_ln;
    memcpy(&fn, &f3, sizeof fn);
    CHECK(kp_op_find("layernorm_bf16")->invoke(fn, lb, &ls, NULL, 0) == 203);
    CHECK(y[0] == 11 && y[5] == 33);

    float rx[6] = {1, 2, 3, 4, 5, 6}, rw[3] = {1, 2, 3}, ry[6] = {0};
    void *rb[KP_MAX_BUFS] = {rx, rw, ry};
    int (*f5)(const float *, const float *, float *, int64_t, int64_t, void *) = fake_rn;
    memcpy(&fn, &f5, sizeof fn);
    seen_stream = NULL;
    CHECK(kp_op_find("rmsnorm_f32")->invoke(fn, rb, &ls, (void *)rx, 1) == 203 && seen_stream == (void *)rx);
    CHECK(ry[0] == 1 && ry[5] == 18);

    float A[1] = {3}, B[1] = {5}, C[1] = {0};
    void *mb[KP_MAX_BUFS] = {A, B, C};
    kp_shape ms = {3, {1, 2, 3}};
    int (*f4)(const float *, const float *, float *, int64_t, int64_t, int64_t, void *) = fake_mm;
    memcpy(&fn, &f4, sizeof fn);
    seen_stream = NULL;
    CHECK(kp_op_find("matmul_f32")->invoke(fn, mb, &ms, (void *)A, 1) == 10203 && C[0] == 15.0f &&
          seen_stream == (void *)A);
}

/* ===== the output check =================================================== */

/* A reference offered the caller's buffers (KP_REF_OFFERED) writes into
 * them and leaves them to the caller; too few of them, and the op's own
 * are allocated and freed as usual, the offered ones untouched. Every
 * row-local op's reference writes every element of offered buffers: the
 * parent reuses set references (src/core/protocol/inputs.c), so one that
 * left an element unwritten would hand on an earlier set's value. */
static void test_borrowed_reference(void) {
    const kp_op *op = kp_op_find("softmax_f32");
    kp_shape s = {2, {3, 5}};
    float x[15];
    for (int i = 0; i < 15; i++) x[i] = (float)(i % 7) - 3.0f;
    const void *in[1] = {x};
    kp_ref own;
    memset(&own, 0, sizeof own);
    CHECK(op->reference(op, &s, in, &own) == 0 && own.want && !own.borrowed);
    double want[16], tol[16];
    want[15] = tol[15] = -7.0; /* past n: untouched */
    kp_ref b;
    memset(&b, 0, sizeof b);
    b.n = 16, b.want = want, b.tol = tol, b.borrowed = KP_REF_OFFERED;
    CHECK(op->reference(op, &s, in, &b) == 0);
    CHECK(b.borrowed == KP_REF_TAKEN && b.want == want && b.tol == tol && b.n == 15);
    CHECK(memcmp(want, own.want, 15 * sizeof(double)) == 0 && memcmp(tol, own.tol, 15 * sizeof(double)) == 0);
    CHECK(want[15] == -7.0 && tol[15] == -7.0);
    kp_ref_free(&b); /* leaves want and tol: they are on this stack */
    CHECK(b.want == NULL && b.borrowed == 0);
    for (int i = 0; i < 16; i++) want[i] = tol[i] = -7.0;
    kp_ref small;
    memset(&small, 0, sizeof small);
    small.n = 4, small.want = want, small.tol = tol, small.borrowed = KP_REF_OFFERED;
    CHECK(op->reference(op, &s, in, &small) == 0);
    CHECK(small.borrowed == 0 && small.want != want && small.n == 15);
    CHECK(memcmp(small.want, own.want, 15 * sizeof(double)) == 0);
    int untouched = 1;
    for (int i = 0; i < 16; i++) untouched &= want[i] == -7.0 && tol[i] == -7.0;
    CHECK(untouched);
    kp_ref_free(&small);
    kp_ref_free(&own);

    for (int o = 0; o < kp_op_count(); o++) {
        const kp_op *q = kp_op_at(o);
        if (!q->row_local) continue;
        const kp_shape *sh = &q->edge.shapes[0];
        for (int i = 0; i < q->edge.n; i++) /* a small edge shape of several rows */
            if (sh->d[0] < 2 || (q->edge.shapes[i].d[0] >= 2 && largest_buf(q, &q->edge.shapes[i]) < largest_buf(q, sh)))
                sh = &q->edge.shapes[i];
        void *bufs[KP_MAX_BUFS] = {0};
        const void *ins[KP_MAX_BUFS] = {0};
        for (int k = 0; k < q->nbufs; k++) {
            if (q->bufs[k].output) continue;
            const int64_t n = q->buf_elems(sh, k);
            bufs[k] = malloc((size_t)n * kp_dtype_size(q->bufs[k].dtype));
            kp_gen_fill(q, sh, 0, k, 12345, bufs[k], 0, n);
            ins[k] = bufs[k];
        }
        const int64_t n = q->buf_elems(sh, kp_op_output_buf(q));
        double *w = malloc((size_t)n * sizeof *w), *t = malloc((size_t)n * sizeof *t);
        for (int64_t i = 0; i < n; i++) w[i] = t[i] = NAN;
        kp_ref r;
        memset(&r, 0, sizeof r);
        r.n = n, r.want = w, r.tol = t, r.borrowed = KP_REF_OFFERED;
        CHECK(q->reference(q, sh, ins, &r) == 0 && r.borrowed == KP_REF_TAKEN && r.want == w);
        int64_t unwritten = 0;
        for (int64_t i = 0; i < n; i++) unwritten += isnan(w[i]) || isnan(t[i]);
        if (unwritten) fprintf(stderr, "%s: %lld of %lld reference elements unwritten\n", q->name, (long long)unwritten, (long long)n);
        CHECK(unwritten == 0);
        kp_ref_free(&r);
        free(w), free(t);
        for (int k = 0; k < q->nbufs; k++) free(bufs[k]);
    }
}

static void test_check(void) {
    const kp_op *op = kp_op_find("softmax_f32");
    kp_shape s = {2, {2, 3}};
    double want[6] = {0.1, 0.2, 0.7, 0.3, 0.3, 0.4}, tol[6] = {1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3};
    kp_ref ref = {6, want, tol, NULL, NULL, 0, NULL, 0};
    float out[6];
    kp_check c;

    for (int i = 0; i < 6; i++) out[i] = (float)want[i];
    CHECK(kp_check_output(op, &s, NULL, &ref, out, 1, &c) == 0);
    CHECK(c.ok && c.checked == 6 && c.bad == 0 && c.first_bad == -1 && c.max_ratio < 1e-4);
    CHECK(strcmp(c.method, "full") == 0 && c.rms_limit == op->rms_limit);

    /* one element over: coordinates, values, counts */
    out[4] = 0.31f;
    kp_check_output(op, &s, NULL, &ref, out, 1, &c);
    CHECK(!c.ok && c.bad == 1 && c.first_bad == 4);
    CHECK(fabs(c.max_ratio - 10.0) < 1e-3);
    CHECK(strstr(c.why, "y[1,1] = 0.31 but want 0.3 (tol 0.001); 1 of 6 elements over tolerance") != NULL);

    /* poison wins over everything and says so in the agreed words */
    uint32_t p = KP_POISON_F32_BITS;
    memcpy(&out[3], &p, 4);
    memcpy(&out[5], &p, 4);
    kp_check_output(op, &s, NULL, &ref, out, 1, &c);
    CHECK(!c.ok && c.poisoned == 2 && c.first_bad == 3);
    CHECK(strstr(c.why, "output never written: 2 of 6 elements still hold the poison pattern") != NULL);
    CHECK(strstr(c.why, "y[1,0]") != NULL);

    /* NaN / Inf that are not poison */
    for (int i = 0; i < 6; i++) out[i] = (float)want[i];
    out[2] = (float)INFINITY;
    out[1] = (float)NAN;
    kp_check_output(op, &s, NULL, &ref, out, 1, &c);
    CHECK(!c.ok && c.nonfinite == 2 && c.poisoned == 0 && c.first_bad == 1);
    CHECK(strstr(c.why, "y[0,1] = nan but want 0.2; 2 of 6 elements are NaN or Inf") != NULL);

    /* every element a little off: under 1 everywhere, over the RMS limit */
    for (int i = 0; i < 6; i++) out[i] = (float)(want[i] + 0.6e-3);
    kp_check_output(op, &s, NULL, &ref, out, 1, &c);
    CHECK(!c.ok && c.bad == 0 && c.max_ratio < 1 && c.rms_ratio > op->rms_limit);
    CHECK(strstr(c.why, "RMS error") != NULL && c.first_bad >= 0);

    /* zero tolerance demands exact equality, not a division by zero */
    kp_check_begin(&c, 0.5);
    kp_check_add(&c, 0, 1.0, 1.0, 0.0, 0);
    kp_check_finish(&c, op, &s);
    CHECK(c.ok && c.max_ratio == 0);
    kp_check_begin(&c, 0.5);
    kp_check_add(&c, 1, 1.0 + 1e-12, 1.0, 0.0, 0);
    kp_check_finish(&c, op, &s);
    CHECK(!c.ok && c.bad == 1 && isinf(c.max_ratio));

    /* 1-d output names out[i] */
    const kp_op *su = kp_op_find("sum_f32");
    kp_shape n = {1, {5}};
    kp_check_begin(&c, su->rms_limit);
    kp_check_add(&c, 0, 2.0, 1.0, 0.1, 0);
    kp_check_finish(&c, su, &n);
    CHECK(strstr(c.why, "out[0] = 2 but want 1") != NULL);

    /* bf16 outputs are read as bf16 */
    const kp_op *bf = kp_op_find("softmax_bf16");
    uint16_t h[6];
    for (int i = 0; i < 6; i++) h[i] = kp_f32_to_bf16_bits((float)want[i]);
    double tb[6];
    for (int i = 0; i < 6; i++) tb[i] = 4 * KP_U16 * want[i];
    kp_ref rb = {6, want, tb, NULL, NULL, 0, NULL, 0};
    CHECK(kp_check_output(bf, &s, NULL, &rb, h, 1, &c) == 0 && c.ok);
    h[0] = KP_POISON_BF16_BITS;
    kp_check_output(bf, &s, NULL, &rb, h, 1, &c);
    CHECK(!c.ok && c.poisoned == 1);
}

/* kp_check_add_n (the loop every full and sampled check runs) folds an
 * output exactly as kp_check_add does an element at a time: the same
 * counts, the same first element named with the same values, the same
 * worst ratio and the same sum of squared ratios to the bit, through
 * every kind of element the slow path takes (poison, NaN, Inf, a new
 * worst, over tolerance, zero and infinite tolerances, a NaN reference)
 * and under the loose-tol flaw, for f32 and bf16 outputs and a missing
 * tolerance array. */
static void check_same(const kp_check *a, const kp_check *b) {
    CHECK(a->checked == b->checked && a->bad == b->bad && a->poisoned == b->poisoned &&
          a->nonfinite == b->nonfinite && a->first_bad == b->first_bad);
    CHECK(memcmp(&a->max_ratio, &b->max_ratio, sizeof(double)) == 0);
    CHECK(memcmp(&a->rms_ratio, &b->rms_ratio, sizeof(double)) == 0);
    CHECK(memcmp(&a->got, &b->got, sizeof(double)) == 0 && memcmp(&a->want, &b->want, sizeof(double)) == 0 &&
          memcmp(&a->tol, &b->tol, sizeof(double)) == 0);
}

static void test_check_run(void) {
    enum { N = 4099 };
    static float f[N];
    static uint16_t h[N];
    static double want_f[N], tol[N];
    double *want = want_f;
    uint64_t x = 88172645463325252ull;
    for (int variant = 0; variant < 8; variant++) {
        const int special = variant >= 2 && variant <= 6; /* NaN, Inf, odd tolerances */
        for (int i = 0; i < N; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            double w = (double)(int64_t)(x % 2000001) / 1e6 - 1.0;
            want[i] = w;
            tol[i] = 1e-3 * (1 + fabs(w));
            double off = (double)((x >> 24) % 1000) / 1000.0 * tol[i] * (variant == 1 ? 1.5 : 0.9);
            f[i] = (float)(w + ((x >> 40) & 1 ? off : -off));
            int k = (int)((x >> 44) % 97);
            if (special && k == 0) f[i] = (float)NAN;
            if (special && k == 1) f[i] = (float)INFINITY;
            if (special && variant >= 3 && k == 2) memcpy(&f[i], &(uint32_t){KP_POISON_F32_BITS}, 4);
            if (special && k == 3) tol[i] = 0;
            if (special && k == 4) tol[i] = INFINITY;
            if (special && k == 5) want[i] = NAN;
            h[i] = kp_f32_to_bf16_bits(f[i]);
            if (special && variant >= 3 && k == 2) h[i] = KP_POISON_BF16_BITS;
        }
        /* exact elements (ratio 0), the first among them, and ties with the
         * worst ratio so far: want is what the output holds, per dtype; in
         * the last variant every element (the first one named) */
        static double want16[N];
        for (int i = 0; i < N; i++) want16[i] = want[i];
        if (variant >= 6)
            for (int i = 0; i < N; i += (variant == 7 || i < 64 ? 1 : 7)) {
                want[i] = f[i];
                want16[i] = kp_bf16_bits_to_f32(h[i]);
            }
        for (int dt = 0; dt < 2; dt++)
            for (int loose = 0; loose < 2; loose++)
                for (int notol = 0; notol < 2; notol++) {
                    kp_dtype t = dt ? KP_BF16 : KP_F32;
                    const void *out = dt ? (const void *)h : (const void *)f;
                    const double *wv = dt ? want16 : want_f;
                    const double *tl = notol ? NULL : tol;
                    const double lo = loose ? 1e-2 : 0;
                    kp_check a, b;
                    kp_check_begin_loose(&a, 0.5, lo);
                    kp_check_begin_loose(&b, 0.5, lo);
                    /* in two runs, as the sampled check adds its chunks */
                    kp_check_add_n(&a, 100, out, t, wv, tl, 1000);
                    kp_check_add_n(&a, 1100, (const char *)out + 1000 * kp_dtype_size(t), t, wv + 1000,
                                   tl ? tl + 1000 : NULL, N - 1000);
                    for (int i = 0; i < N; i++)
                        kp_check_add(&b, 100 + i, kp_load(out, t, i), wv[i], tl ? tl[i] : 0, kp_is_poison(out, t, i));
                    check_same(&a, &b);
                    if (variant == 7 && !loose) CHECK(a.first_bad == 100 && a.max_ratio == 0 && a.rms_ratio == 0);
                }
    }
}

/* The whole path on a real op: generated inputs, reference, a correct
 * output and a wrong one. */
static void test_end_to_end(void) {
    const kp_op *op = kp_op_find("layernorm_f32");
    const kp_shape *s = &op->quick.shapes[1];
    void *in[KP_MAX_BUFS];
    kp_ref ref;
    memset(&ref, 0, sizeof ref);
    CHECK(kp_gen_inputs(op, s, 1, 5, in) == 0);
    CHECK(op->reference(op, s, (const void *const *)in, &ref) == 0);
    int64_t n = ref.n;
    float *out = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) out[i] = (float)ref.want[i];
    kp_check c;
    kp_check_output(op, s, (const void *const *)in, &ref, out, 3, &c);
    CHECK(c.ok && c.checked == n);
    out[n - 1] = -out[n - 1] + 1.0f;
    kp_check_output(op, s, (const void *const *)in, &ref, out, 3, &c);
    CHECK(!c.ok && c.first_bad == n - 1);
    free(out);
    kp_ref_free(&ref);
    kp_free_bufs(op, in);
}

/* rmsnorm's tolerance on generated inputs of every distribution: the
 * float rounding of the reference passes (bf16: the bf16 rounding), all
 * zeros fail, and so does y computed without eps on the small inputs
 * (mean(x^2) is a tenth of eps there) or with eps outside the root. On
 * the others eps moves y by 5e-6 relative or less, inside fp32's
 * tolerance: the small inputs are what pin it down. */
static void test_rmsnorm_tolerance(void) {
    for (int t = 0; t < 2; t++) {
        const kp_op *op = kp_op_find(t ? "rmsnorm_bf16" : "rmsnorm_f32");
        const kp_shape *s = &op->quick.shapes[1];
        int small = -1;
        for (int d = 0; d < op->ndists; d++)
            if (strcmp(op->dists[d].name, "small") == 0) small = d;
        CHECK(small >= 0 && op->ndists >= 4);
        for (int d = 0; d < op->ndists; d++) {
            void *in[KP_MAX_BUFS];
            kp_ref ref;
            memset(&ref, 0, sizeof ref);
            CHECK(kp_gen_inputs(op, s, d, 11 + (uint64_t)d, in) == 0);
            CHECK(op->reference(op, s, (const void *const *)in, &ref) == 0);
            const int64_t n = ref.n, rows = s->d[0], cols = s->d[1];
            void *out = malloc((size_t)n * 4);
            kp_check c;
            for (int64_t i = 0; i < n; i++) {
                if (t) ((uint16_t *)out)[i] = kp_f32_to_bf16_bits((float)ref.want[i]);
                else ((float *)out)[i] = (float)ref.want[i];
            }
            kp_check_output(op, s, (const void *const *)in, &ref, out, 3, &c);
            CHECK(c.ok && c.checked == n);
            memset(out, 0, (size_t)n * kp_dtype_size(op->dtype));
            kp_check_output(op, s, (const void *const *)in, &ref, out, 3, &c);
            CHECK(!c.ok && c.bad > n / 2);
            /* eps left out, and eps added to the root instead of inside */
            for (int variant = 0; variant < 2; variant++) {
                for (int64_t r = 0; r < rows; r++) {
                    double ss = 0;
                    for (int64_t j = 0; j < cols; j++) {
                        double v = kp_load(in[0], op->dtype, r * cols + j);
                        ss += v * v;
                    }
                    double rms = sqrt(ss / (double)cols);
                    double scale = variant ? 1.0 / (rms + KP_RMSNORM_EPS) : 1.0 / rms;
                    for (int64_t j = 0; j < cols; j++) {
                        double y = kp_load(in[0], op->dtype, r * cols + j) * scale * kp_load(in[1], op->dtype, j);
                        if (t) ((uint16_t *)out)[r * cols + j] = kp_f32_to_bf16_bits((float)y);
                        else ((float *)out)[r * cols + j] = (float)y;
                    }
                }
                kp_check_output(op, s, (const void *const *)in, &ref, out, 3, &c);
                if (d == small) CHECK(!c.ok);
            }
            free(out);
            kp_ref_free(&ref);
            kp_free_bufs(op, in);
        }
    }
}

/* ===== row-local ops ======================================================= */

/* What the lazy timing sets rely on (src/core/protocol/inputs.c): for an op marked
 * row_local, the reference of rows [r0, r1) computed on a sub-shape from
 * inputs generated at those rows' offsets (the weights whole) equals the
 * same rows of the full reference, bit for bit. */
static void test_row_local(void) {
    int nlocal = 0;
    for (int i = 0; i < kp_op_count(); i++) {
        const kp_op *op = kp_op_at(i);
        if (!op->row_local) continue;
        nlocal++;
        kp_shape sh = {2, {37, 1000}};
        for (int dist = 0; dist < op->ndists; dist++) {
            void *in[KP_MAX_BUFS];
            kp_ref full;
            memset(&full, 0, sizeof full);
            CHECK(kp_gen_inputs(op, &sh, dist, 99 + (uint64_t)dist, in) == 0);
            CHECK(op->reference(op, &sh, (const void *const *)in, &full) == 0);
            const int64_t r0 = 5, r1 = 9;
            kp_shape sub = sh, one = sh, two = sh;
            sub.d[0] = r1 - r0;
            one.d[0] = 1;
            two.d[0] = 2;
            void *part[KP_MAX_BUFS] = {0};
            for (int b = 0; b < op->nbufs; b++) {
                if (op->bufs[b].output) continue;
                int64_t per = op->buf_elems(&one, b);
                int scaled = op->buf_elems(&two, b) != per;
                int64_t n = scaled ? op->buf_elems(&sub, b) : op->buf_elems(&sh, b);
                part[b] = malloc((size_t)n * kp_dtype_size(op->bufs[b].dtype));
                kp_gen_fill(op, &sh, dist, b, 99 + (uint64_t)dist, part[b], scaled ? r0 * per : 0, n);
            }
            kp_ref rows;
            memset(&rows, 0, sizeof rows);
            CHECK(op->reference(op, &sub, (const void *const *)part, &rows) == 0);
            int64_t cols = sh.d[1];
            CHECK(memcmp(rows.want, full.want + r0 * cols, (size_t)((r1 - r0) * cols) * sizeof(double)) == 0);
            CHECK(memcmp(rows.tol, full.tol + r0 * cols, (size_t)((r1 - r0) * cols) * sizeof(double)) == 0);
            kp_ref_free(&rows);
            kp_ref_free(&full);
            for (int b = 0; b < KP_MAX_BUFS; b++) free(part[b]);
            kp_free_bufs(op, in);
        }
    }
    CHECK(nlocal >= 6); /* softmax, layernorm and rmsnorm, f32 and bf16, at least */
}

/* What the lazy matmul timing sets rely on (src/core/protocol/correctness.c,
 * check_lazy_grid): an element recomputed from a generated column of B
 * (lazy_col) and row of A (lazy_row) equals the full reference's want and
 * tol there, bit for bit, and lazy_at switches exactly where the full
 * reference stops. */
static void test_lazy_matmul(void) {
    int nlazy = 0;
    for (int i = 0; i < kp_op_count(); i++) {
        const kp_op *op = kp_op_at(i);
        if (!op->lazy_at) continue;
        nlazy++;
        CHECK(op->lazy_col && op->lazy_row);
        kp_shape sh = {3, {37, 53, 71}};
        CHECK(op->lazy_at(&sh) == 0); /* 139k multiply-adds: full reference */
        for (int dist = 0; dist < op->ndists; dist++) {
            void *in[KP_MAX_BUFS];
            kp_ref full;
            memset(&full, 0, sizeof full);
            uint64_t seed = 1234 + (uint64_t)dist;
            CHECK(kp_gen_inputs(op, &sh, dist, seed, in) == 0);
            CHECK(op->reference(op, &sh, (const void *const *)in, &full) == 0);
            CHECK(full.want != NULL);
            const int64_t rows[] = {0, 17, 36}, cols[] = {0, 5, 29, 52};
            int64_t K = sh.d[2], N = sh.d[1];
            double *ws = malloc(4 * (size_t)K * sizeof *ws), want[4], tol[4];
            for (int q = 0; q < 4; q++) op->lazy_col(op, &sh, dist, seed, cols[q], ws + q * K);
            for (int r = 0; r < 3; r++) {
                CHECK(op->lazy_row(op, &sh, dist, seed, rows[r], 4, ws, want, tol) == 0);
                for (int q = 0; q < 4; q++) {
                    CHECK(want[q] == full.want[rows[r] * N + cols[q]]);
                    CHECK(tol[q] == full.tol[rows[r] * N + cols[q]]);
                }
            }
            free(ws);
            kp_ref_free(&full);
            kp_free_bufs(op, in);
        }
        double keep = kp_matmul_full_limit;
        kp_matmul_full_limit = 1000;
        CHECK(op->lazy_at(&sh) == sh.d[2]);
        kp_matmul_full_limit = keep;
    }
    CHECK(nlazy == 2); /* matmul f32 and bf16 */
}

/* The sampled matmul check split over a parallel_for gives what the serial
 * check gives, field for field, whatever order the blocks run in: the
 * verdict, the counts, and the first bad index (the first poisoned
 * element where there is one, else the first NaN/Inf, else the first row
 * the projections reject), on honest and corrupted outputs alike. */
static void pf_reverse(int n, void (*fn)(void *, int), void *ctx) {
    for (int i = n - 1; i >= 0; i--) fn(ctx, i);
}
static void pf_odd_even(int n, void (*fn)(void *, int), void *ctx) {
    for (int i = 1; i < n; i += 2) fn(ctx, i);
    for (int i = 0; i < n; i += 2) fn(ctx, i);
}
static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void test_matmul_check_parallel(void) {
    double keep = kp_matmul_full_limit;
    kp_matmul_full_limit = 1000;
    /* more rows than blocks (uneven blocks), then fewer (empty blocks) */
    const kp_shape shapes[] = {{3, {517, 301, 37}}, {3, {60, 777, 29}}};
    for (int t = 0; t < 2; t++) {
        const kp_op *op = kp_op_find(t ? "matmul_bf16" : "matmul_f32");
        for (int si = 0; si < 2; si++) {
            const kp_shape *s = &shapes[si];
            int64_t M = s->d[0], N = s->d[1], K = s->d[2];
            void *in[KP_MAX_BUFS];
            kp_ref ref;
            memset(&ref, 0, sizeof ref);
            CHECK(kp_gen_inputs(op, s, 0, 21 + (uint64_t)si, in) == 0);
            CHECK(op->reference(op, s, (const void *const *)in, &ref) == 0 && ref.want == NULL);
            size_t es = kp_dtype_size(op->dtype);
            void *good = malloc((size_t)(M * N) * es), *out = malloc((size_t)(M * N) * es);
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    double w = 0;
                    for (int64_t k = 0; k < K; k++)
                        w += kp_load(in[0], op->dtype, i * K + k) * kp_load(in[1], op->dtype, k * N + j);
                    if (t) ((uint16_t *)good)[i * N + j] = kp_f32_to_bf16_bits((float)w);
                    else ((float *)good)[i * N + j] = (float)w;
                }
            /* honest; poison after a NaN and again later; two NaN/Inf; one
             * element off in a middle row; the loose flaw with poison */
            const int64_t nan_at = (M / 3) * N + 5, poi_at = (M / 2) * N + 7, poi2_at = (M - 1) * N + 1;
            const int64_t inf_at = (M * 3 / 4) * N + 9, off_at = (M / 2 + 3) * N + N / 2 + 1;
            for (int v = 0; v < 5; v++) {
                memcpy(out, good, (size_t)(M * N) * es);
                double vals[3] = {NAN, INFINITY, 0};
                int64_t at[3] = {-1, -1, -1};
                int poison[3] = {0, 0, 0};
                if (v == 1 || v == 4) {
                    at[0] = nan_at, at[1] = poi_at, at[2] = poi2_at;
                    poison[1] = poison[2] = 1;
                }
                if (v == 2) at[0] = inf_at, at[1] = nan_at, vals[0] = INFINITY, vals[1] = NAN;
                if (v == 3) { /* +1 in fp32; bf16's final rounding allows more, x5 is not */
                    double g = kp_load(good, op->dtype, off_at);
                    at[0] = off_at, vals[0] = t ? g + 4.0 * (fabs(g) + 1.0) : g + 1.0;
                }
                for (int e = 0; e < 3; e++) {
                    if (at[e] < 0) continue;
                    if (t)
                        ((uint16_t *)out)[at[e]] = poison[e] ? KP_POISON_BF16_BITS : kp_f32_to_bf16_bits((float)vals[e]);
                    else if (poison[e]) memcpy((float *)out + at[e], &(uint32_t){KP_POISON_F32_BITS}, 4);
                    else ((float *)out)[at[e]] = (float)vals[e];
                }
                ref.loose = v == 4 ? 1e-2 : 0;
                kp_check serial, par;
                ref.parallel_for = NULL;
                kp_check_output(op, s, (const void *const *)in, &ref, out, 9, &serial);
                for (int mode = 0; mode < 2; mode++) {
                    ref.parallel_for = mode ? pf_odd_even : pf_reverse;
                    kp_check_output(op, s, (const void *const *)in, &ref, out, 9, &par);
                    CHECK(par.ok == serial.ok && par.first_bad == serial.first_bad);
                    CHECK(par.checked == serial.checked && par.bad == serial.bad);
                    CHECK(par.poisoned == serial.poisoned && par.nonfinite == serial.nonfinite);
                    CHECK(same_double(par.got, serial.got) && same_double(par.want, serial.want));
                    CHECK(same_double(par.tol, serial.tol) && same_double(par.max_ratio, serial.max_ratio));
                    CHECK(same_double(par.rms_ratio, serial.rms_ratio));
                    CHECK(strcmp(par.why, serial.why) == 0 && strcmp(par.method, serial.method) == 0);
                }
                ref.parallel_for = NULL;
                /* and that verdict is the right one */
                if (v == 0) CHECK(serial.ok && serial.first_bad == -1);
                if (v == 1) CHECK(!serial.ok && serial.poisoned == 2 && serial.nonfinite == 1 && serial.first_bad == poi_at);
                if (v == 2) CHECK(!serial.ok && !serial.poisoned && serial.nonfinite == 2 && serial.first_bad == nan_at);
                if (v == 3) { /* the samples' element, or the projections' row */
                    CHECK(!serial.ok && serial.first_bad / N == off_at / N);
                    CHECK(serial.first_bad == off_at || strstr(serial.why, "Freivalds") != NULL);
                }
                /* loose: the poison pattern is the NaN it is, first of three */
                if (v == 4) CHECK(!serial.ok && !serial.poisoned && serial.nonfinite == 3 && serial.first_bad == nan_at);
            }
            ref.loose = 0;
            free(good);
            free(out);
            kp_ref_free(&ref);
            kp_free_bufs(op, in);
        }
    }
    kp_matmul_full_limit = keep;
}

/* The lazy check's grid (64 x 64 elements, src/core/protocol/correctness.c)
 * is enough to tell tf32 from fp32 where the per-element bound alone might
 * not: at K = 4096 on normal inputs (the timing sets' distribution) honest
 * sequential fp32 lands far under the RMS limit and tf32 inputs far over
 * it, and so do the grid's first 256 elements alone. */
static float tf32_round(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    u += 0xfffu + ((u >> 13) & 1u);
    u &= ~0x1fffu;
    memcpy(&x, &u, 4);
    return x;
}

static void test_lazy_precision(void) {
    const kp_op *op = kp_op_find("matmul_f32");
    CHECK(op != NULL);
    if (!op) return;
    enum { G = 64 };
    const int64_t M = 300, N = 300, K = 4096;
    const uint64_t seed = 77;
    kp_shape sh = {3, {M, N, K}};
    double *ws = malloc((size_t)(G * K) * sizeof *ws), *want = malloc(G * sizeof *want), *tol = malloc(G * sizeof *tol);
    float *a = malloc((size_t)K * sizeof *a);
    kp_gen ga = op->gen(&sh, 0, 0);
    for (int q = 0; q < G; q++) op->lazy_col(op, &sh, 0, seed, q * N / G, ws + q * K);
    kp_check honest, t32, t32_few;
    kp_check_begin(&honest, op->rms_limit);
    kp_check_begin(&t32, op->rms_limit);
    kp_check_begin(&t32_few, op->rms_limit);
    for (int e = 0; e < G; e++) {
        int64_t i = e * M / G;
        CHECK(op->lazy_row(op, &sh, 0, seed, i, G, ws, want, tol) == 0);
        for (int64_t k = 0; k < K; k++) a[k] = kp_gen_value(&ga, seed, 0, (uint64_t)(i * K + k));
        for (int q = 0; q < G; q++) {
            float acc = 0.0f, acc32 = 0.0f;
            for (int64_t k = 0; k < K; k++) {
                float b = (float)ws[q * K + k];
                acc += a[k] * b;
                acc32 += tf32_round(a[k]) * tf32_round(b);
            }
            int64_t idx = i * N + q * N / G;
            kp_check_add(&honest, idx, acc, want[q], tol[q], 0);
            kp_check_add(&t32, idx, acc32, want[q], tol[q], 0);
            if (e * G + q < 256) kp_check_add(&t32_few, idx, acc32, want[q], tol[q], 0);
        }
    }
    kp_check_finish(&honest, op, &sh);
    kp_check_finish(&t32, op, &sh);
    kp_check_finish(&t32_few, op, &sh);
    fprintf(stderr, "  lazy grid at K = 4096: fp32 RMS e %.3f (max %.3f), tf32 RMS e %.2f (max %.2f), first 256: %.2f\n",
            honest.rms_ratio, honest.max_ratio, t32.rms_ratio, t32.max_ratio, t32_few.rms_ratio);
    CHECK(honest.ok && honest.rms_ratio < op->rms_limit / 4);
    CHECK(!t32.ok && t32.rms_ratio > 4 * op->rms_limit);
    CHECK(!t32_few.ok && t32_few.rms_ratio > 4 * op->rms_limit);
    free(ws);
    free(want);
    free(tol);
    free(a);
}

int main(void) {
    test_registry();
    test_shape_sets();
    test_draw();
    test_parse();
    test_references();
    test_cost();
    test_invoke();
    test_borrowed_reference();
    test_check();
    test_check_run();
    test_end_to_end();
    test_rmsnorm_tolerance();
    test_row_local();
    test_lazy_matmul();
    test_lazy_precision();
    test_matmul_check_parallel();
    TEST_MAIN_END();
}
