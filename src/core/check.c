/* check.c: is a candidate's output right? The per-element comparison, the
 * verdict on a whole output, and the one line that tells a person why.
 *
 * ===== tolerance policy ====================================================
 *
 * For every output element i the op's reference gives a float64 value
 * want_i (computed from the exact input values, in double, with errors
 * far below fp32's) and a tolerance tol_i derived from the data at that
 * element, never a fixed absolute number. The error ratio is
 *
 *     e_i = |got_i - want_i| / tol_i
 *
 * and an output FAILS when any of these holds:
 *   1. an element still holds the poison pattern (never written);
 *   2. an element is NaN or Inf;
 *   3. max_i e_i > 1   (one element is off by more than fp32 arithmetic can
 *                       explain: wrong index, wrong tile, wrong formula);
 *   4. RMS_i e_i > op->rms_limit (every element is off a little, in a way
 *                       that honest fp32 arithmetic is not: reduced
 *                       precision such as tf32 or bf16 inputs).
 *
 * How tol_i is built. Each op writes down a model of the rounding error an
 * honest fp32 computation makes, in units of the fp32 unit roundoff
 * u = 2^-24, from quantities of the data it can compute exactly:
 *
 *   - a reduction of n terms t_k carried in one fp32 accumulator commits
 *     one rounding per addition, about u times the running total. The
 *     roundings are close to independent, so they add like a random walk:
 *     sqrt(sum_k p_k^2) for the running totals p_k. Two bounds cover every
 *     order (sequential, blocked, tree): S = sum_k |t_k| (cancelling data,
 *     where the running totals stay near sqrt(k) times the term size) and
 *     sqrt(n) * |sum| (biased data, where the running total grows like k).
 *     So a length-n reduction is modelled as u * (S + sqrt(n) * |sum|).
 *   - an exp, a division, a square root cost a few u of the value.
 *   - the ops' own structure (softmax: |x - max| amplifies the argument's
 *     rounding; layernorm: a large mean amplifies the mean's error by
 *     |mean| / std) adds terms, each explained in the op's file.
 *
 * tol_i is that model times a safety factor (KP_MM_C, KP_SM_C, KP_LN_C,
 * KP_SUM_C in the op files; 16 today), chosen so that honest computations
 * land at max e <= ~0.25 and RMS e a quarter of the limit or less, at every
 * size and distribution the tests try (tests/test_tolerance.c emulates
 * sequential, blocked, tree, FMA, Welford, online and approximate-exp
 * computations on the CPU and asserts that margin; the worst honest RMS e
 * it sees is ~0.06, against a limit of 0.25 for the f32 ops).
 *
 * Why an RMS criterion on top of the max: the model has to cover the worst
 * element of the worst honest order, so tol is generous for the typical
 * element. Reduced precision spreads its error over every element, and the
 * mean square shows it long before one element crosses 1. For matmul with
 * cancelling inputs, honest fp32 error is about u*S while tf32 inputs
 * (10-bit mantissa) cost about 2^-11 * S / sqrt(K), ~100x more at K = 4096:
 * RMS e lands far above the limit even where max e might not.
 *
 * bf16 tasks (bf16 in, bf16 out): the honest answer is fp32 arithmetic
 * rounded to bf16 once at the end. tol_i = 4 * u_bf16 * |want_i| (covers
 * round-to-nearest with e <= 1/4, round-toward-zero with e <= 1/2) plus the
 * fp32 model of the f32 task for the arithmetic before that rounding.
 * Because the final rounding alone puts RMS e near 0.1, bf16 ops carry a
 * larger rms_limit (0.5); the max criterion does most of their work.
 *
 * Where tol is small (want ~ 0 with no large terms nearby), a floor of a few
 * smallest-normal floats keeps flush-to-zero and denormal handling honest.
 * A tolerance of exactly 0 (only at exact zeros of exact problems) demands
 * an exact answer.
 *
 * Where the random-walk model stops holding: once a running total is
 * ~2^20 times its terms, terms below half an ulp of it are dropped every
 * time (absorption), a one-sided error that grows faster than n. A single
 * fp32 accumulator over ~2^20 positive terms (a variance, a row sum) lands
 * near 0.2 RMS e, and over 2^22 it fails: block such loops (chains, then a
 * tree, as every GPU reduction does) or accumulate in double. The sum op
 * caps the chain length it allows at 2^20 for the same reason.
 *
 * What this cannot catch, stated so nobody relies on it: precision loss
 * smaller than the model's allowance. The sum of a biased vector (mean far
 * from 0) at 2^28 elements tolerates what a chained fp32 accumulator gets,
 * and rounding the inputs to bf16 moves that sum less than that; the
 * "normal" and "cancel" distributions catch it instead, at some shapes.
 * Every distribution and shape must pass, so one that catches it is enough.
 * Likewise matmul with positive inputs at K >= 4096 hides tf32 (normal
 * inputs catch it at any K we benchmark).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kproof/kproof.h"
#include "ops/op_priv.h"

/* Internal bookkeeping rides in fields whose final meaning is set by
 * kp_check_finish: while no element is bad, first_bad holds the index of
 * the worst element so far (so an RMS failure can still point somewhere),
 * and got/want/tol hold that element's values. Severity decides which
 * element first_bad names: poison > NaN/Inf > over tolerance > worst. */

