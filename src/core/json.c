/* json.c: a recursive-descent JSON reader (see json.h). */
#include "core/json.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *s;   /* the text */
    size_t n;        /* its length */
    size_t i;        /* the next byte */
    int depth;
    int code;        /* the first failure */
    size_t at;       /* where it happened */
    char what[160];
} parser;

/* ===== failures ========================================================== */

static void fail(parser *p, int code, size_t at, const char *what)
{
    if (p->code)
        return;
    p->code = code;
    p->at = at;
    snprintf(p->what, sizeof p->what, "%s", what);
}

static void fail_eof(parser *p, const char *inside)
{
    char w[160];
    snprintf(w, sizeof w, "truncated: the text ends inside %s", inside);
    fail(p, KP_JSON_TRUNCATED, p->n, w);
}

/* "unexpected 'x'" for the byte at i, shown printable. */
static void fail_unexpected(parser *p, const char *expected)
{
    unsigned char c = (unsigned char)p->s[p->i];
    char w[160];
    if (c >= 0x20 && c < 0x7f)
        snprintf(w, sizeof w, "unexpected '%c' where %s was expected", c, expected);
    else
        snprintf(w, sizeof w, "unexpected byte 0x%02x where %s was expected", c, expected);
    fail(p, KP_JSON_SYNTAX, p->i, w);
}

