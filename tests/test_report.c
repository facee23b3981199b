/* test_report.c: the printers (table, JSON, markdown), string escaping,
 * time formatting, and the verdict/flaw/result helpers they print. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kproof.h"
#include "test.h"

/* ===== a small JSON syntax checker (RFC 8259) ============================ */

static const char *js_value(const char *p, int depth);

static const char *js_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static int js_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Length of a valid UTF-8 sequence at p, 0 if invalid. */
static int js_utf8(const unsigned char *p)
{
    int n;
    unsigned cp;
    if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2;
        cp = p[0] & 0x1fu;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        cp = p[0] & 0x0fu;
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        cp = p[0] & 0x07u;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3fu);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

static const char *js_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    for (;;) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c < 0x20)
            return NULL; /* raw control characters (and the end) are invalid */
        if (c == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!js_hex(p[i]))
                        return NULL;
                p += 5;
            } else if (*p && strchr("\"\\/bfnrt", *p)) {
                p++;
            } else {
                return NULL;
            }
        } else if (c >= 0x80) {
            int n = js_utf8((const unsigned char *)p);
            if (!n)
                return NULL;
            p += n;
        } else {
            p++;
        }
    }
}

static const char *js_digits(const char *p)
{
    if (*p < '0' || *p > '9')
        return NULL;
    while (*p >= '0' && *p <= '9')
        p++;
    return p;
}

static const char *js_number(const char *p)
{
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (!(p = js_digits(p)))
        return NULL;
    if (*p == '.' && !(p = js_digits(p + 1)))
        return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(p = js_digits(p)))
            return NULL;
    }
    return p;
}

static const char *js_container(const char *p, int depth, char close)
{
    p = js_ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (close == '}') {
            if (!(p = js_string(p)))
                return NULL;
            p = js_ws(p);
            if (*p++ != ':')
                return NULL;
        }
        if (!(p = js_value(p, depth + 1)))
            return NULL;
        p = js_ws(p);
        if (*p == close)
            return p + 1;
        if (*p++ != ',')
            return NULL;
        p = js_ws(p);
    }
}

static const char *js_value(const char *p, int depth)
{
    if (depth > 64)
        return NULL;
    p = js_ws(p);
    switch (*p) {
    case '{': return js_container(p, depth, '}');
    case '[': return js_container(p, depth, ']');
    case '"': return js_string(p);
    case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
    case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
    case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
    default: return js_number(p);
    }
}

static int json_valid(const char *text)
{
    const char *end = js_value(text, 0);
    return end && *js_ws(end) == '\0';
}

static void test_checker(void)
{
    /* The checker itself must refuse what the printer must never write. */
    CHECK(json_valid("{\"a\": [1, -2.5e3, true, null, \"x\\n\\u00e9\"]}"));
    CHECK(json_valid("\"\xc2\xb5s\""));
    CHECK(!json_valid("{\"a\": nan}"));
    CHECK(!json_valid("{\"a\": inf}"));
    CHECK(!json_valid("[1, 2,]"));
    CHECK(!json_valid("{\"a\" 1}"));
    CHECK(!json_valid("\"tab\there\""));
    CHECK(!json_valid("\"bad \\x escape\""));
    CHECK(!json_valid("\"\xff\""));
    CHECK(!json_valid("01"));
    CHECK(!json_valid("{} {}"));
}

/* ===== helpers =========================================================== */

static char *read_all(FILE *f)
{
    fflush(f);
    long len;
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        return NULL;
    char *buf = malloc((size_t)len + 1);
    if (!buf)
        return NULL;
    size_t got = fread(buf, 1, (size_t)len, f);
    buf[got] = '\0';
    return buf;
}

/* Runs a printer into a temporary file and returns what it wrote. */
static char *capture(void (*print)(FILE *, const kp_result *), const kp_result *r)
{
    FILE *f = tmpfile();
    if (!f)
        return NULL;
    print(f, r);
    char *s = read_all(f);
    fclose(f);
    return s;
}

static char *capture_str(const char *s)
{
    FILE *f = tmpfile();
    if (!f)
        return NULL;
    kp_json_str(f, s);
    char *out = read_all(f);
    fclose(f);
    return out;
}

static int has(const char *text, const char *needle)
{
    int ok = text && strstr(text, needle) != NULL;
    if (!ok)
        fprintf(stderr, "  missing: %s\n", needle);
    return ok;
}

/* ===== the hand-built result ============================================= */

