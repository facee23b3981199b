/* demo.c: kproof demo. The project's honest kernels and the exploit corpus
 * go through the naive protocol, each of its five flaws alone, and the
 * rigorous protocol; the matrix shows what each flaw lets through.
 *
 * Rows: honest kernels first, then every exploit of the backend (read from
 * the header every exploit file carries: op, the flaw it fools, the check
 * that catches it, the verdict expected). Columns: modes. Cells: the claimed
 * speedup (or PASS when there is no baseline) where the mode believed the
 * candidate, else the verdict and the check that decided. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/common.h"
#include "cli/demo.h"
#include "core/host_api.h"
#include "kproof/backends.h"
#include "proc/cleanup.h"
#include "proc/sandbox.h"

#define MAX_ROWS 64
#define NMODES (KP_NFLAWS + 2)

typedef struct row {
    char path[PATH_MAX];
    char name[64];
    char op[32];
    char fools[32];
    char caught[32];
    char expect[16];
    int exploit;
    char cell[NMODES][48];
    kp_verdict v[NMODES];
    double speedup[NMODES];
    double wall[NMODES];              /* seconds this cell took */
    double phase[NMODES][KP_NPHASES]; /* and where they went */
    double lock[NMODES][2];           /* device lock: waited, held */
    double held[NMODES][KP_NPHASES];  /* held, by phase */
    int pattern;                      /* an honest pattern beside the cheats: rigorous column only */
} row;

static const char *mode_name(int m) {
    if (m == 0) return "naive";
    if (m == NMODES - 1) return "rigorous";
    return kp_flaw_name(1 << (m - 1));
}

/* Progress lines on stderr: on a terminal each overwrites the last; into
 * a file or a pipe each is its own line, so a log stays readable. */
static int stderr_tty(void) {
    static int tty = -1;
    if (tty < 0) tty = isatty(STDERR_FILENO);
    return tty;
}