static void where(const parser *p, size_t at, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < at && i < p->n; i++) {
        if (p->s[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* ===== values ============================================================ */

static void free_value(kp_json *v)
{
    if (!v)
        return;
    if (v->type == KP_JSON_STR)
        free(v->str);
    if (v->type == KP_JSON_ARR || v->type == KP_JSON_OBJ) {
        for (size_t k = 0; k < v->len; k++) {
            free_value(&v->items[k]);
            if (v->keys)
                free(v->keys[k]);
        }
        free(v->items);
        free(v->keys);
    }
    memset(v, 0, sizeof *v);
}

static void skip_ws(parser *p)
{
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->i++;
    }
}

static int parse_value(parser *p, kp_json *v);

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Four hex digits at p->i; -1 (failure recorded) otherwise. */
static long hex4(parser *p)
{
    long u = 0;
    for (int k = 0; k < 4; k++) {
        if (p->i >= p->n) {
            fail_eof(p, "a \\u escape");
            return -1;
        }
        int h = hexval(p->s[p->i]);
        if (h < 0) {
            fail_unexpected(p, "a hex digit of a \\u escape");
            return -1;
        }
        u = u * 16 + h;
        p->i++;
    }
    return u;
}

static size_t put_utf8(char *out, unsigned long cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string at p->i (which holds the opening quote) into a new buffer. The
 * decoded text is never longer than the quoted one, so one allocation of
 * the span's size holds it. */
static char *parse_string(parser *p, size_t *len_out)
{
    size_t start = p->i++;
    size_t end = p->i;
    /* Find the closing quote first, to size the buffer. */
    while (end < p->n && p->s[end] != '"') {
        if (p->s[end] == '\\')
            end++;
        end++;
    }
    if (end >= p->n) {
        /* Still walk it below for a precise message on bad bytes first. */
        end = p->n;
    }
    char *out = (char *)malloc(end - start + 1);
    if (!out) {
        fail(p, KP_JSON_NOMEM, start, "out of memory");
        return NULL;
    }
    size_t o = 0;
    for (;;) {
        if (p->i >= p->n) {
            fail_eof(p, "a string");
            break;
        }
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            p->i++;
            out[o] = '\0';
            *len_out = o;
            return out;
        }
        if (c < 0x20) {
            fail_unexpected(p, "a string character (control characters must be escaped)");
            break;
        }
        if (c != '\\') {
            out[o++] = (char)c;
            p->i++;
            continue;
        }
        p->i++;
        if (p->i >= p->n) {
            fail_eof(p, "an escape");
            break;
        }
        char e = p->s[p->i++];
        switch (e) {
        case '"': out[o++] = '"'; continue;
        case '\\': out[o++] = '\\'; continue;
        case '/': out[o++] = '/'; continue;
        case 'b': out[o++] = '\b'; continue;
        case 'f': out[o++] = '\f'; continue;
        case 'n': out[o++] = '\n'; continue;
        case 'r': out[o++] = '\r'; continue;
        case 't': out[o++] = '\t'; continue;
        case 'u': break;
        default:
            p->i--;
            fail_unexpected(p, "an escape letter (\" \\ / b f n r t u)");
            free(out);
            return NULL;
        }
        long u = hex4(p);
        if (u < 0)
            break;
        unsigned long cp = (unsigned long)u;
        if (u >= 0xd800 && u <= 0xdbff && p->i + 1 < p->n && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
            size_t save = p->i;
            p->i += 2;
            long lo = hex4(p);
            if (lo < 0)
                break;
            if (lo >= 0xdc00 && lo <= 0xdfff)
                cp = 0x10000 + (((unsigned long)u - 0xd800) << 10) + ((unsigned long)lo - 0xdc00);
            else {
                cp = 0xfffd; /* a lone high surrogate; the next escape stands on its own */
                p->i = save;
            }
        } else if (u >= 0xd800 && u <= 0xdfff) {
            cp = 0xfffd; /* a lone surrogate is no character */
        }
        /* Six or twelve escaped bytes never decode to more than four. */
        o += put_utf8(out + o, cp);
    }
    free(out);
    return NULL;
}

static int parse_number(parser *p, kp_json *v)
{
    size_t start = p->i, i = p->i;
    const char *s = p->s;
    if (i < p->n && s[i] == '-')
        i++;
    if (i >= p->n) {
        p->i = i;
        fail_eof(p, "a number");
        return -1;
    }
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
    } else {
        p->i = i;
        fail_unexpected(p, "a digit");
        return -1;
    }
    if (i < p->n && s[i] == '.') {
        i++;
        if (i >= p->n) {
            p->i = i;
            fail_eof(p, "a number");
            return -1;
        }
        if (!(s[i] >= '0' && s[i] <= '9')) {
            p->i = i;
            fail_unexpected(p, "a digit after the decimal point");
            return -1;
        }
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= p->n) {
            p->i = i;
            fail_eof(p, "a number's exponent");
            return -1;
        }
        if (!(s[i] >= '0' && s[i] <= '9')) {
            p->i = i;
            fail_unexpected(p, "a digit of the exponent");
            return -1;
        }
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    /* strtod needs a terminated copy: the text need not be terminated. */
    size_t len = i - start;
    char small[64];
    char *buf = len < sizeof small ? small : (char *)malloc(len + 1);
    if (!buf) {
        fail(p, KP_JSON_NOMEM, start, "out of memory");
        return -1;
    }
    memcpy(buf, s + start, len);
    buf[len] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    int range = errno == ERANGE && !(fabs(d) < 1); /* underflow to 0 or a denormal is fine */
    if (buf != small)
        free(buf);
    if (range || !isfinite(d)) {
        fail(p, KP_JSON_SYNTAX, start, "number out of the range of a double");
        return -1;
    }
    v->type = KP_JSON_NUM;
    v->num = d;
    p->i = i;
    return 0;
}

static int parse_literal(parser *p, const char *word, kp_json *v, kp_jtype t, int b)
{
    size_t n = strlen(word);
    for (size_t k = 0; k < n; k++) {
        if (p->i + k >= p->n) {
            p->i += k;
            fail_eof(p, "a literal (true, false or null)");
            return -1;
        }
        if (p->s[p->i + k] != word[k]) {
            p->i += k;
            fail_unexpected(p, "a value");
            return -1;
        }
    }
    p->i += n;
    v->type = t;
    v->b = b;
    return 0;
}

/* Grows an array of values (and keys) by doubling. */
static int grow(parser *p, kp_json **items, char ***keys, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 8;
    kp_json *ni = (kp_json *)realloc(*items, nc * sizeof **items);
    if (!ni) {
        fail(p, KP_JSON_NOMEM, p->i, "out of memory");
        return -1;
    }
    *items = ni;
    if (keys) {
        char **nk = (char **)realloc(*keys, nc * sizeof **keys);
        if (!nk) {
            fail(p, KP_JSON_NOMEM, p->i, "out of memory");
            return -1;
        }
        *keys = nk;
    }
    *cap = nc;
    return 0;
}

static int parse_container(parser *p, kp_json *v, int is_obj)
{
    const char *inside = is_obj ? "an object" : "an array";
    if (++p->depth > KP_JSON_MAX_DEPTH) {
        fail(p, KP_JSON_SYNTAX, p->i, "nested deeper than 256 arrays and objects");
        return -1;
    }
    p->i++; /* the bracket */
    v->type = is_obj ? KP_JSON_OBJ : KP_JSON_ARR;
    size_t cap = 0;
    skip_ws(p);
    if (p->i >= p->n) {
        fail_eof(p, inside);
        return -1;
    }
    if (p->s[p->i] == (is_obj ? '}' : ']')) {
        p->i++;
        p->depth--;
        return 0;
    }
    for (;;) {
        if (grow(p, &v->items, is_obj ? &v->keys : NULL, &cap, v->len + 1))
            return -1;
        kp_json *item = &v->items[v->len];
        memset(item, 0, sizeof *item);
        if (is_obj) {
            v->keys[v->len] = NULL;
            skip_ws(p);
            if (p->i >= p->n) {
                fail_eof(p, inside);
                return -1;
            }
            if (p->s[p->i] != '"') {
                fail_unexpected(p, "a key (a string in double quotes)");
                return -1;
            }
            size_t klen = 0;
            char *key = parse_string(p, &klen);
            if (!key)
                return -1;
            v->keys[v->len] = key;
            skip_ws(p);
            if (p->i >= p->n) {
                v->len++;
                fail_eof(p, inside);
                return -1;
            }
            if (p->s[p->i] != ':') {
                v->len++;
                fail_unexpected(p, "':' after a key");
                return -1;
            }
            p->i++;
        }
        /* Counted before it is parsed: a half-parsed value is freed too. */
        v->len++;
        if (parse_value(p, item))
            return -1;
        skip_ws(p);
        if (p->i >= p->n) {
            fail_eof(p, inside);
            return -1;
        }
        char c = p->s[p->i];
        if (c == ',') {
            p->i++;
            skip_ws(p);
            if (p->i < p->n && p->s[p->i] == (is_obj ? '}' : ']')) {
                fail(p, KP_JSON_SYNTAX, p->i, is_obj ? "trailing comma in an object" : "trailing comma in an array");
                return -1;
            }
            continue;
        }
        if (c == (is_obj ? '}' : ']')) {
            p->i++;
            p->depth--;
            return 0;
        }
        fail_unexpected(p, is_obj ? "',' or '}'" : "',' or ']'");
        return -1;
    }
}

static int parse_value(parser *p, kp_json *v)
{
    skip_ws(p);
    if (p->i >= p->n) {
        fail_eof(p, "a value");
        return -1;
    }
    char c = p->s[p->i];
    switch (c) {
    case '{': return parse_container(p, v, 1);
    case '[': return parse_container(p, v, 0);
    case '"': {
        size_t len = 0;
        char *s = parse_string(p, &len);
        if (!s)
            return -1;
        v->type = KP_JSON_STR;
        v->str = s;
        v->len = len;
        return 0;
    }
    case 't': return parse_literal(p, "true", v, KP_JSON_BOOL, 1);
    case 'f': return parse_literal(p, "false", v, KP_JSON_BOOL, 0);
    case 'n': return parse_literal(p, "null", v, KP_JSON_NULL, 0);
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return parse_number(p, v);
        fail_unexpected(p, "a value");
        return -1;
    }
}

/* ===== entry points ====================================================== */

int kp_json_parse(const char *text, size_t len, kp_json **out, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out)
        return KP_JSON_SYNTAX;
    *out = NULL;
    parser p;
    memset(&p, 0, sizeof p);
    p.s = text ? text : "";
    p.n = text ? len : 0;
    if (p.n >= 3 && memcmp(p.s, "\xef\xbb\xbf", 3) == 0)
        p.i = 3;
    skip_ws(&p);
    if (p.i >= p.n) {
        if (err && errlen)
            snprintf(err, errlen, "empty: no JSON value in it");
        return KP_JSON_EMPTY;
    }
    kp_json *v = (kp_json *)calloc(1, sizeof *v);
    if (!v) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return KP_JSON_NOMEM;
    }
    if (parse_value(&p, v) == 0) {
        skip_ws(&p);
        if (p.i < p.n)
            fail(&p, KP_JSON_SYNTAX, p.i, "more text after the value ends");
    }
    if (p.code) {
        if (err && errlen) {
            int line, col;
            where(&p, p.at, &line, &col);
            snprintf(err, errlen, "%s (line %d, column %d)", p.what, line, col);
        }
        free_value(v);
        free(v);
        return p.code;
    }
    *out = v;
    return KP_JSON_OK;
}