static const kp_op fake_matmul = {.name = "matmul_f32", .family = "matmul", .dtype = KP_F32};

#define DETAIL_ESC "got \"1.5\"\nat C\\d \x01 \xc2\xb5s \xff"

static kp_result *build_result(void)
{
    kp_result *r = calloc(1, sizeof *r);
    r->verdict = KP_WRONG;
    r->op = &fake_matmul;
    r->backend = KP_BACKEND_CUDA;
    snprintf(r->candidate, sizeof r->candidate, "kernels/matmul/cuda/f32-07-wgmma.cu");
    snprintf(r->protocol, sizeof r->protocol, "rigorous");
    snprintf(r->check_name, sizeof r->check_name, "tolerance");
    snprintf(r->detail, sizeof r->detail, "%s", DETAIL_ESC);
    snprintf(r->env.gpu, sizeof r->env.gpu, "NVIDIA H200");
    snprintf(r->env.driver, sizeof r->env.driver, "570.86");
    snprintf(r->env.date, sizeof r->env.date, "2025-01-02T03:04:05Z");
    r->env.sm_count = 132;
    r->env.l2_bytes = 50331648;
    r->env.peak_gbs = 4200;
    r->env.peak_gflops_f32 = NAN; /* unknown, must print as null */
    r->env.throttle_after = 4;
    r->seed = 0xfedcba9876543210ULL; /* above 2^63: must survive as a string */
    r->wall_s = 12.5;
    for (int i = 0; i < 10; i++)
        kp_result_warn(r, "warning number %d", i);

    r->nshapes = 3;
    r->shapes = calloc(3, sizeof *r->shapes);

    kp_shape_result *a = &r->shapes[0];
    a->shape = (kp_shape){3, {4096, 4096, 4096}};
    a->origin = "canonical";
    a->verdict = KP_PASS;
    a->check.ok = 1;
    a->check.checked = 4096;
    a->check.first_bad = -1;
    snprintf(a->check.method, sizeof a->check.method, "sampled 4096 + Freivalds x2");
    a->timed = 1;
    a->cand.n = 150;
    a->cand.samples = calloc(150, sizeof(double));
    a->cand.median = 1.234e-3;
    a->cand.lo = 1.230e-3;
    a->cand.hi = 1.240e-3;
    a->cand.min = 1.2e-3;
    a->cand.mean = 1.25e-3;
    a->cand.settled = 1;
    a->cand.sol_time = 0.8 * 1.234e-3;
    a->cand.sol_fraction = 0.8;
    a->cand.gflops = 2.0 * 4096.0 * 4096.0 * 4096.0 / 1.234e-3 / 1e9;
    snprintf(a->base_name, sizeof a->base_name, "cublas_f32");
    a->base.n = 150;
    a->base.samples = calloc(150, sizeof(double));
    a->base.median = 2.258e-3;
    a->speedup = 1.83;
    a->speedup_lo = 1.79;
    a->speedup_hi = 1.87;
    a->nkernels = 2;
    snprintf(a->kernels[0].name, sizeof a->kernels[0].name, "mm_wgmma_128x256");
    a->kernels[0].stream = 7;
    a->kernels[0].on_given_stream = 1;
    a->kernels[0].duration_s = 1.1e-3;
    snprintf(a->kernels[1].name, sizeof a->kernels[1].name, "side_kernel");
    a->kernels[1].stream = 9;
    a->kernels[1].duration_s = 3e-6;

    kp_shape_result *b = &r->shapes[1];
    b->shape = (kp_shape){3, {127, 4099, 13}};
    b->origin = "edge";
    b->verdict = KP_WRONG;
    snprintf(b->check_name, sizeof b->check_name, "tolerance");
    snprintf(b->detail, sizeof b->detail, "%s", DETAIL_ESC);
    b->check.checked = 127 * 4099;
    b->check.bad = 12;
    b->check.first_bad = 4098;
    b->check.got = 1.5;
    b->check.want = 1.25;
    b->check.tol = 1e-5;
    b->check.max_ratio = 25000;
    b->check.rms_ratio = 0.7;
    b->check.rms_limit = 0.5;
    snprintf(b->check.method, sizeof b->check.method, "full");
    snprintf(b->check.why, sizeof b->check.why, "12 elements over tolerance");

    kp_shape_result *c = &r->shapes[2];
    c->shape = (kp_shape){3, {1, 1, 1}};
    c->origin = "drawn";
    c->verdict = KP_NOISY;
    snprintf(c->check_name, sizeof c->check_name, "noise");
    snprintf(c->detail, sizeof c->detail, "never settled");
    c->check.got = NAN;
    c->check.want = INFINITY;
    c->check.max_ratio = -INFINITY;
    c->check.first_bad = -1;
    c->timed = 1;
    c->cand.n = 3;
    c->cand.median = NAN;
    c->cand.lo = NAN;
    c->cand.hi = INFINITY;
    c->cand.gflops = NAN;
    c->cand.sol_time = 1e-9;
    c->cand.sol_fraction = NAN;
    snprintf(c->base_name, sizeof c->base_name, "naive");
    c->speedup = NAN;
    c->base.median = INFINITY;
    return r;
}

