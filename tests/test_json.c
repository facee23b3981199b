/* test_json.c: the JSON reader: values, escapes, numbers, nesting, and
 * every kind of bad input (truncated, malformed, too deep) refused with a
 * one-line reason. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "test.h"

static kp_json *parse(const char *s, int *rc, char *err, size_t len)
{
    kp_json *v = NULL;
    *rc = kp_json_parse(s, strlen(s), &v, err, len);
    return v;
}

/* Parses s and expects failure `code` with `what` in the message. */
static void refuse(const char *s, int code, const char *what)
{
    char err[256] = "";
    int rc;
    kp_json *v = parse(s, &rc, err, sizeof err);
    CHECK(v == NULL);
    CHECK(rc == code);
    CHECK(strstr(err, what) != NULL);
    CHECK(strchr(err, '\n') == NULL); /* one line */
    if (rc != code || !strstr(err, what))
        fprintf(stderr, "  input %s: rc %d, err '%s'\n", s, rc, err);
}

static void test_values(void)
{
    char err[256];
    int rc;
    kp_json *v = parse(" {\"a\": [1, -2.5e3, 0, true, false, null], \"b\": {\"c\": \"d\"}, \"a\": 7} ", &rc, err,
                       sizeof err);
    CHECK(rc == 0 && v != NULL);
    const kp_json *a = kp_json_get(v, "a");
    CHECK(kp_json_count(a) == 6);
    CHECK(kp_json_num(kp_json_at(a, 0), 0) == 1);
    CHECK(kp_json_num(kp_json_at(a, 1), 0) == -2500);
    CHECK(kp_json_num(kp_json_at(a, 2), 9) == 0);
    CHECK(kp_json_bool(kp_json_at(a, 3), -1) == 1);
    CHECK(kp_json_bool(kp_json_at(a, 4), -1) == 0);
    CHECK(kp_json_at(a, 5)->type == KP_JSON_NULL);
    CHECK(isnan(kp_json_num(kp_json_at(a, 5), NAN)));
    CHECK(kp_json_at(a, 6) == NULL);
    CHECK(strcmp(kp_json_text(kp_json_get(kp_json_get(v, "b"), "c")), "d") == 0);
    CHECK(kp_json_get(v, "zz") == NULL);
    CHECK(kp_json_get(kp_json_get(v, "zz"), "c") == NULL); /* chains through NULL */
    CHECK(kp_json_text(kp_json_get(v, "a")) == NULL);
    CHECK(kp_json_count(v) == 3);
    kp_json_free(v);

    /* Scalars at the top, empty containers, a byte order mark. */
    v = parse("42", &rc, err, sizeof err);
    CHECK(rc == 0 && v && v->type == KP_JSON_NUM && v->num == 42);
    kp_json_free(v);
    v = parse("\xef\xbb\xbf[[], {}]", &rc, err, sizeof err);
    CHECK(rc == 0 && kp_json_count(v) == 2 && kp_json_count(kp_json_at(v, 0)) == 0);
    kp_json_free(v);

    /* Numbers: exponents, tiny values, what the writer prints. */
    v = parse("[1E2, 1e-400, 0.000125551999, 18446744073709551615, -0]", &rc, err, sizeof err);
    CHECK(rc == 0);
    CHECK(kp_json_num(kp_json_at(v, 0), 0) == 100);
    CHECK(kp_json_num(kp_json_at(v, 1), 1) == 0); /* underflow is zero, not an error */
    CHECK(kp_json_num(kp_json_at(v, 2), 0) == 0.000125551999);
    CHECK(kp_json_num(kp_json_at(v, 3), 0) == 18446744073709551615.0);
    kp_json_free(v);

    /* Long arrays grow. */
    char *big = malloc(100000);
    size_t n = 0;
    big[n++] = '[';
    for (int i = 0; i < 10000; i++)
        n += (size_t)snprintf(big + n, 100000 - n, "%s%d", i ? "," : "", i);
    big[n++] = ']';
    big[n] = '\0';
    v = parse(big, &rc, err, sizeof err);
    CHECK(rc == 0 && kp_json_count(v) == 10000 && kp_json_num(kp_json_at(v, 9999), 0) == 9999);
    kp_json_free(v);
    free(big);
}