static void progress(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (stderr_tty()) fputc('\r', stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc(stderr_tty() ? ' ' : '\n', stderr);
}

static int mode_flaws(int m) {
    if (m == 0) return KP_FLAW_ALL;
    if (m == NMODES - 1) return 0;
    return 1 << (m - 1);
}

/* Reads "* key: value" from the header comment of an exploit file. */
static void header_field(const char *text, const char *key, char *out, size_t len) {
    out[0] = 0;
    char pat[48];
    snprintf(pat, sizeof pat, " %s:", key);
    const char *p = strstr(text, pat);
    if (!p) return;
    p += strlen(pat);
    while (*p == ' ') p++;
    size_t i = 0;
    while (p[i] && p[i] != '\n' && p[i] != ' ' && i + 1 < len) {
        out[i] = p[i];
        i++;
    }
    out[i] = 0;
}

static int read_exploit(row *r) {
    char *text = kp_first_comment(r->path);
    if (text && strstr(text, "kproof honest:")) {
        /* An honest pattern kept beside the cheats: it must PASS. */
        header_field(text, "kproof honest", r->name, sizeof r->name);
        header_field(text, "op", r->op, sizeof r->op);
        free(text);
        char name[sizeof r->name];
        snprintf(name, sizeof name, "honest/%s", r->name);
        snprintf(r->name, sizeof r->name, "%s", name);
        r->exploit = 0;
        r->pattern = 1;
        return r->op[0] ? 0 : -1;
    }
    if (!text || !strstr(text, "kproof exploit:")) {
        free(text);
        return -1;
    }
    header_field(text, "kproof exploit", r->name, sizeof r->name);
    header_field(text, "op", r->op, sizeof r->op);
    header_field(text, "fools", r->fools, sizeof r->fools);
    header_field(text, "caught-by", r->caught, sizeof r->caught);
    header_field(text, "expect", r->expect, sizeof r->expect);
    free(text);
    r->exploit = 1;
    return r->op[0] ? 0 : -1;
}

/* The device facts and the cached calibration, read once for all cells. */
static int demo_env(kp_backend be, const char *root, const char *cache, kp_env *e) {
    kp_wk *w = NULL;
    char err[600] = "";
    kp_calib_rep c;
    int measured = 0;
    /* calibration measures, and every row runs on the device: nobody else
     * on it, or nothing at all */
    if (kp_devlock_open_backend(be)) {
        fprintf(stderr, "kproof demo: %s\n", kp_devlock_error());
        return -1;
    }
    if (kp_trusted_start(be, root, cache, &w, err, sizeof err) ||
        kp_device_facts(w, cache, 0, e, &c, &measured, err, sizeof err)) {
        fprintf(stderr, "kproof demo: %s\n", err);
        if (w) kp_wk_stop(w);
        return -1;
    }
    if (measured) fprintf(stderr, "[demo] measured %s's peaks once (cached)\n", e->gpu);
    /* The rows cannot measure them again before a speed-of-light verdict,
     * as kproof eval does: cached peaks are measured again here, once, the
     * higher of each kept (a cache from a busy moment is too low). */
    else if (kp_device_remeasure(w, cache, e, &c, err, sizeof err) < 0)
        fprintf(stderr, "[demo] measuring the peaks again failed (%s): the cached ones stand\n", err);
    e->peak_gbs = c.copy_gbs;
    e->peak_gflops_f32 = c.gemm_f32_gflops;
    e->peak_gflops_bf16 = c.gemm_bf16_gflops;
    kp_now_iso(e->date, sizeof e->date);
    kp_wk_stop(w);
    return 0;
}

/* Medium shapes on the GPU so the demo stays short; the op's quick set on
 * the host. Edge and drawn shapes are added by the protocol as usual. */
static int demo_shape(const kp_op *op, kp_backend be, kp_shape *s) {
    if (!kp_backend_get(be)->demo_medium_shapes) return 0;
    memset(s, 0, sizeof *s);
    s->nd = op->nd;
    if (!strcmp(op->family, "matmul")) s->d[0] = s->d[1] = s->d[2] = 2048;
    else if (!strcmp(op->family, "sum")) s->d[0] = 1 << 24;
    else s->d[0] = s->d[1] = 4096;
    return 1;
}

static void cell_text(row *r, int m, const kp_result *res) {
    r->v[m] = res->verdict;
    double best = 0;
    int timed = 0;
    for (int i = 0; i < res->nshapes; i++)
        if (res->shapes[i].timed) {
            timed = 1;
            if (res->shapes[i].speedup > best) best = res->shapes[i].speedup;
        }
    r->speedup[m] = best;
    if (res->verdict == KP_PASS || res->verdict == KP_NOISY) {
        if (best > 0) snprintf(r->cell[m], sizeof r->cell[m], "%.2fx%s", best, res->verdict == KP_NOISY ? "~" : "");
        else snprintf(r->cell[m], sizeof r->cell[m], "%s", timed ? "PASS" : "PASS (untimed)");
    } else {
        static const char *shortv[] = {"PASS", "WRONG", "REJECTED", "ERROR", "NOISY"};
        snprintf(r->cell[m], sizeof r->cell[m], "%s:%s", shortv[res->verdict], res->check_name);
    }
}

/* --only takes a comma list of substrings of a row's name or file. */
static int wanted(const char *filter, const char *a, const char *b) {
    if (!filter) return 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", filter);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
        if (strstr(a, tok) || (b && strstr(b, tok))) return 1;
    return 0;
}

static int believed(kp_verdict v) { return v == KP_PASS || v == KP_NOISY; }

/* Set when a --json or --md file could not be written: the run then ends
 * with 70, whatever its verdicts. */
static int write_failed;

/* Can path be written? Checked before a run of minutes, not after it; a
 * file this creates is removed again (the run writes it later). */
static int writable(const char *flag, const char *path) {
    struct stat st;
    const int existed = stat(path, &st) == 0;
    if (existed && !S_ISREG(st.st_mode)) {
        fprintf(stderr, "kproof demo: %s %s is not a regular file\n", flag, path);
        return 0;
    }
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "kproof demo: cannot write %s %s: %s\n", flag, path, strerror(errno));
        return 0;
    }
    fclose(f);
    if (!existed) unlink(path);
    return 1;
}

/* Where the rows' candidates ran: every missing defence named. */
static void print_sandbox(FILE *f, int as_json) {
    kp_sb_probe();
    unsigned m = kp_sb_missing();
    if (as_json) {
        fprintf(f, ", \"sandbox\": {\"state\": \"%s\", \"missing\": [", !kp_sb_enabled() ? "off" : m ? "partial" : "complete");
        int first = 1;
        for (unsigned b = 1; b & KP_SBD_ALL; b <<= 1)
            if (m & b) fprintf(f, "%s\"%s\"", first ? "" : ", ", kp_sb_defence_name(b)), first = 0;
        fprintf(f, "]}");
        return;
    }
    if (!m) {
        fprintf(f, "sandbox: complete (user, pid, network, mount and ipc namespaces, seccomp, no_new_privs, rlimits)\n");
        return;
    }
    fprintf(f, "sandbox: NOT SANDBOXED in full, missing:");
    for (unsigned b = 1; b & KP_SBD_ALL; b <<= 1)
        if (m & b) fprintf(f, " %s (%s);", kp_sb_defence_name(b), kp_sb_defence_gap(b));
    fprintf(f, "\n");
}

static int runs_in(const row *r, int m);

