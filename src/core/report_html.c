/* report_html.c: one self-contained HTML page for one or more results:
 * verdict, evidence, the per-shape table, the worth sentences and an SVG
 * roofline per result. No scripts, no network, no web fonts: the page
 * opens the same from a CI artefact, a mail attachment or a laptop
 * offline. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/report_priv.h"
#include "kproof/worth.h"

/* ===== text ============================================================== */

/* HTML text and attribute values: markup characters escaped, control
 * characters and bytes that are not UTF-8 shown as '?'. */
static void esc(FILE *f, const char *s, size_t max)
{
    if (!s)
        return;
    size_t len = 0;
    while (len < max && s[len])
        len++;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '&': fputs("&amp;", f); continue;
        case '<': fputs("&lt;", f); continue;
        case '>': fputs("&gt;", f); continue;
        case '"': fputs("&quot;", f); continue;
        case '\'': fputs("&#39;", f); continue;
        default: break;
        }
        if (c == '\n' || c == '\t') {
            fputc(' ', f);
        } else if (c < 0x20 || c == 0x7f) {
            fputc('?', f);
        } else if (c >= 0x80) {
            i += kp_report_put_high(f, s, i, len) - 1;
        } else {
            fputc((int)c, f);
        }
    }
}
#define ESC(f, s) esc(f, s, sizeof(s))
#define ESCZ(f, s) esc(f, s, (size_t)-1)

static const char *CSS =
    "body{font-family:sans-serif;margin:24px auto;max-width:1100px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-top:1px solid #ccc;padding-top:16px}"
    ".meta{color:#555;font-size:13px}"
    ".v{display:inline-block;padding:2px 8px;border-radius:4px;color:#fff;font-weight:bold}"
    ".v-PASS{background:#2a7d2a}.v-WRONG{background:#b22}.v-REJECTED{background:#a40}"
    ".v-ERROR{background:#666}.v-NOISY{background:#a80}"
    "table{border-collapse:collapse;font-size:13px;margin:12px 0}"
    "th,td{border:1px solid #ccc;padding:3px 7px;text-align:left}th{background:#f2f2f2}"
    "td.num{text-align:right}"
    ".evidence{background:#fff6f0;border-left:4px solid #a40;padding:6px 12px;font-size:13px}"
    ".worth li{font-size:13px;margin:3px 0}"
    "svg text{font-family:sans-serif}";

/* ===== the roofline ====================================================== */

#define W 760
#define H 460
#define ML 72  /* left margin: y tick labels */
#define MR 190 /* right margin: point labels */
#define MT 24
#define MB 52

typedef struct axes {
    double x0, x1, y0, y1; /* log10 bounds */
} axes;

/* What the plot holds: intensities from a nanoflop to a gigaflop per byte,
 * rates from 1 FLOP/s to 1e21 (a thousand exaflops). A point outside (a
 * median of a picosecond's fraction, a file's absurd ceiling) is left out
 * with a note rather than stretching the axes over hundreds of decades. */
#define X_MIN 1e-9
#define X_MAX 1e9
#define Y_MIN 1.0
#define Y_MAX 1e21

static int in_plot(double x, double y)
{
    return x >= X_MIN && x <= X_MAX && y >= Y_MIN && y <= Y_MAX;
}

/* Bounds a page can draw: finite, ordered, within the decades above. */
static int axes_ok(const axes *a)
{
    return isfinite(a->x0) && isfinite(a->x1) && isfinite(a->y0) && isfinite(a->y1) && a->x0 < a->x1 &&
           a->y0 < a->y1 && a->x0 >= log10(X_MIN) - 2 && a->x1 <= log10(X_MAX) + 2 && a->y0 >= log10(Y_MIN) - 2 &&
           a->y1 <= log10(Y_MAX) + 2;
}

static double px(const axes *a, double x)
{
    return ML + (log10(x) - a->x0) / (a->x1 - a->x0) * (W - ML - MR);
}