/* ===== tests ============================================================= */

static void test_fmt_time(void)
{
    char buf[64];
    kp_fmt_time(buf, sizeof buf, 1.5e-6, 1.5e-6);
    CHECK(strcmp(buf, "1.500 us") == 0);
    kp_fmt_time(buf, sizeof buf, 2.5e-9, 2.5e-9);
    CHECK(strcmp(buf, "2.500 ns") == 0);
    kp_fmt_time(buf, sizeof buf, 0.25, 0.25);
    CHECK(strcmp(buf, "250.0 ms") == 0);
    kp_fmt_time(buf, sizeof buf, 12.0, 12.0);
    CHECK(strcmp(buf, "12.00 s") == 0);
    kp_fmt_time(buf, sizeof buf, 45.67e-6, 45.67e-6);
    CHECK(strcmp(buf, "45.67 us") == 0);
    /* The unit follows ref, not t: an interval bound stays in its median's unit. */
    kp_fmt_time(buf, sizeof buf, 2e-3, 1e-6);
    CHECK(strcmp(buf, "2000.000 us") == 0);
    kp_fmt_time(buf, sizeof buf, 3e-3, 0);
    CHECK(strcmp(buf, "3.000 ms") == 0);
    kp_fmt_time(buf, sizeof buf, NAN, 1e-3);
    CHECK(strcmp(buf, "-") == 0);
    char tiny[4];
    kp_fmt_time(tiny, sizeof tiny, 1.5e-6, 1.5e-6); /* truncates, never overflows */
    CHECK(strlen(tiny) == 3);
}

static void test_json_str(void)
{
    char *s = capture_str("a\"b\\c\nd\te\r\x01\x1f\x7f");
    CHECK(s && strcmp(s, "\"a\\\"b\\\\c\\nd\\te\\r\\u0001\\u001f\\u007f\"") == 0);
    free(s);
    /* Valid UTF-8 (2, 3 and 4 bytes) passes through as-is. */
    s = capture_str("\xc2\xb5s \xe2\x86\x92 \xf0\x9f\x98\x80");
    CHECK(s && strcmp(s, "\"\xc2\xb5s \xe2\x86\x92 \xf0\x9f\x98\x80\"") == 0);
    free(s);
    /* Invalid: a lone continuation, a truncated sequence, an overlong '/',
     * a surrogate, a byte that never starts UTF-8. */
    s = capture_str("\x80|\xc2|\xc0\xaf|\xed\xa0\x80|\xff");
    CHECK(s && strcmp(s, "\"\\u0080|\\u00c2|\\u00c0\\u00af|\\u00ed\\u00a0\\u0080|\\u00ff\"") == 0);
    CHECK(json_valid(s));
    free(s);
    s = capture_str(NULL);
    CHECK(s && strcmp(s, "null") == 0);
    free(s);
    s = capture_str("");
    CHECK(s && strcmp(s, "\"\"") == 0);
    free(s);
}