static void print_matrix(FILE *f, row *rows, int nr, int md) {
    if (md) {
        fprintf(f, "| candidate | op |");
        for (int m = 0; m < NMODES; m++) fprintf(f, " %s |", mode_name(m));
        fprintf(f, " expected |\n| --- | --- |");
        for (int m = 0; m < NMODES; m++) fprintf(f, " --- |");
        fprintf(f, " --- |\n");
        for (int i = 0; i < nr; i++) {
            fprintf(f, "| %s%s%s | %s |", rows[i].exploit ? "" : "**", rows[i].name, rows[i].exploit ? "" : "**", rows[i].op);
            for (int m = 0; m < NMODES; m++)
                fprintf(f, " %s |", rows[i].cell[m][0] ? rows[i].cell[m] : runs_in(&rows[i], m) ? "not run" : "-");
            if (rows[i].exploit) fprintf(f, " fools %s; %s by %s |\n", rows[i].fools, rows[i].expect, rows[i].caught);
            else fprintf(f, " honest: PASS |\n");
        }
        return;
    }
    fprintf(f, "%-26s %-15s", "candidate", "op");
    for (int m = 0; m < NMODES; m++) fprintf(f, " %-17s", mode_name(m));
    fprintf(f, "\n");
    for (int i = 0; i < nr; i++) {
        fprintf(f, "%-26.26s %-15.15s", rows[i].name, rows[i].op);
        for (int m = 0; m < NMODES; m++) fprintf(f, " %-17.17s", rows[i].cell[m]);
        fprintf(f, "\n");
    }
}

/* Which columns a row runs in. An honest pattern is a false-positive test:
 * the rigorous column only. A cheat that fools no flaw (resource abuse:
 * hang, crash, flood, ...) meets guards that no flaw switches off, so its
 * flaw columns would repeat the rigorous one: naive and rigorous only. */
static int runs_in(const row *r, int m) {
    if (r->pattern) return m == NMODES - 1;
    if (r->exploit && !strcmp(r->fools, "none")) return m == 0 || m == NMODES - 1;
    return 1;
}

static int reading(FILE *f, row *rows, int nr, const char *pre) {
    int problems = 0, caught = 0, fooled = 0, nexp = 0, honest_ok = 0, nhonest = 0, unfinished = 0;
    for (int i = 0; i < nr; i++) {
        row *r = &rows[i];
        int ran = 1;
        for (int m = 0; m < NMODES; m++) ran &= r->cell[m][0] != 0;
        if (!ran) { /* a run cut short: judge only finished rows */
            unfinished++;
            continue;
        }
        if (!r->exploit) {
            nhonest++;
            if (believed(r->v[NMODES - 1])) honest_ok++;
            else {
                problems++;
                if (f) fprintf(f, "%s- FALSE POSITIVE: the honest kernel %s got %s in rigorous mode\n", pre, r->name,
                        r->cell[NMODES - 1]);
            }
            continue;
        }
        nexp++;
        /* Caught means the verdict and the check its header names: an
         * ERROR from a harness failure is not a catch. */
        char want[80];
        snprintf(want, sizeof want, "%s:%s", r->expect, r->caught);
        if (believed(r->v[NMODES - 1])) {
            problems++;
            if (f) fprintf(f, "%s- MISSED: exploit %s passed the rigorous mode (%s)\n", pre, r->name, r->cell[NMODES - 1]);
        } else if (strcmp(r->cell[NMODES - 1], want) != 0) {
            problems++;
            if (f)
                fprintf(f, "%s- UNEXPECTED: exploit %s got %s in the rigorous mode; its header says %s\n", pre, r->name,
                        r->cell[NMODES - 1], want);
        } else {
            caught++;
        }
        int any = 0;
        for (int m = 1; m < NMODES - 1; m++)
            if (runs_in(r, m) && believed(r->v[m])) any = 1;
        if (any) fooled++;
        else if (strcmp(r->fools, "none") != 0) {
            problems++;
            if (f) fprintf(f, "%s- BROKEN EXPLOIT: %s fooled no single-flaw mode (it should fool '%s')\n", pre, r->name,
                    r->fools);
        }
    }
    if (!f) return problems;
    if (unfinished) fprintf(f, "%s(%d row(s) not finished: not counted below)\n", pre, unfinished);
    fprintf(f, "%sReading: the rigorous mode caught %d of %d exploits with the check their headers name and passed %d of %d honest kernels; "
               "%d exploits fooled at least one single-flaw mode.\n",
            pre, caught, nexp, honest_ok, nhonest, fooled);
    fprintf(f, "%sA cell with a speedup is a mode that believed the candidate: its claimed speedup over the "
               "baseline that mode uses (\"~\": timing still noisy).\n",
            pre);
    fprintf(f, "%sEach column names the one flaw switched on; naive has all five, rigorous none.\n", pre);
    return problems;
}

/* Evaluations: those finished so far (a cell that runs and has its text),
 * or all that run. */
static int count_cells(row *rows, int nr, int finished) {
    int cells = 0;
    for (int i = 0; i < nr; i++)
        for (int m = 0; m < NMODES; m++) cells += runs_in(&rows[i], m) && (!finished || rows[i].cell[m][0] != 0);
    return cells;
}