void kp_check_begin(kp_check *c, double rms_limit) { kp_check_begin_loose(c, rms_limit, 0); }

void kp_check_begin_loose(kp_check *c, double rms_limit, double loose) {
    memset(c, 0, sizeof *c);
    c->first_bad = -1;
    c->loose = loose > 0 ? loose : 0;
    c->rms_limit = c->loose > 0 ? INFINITY : rms_limit;
    c->ok = 1;
    if (c->loose > 0) snprintf(c->method, sizeof c->method, "loose (%g abs + %g rel)", c->loose, c->loose);
    else snprintf(c->method, sizeof c->method, "full");
}

/* Sum of squared ratios: kept in `rms_ratio` until finish turns it into
 * the RMS, so the struct needs no hidden fields. `checked` counts usable
 * elements plus unusable ones; `poisoned + nonfinite` are the unusable. */

int kp_check_scan(kp_check *c, int64_t i, double got, int poisoned) {
    if (poisoned && c->loose == 0) { /* an allclose sees NaN, not a pattern */
        if (c->poisoned++ == 0) {
            c->first_bad = i;
            c->got = got;
            c->want = NAN;
            c->tol = NAN;
        }
        return 0;
    }
    if (!isfinite(got)) {
        if (c->nonfinite++ == 0 && c->poisoned == 0) {
            c->first_bad = i;
            c->got = got;
            c->want = NAN;
            c->tol = NAN;
        }
        return 0;
    }
    return 1;
}

/* A scan leaves first_bad at its first poisoned element, else at its
 * first NaN/Inf one: c's stays unless `later` has poison and c none, or
 * `later` is the first with a NaN/Inf and nobody has poison. */
void kp_check_scan_merge(kp_check *c, const kp_check *later) {
    int take = later->poisoned > 0 ? c->poisoned == 0
                                   : later->nonfinite > 0 && c->poisoned == 0 && c->nonfinite == 0;
    if (take) {
        c->first_bad = later->first_bad;
        c->got = later->got;
        c->want = later->want;
        c->tol = later->tol;
    }
    c->poisoned += later->poisoned;
    c->nonfinite += later->nonfinite;
}

/* An element kp_check_scan finds unusable (poison, NaN or Inf): counted,
 * and what it should have held kept for the message. Out of line: the
 * loops below seldom come here. */
