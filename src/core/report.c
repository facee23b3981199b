/* report.c: printers for a kp_result (console table, JSON, markdown).
 *
 * Results are data; this is the only place that turns them into text, so
 * every number is measured in seconds and formatted here, once, with one
 * unit per row chosen from the median (hyperfine / nvbench style).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kproof/kproof.h"
#include "kproof/backends.h"
#include "kproof/worth.h"
#include "core/report_priv.h"

/* ===== numbers =========================================================== */

static double time_scale(double ref, const char **unit)
{
    ref = fabs(ref);
    if (ref < 1e-6) {
        *unit = "ns";
        return 1e-9;
    }
    if (ref < 1e-3) {
        *unit = "us";
        return 1e-6;
    }
    if (ref < 1) {
        *unit = "ms";
        return 1e-3;
    }
    *unit = "s";
    return 1;
}

/* Decimals that leave about four significant digits at the reference's
 * magnitude; the same count for a median and its bounds keeps them aligned. */
static int time_decimals(double v)
{
    v = fabs(v);
    return v < 10 ? 3 : v < 100 ? 2 : 1;
}

/* t in the unit chosen from ref; the unit itself only when with_unit. */
static void fmt_scaled(char *buf, size_t len, double t, double ref, int with_unit)
{
    if (!isfinite(t)) {
        snprintf(buf, len, "-");
        return;
    }
    if (!(isfinite(ref) && ref != 0))
        ref = t;
    const char *unit;
    double scale = time_scale(ref, &unit);
    int dec = time_decimals(ref / scale);
    if (with_unit)
        snprintf(buf, len, "%.*f %s", dec, t / scale, unit);
    else
        snprintf(buf, len, "%.*f", dec, t / scale);
}

void kp_fmt_time(char *buf, size_t len, double t, double ref)
{
    if (!buf || len == 0)
        return;
    fmt_scaled(buf, len, t, ref, 1);
}

/* Rates read best with three significant digits and no exponent. */
static void fmt_rate(char *buf, size_t len, double v)
{
    if (!(isfinite(v) && v > 0))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", v >= 100 ? 0 : v >= 10 ? 1 : 2, v);
}

/* ===== strings =========================================================== */

/* Bounded length: the result's text fields are fixed arrays that a buggy
 * writer could leave unterminated; never read past them. */
static size_t bounded_len(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

/* Length of the valid UTF-8 sequence at p (at most `left` bytes), 0 if it
 * is not one: overlong forms, surrogates and code points past U+10FFFF are
 * invalid. */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
    unsigned c = p[0];
    size_t n;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

static void json_strn(FILE *f, const char *s, size_t max)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    size_t len = bounded_len(s, max);
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
        } else if (c == '\n') {
            fputs("\\n", f);
        } else if (c == '\t') {
            fputs("\\t", f);
        } else if (c == '\r') {
            fputs("\\r", f);
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
        } else if (c >= 0x80) {
            size_t n = utf8_seq(p + i, len - i);
            if (n == 0) {
                /* Not UTF-8 (a kernel name or a compiler message in some
                 * legacy encoding): keep the byte, as its Latin-1 letter. */
                fprintf(f, "\\u%04x", c);
            } else {
                fwrite(p + i, 1, n, f);
                i += n;
                continue;
            }
        } else {
            fputc((int)c, f);
        }
        i++;
    }
    fputc('"', f);
}

void kp_json_str(FILE *f, const char *s)
{
    json_strn(f, s, SIZE_MAX);
}

/* ===== JSON writer ======================================================= */

/* Just enough of a writer to place commas, keys and indentation right, so
 * that the field list below reads like the schema. */
#define JW_MAX_DEPTH 16
typedef struct jw {
    FILE *f;
    int depth;
    int items[JW_MAX_DEPTH];
} jw;

static void jw_key(jw *w, const char *key)
{
    if (w->depth > 0) {
        if (w->items[w->depth]++)
            fputc(',', w->f);
        fprintf(w->f, "\n%*s", 2 * w->depth, "");
    }
    if (key) {
        kp_json_str(w->f, key);
        fputs(": ", w->f);
    }
}

static void jw_open(jw *w, const char *key, char c)
{
    jw_key(w, key);
    fputc(c, w->f);
    if (w->depth < JW_MAX_DEPTH - 1)
        w->depth++;
    w->items[w->depth] = 0;
}