static double py(const axes *a, double y)
{
    return H - MB - (log10(y) - a->y0) / (a->y1 - a->y0) * (H - MT - MB);
}

/* "1", "100", "10k", "1G", "100T", "0.01". */
static void si(char *buf, size_t len, double v)
{
    static const char *pre[] = {"", "k", "M", "G", "T", "P", "E"};
    if (v < 1) {
        snprintf(buf, len, "%g", v);
        return;
    }
    int k = 0;
    while (v >= 1000 && k < 6) {
        v /= 1000;
        k++;
    }
    snprintf(buf, len, "%g%s", floor(v + 0.5), pre[k]);
}

typedef struct point {
    double x, y;       /* intensity, FLOP/s */
    int cand;          /* 1 candidate, 0 baseline */
    char label[96];
    char tip[256];
    double ly;         /* label position after spreading */
} point;

/* A shape's time is a speed where the verdict stands behind it (PASS, or
 * NOISY: correct and honestly timed); a REJECTED, WRONG or ERROR shape's
 * time is not plotted or judged, whatever it holds. */
static int has_speed(const kp_shape_result *sr)
{
    return sr->timed && (sr->verdict == KP_PASS || sr->verdict == KP_NOISY) && sr->cand.median > 0;
}

static int by_py(const void *a, const void *b)
{
    const point *p = (const point *)a, *q = (const point *)b;
    return p->ly < q->ly ? -1 : p->ly > q->ly;
}

static void line(FILE *f, const axes *a, double x0, double y0, double x1, double y1, const char *style)
{
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", px(a, x0), py(a, y0), px(a, x1),
            py(a, y1), style);
}