static __attribute__((noinline)) void check_add_unusable(kp_check *c, int64_t i, double got, double want, double tol,
                                                          int poisoned) {
    kp_check_scan(c, i, got, poisoned);
    if (c->first_bad == i) {
        c->want = want;
        c->tol = tol;
    }
}

/* kp_check_add's body, inlined where this file loops over an output: a
 * check reads every element, so a call an element is a cost every full
 * check pays at every element. */
static inline __attribute__((always_inline)) void check_add_one(kp_check *c, int64_t i, double got, double want,
                                                                 double tol, int poisoned) {
    c->checked++;
    if (c->loose > 0) tol = c->loose * (1 + fabs(want));
    if ((poisoned && c->loose == 0) || !isfinite(got)) { /* kp_check_scan's test */
        check_add_unusable(c, i, got, want, tol, poisoned);
        return;
    }
    double err = fabs(got - want), e;
    if (tol > 0 && isfinite(tol)) e = err / tol;
    else e = err == 0 ? 0 : INFINITY;
    c->rms_ratio += e * e;
    int clean = c->poisoned == 0 && c->nonfinite == 0;
    if (e > 1) {
        if (c->bad++ == 0 && clean) {
            c->first_bad = i;
            c->got = got;
            c->want = want;
            c->tol = tol;
        }
    } else if (clean && c->bad == 0 && (e > c->max_ratio || c->first_bad < 0)) {
        c->first_bad = i;
        c->got = got;
        c->want = want;
        c->tol = tol;
    }
    if (e > c->max_ratio) c->max_ratio = e;
}

void kp_check_add(kp_check *c, int64_t i, double got, double want, double tol, int poisoned) {
    check_add_one(c, i, got, want, tol, poisoned);
}

/* n elements of one dtype. The usual element (no loose-tol flaw, not
 * poison, finite, within tolerance, no new worst ratio, after the first)
 * changes only `checked` and the sum of squared ratios, kept in locals
 * here; any other goes through check_add_one with them written back. The
 * same sum in the same order as one kp_check_add an element. */
static inline __attribute__((always_inline)) void check_add_run(kp_check *c, int64_t i0, const void *got,
                                                                kp_dtype t, const double *want, const double *tol,
                                                                int64_t n) {
    double rms = c->rms_ratio, maxr = c->max_ratio;
    int64_t checked = c->checked;
    const int loose = c->loose > 0;
    for (int64_t i = 0; i < n; i++) {
        double g = kp_ld(got, t, i), w = want[i], tl = tol ? tol[i] : 0;
        int poisoned = kp_poison_at(got, t, i);
        if (!loose && !poisoned && isfinite(g) && c->first_bad >= 0) {
            double err = fabs(g - w), e;
            if (tl > 0 && isfinite(tl)) e = err / tl;
            else e = err == 0 ? 0 : INFINITY;
            if (e <= 1 && e <= maxr) {
                checked++;
                rms += e * e;
                continue;
            }
        }
        c->rms_ratio = rms;
        c->max_ratio = maxr;
        c->checked = checked;
        check_add_one(c, i0 + i, g, w, tl, poisoned);
        rms = c->rms_ratio;
        maxr = c->max_ratio;
        checked = c->checked;
    }
    c->rms_ratio = rms;
    c->max_ratio = maxr;
    c->checked = checked;
}

void kp_check_add_n(kp_check *c, int64_t i0, const void *got, kp_dtype t, const double *want, const double *tol,
                    int64_t n) {
    if (t == KP_BF16) check_add_run(c, i0, got, KP_BF16, want, tol, n);
    else check_add_run(c, i0, got, KP_F32, want, tol, n);
}

/* "y[3,1021]" for a flat index into the op's output. Every 2-d op's output
 * is dims 0 x 1 (matmul C is M x N, softmax/layernorm y is rows x cols). */