static void test_json(const kp_result *r)
{
    char *j = capture(kp_print_json, r);
    CHECK(j != NULL);
    if (!j)
        return;
    CHECK(json_valid(j));
    CHECK(has(j, "\"schema\": 1"));
    CHECK(has(j, "\"tool\": \"kproof\""));
    CHECK(has(j, "\"version\": \"" KP_VERSION "\""));
    CHECK(has(j, "\"verdict\": \"WRONG\""));
    CHECK(has(j, "\"op\": \"matmul_f32\""));
    CHECK(has(j, "\"backend\": \"cuda\""));
    CHECK(has(j, "\"seed\": \"18364758544493064720\""));
    CHECK(has(j, "\"wall_s\": 12.5"));
    CHECK(has(j, "\"peak_gflops_f32\": null"));
    CHECK(has(j, "\"l2_bytes\": 50331648"));
    CHECK(has(j, "\"shape\": [4096, 4096, 4096]"));
    CHECK(has(j, "\"shape_text\": \"127x4099x13\""));
    CHECK(has(j, "\"median_s\": 0.001234"));
    CHECK(has(j, "\"name\": \"cublas_f32\""));
    CHECK(has(j, "\"speedup_lo\": 1.79"));
    CHECK(has(j, "\"on_given_stream\": false"));
    CHECK(has(j, "\"timing\": null"));
    CHECK(has(j, "\"baseline\": null"));
    CHECK(has(j, "\"first_bad\": 4098"));
    CHECK(has(j, "\"got\": null"));
    CHECK(has(j, "\"hi_s\": null"));
    CHECK(has(j, "\"sol_fraction\": null"));
    CHECK(has(j, "\"speedup\": null"));
    CHECK(has(j, "\"warning number 7\""));
    CHECK(!strstr(j, "warning number 8"));
    CHECK(has(j, "(2 more warnings not shown)"));
    CHECK(has(j, "\"detail\": \"got \\\"1.5\\\"\\nat C\\\\d \\u0001 \xc2\xb5s \\u00ff\""));
    CHECK(!strstr(j, "nan") && !strstr(j, "inf") && !strstr(j, "NaN") && !strstr(j, "Inf"));

    /* A second opinion from Python when it is there. */
    if (system("command -v python3 >/dev/null 2>&1") == 0) {
        char path[] = "/tmp/kp_test_report_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f) {
            fputs(j, f);
            fclose(f);
            char cmd[128];
            snprintf(cmd, sizeof cmd, "python3 -m json.tool %s >/dev/null", path);
            CHECK(system(cmd) == 0);
            remove(path);
        }
    }
    free(j);

    /* An empty result (an ERROR before any shape ran) is valid JSON too. */
    kp_result empty;
    memset(&empty, 0, sizeof empty);
    empty.verdict = KP_ERROR;
    snprintf(empty.detail, sizeof empty.detail, "did not build");
    j = capture(kp_print_json, &empty);
    CHECK(j && json_valid(j));
    CHECK(has(j, "\"op\": null"));
    CHECK(has(j, "\"shapes\": []"));
    CHECK(has(j, "\"warnings\": []"));
    free(j);
}

static void test_table(const kp_result *r)
{
    char *t = capture(kp_print_table, r);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(has(t, "kproof WRONG"));
    CHECK(has(t, "kernels/matmul/cuda/f32-07-wgmma.cu"));
    CHECK(has(t, "matmul_f32"));
    CHECK(has(t, "rigorous"));
    CHECK(has(t, "4096x4096x4096"));
    CHECK(has(t, "1.234 ms [1.230, 1.240]"));
    CHECK(has(t, "TFLOP/s"));
    CHECK(has(t, "111"));  /* 2*4096^3 / 1.234 ms = 111.4 TFLOP/s */
    CHECK(has(t, "80%"));
    CHECK(has(t, "1.83x [1.79, 1.87] vs cublas_f32"));
    CHECK(has(t, "SOL score") && has(t, "left") && has(t, "regime"));
    CHECK(has(t, "127x4099x13"));
    CHECK(has(t, "NOISY"));
    CHECK(has(t, "never settled"));
    CHECK(has(t, "first bad at 4098"));
    CHECK(has(t, "side_kernel"));
    CHECK(has(t, "OTHER stream"));
    CHECK(has(t, "warning: warning number 0"));
    CHECK(has(t, "(2 more warnings not shown)"));
    CHECK(has(t, "--seed 18364758544493064720"));
    CHECK(!strstr(t, "nan") && !strstr(t, "inf"));
    /* Candidate-made text reaches a terminal: no control characters. */
    CHECK(!strchr(t, '\x01'));
    CHECK(has(t, "at C\\d ? \xc2\xb5s ?"));
    CHECK(!strchr(t, '\xff'));

    /* The untimed edge shape shows "-" in every timing column: the row
     * ends with dashes after its verdict (the op here has no cost model,
     * so no SOL score, headroom or regime either). */
    const char *row = strstr(t, "127x4099x13");
    const char *eol = row ? strchr(row, '\n') : NULL;
    if (row && eol) {
        char line[512];
        size_t len = (size_t)(eol - row) < sizeof line - 1 ? (size_t)(eol - row) : sizeof line - 1;
        memcpy(line, row, len);
        line[len] = '\0';
        CHECK(strstr(line, "WRONG") != NULL);
        int dashes = 0;
        for (char *tok = strtok(line, " "); tok; tok = strtok(NULL, " "))
            dashes += strcmp(tok, "-") == 0;
        CHECK(dashes == 8);
    } else {
        CHECK(!"edge row not found");
    }
    free(t);
}