int kp_json_read_file(const char *path, size_t max_bytes, kp_json **out, char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    if (!max_bytes)
        max_bytes = (size_t)1 << 30;
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot open: %s", path ? path : "(null)", strerror(errno));
        return KP_JSON_IO;
    }
    size_t cap = max_bytes < ((size_t)1 << 16) ? max_bytes : (size_t)1 << 16, n = 0;
    char *buf = (char *)malloc(cap + 1);
    int rc = 0;
    while (buf) {
        if (n == cap) {
            if (cap >= max_bytes) {
                rc = fgetc(f) != EOF; /* exactly max_bytes is fine */
                break;
            }
            size_t nc = cap * 2 > max_bytes ? max_bytes : cap * 2;
            char *nb = (char *)realloc(buf, nc);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap = nc;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int rerr = ferror(f);
    fclose(f);
    if (!buf) {
        if (err && errlen)
            snprintf(err, errlen, "%s: out of memory reading it", path);
        return KP_JSON_NOMEM;
    }
    if (rc || rerr) {
        if (err && errlen) {
            if (rc)
                snprintf(err, errlen, "%s: larger than %zu bytes", path, max_bytes);
            else
                snprintf(err, errlen, "%s: read error", path);
        }
        free(buf);
        return KP_JSON_IO;
    }
    char e[240] = "";
    rc = kp_json_parse(buf, n, out, e, sizeof e);
    free(buf);
    if (rc && err && errlen)
        snprintf(err, errlen, "%s: %s", path, e);
    return rc;
}

void kp_json_free(kp_json *v)
{
    if (!v)
        return;
    free_value(v);
    free(v);
}

const kp_json *kp_json_get(const kp_json *obj, const char *key)
{
    if (!obj || obj->type != KP_JSON_OBJ || !key)
        return NULL;
    for (size_t k = 0; k < obj->len; k++)
        if (obj->keys[k] && strcmp(obj->keys[k], key) == 0)
            return &obj->items[k];
    return NULL;
}

const kp_json *kp_json_at(const kp_json *arr, size_t i)
{
    if (!arr || arr->type != KP_JSON_ARR || i >= arr->len)
        return NULL;
    return &arr->items[i];
}

size_t kp_json_count(const kp_json *v)
{
    return v && (v->type == KP_JSON_ARR || v->type == KP_JSON_OBJ) ? v->len : 0;
}

double kp_json_num(const kp_json *v, double dflt)
{
    return v && v->type == KP_JSON_NUM ? v->num : dflt;
}

const char *kp_json_text(const kp_json *v)
{
    return v && v->type == KP_JSON_STR ? v->str : NULL;
}

int kp_json_bool(const kp_json *v, int dflt)
{
    return v && v->type == KP_JSON_BOOL ? v->b : dflt;
}