static void jw_close(jw *w, char c)
{
    int had = w->items[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (had)
        fprintf(w->f, "\n%*s", 2 * w->depth, "");
    fputc(c, w->f);
}

static void jw_num(jw *w, const char *key, double v)
{
    jw_key(w, key);
    /* JSON has no NaN or Inf; "unknown" is null. */
    if (isfinite(v))
        fprintf(w->f, "%.9g", v);
    else
        fputs("null", w->f);
}

static void jw_int(jw *w, const char *key, int64_t v)
{
    jw_key(w, key);
    fprintf(w->f, "%" PRId64, v);
}

static void jw_uint(jw *w, const char *key, uint64_t v)
{
    jw_key(w, key);
    fprintf(w->f, "%" PRIu64, v);
}

static void jw_bool(jw *w, const char *key, int v)
{
    jw_key(w, key);
    fputs(v ? "true" : "false", w->f);
}

static void jw_null(jw *w, const char *key)
{
    jw_key(w, key);
    fputs("null", w->f);
}

/* For the result's char arrays only: sizeof bounds the read. */
#define jw_strn(w, key, s) jw_strn_(w, key, s, sizeof(s))
static void jw_strn_(jw *w, const char *key, const char *s, size_t max)
{
    jw_key(w, key);
    json_strn(w->f, s, max);
}

static void jw_str(jw *w, const char *key, const char *s)
{
    jw_key(w, key);
    kp_json_str(w->f, s);
}

/* ===== shared pieces ===================================================== */

static const char *op_name(const kp_result *r)
{
    return r->op && r->op->name ? r->op->name : "-";
}

static int is_matmul(const kp_result *r)
{
    return r->op && r->op->family && strcmp(r->op->family, "matmul") == 0;
}

static void shape_text(const kp_shape *s, char *buf, size_t len)
{
    if (s->nd <= 0 || s->nd > KP_MAX_DIMS || kp_shape_format(s, buf, len) < 0)
        snprintf(buf, len, "-");
}

static const char *str_or_dash(const char *s)
{
    return s && s[0] ? s : "-";
}

enum {
    COL_SHAPE,
    COL_ORIGIN,
    COL_VERDICT,
    COL_TIME,
    COL_SAMPLES,
    COL_RATE,
    COL_SOL,
    COL_SCORE,
    COL_LEFT,
    COL_REGIME,
    COL_BASE,
    NCOLS
};
_Static_assert(NCOLS == KP_REPORT_NCOLS, "report_priv.h counts the columns");
#define CELL_LEN KP_REPORT_CELL

static void col_titles(const kp_result *r, char cells[NCOLS][CELL_LEN])
{
    snprintf(cells[COL_SHAPE], CELL_LEN, "shape");
    snprintf(cells[COL_ORIGIN], CELL_LEN, "origin");
    snprintf(cells[COL_VERDICT], CELL_LEN, "verdict");
    snprintf(cells[COL_TIME], CELL_LEN, "median [95%% CI]");
    snprintf(cells[COL_SAMPLES], CELL_LEN, "samples");
    snprintf(cells[COL_RATE], CELL_LEN, "%s", is_matmul(r) ? "TFLOP/s" : "GB/s");
    snprintf(cells[COL_SOL], CELL_LEN, "SoL");
    snprintf(cells[COL_SCORE], CELL_LEN, "SOL score");
    snprintf(cells[COL_LEFT], CELL_LEN, "left");
    snprintf(cells[COL_REGIME], CELL_LEN, "regime");
    snprintf(cells[COL_BASE], CELL_LEN, "speedup [95%% CI] vs baseline");
}

static void row_cells_raw(const kp_result *r, const kp_shape_result *sr, char cells[NCOLS][CELL_LEN])
{
    for (int c = 0; c < NCOLS; c++)
        snprintf(cells[c], CELL_LEN, "-");
    shape_text(&sr->shape, cells[COL_SHAPE], CELL_LEN);
    snprintf(cells[COL_ORIGIN], CELL_LEN, "%s", str_or_dash(sr->origin));
    /* A time kproof could not account for says so on its own row. */
    snprintf(cells[COL_VERDICT], CELL_LEN, "%s%s", kp_verdict_name(sr->verdict), r->unaudited ? " (unaudited)" : "");
    /* Speed of light, headroom and regime: derived from the result's own
     * data (op, shape, device, medians; see kproof/worth.h). */
    kp_shape_worth sw;
    kp_shape_worth_of(r, sr, &sw);
    if (sw.sol.regime != KP_REGIME_UNKNOWN) {
        const char *rn = kp_regime_name(sw.sol.regime);
        snprintf(cells[COL_REGIME], CELL_LEN, "%.*s", (int)strcspn(rn, "-"), rn);
    }
    if (isfinite(sw.score))
        snprintf(cells[COL_SCORE], CELL_LEN, "%.2f", sw.score);
    if (isfinite(sw.headroom))
        snprintf(cells[COL_LEFT], CELL_LEN, "%.2fx", sw.headroom);
    if (!sr->timed)
        return;
    const kp_timing *t = &sr->cand;
    if (isfinite(t->median)) {
        char med[48], lo[32], hi[32];
        fmt_scaled(med, sizeof med, t->median, t->median, 1);
        fmt_scaled(lo, sizeof lo, t->lo, t->median, 0);
        fmt_scaled(hi, sizeof hi, t->hi, t->median, 0);
        snprintf(cells[COL_TIME], CELL_LEN, "%s [%s, %s]", med, lo, hi);
    }
    if (t->n > 0)
        snprintf(cells[COL_SAMPLES], CELL_LEN, "%d", t->n);
    fmt_rate(cells[COL_RATE], CELL_LEN, is_matmul(r) ? t->gflops / 1e3 : t->gbs);
    if (t->sol_time > 0 && isfinite(t->sol_fraction) && t->sol_fraction > 0)
        snprintf(cells[COL_SOL], CELL_LEN, "%.0f%%", 100 * t->sol_fraction);
    if (sr->base_name[0] && isfinite(sr->speedup)) {
        char lo[32] = "?", hi[32] = "?";
        if (isfinite(sr->speedup_lo))
            snprintf(lo, sizeof lo, "%.2f", sr->speedup_lo);
        if (isfinite(sr->speedup_hi))
            snprintf(hi, sizeof hi, "%.2f", sr->speedup_hi);
        snprintf(cells[COL_BASE], CELL_LEN, "%.2fx [%s, %s] vs %.*s", sr->speedup, lo, hi,
                 (int)sizeof sr->base_name, sr->base_name);
    }
}

/* Prints text from the result for a terminal or a markdown file. The text
 * can come from the candidate (compiler messages, kernel names), so control
 * characters become '?': an escape sequence must not reach the terminal.
 * Newlines continue under `indent`, or become spaces when indent is NULL. */
static void put_text(FILE *f, const char *s, size_t max, const char *indent)
{
    size_t len = bounded_len(s, max);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' && indent) {
            fputc('\n', f);
            if (i + 1 < len)
                fputs(indent, f);
        } else if (c == '\n' || c == '\r') {
            fputc(' ', f);
        } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
            fputc('?', f);
        } else if (c >= 0x80) {
            i += kp_report_put_high(f, s, i, len) - 1;
        } else {
            fputc((int)c, f);
        }
    }
}