static void kp_coord(const kp_op *op, const kp_shape *s, int64_t i, char *buf, size_t len) {
    int ob = op ? kp_op_output_buf(op) : -1;
    const char *name = ob >= 0 ? op->bufs[ob].name : "out";
    if (op && op->nd >= 2 && s && s->nd >= 2 && s->d[1] > 0)
        snprintf(buf, len, "%s[%" PRId64 ",%" PRId64 "]", name, i / s->d[1], i % s->d[1]);
    else snprintf(buf, len, "%s[%" PRId64 "]", name, i);
}

void kp_check_finish(kp_check *c, const kp_op *op, const kp_shape *s) {
    int64_t usable = c->checked - c->poisoned - c->nonfinite;
    c->rms_ratio = usable > 0 ? sqrt(c->rms_ratio / (double)usable) : 0;
    /* Scans (kp_check_scan) can see more elements than were compared. */
    int64_t total = c->checked;
    if (op && s) {
        int ob = kp_op_output_buf(op);
        if (ob >= 0) {
            int64_t n = op->buf_elems(s, ob);
            if (n > total) total = n;
        }
    }
    char at[64];
    kp_coord(op, s, c->first_bad >= 0 ? c->first_bad : 0, at, sizeof at);
    c->why[0] = '\0';
    if (c->poisoned > 0) {
        c->ok = 0;
        snprintf(c->why, sizeof c->why,
                 "output never written: %" PRId64 " of %" PRId64 " elements still hold the poison pattern (first %s)",
                 c->poisoned, total, at);
    } else if (c->nonfinite > 0) {
        c->ok = 0;
        snprintf(c->why, sizeof c->why, "%s = %g but want %.6g; %" PRId64 " of %" PRId64 " elements are NaN or Inf", at,
                 c->got, c->want, c->nonfinite, total);
    } else if (c->bad > 0) {
        c->ok = 0;
        snprintf(c->why, sizeof c->why, "%s = %.6g but want %.6g (tol %.2g); %" PRId64 " of %" PRId64 "%s elements over tolerance", at,
                 c->got, c->want, c->tol, c->bad, c->checked, strcmp(c->method, "full") == 0 ? "" : " checked");
    } else if (c->rms_ratio > c->rms_limit) {
        c->ok = 0;
        snprintf(c->why, sizeof c->why,
                 "error too large on average: RMS error is %.2g of the tolerance, over the limit %.2g (reduced precision?); "
                 "worst %s = %.6g but want %.6g (tol %.2g)",
                 c->rms_ratio, c->rms_limit, at, c->got, c->want, c->tol);
    } else {
        c->ok = 1;
        c->first_bad = -1;
    }
}

int kp_check_output(const kp_op *op, const kp_shape *s, const void *const *in, const kp_ref *ref, const void *out,
                    uint64_t rng, kp_check *c) {
    if (!ref->want && op->check) return op->check(op, s, in, ref, out, rng, c);
    kp_check_begin_loose(c, op->rms_limit, ref->loose);
    if (!ref->want || (!ref->tol && c->loose == 0)) {
        c->ok = 0;
        snprintf(c->why, sizeof c->why, "no reference to compare with");
        return -1;
    }
    kp_check_add_n(c, 0, out, op->bufs[kp_op_output_buf(op)].dtype, ref->want, ref->tol, ref->n);
    kp_check_finish(c, op, s);
    return 0;
}

int kp_is_library_kernel(const char *name) {
    /* Architecture-prefixed SASS kernels and the libraries' own names. */
    static const char *marks[] = {"cublas", "cutlass", "xmma", "cudnn", "nvjet", "splitKreduce", "gemv2",
                                  "gemvx", "ampere_", "volta_", "turing_", "hopper_", "maxwell_", "sm80_",
                                  "sm90_", "sm100_"};
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
        if (strstr(name, marks[i])) return 1;
    return 0;
}

uint64_t kp_fnv1a_more(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

uint64_t kp_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double kp_wall_s(void) { return (double)kp_now_ns() * 1e-9; }