/* The markdown and JSON files, rewritten after every row: a run cut short
 * keeps every row it finished, and says how long the demo had run. */
static void write_files(const char *mdfile, const char *json, const kp_env *env, kp_backend be, row *rows, int nr,
                        int complete, double wall_s) {
    int problems = reading(NULL, rows, nr, "");
    char tmp[PATH_MAX + 32], why[200] = "";
    if (mdfile) {
        FILE *f = kp_cli_atomic_open(mdfile, tmp, sizeof tmp, why, sizeof why);
        if (f) {
            fprintf(f, "kproof demo on %s (%s backend), %s\n\n", env->gpu, kp_backend_name(be), env->date);
            if (!complete)
                fprintf(f, "(cut short: %d of %d evaluations finished)\n\n", count_cells(rows, nr, 1), count_cells(rows, nr, 0));
            print_matrix(f, rows, nr, 1);
            fprintf(f, "\n");
            reading(f, rows, nr, "");
            fprintf(f, "\n");
            print_sandbox(f, 0);
            fprintf(f, "\n%d evaluations in %.0f s\n", count_cells(rows, nr, 1), wall_s);
        }
        if (!f || kp_cli_atomic_close(f, tmp, mdfile, why, sizeof why)) {
            fprintf(stderr, "kproof demo: cannot write %s: %s\n", mdfile, why);
            write_failed = 1;
        }
    }
    if (json) {
        FILE *f = kp_cli_atomic_open(json, tmp, sizeof tmp, why, sizeof why);
        if (f) {
            fprintf(f, "{\"schema\": %d, \"tool\": \"kproof demo\", \"backend\": \"%s\", \"gpu\": ", KP_SCHEMA_VERSION,
                    kp_backend_name(be));
            kp_json_str(f, env->gpu);
            print_sandbox(f, 1);
            fprintf(f, ", \"modes\": [");
            for (int m = 0; m < NMODES; m++) fprintf(f, "%s\"%s\"", m ? ", " : "", mode_name(m));
            fprintf(f, "], \"rows\": [");
            for (int i = 0; i < nr; i++) {
                fprintf(f, "%s\n {\"name\": ", i ? "," : "");
                kp_json_str(f, rows[i].name);
                fprintf(f, ", \"op\": \"%s\", \"exploit\": %s, \"fools\": \"%s\", \"caught_by\": \"%s\", "
                           "\"expect\": \"%s\", \"cells\": [",
                        rows[i].op, rows[i].exploit ? "true" : "false", rows[i].fools, rows[i].caught, rows[i].expect);
                for (int m = 0; m < NMODES; m++) {
                    /* Only a cell that ran has a verdict: one this mode
                     * skips by design is "skipped", one a run cut short
                     * never reached is "not run". */
                    const char *state = !runs_in(&rows[i], m) ? "skipped" : rows[i].cell[m][0] ? "done" : "not run";
                    if (strcmp(state, "done") != 0)
                        fprintf(f, "%s{\"verdict\": null, \"state\": \"%s\", \"text\": ", m ? ", " : "", state);
                    else
                        fprintf(f, "%s{\"verdict\": \"%s\", \"state\": \"done\", \"text\": ", m ? ", " : "",
                                kp_verdict_name(rows[i].v[m]));
                    kp_json_str(f, rows[i].cell[m]);
                    fprintf(f, ", \"speedup\": %.6g, \"wall_s\": %.3f, \"phase_s\": {", rows[i].speedup[m], rows[i].wall[m]);
                    for (int ph = 0; ph < KP_NPHASES; ph++)
                        fprintf(f, "%s\"%s\": %.3f", ph ? ", " : "", kp_phase_name(ph), rows[i].phase[m][ph]);
                    fprintf(f, "}, \"device_lock\": {\"wait_s\": %.3f, \"held_s\": %.3f, \"held_phase_s\": {",
                            rows[i].lock[m][0], rows[i].lock[m][1]);
                    for (int ph = 0; ph < KP_NPHASES; ph++)
                        fprintf(f, "%s\"%s\": %.3f", ph ? ", " : "", kp_phase_name(ph), rows[i].held[m][ph]);
                    fprintf(f, "}}}");
                }
                fprintf(f, "]}");
            }
            fprintf(f, "\n], \"complete\": %s, \"problems\": %d, \"evaluations\": %d, \"wall_s\": %.1f}\n",
                    complete ? "true" : "false", problems, count_cells(rows, nr, 1), wall_s);
        }
        if (!f || kp_cli_atomic_close(f, tmp, json, why, sizeof why)) {
            fprintf(stderr, "kproof demo: cannot write %s: %s\n", json, why);
            write_failed = 1;
        }
    }
}