/* put_text's rules for a cell, in place (widths are measured in bytes,
 * so a cell stays the same length). */
static void sanitize_cell(char *cell)
{
    size_t len = strlen(cell);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)cell[i];
        if (c < 0x20 || c == 0x7f) {
            cell[i] = '?';
        } else if (c >= 0x80) {
            size_t n = utf8_seq((const unsigned char *)cell + i, len - i);
            if (n == 0 || (c == 0xc2 && (unsigned char)cell[i + 1] < 0xa0))
                cell[i] = '?';
            else
                i += n - 1;
        }
    }
}

static void row_cells(const kp_result *r, const kp_shape_result *sr, char cells[NCOLS][CELL_LEN])
{
    row_cells_raw(r, sr, cells);
    /* Origin and baseline names come from files a candidate can influence. */
    for (int c = 0; c < NCOLS; c++)
        sanitize_cell(cells[c]);
}

static void put_check_line(FILE *f, const kp_check *c, const char *indent)
{
    if (c->checked <= 0 && c->bad <= 0 && c->poisoned <= 0 && c->nonfinite <= 0)
        return;
    fprintf(f, "%schecked %" PRId64 " (%.*s): %" PRId64 " bad, %" PRId64 " poisoned, %" PRId64 " non-finite",
            indent, c->checked, (int)sizeof c->method, c->method[0] ? c->method : "?", c->bad, c->poisoned,
            c->nonfinite);
    if (c->first_bad >= 0)
        fprintf(f, "; first bad at %" PRId64 ": got %.9g, want %.9g, tol %.3g", c->first_bad, c->got, c->want, c->tol);
    if (isfinite(c->max_ratio))
        fprintf(f, "; max |err|/tol %.3g", c->max_ratio);
    if (isfinite(c->rms_ratio))
        fprintf(f, ", rms %.3g (limit %.3g)", c->rms_ratio, c->rms_limit);
    fputc('\n', f);
}