static void roofline(FILE *f, const kp_result *r, int idx)
{
    kp_ceilings c;
    kp_ceilings_for(r->op, &r->env, &c);
    int np = 0, left_out = 0;
    point *pts = (point *)calloc((size_t)(r->nshapes > 0 ? 2 * r->nshapes : 1), sizeof *pts);
    if (!pts)
        return;
    char cand[96];
    kp_candidate_label(r->candidate, cand, sizeof cand);
    for (int i = 0; r->shapes && i < r->nshapes; i++) {
        const kp_shape_result *sr = &r->shapes[i];
        if (!has_speed(sr))
            continue;
        kp_sol so;
        kp_sol_compute(r->op, &sr->shape, &c, &so);
        if (!(so.flops > 0 && so.bytes > 0))
            continue;
        char st[64];
        kp_shape_format(&sr->shape, st, sizeof st);
        for (int b = 0; b < 2; b++) {
            const kp_timing *t = b ? &sr->base : &sr->cand;
            if (b && (!sr->base_name[0] || !(t->median > 0)))
                continue;
            if (!in_plot(so.intensity, so.flops / t->median)) {
                left_out++;
                continue;
            }
            point *p = &pts[np++];
            p->x = so.intensity;
            p->y = so.flops / t->median;
            p->cand = !b;
            snprintf(p->label, sizeof p->label, "%s%s%.40s", st, b ? " " : "", b ? sr->base_name : "");
            char tm[32];
            kp_fmt_time(tm, sizeof tm, t->median, t->median);
            snprintf(p->tip, sizeof p->tip, "%s %s: %s, %.3g FLOP/B, %.4g TFLOP/s, %.0f GB/s", b ? sr->base_name : cand,
                     st, tm, so.intensity, p->y / 1e12, so.bytes / t->median / 1e9);
        }
    }
    /* Bounds: every point and every ceiling's corner, with room around. A
     * ceiling the plot cannot hold is not drawn. */
    double peak = c.peak_gflops * 1e9, bw = c.bw_gbs * 1e9, pbw = c.phys_bw_gbs * 1e9, gemm = c.gemm_gflops * 1e9;
    int dropped = 0;
    double *ceil_rates[4] = {&peak, &bw, &pbw, &gemm};
    for (int i = 0; i < 4; i++)
        if (!(isfinite(*ceil_rates[i]) && *ceil_rates[i] >= 0 && *ceil_rates[i] <= Y_MAX)) {
            *ceil_rates[i] = 0;
            dropped++;
        }
    if (peak > 0 && bw > 0 && !(peak / bw >= X_MIN && peak / bw <= X_MAX))
        peak = 0, dropped++;
    int is_mm = r->op && strcmp(r->op->family, "matmul") == 0;
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    for (int i = 0; i < np; i++) {
        xmin = fmin(xmin, pts[i].x);
        xmax = fmax(xmax, pts[i].x);
        ymin = fmin(ymin, pts[i].y);
        ymax = fmax(ymax, pts[i].y);
    }
    if (peak > 0 && bw > 0) {
        xmax = fmax(xmax, peak / bw);
        xmin = fmin(xmin, peak / bw);
    }
    if (!(xmax > 0)) {
        xmin = 0.1;
        xmax = 100;
    }
    ymax = fmax(ymax, fmax(peak, is_mm ? gemm : 0));
    if (bw > 0)
        ymin = fmin(ymin, bw * xmin);
    if (!(ymax > 0)) {
        ymin = 1e9;
        ymax = 1e12;
    }
    axes a = {floor(log10(xmin)) - 1, ceil(log10(xmax)) + 1, floor(log10(ymin)) - 0.5, ceil(log10(ymax)) + 0.3};
    if (a.x1 - a.x0 < 3)
        a.x1 = a.x0 + 3;
    if (a.y1 - a.y0 < 2)
        a.y0 = a.y1 - 2;
    if (!axes_ok(&a)) {
        fputs("<p class=\"meta\">no roofline: the result's ceilings and times give no axes to draw on</p>\n", f);
        free(pts);
        return;
    }
    double X0 = pow(10, a.x0), X1 = pow(10, a.x1);

    fprintf(f, "<svg class=\"roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"roofline\">\n",
            W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fbfbfb\" stroke=\"#999\"/>\n", ML, MT,
            W - ML - MR, H - MT - MB);
    /* Decade grid and tick labels. */
    /* axes_ok bounds both loops to a few dozen decades. */
    for (int k = (int)a.x0; k <= (int)a.x1; k++) {
        double x = pow(10, k), X = px(&a, x);
        char t[16];
        si(t, sizeof t, x);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e4e4e4\"/>\n", X, MT, X, H - MB);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" fill=\"#444\">%s</text>\n", X,
                H - MB + 15, t);
    }
    for (int k = (int)ceil(a.y0); k <= (int)floor(a.y1); k++) {
        double y = pow(10, k), Y = py(&a, y);
        char t[16];
        si(t, sizeof t, y);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", ML, Y, W - MR, Y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" fill=\"#444\">%s</text>\n", ML - 6,
                Y + 4, t);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\">arithmetic intensity "
               "(FLOP per byte of minimum traffic)</text>\n",
            (ML + W - MR) / 2, H - 14);
    fprintf(f, "<text x=\"16\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222\" "
               "transform=\"rotate(-90 16 %d)\">FLOP/s</text>\n",
            (MT + H - MB) / 2, (MT + H - MB) / 2);
    fprintf(f, "<clipPath id=\"plot%d\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/></clipPath>\n", idx, ML,
            MT, W - ML - MR, H - MT - MB);
    fprintf(f, "<g clip-path=\"url(#plot%d)\">\n", idx);
    /* Ceilings: the speed of light kproof uses (solid), the datasheet's
     * bandwidth (dashed) and the calibration's GEMM rate (dotted). */
    if (pbw > 0 && peak > 0 && (pbw != bw))
        line(f, &a, X0, pbw * X0, peak / pbw, peak, "stroke=\"#888\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"");
    if (bw > 0) {
        double xr = peak > 0 ? peak / bw : X1;
        line(f, &a, X0, bw * X0, xr, bw * xr, "class=\"ceil\" stroke=\"#222\" stroke-width=\"2.5\"");
    }
    if (peak > 0)
        line(f, &a, bw > 0 ? peak / bw : X0, peak, X1, peak, "class=\"ceil\" stroke=\"#222\" stroke-width=\"2.5\"");
    if (is_mm && gemm > 0)
        line(f, &a, X0, gemm, X1, gemm, "stroke=\"#2a7d2a\" stroke-width=\"1.5\" stroke-dasharray=\"2 3\"");
    fputs("</g>\n", f);
    /* Ceiling labels, inside the plot at the left. */
    int ly = MT + 14;
    if (bw > 0) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#222\">&#8212; speed of light: %s %.0f GB/s",
                ML + 8, ly, c.bw_measured ? "measured copy" : "datasheet", c.bw_gbs);
        if (peak > 0)
            fprintf(f, ", %.0f TFLOP/s%s", c.peak_gflops / 1e3, c.peak_measured ? " (1.3x measured GEMM)" : "");
        fputs("</text>\n", f);
        ly += 15;
    }
    if (pbw > 0 && pbw != bw) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#666\">- - datasheet HBM %.0f GB/s (", ML + 8, ly,
                c.phys_bw_gbs);
        ESCZ(f, c.limits->name);
        fputs(")</text>\n", f);
        ly += 15;
    }
    if (is_mm && gemm > 0) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#2a7d2a\">&#183;&#183;&#183; calibrated cuBLAS "
                   "GEMM %.0f TFLOP/s</text>\n",
                ML + 8, ly, c.gemm_gflops / 1e3);
        ly += 15;
    }
    if (bw <= 0 && peak <= 0) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#a40\">no ceilings for this device "
                   "(not in the limits table, no calibration)</text>\n",
                ML + 8, ly);
        ly += 15;
    }
    if (dropped) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#a40\">%d ceiling%s out of any device's "
                   "range not drawn</text>\n",
                ML + 8, ly, dropped, dropped == 1 ? "" : "s");
        ly += 15;
    }
    if (left_out)
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#a40\">%d point%s outside the plot's "
                   "range left out</text>\n",
                ML + 8, ly, left_out, left_out == 1 ? "" : "s");
    /* Points, then labels spread so they do not overlap. */
    for (int i = 0; i < np; i++) {
        point *p = &pts[i];
        double X = px(&a, p->x), Y = py(&a, p->y);
        p->ly = Y;
        if (p->cand)
            fprintf(f, "<circle class=\"pt cand\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"#1f77b4\" stroke=\"#0b3d66\">",
                    X, Y);
        else
            fprintf(f, "<rect class=\"pt base\" x=\"%.1f\" y=\"%.1f\" width=\"11\" height=\"11\" fill=\"#ff7f0e\" "
                       "stroke=\"#8a4200\">",
                    X - 5.5, Y - 5.5);
        fputs("<title>", f);
        ESC(f, p->tip);
        fputs(p->cand ? "</title></circle>\n" : "</title></rect>\n", f);
    }
    qsort(pts, (size_t)np, sizeof *pts, by_py);
    for (int i = 1; i < np; i++)
        if (pts[i].ly < pts[i - 1].ly + 13)
            pts[i].ly = pts[i - 1].ly + 13;
    double over = np ? pts[np - 1].ly - (H - MB - 4) : 0;
    for (int i = np - 1; over > 0 && i >= 0; i--) {
        pts[i].ly -= over;
        if (i > 0 && pts[i - 1].ly > pts[i].ly - 13)
            over = pts[i - 1].ly - (pts[i].ly - 13);
        else
            over = 0;
    }
    for (int i = 0; i < np; i++) {
        point *p = &pts[i];
        double X = px(&a, p->x), Y = py(&a, p->y);
        double lx = W - MR + 10;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"0.7\"/>\n",
                X + 7, Y, lx - 2, p->ly - 4, p->cand ? "#1f77b4" : "#ff7f0e");
        fprintf(f, "<text class=\"lbl\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">", lx, p->ly,
                p->cand ? "#0b3d66" : "#8a4200");
        ESC(f, p->label);
        fputs("</text>\n", f);
    }
    /* Legend under the labels' column head. */
    fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"#1f77b4\"/><text x=\"%d\" y=\"%d\" font-size=\"11\">",
            W - MR + 14, H - 30, W - MR + 24, H - 26);
    ESCZ(f, cand);
    fputs("</text>\n", f);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#ff7f0e\"/><text x=\"%d\" y=\"%d\" "
               "font-size=\"11\">baseline</text>\n",
            W - MR + 9, H - 18, W - MR + 24, H - 9);
    fputs("</svg>\n", f);
    free(pts);
}

