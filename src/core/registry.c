/* registry.c: the op table and everything about buffers that is not one
 * op's business: dtypes, shapes (parse, format, validate, draw), input
 * generation on the CPU, the checksum, and freeing.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kproof.h"
#include "ops/op_priv.h"

/* ===== the table ======================================================== */

/* KP_OPS (op_priv.h) in its order: what `kproof list` prints. */
#define KP_OP_ADDR(name) &kp_op_##name,
static const kp_op *const kp_ops[] = {KP_OPS(KP_OP_ADDR)};
#undef KP_OP_ADDR
#define KP_NOPS ((int)(sizeof kp_ops / sizeof kp_ops[0]))

int kp_op_count(void) { return KP_NOPS; }

const kp_op *kp_op_at(int i) { return (i >= 0 && i < KP_NOPS) ? kp_ops[i] : NULL; }

const kp_op *kp_op_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < KP_NOPS; i++)
        if (strcmp(kp_ops[i]->name, name) == 0) return kp_ops[i];
    return NULL;
}

/* Users write the dtype several ways; the registry knows two. */
static const char *kp_dtype_canon(const char *d) {
    static const struct { const char *alias, *canon; } tab[] = {
        {"f32", "f32"},   {"fp32", "f32"},      {"float32", "f32"}, {"float", "f32"},
        {"bf16", "bf16"}, {"bfloat16", "bf16"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strcmp(d, tab[i].alias) == 0) return tab[i].canon;
    return NULL;
}

const kp_op *kp_op_resolve(const char *family_or_name, const char *dtype) {
    if (!family_or_name || !*family_or_name) return NULL;
    const char *want = NULL;
    if (dtype && *dtype) {
        want = kp_dtype_canon(dtype);
        if (!want) return NULL;
    }
    /* A full name ("softmax_bf16") must agree with an explicit dtype. */
    const kp_op *op = kp_op_find(family_or_name);
    if (op) return (!want || strcmp(kp_dtype_name(op->dtype), want) == 0) ? op : NULL;
    char name[64];
    int n = snprintf(name, sizeof name, "%s_%s", family_or_name, want ? want : "f32");
    if (n < 0 || (size_t)n >= sizeof name) return NULL;
    return kp_op_find(name);
}

int kp_op_output_buf(const kp_op *op) {
    for (int i = op->nbufs - 1; i >= 0; i--)
        if (op->bufs[i].output) return i;
    return -1;
}

/* ===== dtypes and backends ============================================== */

size_t kp_dtype_size(kp_dtype t) { return t == KP_BF16 ? 2 : 4; }

const char *kp_dtype_name(kp_dtype t) { return t == KP_BF16 ? "bf16" : "f32"; }

double kp_load(const void *buf, kp_dtype t, int64_t i) { return kp_ld(buf, t, i); }

int kp_is_poison(const void *buf, kp_dtype t, int64_t i) { return kp_poison_at(buf, t, i); }

/* ===== shapes ============================================================ */

int kp_shape_format(const kp_shape *s, char *buf, size_t len) {
    size_t used = 0;
    int total = 0;
    for (int i = 0; i < s->nd; i++) {
        int n = snprintf(buf ? buf + used : NULL, buf && used < len ? len - used : 0, "%s%" PRId64, i ? "x" : "",
                         s->d[i]);
        if (n < 0) return n;
        total += n;
        used = (size_t)total < len ? (size_t)total : len;
    }
    if (s->nd <= 0 && buf && len) buf[0] = '\0';
    return total;
}

/* Limits that keep every byte count an exact int64 and every index a
 * plain int64 product: 2^40 elements per buffer is 4 TiB of f32, far past
 * any device, so a real shape never meets it. */
#define KP_MAX_BUF_ELEMS ((int64_t)1 << 40)
#define KP_MAX_DIM ((int64_t)1 << 40)

int kp_shape_common_ok(const kp_op *op, const kp_shape *s, char *why, size_t len) {
    if (s->nd != op->nd) {
        snprintf(why, len, "%s takes %d dimension%s, got %d", op->family, op->nd, op->nd == 1 ? "" : "s", s->nd);
        return -1;
    }
    for (int i = 0; i < s->nd; i++) {
        if (s->d[i] < 1) {
            snprintf(why, len, "dimension %s is %" PRId64 ": every dimension must be at least 1", op->dim_names[i],
                     s->d[i]);
            return -1;
        }
        if (s->d[i] > KP_MAX_DIM) {
            snprintf(why, len, "dimension %s = %" PRId64 " is too large (limit 2^40)", op->dim_names[i], s->d[i]);
            return -1;
        }
    }
    /* Every buffer is a product of some of the dims, so bounding the
     * product of all of them (in floating point) keeps buf_elems exact. */
    double work = 1;
    for (int i = 0; i < s->nd; i++) work *= (double)s->d[i];
    if (work > 4.6e18) {
        snprintf(why, len, "%.3g elements of work is too large (limit 2^62)", work);
        return -1;
    }
    for (int b = 0; b < op->nbufs; b++) {
        int64_t n = op->buf_elems(s, b);
        if (n > KP_MAX_BUF_ELEMS) {
            snprintf(why, len, "buffer %s would hold %" PRId64 " elements (limit 2^40)", op->bufs[b].name, n);
            return -1;
        }
    }
    return 0;
}

/* Reads one non-negative decimal; returns the position after it or NULL.
 * *state: 0 ok, 1 no digits, 2 negative, 3 overflow. */
static const char *kp_parse_dim(const char *p, int64_t *v, int *state) {
    while (*p == ' ' || *p == '\t') p++;
    int neg = 0;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    if (!isdigit((unsigned char)*p)) {
        *state = 1;
        return NULL;
    }
    int64_t x = 0;
    int over = 0;
    for (; isdigit((unsigned char)*p); p++) {
        int dgt = *p - '0';
        if (x > (INT64_MAX - dgt) / 10) over = 1;
        else x = x * 10 + dgt;
    }
    while (*p == ' ' || *p == '\t') p++;
    *v = x;
    *state = over ? 3 : neg && x != 0 ? 2 : 0;
    return p;
}

static void kp_dims_hint(const kp_op *op, char *buf, size_t len) {
    size_t used = 0;
    for (int i = 0; i < op->nd && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? " x " : "", op->dim_names[i]);
        if (n < 0) break;
        used += (size_t)n;
    }
}