static int shown_warnings(const kp_result *r)
{
    int cap = (int)(sizeof r->warn / sizeof r->warn[0]);
    return r->nwarn < 0 ? 0 : r->nwarn < cap ? r->nwarn : cap;
}

/* ===== console table ===================================================== */

/* One line on where the candidate ran; every missing defence named. */
static void print_sandbox(FILE *f, const kp_result *r, const char *bullet)
{
    if (r->sandbox == KP_SANDBOX_FULL) {
        fprintf(f, "\n%ssandbox: complete (user, pid, network, mount and ipc namespaces, seccomp, no_new_privs, "
                   "rlimits)\n", bullet);
    } else if (r->sandbox == KP_SANDBOX_OFF) {
        fprintf(f, "\n%ssandbox: NOT SANDBOXED (--no-sandbox): the candidate ran with kproof's user, files and "
                   "processes in reach\n", bullet);
    } else if (r->sandbox == KP_SANDBOX_PARTIAL) {
        fprintf(f, "\n%ssandbox: NOT SANDBOXED in full, missing:", bullet);
        for (int i = 0; i < r->nsandbox_missing && i < 8; i++) {
            fputs(i ? "; " : " ", f);
            put_text(f, r->sandbox_missing[i], sizeof r->sandbox_missing[i], NULL);
        }
        fputc('\n', f);
    }
}

void kp_print_table(FILE *f, const kp_result *r)
{
    if (!f || !r)
        return;
    fprintf(f, "kproof %s%s: ", kp_verdict_name(r->verdict),
            r->verdict == KP_PASS && (r->sandbox == KP_SANDBOX_PARTIAL || r->sandbox == KP_SANDBOX_OFF)
                ? " (not sandboxed)"
                : "");
    put_text(f, str_or_dash(r->candidate), sizeof r->candidate, NULL);
    fprintf(f, " | op %s | backend %s | protocol ", op_name(r), kp_backend_name(r->backend));
    put_text(f, str_or_dash(r->protocol), sizeof r->protocol, NULL);
    fputc('\n', f);
    if (r->detail[0]) {
        fputs("  ", f);
        if (r->check_name[0]) {
            put_text(f, r->check_name, sizeof r->check_name, NULL);
            fputs(": ", f);
        }
        put_text(f, r->detail, sizeof r->detail, "  ");
        fputc('\n', f);
    }

    int nrows = r->shapes ? r->nshapes : 0;
    if (nrows > 0) {
        char head[NCOLS][CELL_LEN], cells[NCOLS][CELL_LEN];
        int width[NCOLS];
        col_titles(r, head);
        for (int c = 0; c < NCOLS; c++)
            width[c] = (int)strlen(head[c]);
        /* Two passes (measure, then print) keep the cells on the stack. */
        for (int i = 0; i < nrows; i++) {
            row_cells(r, &r->shapes[i], cells);
            for (int c = 0; c < NCOLS; c++) {
                int w = (int)strlen(cells[c]);
                if (w > width[c])
                    width[c] = w;
            }
        }
        fputc('\n', f);
        for (int i = -1; i < nrows; i++) {
            if (i >= 0)
                row_cells(r, &r->shapes[i], cells);
            char(*row)[CELL_LEN] = i < 0 ? head : cells;
            for (int c = 0; c < NCOLS; c++) {
                if (c == NCOLS - 1)
                    fprintf(f, "%s\n", row[c]);
                else if (c == COL_SAMPLES)
                    fprintf(f, "%*s  ", width[c], row[c]);
                else
                    fprintf(f, "%-*s  ", width[c], row[c]);
            }
        }
    }

    int said = 0;
    for (int i = 0; i < nrows; i++) {
        const kp_shape_result *sr = &r->shapes[i];
        if (sr->verdict == KP_PASS)
            continue;
        if (!said++)
            fputs("\nevidence:\n", f);
        char st[64];
        shape_text(&sr->shape, st, sizeof st);
        fprintf(f, "  %s %s (", kp_verdict_name(sr->verdict), st);
        put_text(f, str_or_dash(sr->origin), SIZE_MAX, NULL);
        fputs("): ", f);
        put_text(f, str_or_dash(sr->check_name), sizeof sr->check_name, NULL);
        fputs(": ", f);
        put_text(f, sr->detail[0] ? sr->detail : "(no detail)", sizeof sr->detail, "    ");
        fputc('\n', f);
        put_check_line(f, &sr->check, "    ");
    }

    for (int i = 0; i < nrows; i++) {
        const kp_shape_result *sr = &r->shapes[i];
        int nk = sr->nkernels < 16 ? sr->nkernels : 16;
        if (nk <= 0)
            continue;
        char st[64];
        shape_text(&sr->shape, st, sizeof st);
        fprintf(f, "\nkernels the candidate ran at %s:\n", st);
        for (int k = 0; k < nk; k++) {
            const kp_audit_kernel *kk = &sr->kernels[k];
            char dur[48];
            kp_fmt_time(dur, sizeof dur, kk->duration_s, kk->duration_s);
            fprintf(f, "  %-10s stream %-4" PRIu32 " %-14s ", dur, kk->stream,
                    kk->on_given_stream ? "(given stream)" : "(OTHER stream)");
            put_text(f, kk->name, sizeof kk->name, NULL);
            fputc('\n', f);
        }
    }

    print_sandbox(f, r, "");
    int nw = shown_warnings(r);
    if (nw > 0)
        fputc('\n', f);
    for (int i = 0; i < nw; i++) {
        fputs("warning: ", f);
        put_text(f, r->warn[i], sizeof r->warn[i], "  ");
        fputc('\n', f);
    }
    if (r->nwarn > nw)
        fprintf(f, "(%d more warnings not shown)\n", r->nwarn - nw);

    fprintf(f, "\nseed %" PRIu64 " (rerun with --seed %" PRIu64 " to reproduce the inputs and shapes)\n", r->seed,
            r->seed);
}