static void test_md(const kp_result *r)
{
    char *m = capture(kp_print_md, r);
    CHECK(m != NULL);
    if (!m)
        return;
    CHECK(has(m, "**kproof WRONG**"));
    CHECK(has(m, "NVIDIA H200"));
    CHECK(has(m, "2025-01-02T03:04:05Z"));
    CHECK(has(m, "| shape | origin | verdict |"));
    CHECK(has(m, "| 4096x4096x4096 | canonical | PASS | 1.234 ms [1.230, 1.240] |"));
    CHECK(has(m, "1.83x [1.79, 1.87] vs cublas_f32"));
    CHECK(has(m, "(2 more warnings not shown)"));
    CHECK(!strchr(m, '\x01'));
    free(m);
}

static void test_verdicts_and_flaws(void)
{
    CHECK(strcmp(kp_verdict_name(KP_PASS), "PASS") == 0);
    CHECK(strcmp(kp_verdict_name(KP_WRONG), "WRONG") == 0);
    CHECK(strcmp(kp_verdict_name(KP_REJECTED), "REJECTED") == 0);
    CHECK(strcmp(kp_verdict_name(KP_ERROR), "ERROR") == 0);
    CHECK(strcmp(kp_verdict_name(KP_NOISY), "NOISY") == 0);

    const char *names[KP_NFLAWS] = {"launch", "warm", "one-input", "loose-tol", "weak-base"};
    for (int i = 0; i < KP_NFLAWS; i++) {
        int bits = -1;
        CHECK(strcmp(kp_flaw_name(1 << i), names[i]) == 0);
        CHECK(strlen(kp_flaw_title(1 << i)) > 10);
        CHECK(kp_flaw_parse(names[i], &bits) == 0 && bits == 1 << i);
    }
    int bits = -1;
    CHECK(kp_flaw_parse("all", &bits) == 0 && bits == KP_FLAW_ALL);
    CHECK(kp_flaw_parse("launch,warm", &bits) == 0 && bits == (KP_FLAW_LAUNCH | KP_FLAW_WARM));
    CHECK(kp_flaw_parse(" one-input , loose_tol", &bits) == 0 && bits == (KP_FLAW_ONE_INPUT | KP_FLAW_LOOSE_TOL));
    CHECK(kp_flaw_parse("none", &bits) == 0 && bits == 0);
    bits = 99;
    CHECK(kp_flaw_parse("launch,bogus", &bits) == -1 && bits == 99);
    CHECK(kp_flaw_parse("", &bits) == -1);
    CHECK(kp_flaw_parse("launch,", &bits) == -1);
    CHECK(kp_flaw_parse("Launch", &bits) == -1);
    CHECK(kp_flaw_parse(NULL, &bits) == -1);

    kp_eval_opts o;
    kp_eval_opts_default(&o);
    CHECK(o.backend == KP_BACKEND_HOST && o.nsets == 8 && o.dist == -1 && o.progress == 1);
    CHECK(o.stop.min_samples == 10 && o.stop.max_samples == 2000);
    CHECK(o.stop.target == 0.01 && o.stop.budget_s == 10.0 && o.timeout_s == 60.0);
    CHECK(o.shape_sets == (1 | 2 | 8) && o.flaws == 0 && o.seed == 0);

    kp_result r;
    memset(&r, 0, sizeof r);
    char longer[400];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    kp_result_warn(&r, "%s", longer); /* truncated, terminated */
    CHECK(strlen(r.warn[0]) == sizeof r.warn[0] - 1);
    for (int i = 1; i < 12; i++)
        kp_result_warn(&r, "w%d", i);
    CHECK(r.nwarn == 12 && strcmp(r.warn[7], "w7") == 0);
    kp_result_free(&r); /* no shapes: harmless */
    kp_result_free(&r);
}

int main(void)
{
    test_checker();
    test_fmt_time();
    test_json_str();
    test_verdicts_and_flaws();
    kp_result *r = build_result();
    test_json(r);
    test_table(r);
    test_md(r);
    kp_result_free(r);
    CHECK(r->shapes == NULL && r->nshapes == 0);
    free(r);
    TEST_MAIN_END();
}