static void test_strings(void)
{
    char err[256];
    int rc;
    kp_json *v = parse("[\"a\\\"b\\\\c\\/d\\n\\t\\r\\b\\f\", \"\\u00b5s \\u20ac \\ud83d\\ude00\", \"\\ud800x\", "
                       "\"raw \xc2\xb5 \xff\", \"nul\\u0000in\"]",
                       &rc, err, sizeof err);
    CHECK(rc == 0 && v);
    CHECK(strcmp(kp_json_text(kp_json_at(v, 0)), "a\"b\\c/d\n\t\r\b\f") == 0);
    CHECK(strcmp(kp_json_text(kp_json_at(v, 1)), "\xc2\xb5s \xe2\x82\xac \xf0\x9f\x98\x80") == 0);
    CHECK(strcmp(kp_json_text(kp_json_at(v, 2)), "\xef\xbf\xbdx") == 0); /* a lone surrogate: U+FFFD */
    CHECK(strcmp(kp_json_text(kp_json_at(v, 3)), "raw \xc2\xb5 \xff") == 0); /* bytes kept */
    CHECK(kp_json_at(v, 4)->len == 6 && memcmp(kp_json_text(kp_json_at(v, 4)), "nul\0in", 6) == 0);
    kp_json_free(v);
}

static void test_bad(void)
{
    refuse("", KP_JSON_EMPTY, "empty");
    refuse("  \n\t ", KP_JSON_EMPTY, "empty");
    /* Truncated anywhere: the message says inside what. */
    refuse("{", KP_JSON_TRUNCATED, "truncated: the text ends inside an object");
    refuse("[1, 2", KP_JSON_TRUNCATED, "inside an array");
    refuse("{\"a\": [1, {\"b\": \"xy", KP_JSON_TRUNCATED, "inside a string");
    refuse("{\"a\"", KP_JSON_TRUNCATED, "truncated");
    refuse("{\"a\":", KP_JSON_TRUNCATED, "inside a value");
    refuse("[tru", KP_JSON_TRUNCATED, "literal");
    refuse("[1.", KP_JSON_TRUNCATED, "number");
    refuse("[1e", KP_JSON_TRUNCATED, "exponent");
    refuse("[-", KP_JSON_TRUNCATED, "number");
    refuse("[\"\\u12", KP_JSON_TRUNCATED, "\\u escape");
    refuse("[\"\\", KP_JSON_TRUNCATED, "escape");
    /* Malformed. */
    refuse("[1,]", KP_JSON_SYNTAX, "trailing comma");
    refuse("{\"a\": 1,}", KP_JSON_SYNTAX, "trailing comma");
    refuse("[1 2]", KP_JSON_SYNTAX, "unexpected '2' where ',' or ']' was expected");
    refuse("{a: 1}", KP_JSON_SYNTAX, "key");
    refuse("{\"a\" 1}", KP_JSON_SYNTAX, "':'");
    refuse("[01]", KP_JSON_SYNTAX, "unexpected '1'");
    refuse("[.5]", KP_JSON_SYNTAX, "unexpected '.'");
    refuse("[1.e5]", KP_JSON_SYNTAX, "digit after the decimal point");
    refuse("[NaN]", KP_JSON_SYNTAX, "unexpected 'N'");
    refuse("[Infinity]", KP_JSON_SYNTAX, "unexpected 'I'");
    refuse("[1e999]", KP_JSON_SYNTAX, "out of the range");
    refuse("[nul]", KP_JSON_SYNTAX, "unexpected ']'");
    refuse("[\"a\\x\"]", KP_JSON_SYNTAX, "escape letter");
    refuse("[\"\\u12g4\"]", KP_JSON_SYNTAX, "hex digit");
    refuse("[\"a\nb\"]", KP_JSON_SYNTAX, "control characters");
    refuse("{} {}", KP_JSON_SYNTAX, "more text after the value");
    refuse("// comment\n{}", KP_JSON_SYNTAX, "unexpected '/'");
    refuse("\x01", KP_JSON_SYNTAX, "byte 0x01");
    /* Positions count lines and columns from 1. */
    refuse("{\n  \"a\": 1,\n  \"b\" 2\n}", KP_JSON_SYNTAX, "(line 3, column 7)");

    /* Too deep is refused, not recursed into until the stack ends. */
    char deep[2 * KP_JSON_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i < KP_JSON_MAX_DEPTH + 1; i++)
        deep[n++] = '[';
    for (int i = 0; i < KP_JSON_MAX_DEPTH + 1; i++)
        deep[n++] = ']';
    deep[n] = '\0';
    refuse(deep, KP_JSON_SYNTAX, "nested deeper");
    /* Exactly at the limit is fine. */
    char err[256];
    int rc;
    kp_json *v = parse(deep + 1, &rc, err, sizeof err);
    CHECK(rc == KP_JSON_SYNTAX); /* one ']' more than '[' */
    deep[2 * KP_JSON_MAX_DEPTH + 1] = '\0';
    v = parse(deep + 1, &rc, err, sizeof err);
    CHECK(rc == 0 && v != NULL);
    kp_json_free(v);

    /* A text that is not NUL-terminated: only len bytes are read. */
    kp_json *w = NULL;
    CHECK(kp_json_parse("[1]]]", 3, &w, err, sizeof err) == 0 && kp_json_count(w) == 1);
    kp_json_free(w);
    CHECK(kp_json_parse("[1]", 2, &w, err, sizeof err) == KP_JSON_TRUNCATED && w == NULL);

    /* Every prefix of a real result is refused cleanly (no crash, no leak
     * under a sanitizer), and the whole of it parses. */
    const char *doc = "{\"schema\": 1, \"env\": {\"gpu\": \"NVIDIA H200\", \"peak_gbs\": 4287.01},"
                      " \"shapes\": [{\"shape\": [8192, 8192], \"timing\": {\"median_s\": 1.2e-4, \"x\": null}}],"
                      " \"s\": \"\\u00b5\\ud83d\\ude00\"}";
    size_t len = strlen(doc);
    int all_refused = 1;
    for (size_t k = 0; k < len; k++) {
        kp_json *p = NULL;
        int r = kp_json_parse(doc, k, &p, err, sizeof err);
        if (r == 0 || p != NULL || !(r == KP_JSON_TRUNCATED || r == KP_JSON_EMPTY))
            all_refused = 0;
        kp_json_free(p);
    }
    CHECK(all_refused);
    CHECK(kp_json_parse(doc, len, &w, err, sizeof err) == 0);
    kp_json_free(w);
}

static void test_files(void)
{
    char err[512];
    kp_json *v = (kp_json *)1;
    CHECK(kp_json_read_file("/nonexistent/kp.json", 0, &v, err, sizeof err) == KP_JSON_IO);
    CHECK(v == NULL && strstr(err, "/nonexistent/kp.json: cannot open") != NULL);
    char path[] = "/tmp/kp_test_json_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return;
    fputs("{\"a\": [1, 2", f);
    fclose(f);
    CHECK(kp_json_read_file(path, 0, &v, err, sizeof err) == KP_JSON_TRUNCATED);
    CHECK(strncmp(err, path, strlen(path)) == 0 && strstr(err, "truncated") != NULL);
    CHECK(kp_json_read_file(path, 4, &v, err, sizeof err) == KP_JSON_IO); /* over the size limit */
    CHECK(strstr(err, "larger than") != NULL);
    f = fopen(path, "w");
    fclose(f);
    CHECK(kp_json_read_file(path, 0, &v, err, sizeof err) == KP_JSON_EMPTY);
    CHECK(strstr(err, "empty") != NULL);
    remove(path);
}

int main(void)
{
    test_values();
    test_strings();
    test_bad();
    test_files();
    kp_json_free(NULL);
    TEST_MAIN_END();
}