/* ===== JSON ============================================================== */

/* Every sample, so that a later compare bootstraps from the runs
 * themselves rather than from their intervals. */
static void json_samples(jw *w, const kp_timing *t)
{
    if (!t->samples || t->n <= 0)
        return;
    jw_key(w, "samples_s");
    fputc('[', w->f);
    for (int i = 0; i < t->n; i++) {
        if (i % 8)
            fputs(", ", w->f);
        else if (i)
            fprintf(w->f, ",\n%*s", 2 * w->depth + 2, "");
        if (isfinite(t->samples[i]))
            fprintf(w->f, "%.9g", t->samples[i]);
        else
            fputs("null", w->f);
    }
    fputc(']', w->f);
}

static void json_worth(jw *w, const kp_result *r, const kp_shape_result *sr)
{
    kp_shape_worth sw;
    kp_shape_worth_of(r, sr, &sw);
    jw_open(w, "worth", '{');
    jw_num(w, "bytes", sw.sol.bytes);
    jw_num(w, "flops", sw.sol.flops);
    jw_num(w, "intensity", sw.sol.intensity);
    jw_num(w, "ridge", sw.sol.ridge > 0 ? sw.sol.ridge : NAN);
    jw_str(w, "regime", kp_regime_name(sw.sol.regime));
    jw_num(w, "sol_time_s", sw.sol.sol_s > 0 ? sw.sol.sol_s : NAN);
    jw_num(w, "sol_time_physical_s", sw.sol.phys_s > 0 ? sw.sol.phys_s : NAN);
    jw_num(w, "sol_score", sw.score);
    jw_num(w, "headroom", sw.headroom);
    jw_close(w, '}');
}

static void json_timing(jw *w, const char *key, const kp_timing *t)
{
    jw_open(w, key, '{');
    jw_num(w, "median_s", t->median);
    jw_num(w, "lo_s", t->lo);
    jw_num(w, "hi_s", t->hi);
    jw_num(w, "min_s", t->min);
    jw_num(w, "mean_s", t->mean);
    jw_int(w, "samples", t->n);
    jw_num(w, "host_median_s", t->host_median);
    jw_num(w, "host_bound_samples", t->host_bound);
    jw_num(w, "parent_floor_s", t->parent_floor);
    jw_bool(w, "settled", t->settled);
    /* 0 means "unknown" for these; say so as null rather than as a speed. */
    jw_num(w, "sol_time_s", t->sol_time > 0 ? t->sol_time : NAN);
    jw_num(w, "sol_fraction", t->sol_time > 0 ? t->sol_fraction : NAN);
    jw_num(w, "gbs", t->gbs);
    jw_num(w, "gflops", t->gflops);
    jw_int(w, "input_sets", t->input_sets);
    /* Host: what the timed requests' own time was judged by. */
    if (t->request_by) {
        jw_str(w, "request_own_by", t->request_by == 1 ? "cpu" : "wall");
        jw_num(w, "request_own_s", t->request_own);
        jw_num(w, "request_own_baseline_s", t->request_own_base);
        jw_num(w, "request_call_s", t->request_call);
        jw_int(w, "cpu_readings", t->cpu_readings);
    }
    json_samples(w, t);
    jw_close(w, '}');
}