int kp_op_parse_shape(const kp_op *op, const char *text, kp_shape *out, char *why, size_t len) {
    char hint[64], example[64];
    kp_dims_hint(op, hint, sizeof hint);
    kp_shape_format(&op->canonical.shapes[0], example, sizeof example);
    if (!text || !*text) {
        snprintf(why, len, "empty shape: %s takes %s, e.g. %s", op->name, hint, example);
        return -1;
    }
    kp_shape s;
    memset(&s, 0, sizeof s);
    const char *p = text;
    for (;;) {
        int64_t v = 0;
        int state = 0;
        const char *q = kp_parse_dim(p, &v, &state);
        int idx = s.nd;
        const char *dname = idx < op->nd ? op->dim_names[idx] : "extra";
        if (state == 1) {
            snprintf(why, len, "bad shape '%s': expected %s as numbers separated by 'x' or ',', e.g. %s", text, hint,
                     example);
            return -1;
        }
        if (state == 2) {
            snprintf(why, len, "bad shape '%s': dimension %s is negative", text, dname);
            return -1;
        }
        if (state == 3) {
            snprintf(why, len, "bad shape '%s': dimension %s does not fit in 64 bits", text, dname);
            return -1;
        }
        if (s.nd < KP_MAX_DIMS) s.d[s.nd] = v;
        s.nd++;
        p = q;
        if (*p == '\0') break;
        if (*p != 'x' && *p != 'X' && *p != ',') {
            snprintf(why, len, "bad shape '%s': unexpected '%c'; separate %s with 'x' or ',', e.g. %s", text, *p, hint,
                     example);
            return -1;
        }
        p++;
    }
    if (s.nd != op->nd) {
        snprintf(why, len, "bad shape '%s': %s takes %d dimension%s (%s), got %d", text, op->family, op->nd,
                 op->nd == 1 ? "" : "s", hint, s.nd);
        return -1;
    }
    char inner[160];
    if (op->shape_ok(&s, inner, sizeof inner) != 0) {
        snprintf(why, len, "bad shape '%s': %s", text, inner);
        return -1;
    }
    *out = s;
    return 0;
}

/* ===== shapes drawn per run ============================================== */

static int kp_is_prime(int64_t v) {
    if (v < 2) return 0;
    if (v % 2 == 0) return v == 2;
    for (int64_t d = 3; d * d <= v; d += 2)
        if (v % d == 0) return 0;
    return 1;
}

int64_t kp_draw_dim(kp_rng *r, int64_t lo, int64_t hi) {
    if (lo < 1) lo = 1;
    if (hi < lo) hi = lo;
    double l0 = log((double)lo), l1 = log((double)hi + 1.0);
    int64_t v = (int64_t)exp(l0 + (l1 - l0) * kp_rng_uniform(r));
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    if (v > 2 && (v & 1) == 0) v = v + 1 <= hi ? v + 1 : v - 1;
    /* Primes below 2^31 are found in microseconds; above, odd is enough. */
    if (v > 2 && v < ((int64_t)1 << 31) && kp_rng_below(r, 2) == 0) {
        int64_t p = v;
        while (p <= hi && !kp_is_prime(p)) p += 2;
        if (p <= hi) v = p;
    }
    return v;
}

int64_t kp_draw_size(kp_rng *r, int64_t hi) {
    if (hi < 1) hi = 1;
    int64_t lo = kp_rng_below(r, 4) == 0 ? 1 : hi / 256;
    return kp_draw_dim(r, lo, hi);
}