typedef struct demo_cfg {
    kp_backend be;
    const char *root, *cache;
    const kp_env *env;
    double budget;
} demo_cfg;

/* One cell: row r through mode m. */
static void run_cell(const demo_cfg *g, row *r, int m) {
    /* An honest pattern is a false-positive test: it has nothing to show
     * in the naive columns, and the demo's time goes where it shows. */
    if (!runs_in(r, m)) {
        r->v[m] = KP_PASS;
        snprintf(r->cell[m], sizeof r->cell[m], "-");
        return;
    }
    const kp_op *op = kp_op_resolve(r->op, NULL);
    if (!op) {
        snprintf(r->cell[m], sizeof r->cell[m], "unknown op");
        r->v[m] = KP_ERROR;
        return;
    }
    kp_eval_opts o;
    kp_eval_opts_default(&o);
    o.backend = g->be;
    o.root = g->root;
    o.cache_dir = g->cache;
    o.candidate = r->path;
    o.op = op;
    o.flaws = mode_flaws(m);
    o.progress = 0;
    o.env_hint = g->env;
    /* Per call. The hang row waits this out in every column (flood is
     * killed once it has printed 64 MiB, in well under a second), and
     * on a GPU that wait holds the device lock: short on cuda, where the
     * slowest honest call in the demo (the naive matmul at 2048^3, a batch
     * of the parent clock) takes well under a second, and a held stream
     * gives up after KP_BLOCK_TIMEOUT_S. */
    const kp_backend_info *bi = kp_backend_get(g->be);
    o.timeout_s = bi->demo_timeout_s;
    o.stop.budget_s = g->budget > 0 ? g->budget : bi->demo_budget_s;
    o.stop.min_samples = 5;
    o.stop.target = 0.03;
    /* A demo, not a benchmark: 8 rotating sets, one baseline, and edge and
     * drawn shapes up to 256K elements on the CPU, 4M on a GPU (the float64
     * references of the largest edge shapes were most of a GPU demo's time
     * on the H200), keep 180-odd evaluations in minutes. `kproof eval`
     * runs every shape. */
    o.nsets = 8;
    o.max_sets = 8;
    /* One baseline: the library or the project's best in rigorous columns,
     * the naive kernel under weak-base. */
    o.max_baselines = 1;
    o.max_elems = bi->demo_max_elems;
    kp_shape s;
    if (demo_shape(op, g->be, &s)) {
        o.shapes[0] = s;
        o.nshapes = 1;
        o.user_shapes_plus = 1;
    }
    kp_result res;
    char err[512] = "";
    if (kp_eval(&o, &res, err, sizeof err)) {
        snprintf(r->cell[m], sizeof r->cell[m], "harness: %.36s", err);
        r->v[m] = KP_ERROR;
    } else {
        cell_text(r, m, &res);
    }
    r->wall[m] = res.wall_s;
    for (int ph = 0; ph < KP_NPHASES; ph++) r->phase[m][ph] = res.phase_s[ph];
    r->lock[m][0] = res.lock_wait_s;
    r->lock[m][1] = res.lock_held_s;
    for (int ph = 0; ph < KP_NPHASES; ph++) r->held[m][ph] = res.lock_held_phase_s[ph];
    kp_result_free(&res);
}

/* Rows side by side on a GPU: each row in its own process; the device lock
 * (src/proc/devlock.c) keeps every worker exchange and every timing phase
 * to one process at a time, so what overlaps is the parent's CPU work
 * (inputs, float64 references, checks) and nothing that is timed. On the
 * host backend the CPU is the device: rows run one at a time there. */
static int default_jobs(void) {
    int cores = kp_cores();
    int j = cores >= 8 ? cores / 4 : 1;
    return j > 4 ? 4 : j;
}

typedef struct cell_rec { /* one finished cell, child to parent (< PIPE_BUF: one atomic write) */
    int row, mode, verdict;
    double speedup, wall, phase[KP_NPHASES], lock[2], held[KP_NPHASES];
    char text[48];
} cell_rec;

/* One cell record from the pipe into its row: only for a row in flight
 * and a cell not yet filled. Returns the row, -1 for a record refused,
 * -2 when nothing whole could be read. */
static int take_rec(int fd, row *rows, int nr, const pid_t *pid, int *got) {
    cell_rec c;
    if (read(fd, &c, sizeof c) != (ssize_t)sizeof c) return -2;
    if (c.row < 0 || c.row >= nr || pid[c.row] <= 0 || c.mode < 0 || c.mode >= NMODES || rows[c.row].cell[c.mode][0])
        return -1;
    row *r = &rows[c.row];
    if (c.verdict < KP_PASS || c.verdict > KP_NOISY) c.verdict = KP_ERROR;
    r->v[c.mode] = (kp_verdict)c.verdict;
    r->speedup[c.mode] = c.speedup;
    r->wall[c.mode] = c.wall;
    memcpy(r->phase[c.mode], c.phase, sizeof c.phase);
    memcpy(r->lock[c.mode], c.lock, sizeof c.lock);
    memcpy(r->held[c.mode], c.held, sizeof c.held);
    memcpy(r->cell[c.mode], c.text, sizeof c.text);
    r->cell[c.mode][sizeof r->cell[c.mode] - 1] = 0;
    if (!r->cell[c.mode][0]) snprintf(r->cell[c.mode], sizeof r->cell[c.mode], "?");
    got[c.row]++;
    return c.row;
}