static void json_check(jw *w, const kp_check *c)
{
    jw_open(w, "correctness", '{');
    jw_bool(w, "ok", c->ok);
    jw_int(w, "checked", c->checked);
    jw_int(w, "bad", c->bad);
    jw_int(w, "poisoned", c->poisoned);
    jw_int(w, "nonfinite", c->nonfinite);
    jw_int(w, "first_bad", c->first_bad);
    jw_num(w, "got", c->got);
    jw_num(w, "want", c->want);
    jw_num(w, "tol", c->tol);
    jw_num(w, "max_ratio", c->max_ratio);
    jw_num(w, "rms_ratio", c->rms_ratio);
    jw_num(w, "rms_limit", c->rms_limit);
    jw_strn(w, "method", c->method);
    jw_strn(w, "why", c->why);
    jw_close(w, '}');
}

static void json_shape(jw *w, const kp_result *r, const kp_shape_result *sr)
{
    jw_open(w, NULL, '{');
    jw_key(w, "shape");
    fputc('[', w->f);
    int nd = sr->shape.nd < 0 ? 0 : sr->shape.nd > KP_MAX_DIMS ? KP_MAX_DIMS : sr->shape.nd;
    for (int d = 0; d < nd; d++)
        fprintf(w->f, "%s%" PRId64, d ? ", " : "", sr->shape.d[d]);
    fputc(']', w->f);
    char st[64];
    shape_text(&sr->shape, st, sizeof st);
    jw_str(w, "shape_text", st);
    jw_str(w, "origin", sr->origin);
    jw_str(w, "verdict", kp_verdict_name(sr->verdict));
    jw_strn(w, "check", sr->check_name);
    jw_strn(w, "detail", sr->detail);
    jw_num(w, "wall_s", sr->wall_s);
    /* Where the shape's seconds went: by phase, by kind of work (each
     * second once, so they add up to wall_s), and under the device lock. */
    jw_open(w, "phase_s", '{');
    for (int ph = KP_PH_START; ph < KP_NPHASES; ph++) jw_num(w, kp_phase_name(ph), sr->phase_s[ph]);
    jw_close(w, '}');
    jw_open(w, "work_s", '{');
    for (int k = 0; k < KP_NWORK; k++) jw_num(w, kp_work_name(k), sr->work_s[k]);
    jw_close(w, '}');
    jw_num(w, "lock_held_s", sr->lock_held_s);
    json_check(w, &sr->check);
    if (sr->timed)
        json_timing(w, "timing", &sr->cand);
    else
        jw_null(w, "timing");
    if (sr->timed && sr->base_name[0]) {
        jw_open(w, "baseline", '{');
        jw_strn(w, "name", sr->base_name);
        jw_num(w, "median_s", sr->base.median);
        jw_num(w, "lo_s", sr->base.lo);
        jw_num(w, "hi_s", sr->base.hi);
        jw_num(w, "speedup", sr->speedup);
        jw_num(w, "speedup_lo", sr->speedup_lo);
        jw_num(w, "speedup_hi", sr->speedup_hi);
        json_samples(w, &sr->base);
        jw_strn(w, "others_retired", sr->retired);
        jw_close(w, '}');
    } else {
        jw_null(w, "baseline");
    }
    jw_open(w, "account", '{');
    jw_int(w, "calls", sr->acct_calls);
    jw_int(w, "ops_inside", sr->acct_ops);
    jw_int(w, "ops_other_stream", sr->acct_other_stream);
    jw_int(w, "ops_at_load", sr->acct_load);
    jw_close(w, '}');
    jw_open(w, "audit", '[');
    int nk = sr->nkernels < 0 ? 0 : sr->nkernels < 16 ? sr->nkernels : 16;
    for (int k = 0; k < nk; k++) {
        const kp_audit_kernel *kk = &sr->kernels[k];
        jw_open(w, NULL, '{');
        jw_strn(w, "name", kk->name);
        jw_uint(w, "stream", kk->stream);
        jw_bool(w, "on_given_stream", kk->on_given_stream);
        jw_num(w, "duration_s", kk->duration_s);
        jw_close(w, '}');
    }
    jw_close(w, ']');
    json_worth(w, r, sr);
    jw_close(w, '}');
}