/* ===== sections ========================================================== */

static void result_section(FILE *f, const kp_result *r, const char *path, int idx)
{
    char cand[96];
    kp_candidate_label(r->candidate, cand, sizeof cand);
    const char *vn = kp_verdict_name(r->verdict);
    fprintf(f, "<section class=\"result\" id=\"r%d\">\n<h2><span class=\"v v-%s\">%s</span> ", idx, vn, vn);
    ESCZ(f, cand);
    fprintf(f, " &#183; %s &#183; ", r->op ? r->op->name : "?");
    ESC(f, r->env.gpu);
    fputs("</h2>\n<p class=\"meta\">", f);
    if (path) {
        fputs("file <code>", f);
        ESCZ(f, path);
        fputs("</code> &#183; ", f);
    }
    fputs("candidate <code>", f);
    ESC(f, r->candidate);
    fprintf(f, "</code> &#183; backend %s &#183; protocol ", kp_backend_name(r->backend));
    ESC(f, r->protocol);
    fputs(" &#183; ", f);
    ESC(f, r->env.date);
    fprintf(f, " &#183; seed %llu</p>\n", (unsigned long long)r->seed);

    /* Evidence: the headline, every shape that did not pass, warnings. */
    int bad = 0;
    for (int i = 0; r->shapes && i < r->nshapes; i++)
        bad += r->shapes[i].verdict != KP_PASS;
    if (r->detail[0] || bad || r->nwarn > 0) {
        fputs("<div class=\"evidence\">\n", f);
        if (r->detail[0]) {
            fputs("<p><b>", f);
            ESC(f, r->check_name);
            fputs("</b> ", f);
            ESC(f, r->detail);
            fputs("</p>\n", f);
        }
        for (int i = 0; r->shapes && i < r->nshapes; i++) {
            const kp_shape_result *sr = &r->shapes[i];
            if (sr->verdict == KP_PASS)
                continue;
            char st[64];
            kp_shape_format(&sr->shape, st, sizeof st);
            /* The headline is often this shape's evidence already. */
            if (r->detail[0] && sr->detail[0] && strstr(r->detail, sr->detail) && strstr(r->detail, st))
                continue;
            fprintf(f, "<p><b>%s</b> at %s: ", kp_verdict_name(sr->verdict), st);
            ESC(f, sr->check_name);
            fputs(": ", f);
            ESC(f, sr->detail);
            fputs("</p>\n", f);
        }
        int nw = r->nwarn < 8 ? r->nwarn : 8;
        for (int i = 0; i < nw; i++) {
            fputs("<p>warning: ", f);
            ESC(f, r->warn[i]);
            fputs("</p>\n", f);
        }
        fputs("</div>\n", f);
    }

    char head[KP_REPORT_NCOLS][KP_REPORT_CELL], cells[KP_REPORT_NCOLS][KP_REPORT_CELL];
    kp_report_titles(r, head);
    fputs("<table class=\"shapes\">\n<tr>", f);
    for (int c = 0; c < KP_REPORT_NCOLS; c++) {
        fputs("<th>", f);
        ESC(f, head[c]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (int i = 0; r->shapes && i < r->nshapes; i++) {
        const kp_shape_result *sr = &r->shapes[i];
        kp_report_row(r, sr, cells);
        /* A shape the verdict disowns has no time to show: its check
         * instead (the evidence above says why). */
        if (sr->verdict != KP_PASS && sr->verdict != KP_NOISY) {
            for (int c = 3; c < KP_REPORT_NCOLS; c++)
                if (strcmp(head[c], "regime") != 0)
                    snprintf(cells[c], sizeof cells[c], "-");
            snprintf(cells[3], sizeof cells[3], "no time (%.*s check)", (int)sizeof sr->check_name,
                     sr->check_name[0] ? sr->check_name : "?");
        }
        fputs("<tr>", f);
        for (int c = 0; c < KP_REPORT_NCOLS; c++) {
            fputs(c >= 3 && c < KP_REPORT_NCOLS - 2 ? "<td class=\"num\">" : "<td>", f);
            if (c == 2)
                fprintf(f, "<span class=\"v v-%s\">", cells[c]);
            ESC(f, cells[c]);
            fputs(c == 2 ? "</span></td>" : "</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);

    roofline(f, r, idx);

    /* One sentence per timed shape, at the best time the result holds. */
    kp_ceilings c;
    kp_ceilings_for(r->op, &r->env, &c);
    fputs("<ul class=\"worth\">\n", f);
    for (int i = 0; r->shapes && i < r->nshapes; i++) {
        const kp_shape_result *sr = &r->shapes[i];
        if (sr->verdict != KP_PASS && sr->verdict != KP_NOISY) {
            char st[64];
            kp_shape_format(&sr->shape, st, sizeof st);
            fprintf(f, "<li>%s %s: %s by the ", r->op ? r->op->name : "?", st, kp_verdict_name(sr->verdict));
            ESC(f, sr->check_name);
            fputs(" check: no time of it is a speed, nothing to judge.</li>\n", f);
            continue;
        }
        if (!has_speed(sr))
            continue;
        double best = sr->cand.median;
        const char *who = cand;
        if (sr->base_name[0] && sr->base.median > 0 && sr->base.median < best) {
            best = sr->base.median;
            who = sr->base_name;
        }
        kp_worth w;
        kp_worth_judge(r->op, &sr->shape, &c, best, who, 0, 0, NULL, &w);
        fputs("<li>", f);
        ESC(f, w.sentence);
        fputs("</li>\n", f);
    }
    fputs("</ul>\n</section>\n", f);
}

void kp_print_html(FILE *f, const kp_result *const *rs, const char *const *paths, int n)
{
    if (!f)
        return;
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<title>kproof report</title>\n<style>%s</style>\n</head>\n<body>\n",
            CSS);
    fprintf(f, "<h1>kproof report</h1>\n<p class=\"meta\">%d result%s &#183; kproof %s &#183; speed of light, "
               "headroom and regime from the device's calibration and datasheet limits (docs/worth-it.md)</p>\n",
            n, n == 1 ? "" : "s", KP_VERSION);
    if (n > 1) {
        fputs("<table class=\"index\">\n<tr><th>#</th><th>verdict</th><th>op</th><th>candidate</th><th>device</th>"
              "<th>date</th></tr>\n",
              f);
        for (int i = 0; i < n; i++) {
            const kp_result *r = rs[i];
            const char *vn = kp_verdict_name(r->verdict);
            fprintf(f, "<tr><td><a href=\"#r%d\">%d</a></td><td><span class=\"v v-%s\">%s</span></td><td>%s</td><td>", i,
                    i + 1, vn, vn, r->op ? r->op->name : "?");
            ESC(f, r->candidate);
            fputs("</td><td>", f);
            ESC(f, r->env.gpu);
            fputs("</td><td>", f);
            ESC(f, r->env.date);
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    for (int i = 0; i < n; i++)
        if (rs[i])
            result_section(f, rs[i], paths ? paths[i] : NULL, i);
    fputs("</body>\n</html>\n", f);
}