static void run_parallel(const demo_cfg *g, row *rows, int nr, int jobs, const char *mdfile, const char *json,
                         double t0) {
    /* Close-on-exec: workers (the candidates' code) and compilers started
     * by the children must not inherit the write end and forge cells. */
    int fds[2];
    if (pipe(fds) || fcntl(fds[0], F_SETFD, FD_CLOEXEC) || fcntl(fds[1], F_SETFD, FD_CLOEXEC)) {
        fprintf(stderr, "[demo] no pipe (%s): rows one at a time\n", strerror(errno));
        for (int i = 0; i < nr; i++)
            for (int m = 0; m < NMODES; m++) run_cell(g, &rows[i], m);
        return;
    }
    pid_t pid[MAX_ROWS];
    int got[MAX_ROWS] = {0}, next = 0, running = 0, done = 0, rows_done = 0, total = 0;
    for (int i = 0; i < nr; i++)
        for (int m = 0; m < NMODES; m++) total += runs_in(&rows[i], m);
    for (int i = 0; i < nr; i++) pid[i] = 0;
    while (rows_done < nr) {
        while (running < jobs && next < nr) {
            fflush(stdout);
            fflush(stderr);
            pid_t demo = getpid();
            pid_t p = fork();
            if (p == 0) {
                /* A row outlives no demo: its SIGTERM handler then kills
                 * the row's workers and removes their folders. */
                kp_die_with_parent(demo, SIGTERM);
                close(fds[0]);
                for (int m = 0; m < NMODES; m++) {
                    run_cell(g, &rows[next], m);
                    cell_rec c;
                    memset(&c, 0, sizeof c);
                    c.row = next, c.mode = m, c.verdict = rows[next].v[m];
                    c.speedup = rows[next].speedup[m], c.wall = rows[next].wall[m];
                    memcpy(c.phase, rows[next].phase[m], sizeof c.phase);
                    memcpy(c.lock, rows[next].lock[m], sizeof c.lock);
                    memcpy(c.held, rows[next].held[m], sizeof c.held);
                    memcpy(c.text, rows[next].cell[m], sizeof c.text);
                    if (write(fds[1], &c, sizeof c) != (ssize_t)sizeof c) _exit(3);
                }
                _exit(0);
            }
            if (p < 0) { /* no process: this row here, in the parent */
                for (int m = 0; m < NMODES; m++) run_cell(g, &rows[next], m);
                got[next] = NMODES;
                rows_done++;
                for (int m = 0; m < NMODES; m++) done += runs_in(&rows[next], m);
                next++;
                continue;
            }
            pid[next++] = p;
            running++;
        }
        struct pollfd pf = {fds[0], POLLIN, 0};
        if (poll(&pf, 1, 500) > 0) {
            int r = take_rec(fds[0], rows, nr, pid, got);
            if (r >= 0) {
                int ran = 0; /* the cells that ran and came back (skipped ones come back too) */
                for (int i = 0; i < nr; i++)
                    for (int m = 0; m < NMODES; m++) ran += runs_in(&rows[i], m) && rows[i].cell[m][0];
                if (ran > done) {
                    done = ran;
                    progress("[demo] %3d/%d  %-28.28s %5.0f s", done, total, rows[r].name, kp_wall_s() - t0);
                }
            }
        }
        /* Reap finished rows; a row whose process died keeps what it sent. */
        for (int i = 0; i < next; i++) {
            int st;
            if (pid[i] <= 0 || waitpid(pid[i], &st, WNOHANG) != pid[i]) continue;
            /* Drain what it wrote before leaving. */
            struct pollfd pf2 = {fds[0], POLLIN, 0};
            int r;
            while (got[i] < NMODES && poll(&pf2, 1, 0) > 0 && (r = take_rec(fds[0], rows, nr, pid, got)) != -2)
                if (r >= 0) done++;
            pid[i] = 0;
            running--;
            rows_done++;
            if (got[i] < NMODES) {
                for (int m = 0; m < NMODES; m++)
                    if (!rows[i].cell[m][0]) {
                        snprintf(rows[i].cell[m], sizeof rows[i].cell[m], "harness: demo process died");
                        rows[i].v[m] = KP_ERROR;
                    }
                done += NMODES - got[i];
            }
            write_files(mdfile, json, g->env, g->be, rows, nr, 0, kp_wall_s() - t0);
        }
    }
    close(fds[0]);
    close(fds[1]);
}