void kp_print_json(FILE *f, const kp_result *r)
{
    if (!f || !r)
        return;
    jw w = {f, 0, {0}};
    jw_open(&w, NULL, '{');
    jw_int(&w, "schema", KP_SCHEMA_VERSION);
    jw_str(&w, "tool", "kproof");
    jw_str(&w, "version", KP_VERSION);
    jw_str(&w, "verdict", kp_verdict_name(r->verdict));
    jw_strn(&w, "check", r->check_name);
    jw_strn(&w, "detail", r->detail);
    jw_strn(&w, "candidate", r->candidate);
    if (r->op) {
        jw_str(&w, "op", r->op->name);
        jw_str(&w, "dtype", kp_dtype_name(r->op->dtype));
    } else {
        jw_null(&w, "op");
        jw_null(&w, "dtype");
    }
    jw_str(&w, "backend", kp_backend_name(r->backend));
    jw_strn(&w, "protocol", r->protocol);
    jw_bool(&w, "audited", kp_backend_get(r->backend)->has_tracer && !r->unaudited);
    /* A string: 64-bit seeds do not survive a trip through a double. */
    char seed[24];
    snprintf(seed, sizeof seed, "%" PRIu64, r->seed);
    jw_str(&w, "seed", seed);
    jw_num(&w, "wall_s", r->wall_s);
    jw_open(&w, "phase_s", '{');
    for (int ph = 0; ph < KP_NPHASES; ph++) jw_num(&w, kp_phase_name(ph), r->phase_s[ph]);
    jw_close(&w, '}');
    jw_open(&w, "device_lock", '{');
    jw_num(&w, "wait_s", r->lock_wait_s);
    jw_num(&w, "held_s", r->lock_held_s);
    jw_open(&w, "held_phase_s", '{');
    for (int ph = 0; ph < KP_NPHASES; ph++) jw_num(&w, kp_phase_name(ph), r->lock_held_phase_s[ph]);
    jw_close(&w, '}');
    jw_close(&w, '}');
    if (r->sandbox) {
        static const char *state[] = {"", "complete", "partial", "off"};
        jw_open(&w, "sandbox", '{');
        jw_str(&w, "state", state[r->sandbox >= 1 && r->sandbox <= 3 ? r->sandbox : 0]);
        jw_bool(&w, "sandboxed", r->sandbox == KP_SANDBOX_FULL);
        jw_open(&w, "missing", '[');
        for (int i = 0; i < r->nsandbox_missing && i < 8; i++)
            jw_strn(&w, NULL, r->sandbox_missing[i]);
        jw_close(&w, ']');
        jw_close(&w, '}');
    }

    const kp_env *e = &r->env;
    jw_open(&w, "env", '{');
    jw_strn(&w, "gpu", e->gpu);
    jw_strn(&w, "gpu_uuid", e->gpu_uuid);
    jw_strn(&w, "driver", e->driver);
    jw_strn(&w, "runtime", e->runtime);
    jw_int(&w, "sm_count", e->sm_count);
    jw_int(&w, "l2_bytes", e->l2_bytes);
    jw_num(&w, "peak_gbs", e->peak_gbs);
    jw_num(&w, "peak_gflops_f32", e->peak_gflops_f32);
    jw_num(&w, "peak_gflops_bf16", e->peak_gflops_bf16);
    jw_int(&w, "sm_mhz_before", e->sm_mhz_before);
    jw_int(&w, "sm_mhz_after", e->sm_mhz_after);
    jw_int(&w, "mem_mhz_before", e->mem_mhz_before);
    jw_int(&w, "mem_mhz_after", e->mem_mhz_after);
    jw_uint(&w, "throttle_before", e->throttle_before);
    jw_uint(&w, "throttle_after", e->throttle_after);
    jw_strn(&w, "host", e->host);
    jw_strn(&w, "date", e->date);
    jw_close(&w, '}');

    /* The datasheet's limits for this device (kproof/limits.h); null when
     * the device is not in the table. */
    const kp_limits *lim = kp_limits_for(e->gpu);
    if (lim->known) {
        jw_open(&w, "limits", '{');
        jw_str(&w, "name", lim->name);
        jw_num(&w, "hbm_gbs", lim->hbm_gbs);
        jw_num(&w, "fp32_gflops", lim->fp32_gflops);
        jw_num(&w, "tf32_gflops", lim->tf32_gflops);
        jw_num(&w, "bf16_gflops", lim->bf16_gflops);
        jw_num(&w, "launch_s", lim->launch_s);
        jw_str(&w, "source", lim->source);
        jw_close(&w, '}');
    } else {
        jw_null(&w, "limits");
    }

    jw_open(&w, "warnings", '[');
    int nw = shown_warnings(r);
    for (int i = 0; i < nw; i++)
        jw_strn(&w, NULL, r->warn[i]);
    if (r->nwarn > nw) {
        char more[64];
        snprintf(more, sizeof more, "(%d more warnings not shown)", r->nwarn - nw);
        jw_str(&w, NULL, more);
    }
    jw_close(&w, ']');

    jw_open(&w, "shapes", '[');
    for (int i = 0; r->shapes && i < r->nshapes; i++)
        json_shape(&w, r, &r->shapes[i]);
    jw_close(&w, ']');
    jw_close(&w, '}');
    fputc('\n', f);
}