void kp_draw_rows_cols(uint64_t seed, int64_t max_elems, kp_shape *out) {
    kp_rng r = {seed};
    if (max_elems < 1) max_elems = 1;
    int64_t total = kp_draw_size(&r, max_elems);
    int64_t cols = kp_draw_dim(&r, 1, total);
    int64_t rows = kp_draw_dim(&r, (total / cols + 1) / 2, total / cols);
    out->nd = 2;
    out->d[0] = rows;
    out->d[1] = cols;
    out->d[2] = 0;
}

/* ===== inputs ============================================================ */

void kp_gen_fill(const kp_op *op, const kp_shape *s, int dist, int buf, uint64_t seed, void *dst, int64_t begin,
                 int64_t n) {
    kp_gen g = op->gen(s, buf, dist);
    int bf16 = op->bufs[buf].dtype == KP_BF16;
    kp_gen_run(&g, seed, (uint32_t)buf, (uint64_t)begin, n, bf16 ? NULL : (float *)dst, bf16 ? (uint16_t *)dst : NULL);
}

int kp_gen_inputs(const kp_op *op, const kp_shape *s, int dist, uint64_t seed, void *bufs[KP_MAX_BUFS]) {
    for (int b = 0; b < KP_MAX_BUFS; b++) bufs[b] = NULL;
    if (dist < 0 || dist >= op->ndists) return -1;
    for (int b = 0; b < op->nbufs; b++) {
        if (op->bufs[b].output) continue;
        int64_t n = op->buf_elems(s, b);
        void *p = malloc((size_t)n * kp_dtype_size(op->bufs[b].dtype));
        if (!p) {
            kp_free_bufs(op, bufs);
            return -1;
        }
        kp_gen_fill(op, s, dist, b, seed, p, 0, n);
        bufs[b] = p;
    }
    return 0;
}

void kp_free_bufs(const kp_op *op, void *bufs[KP_MAX_BUFS]) {
    (void)op;
    for (int b = 0; b < KP_MAX_BUFS; b++) {
        free(bufs[b]);
        bufs[b] = NULL;
    }
}

const float *kp_as_f32(const void *p, kp_dtype t, int64_t n, int *owned) {
    *owned = 0;
    if (t == KP_F32) return p;
    float *f = malloc((size_t)n * sizeof *f);
    if (!f) return NULL;
    const uint16_t *h = p;
    for (int64_t i = 0; i < n; i++) f[i] = kp_bf16_bits_to_f32(h[i]);
    *owned = 1;
    return f;
}

/* ===== checksum ========================================================== */

/* Four words a step, each into a sum of its own (a sum, so the order is
 * free and the total the same), so that the multiplies of four words
 * overlap; where bytes are little-endian a word is one load. The parent
 * checksums every input set it builds; the host worker checksums a call's
 * inputs after it in each guarded request, time of the harness's own that
 * a candidate's hidden work is told apart from. */
uint64_t kp_cksum_at(const void *p, size_t n, uint64_t first_word) {
    const unsigned char *b = p;
    uint64_t sum = 0;
    size_t words = n / 4, i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t s1 = 0, s2 = 0, s3 = 0;
    for (; i + 4 <= words; i += 4) {
        uint32_t w[4];
        memcpy(w, b + 4 * i, sizeof w);
        sum += kp_cksum_word(w[0], first_word + i);
        s1 += kp_cksum_word(w[1], first_word + i + 1);
        s2 += kp_cksum_word(w[2], first_word + i + 2);
        s3 += kp_cksum_word(w[3], first_word + i + 3);
    }
    sum += s1 + s2 + s3;
#endif
    for (; i < words; i++) {
        uint32_t w = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 |
                     (uint32_t)b[4 * i + 3] << 24;
        sum += kp_cksum_word(w, first_word + i);
    }
    if (n % 4) {
        uint32_t w = 0;
        for (size_t k = 0; k < n % 4; k++) w |= (uint32_t)b[4 * i + k] << (8 * k);
        sum += kp_cksum_word(w, first_word + i);
    }
    return sum;
}

uint64_t kp_cksum(const void *p, size_t n) { return kp_cksum_at(p, n, 0); }

/* ===== references ======================================================== */

int kp_ref_alloc(kp_ref *r, int64_t n) {
    if (r->borrowed == KP_REF_OFFERED && r->want && r->tol && n <= r->n) { /* the caller's buffers */
        double *want = r->want, *tol = r->tol;
        memset(r, 0, sizeof *r);
        r->n = n, r->want = want, r->tol = tol, r->borrowed = KP_REF_TAKEN;
        return 0;
    }
    memset(r, 0, sizeof *r);
    r->n = n;
    r->want = malloc((size_t)n * sizeof *r->want);
    r->tol = malloc((size_t)n * sizeof *r->tol);
    if (!r->want || !r->tol) {
        kp_ref_free(r);
        return -1;
    }
    return 0;
}

void kp_ref_free(kp_ref *r) {
    if (!r) return;
    if (!r->borrowed) {
        free(r->want);
        free(r->tol);
    }
    if (r->extra && r->free_extra) r->free_extra(r->extra);
    memset(r, 0, sizeof *r);
}