int kp_cli_demo(int argc, char **argv) {
    const char *backend = NULL, *json = NULL, *mdfile = NULL, *filter = NULL;
    double budget = -1;
    int jobs = 0;
    for (int i = 0; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--backend") && v) backend = argv[++i];
        else if (!strcmp(argv[i], "--json") && v) json = argv[++i];
        else if (!strcmp(argv[i], "--md") && v) mdfile = argv[++i];
        else if (!strcmp(argv[i], "--only") && v) filter = argv[++i];
        else if (!strcmp(argv[i], "--jobs") && v) {
            uint64_t j;
            if (kp_cli_parse_u64("--jobs", argv[++i], &j)) return KP_EXIT_USAGE;
            if (j < 1 || j > 16) {
                fprintf(stderr, "kproof demo: --jobs expects 1 to 16, got %s\n", argv[i]);
                return KP_EXIT_USAGE;
            }
            jobs = (int)j;
        } else if (!strcmp(argv[i], "--time-budget") && v) {
            if (kp_cli_parse_double("--time-budget", argv[++i], 0.01, 600, &budget)) return KP_EXIT_USAGE;
        } else if (!v && (!strcmp(argv[i], "--backend") || !strcmp(argv[i], "--json") || !strcmp(argv[i], "--md") ||
                          !strcmp(argv[i], "--only") || !strcmp(argv[i], "--jobs") ||
                          !strcmp(argv[i], "--time-budget"))) {
            fprintf(stderr, "kproof demo: %s needs a value (kproof help demo)\n", argv[i]);
            return KP_EXIT_USAGE;
        } else {
            fprintf(stderr, "kproof demo: unexpected argument '%s' (kproof help demo)\n", argv[i]);
            return KP_EXIT_USAGE;
        }
    }
    if (json && mdfile && kp_cli_out_clash("demo", "--md", mdfile, "--json file", json)) return KP_EXIT_USAGE;
    if ((json && !writable("--json", json)) || (mdfile && !writable("--md", mdfile))) return KP_EXIT_USAGE;
    const char *root = kp_default_root(), *cache = kp_default_cache();
    if (!kp_cli_cache_ok("demo", cache)) return KP_EXIT_USAGE;
    kp_backend be;
    if (backend && kp_backend_parse(backend, &be)) {
        fprintf(stderr, "kproof demo: unknown backend '%s' (host or cuda)\n", backend);
        return KP_EXIT_USAGE;
    }
    if (kp_cli_tmp_usable("demo")) return KP_EXIT_INTERNAL;
    if (!backend) {
        if (kp_cli_auto_backend("demo", root, cache, &be)) return KP_EXIT_INTERNAL;
        if (!kp_backend_get(be)->gpu) fprintf(stderr, "[demo] no GPU answered: running on the host backend (the CPU)\n");
    }
    char ext[16];
    snprintf(ext, sizeof ext, ".%s", kp_backend_get(be)->src_ext);

    static row rows[MAX_ROWS];
    int nr = 0;
    /* Honest rows: the project's best kernel of each op family, f32, in
     * the registry's order (every family has an f32 op). */
    for (int oi = 0; oi < kp_op_count() && nr < MAX_ROWS; oi++) {
        if (kp_op_at(oi)->dtype != KP_F32) continue;
        const char *fam = kp_op_at(oi)->family;
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/kernels/%s/%s", root, fam, kp_backend_name(be));
        kp_name *names = NULL;
        int n = kp_list_dir(dir, &names);
        const char *bestname = NULL;
        for (int j = 0; j < n; j++) {
            char path[PATH_MAX + 256];
            snprintf(path, sizeof path, "%s/%s", dir, names[j]);
            if (!strncmp(names[j], "f32-", 4) && names[j][4] >= '0' && names[j][4] <= '9' && strstr(names[j], ext) &&
                !kp_kernel_not_best(path))
                bestname = names[j]; /* sorted: the last is the highest number */
        }
        if (bestname) {
            row *r = &rows[nr];
            memset(r, 0, sizeof *r);
            snprintf(r->path, sizeof r->path, "%s/%s", dir, bestname);
            snprintf(r->name, sizeof r->name, "%s/%.*s", fam, (int)(strlen(bestname) - strlen(ext)), bestname);
            snprintf(r->op, sizeof r->op, "%s", kp_op_at(oi)->name);
            if (wanted(filter, r->name, NULL)) nr++;
        }
        free(names);
    }
    {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/exploits/%s", root, kp_backend_name(be));
        kp_name *names = NULL;
        int n = kp_list_dir(dir, &names);
        for (int j = 0; j < n && nr < MAX_ROWS; j++) {
            const char *dot = strrchr(names[j], '.');
            if (!dot || strcmp(dot, ext)) continue;
            row *r = &rows[nr];
            memset(r, 0, sizeof *r);
            snprintf(r->path, sizeof r->path, "%s/%s", dir, names[j]);
            if (read_exploit(r)) continue;
            if (!wanted(filter, r->name, names[j])) continue;
            nr++;
        }
        free(names);
    }
    if (nr == 0 && filter) {
        fprintf(stderr, "kproof demo: no row matches --only '%s' (a comma list of parts of row or file names)\n",
                filter);
        return KP_EXIT_USAGE;
    }
    if (nr == 0) {
        fprintf(stderr, "kproof demo: no kernels or exploits under %s (set KPROOF_ROOT to the kproof tree)\n", root);
        return KP_EXIT_INTERNAL;
    }
    /* The matrix files never replace a row's source; and a previous
     * run's files go before this one starts, so a run cut short before its
     * first row leaves none that could be taken for its own. */
    for (int i = 0; i < nr; i++) {
        char what[96];
        snprintf(what, sizeof what, "source of row %s", rows[i].name);
        if ((json && kp_cli_out_clash("demo", "--json", json, what, rows[i].path)) ||
            (mdfile && kp_cli_out_clash("demo", "--md", mdfile, what, rows[i].path)))
            return KP_EXIT_USAGE;
    }
    if (json) unlink(json);
    if (mdfile) unlink(mdfile);
    kp_env env;
    if (demo_env(be, root, cache, &env)) return KP_EXIT_INTERNAL;
    int total = 0; /* evaluations that run: the cells runs_in() keeps */
    for (int i = 0; i < nr; i++)
        for (int m = 0; m < NMODES; m++) total += runs_in(&rows[i], m);
    double t0 = kp_wall_s(), phase_total[KP_NPHASES] = {0};
    demo_cfg cfg = {be, root, cache, &env, budget};
    if (jobs <= 0) jobs = kp_backend_get(be)->demo_parallel ? default_jobs() : 1;
    if (jobs > 1) run_parallel(&cfg, rows, nr, jobs, mdfile, json, t0);
    else {
        int done = 0;
        for (int i = 0; i < nr; i++) {
            for (int m = 0; m < NMODES; m++) {
                if (runs_in(&rows[i], m))
                    progress("[demo] %3d/%d  %-28.28s %-10s %5.0f s", ++done, total, rows[i].name, mode_name(m),
                             kp_wall_s() - t0);
                run_cell(&cfg, &rows[i], m);
            }
            write_files(mdfile, json, &env, be, rows, nr, 0, kp_wall_s() - t0);
        }
    }
    double lock_total[2] = {0, 0}, held_total[KP_NPHASES] = {0};
    for (int i = 0; i < nr; i++)
        for (int m = 0; m < NMODES; m++) {
            for (int ph = 0; ph < KP_NPHASES; ph++) phase_total[ph] += rows[i].phase[m][ph];
            for (int ph = 0; ph < KP_NPHASES; ph++) held_total[ph] += rows[i].held[m][ph];
            lock_total[0] += rows[i].lock[m][0];
            lock_total[1] += rows[i].lock[m][1];
        }
    fprintf(stderr, "%s[demo] %d evaluations in %.0f s:", stderr_tty() ? "\r" : "", total, kp_wall_s() - t0);
    for (int ph = 0; ph < KP_NPHASES; ph++) fprintf(stderr, " %s %.0f s", kp_phase_name(ph), phase_total[ph]);
    /* Held is the device's serial work: no number of rows in flight
     * finishes the matrix faster than that. */
    fprintf(stderr, "; device lock held %.0f s (", lock_total[1]);
    for (int ph = 0; ph < KP_NPHASES; ph++) fprintf(stderr, "%s%s %.0f", ph ? ", " : "", kp_phase_name(ph), held_total[ph]);
    fprintf(stderr, "), waited for %.0f s", lock_total[0]);
    fprintf(stderr, "%10s\n", "");
    printf("kproof demo on %s (%s backend): each row through the naive protocol, each flaw alone, and the "
           "rigorous protocol\n\n",
           env.gpu, kp_backend_name(be));
    print_matrix(stdout, rows, nr, 0);
    printf("\n");
    for (int i = 0; i < nr; i++)
        if (rows[i].pattern || (rows[i].exploit && !strcmp(rows[i].fools, "none"))) {
            printf("-: not run (honest patterns kept beside the cheats run in the rigorous column only; cheats "
                   "that fool no flaw meet guards no flaw switches off, so they run naive and rigorous only)\n");
            break;
        }
    int problems = reading(stdout, rows, nr, "");
    printf("\n");
    print_sandbox(stdout, 0);
    write_files(mdfile, json, &env, be, rows, nr, 1, kp_wall_s() - t0);
    if (write_failed) return KP_EXIT_INTERNAL;
    return problems ? 1 : 0;
}