/* ===== markdown ========================================================== */

/* Markdown text: pipes would split a table cell and newlines end a table
 * row or a list item. */
static void md_text(FILE *f, const char *s, size_t max)
{
    size_t len = bounded_len(s, max);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '|')
            fputs("\\|", f);
        else
            put_text(f, s + i, 1, NULL);
    }
}

void kp_print_md(FILE *f, const kp_result *r)
{
    if (!f || !r)
        return;
    fprintf(f, "**kproof %s**: `%s` on %s, ", kp_verdict_name(r->verdict), op_name(r), kp_backend_name(r->backend));
    md_text(f, str_or_dash(r->env.gpu), sizeof r->env.gpu);
    fputs(", ", f);
    md_text(f, str_or_dash(r->env.date), sizeof r->env.date);
    fputs(" (candidate `", f);
    md_text(f, str_or_dash(r->candidate), sizeof r->candidate);
    fputs("`, protocol ", f);
    md_text(f, str_or_dash(r->protocol), sizeof r->protocol);
    fputs(")\n\n", f);

    char cells[NCOLS][CELL_LEN];
    col_titles(r, cells);
    for (int c = 0; c < NCOLS; c++) {
        fputs("| ", f);
        md_text(f, cells[c], CELL_LEN);
        fputc(' ', f);
    }
    fputs("|\n", f);
    for (int c = 0; c < NCOLS; c++)
        fputs(c == COL_SAMPLES ? "| ---: " : "| --- ", f);
    fputs("|\n", f);
    for (int i = 0; r->shapes && i < r->nshapes; i++) {
        row_cells(r, &r->shapes[i], cells);
        for (int c = 0; c < NCOLS; c++) {
            fputs("| ", f);
            md_text(f, cells[c], CELL_LEN);
            fputc(' ', f);
        }
        fputs("|\n", f);
    }

    int said = 0;
    for (int i = 0; r->shapes && i < r->nshapes; i++) {
        const kp_shape_result *sr = &r->shapes[i];
        if (sr->verdict == KP_PASS)
            continue;
        if (!said++)
            fputc('\n', f);
        char st[64];
        shape_text(&sr->shape, st, sizeof st);
        fprintf(f, "- **%s** at %s (", kp_verdict_name(sr->verdict), st);
        md_text(f, str_or_dash(sr->origin), SIZE_MAX);
        fputs("), ", f);
        md_text(f, str_or_dash(sr->check_name), sizeof sr->check_name);
        fputs(": ", f);
        md_text(f, sr->detail[0] ? sr->detail : "(no detail)", sizeof sr->detail);
        fputc('\n', f);
    }
    print_sandbox(f, r, "- ");
    int nw = shown_warnings(r);
    if (nw > 0)
        fputc('\n', f);
    for (int i = 0; i < nw; i++) {
        fputs("- warning: ", f);
        md_text(f, r->warn[i], sizeof r->warn[i]);
        fputc('\n', f);
    }
    if (r->nwarn > nw)
        fprintf(f, "- (%d more warnings not shown)\n", r->nwarn - nw);
    fprintf(f, "\nseed `%" PRIu64 "`\n", r->seed);
}

/* ===== for the other printers (report_priv.h) ============================ */

void kp_report_titles(const kp_result *r, char cells[KP_REPORT_NCOLS][KP_REPORT_CELL])
{
    col_titles(r, cells);
}

void kp_report_row(const kp_result *r, const kp_shape_result *sr, char cells[KP_REPORT_NCOLS][KP_REPORT_CELL])
{
    row_cells(r, sr, cells);
}

/* The character at s[i] (a byte >= 0x80) when it is valid UTF-8 and not a
 * C1 control (U+0080..U+009F, among them a one-character CSI, is an escape
 * too), '?' otherwise. Returns the bytes it stands for. */
size_t kp_report_put_high(FILE *f, const char *s, size_t i, size_t len)
{
    size_t n = utf8_seq((const unsigned char *)s + i, len - i);
    if (n == 0 || ((unsigned char)s[i] == 0xc2 && (unsigned char)s[i + 1] < 0xa0)) {
        fputc('?', f);
        return 1;
    }
    fwrite(s + i, 1, n, f);
    return n;
}
