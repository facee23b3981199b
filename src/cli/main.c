/* main.c: the kproof command. Only this file exits; everything it calls
 * returns a status. Context and progress go to stderr, results to stdout. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/common.h"
#include "cli/demo.h"
#include "cli/worth.h"
#include "core/host_api.h"
#include "kproof/backends.h"
#include "proc/sandbox.h"

static int g_stdout_closed; /* fd 1 was closed when kproof started */
static int g_out_used;      /* the result went to --out FILE */

/* ---- help ---------------------------------------------------------------------- */

typedef struct cmd_help {
    const char *name;
    const char *usage;
    const char *text;
} cmd_help;

static const cmd_help HELP[] = {
    {"eval", "kproof eval FILE --op OP [options]",
     "Builds FILE (a candidate implementing OP's entry point), runs it in an isolated worker,\n"
     "checks it against a float64 reference on inputs it cannot predict, times it cold\n"
     "against the strongest baseline, and prints a verdict with its evidence.\n\n"
     "  --op OP            op family or name: matmul, softmax, layernorm, sum (see kproof list)\n"
     "  --dtype T          f32 (default) or bf16\n"
     "  --backend B        cuda where a GPU worker is built and a GPU answers, else host\n"
     "  --shape S          e.g. 4096x4096x4096 (repeatable); default: the op's shape sets\n"
     "  --shape-set LIST   which of the op's sets: canonical (timed), edge, quick, drawn\n"
     "                     (default canonical,edge,drawn; see kproof spec OP)\n"
     "  --dist NAME        only this input distribution (default: all, in correctness)\n"
     "  --protocol P       rigorous (default) or naive (all five flaws)\n"
     "  --flaw LIST        naive with only these flaws: launch, warm, one-input, loose-tol,\n"
     "                     weak-base (comma-separated)\n"
     "  --time-budget S    seconds of timing per shape before NOISY (default 10; host 5)\n"
     "  --target PCT       stop when the median's 95% interval is within +-PCT% (default 1;\n"
     "                     host 3)\n"
     "  --sets N           rotating input sets in timing (default 8, more when small)\n"
     "  --timeout S        seconds one call may take before ERROR (default 60)\n"
     "  --correctness      correctness only, no timing\n"
     "  --no-baseline      do not measure baselines\n"
     "  --allow-library    accept library kernels (cuBLAS) in the candidate\n"
     "  --unaudited        cuda: time without tracing device work (every row then says\n"
     "                     unaudited; without tracing kproof never prints a plain PASS)\n"
     "  --seed N           master seed (default: from the OS; printed for reproduction)\n"
     "  --json | --md      print the result as JSON (schema 1) or markdown instead of a table\n"
     "  --out FILE         write the result to FILE (through a temporary file and a rename)\n"
     "                     instead of stdout; never the candidate itself; an existing FILE is\n"
     "                     removed when the run starts, so a run without a result leaves none\n"
     "  --no-sandbox       run the worker and the compiler as plain processes (reported in the\n"
     "                     result; builds go to a cache of their own): see docs/sandbox.md\n"
     "  --quiet            no progress lines on stderr\n\n"
     "Timing rotates over fewer input sets (at least 2) where the host's available memory\n"
     "(MemAvailable) would not hold more in every worker and the parent, and a shape whose\n"
     "fewest do not fit is refused (64). KPROOF_MEM_AVAILABLE=BYTES (K, M, G suffixes)\n"
     "stands in for the available memory (tests).\n\n"
     "Exit status: 0 PASS, 1 WRONG, 2 REJECTED, 3 ERROR, 4 NOISY, 64 bad usage or input,\n"
     "70 the harness itself failed (including a device lock that cannot be opened or is held\n"
     "past KPROOF_LOCK_TIMEOUT, and a TMPDIR that is not an existing folder kproof can write)."},
    {"list", "kproof list [--json]",
     "Lists the ops with their dtypes and entry points; --json adds each op's family and\n"
     "benchmark shapes with the cost model (bytes, FLOPs) at each."},
    {"spec", "kproof spec OP [--dtype T]",
     "Prints an op's contract: entry point prototype, buffers, shape sets, input\n"
     "distributions, cost model and tolerance policy."},
    {"init", "kproof init OP [--dtype T] [--backend host|cuda]",
     "Prints a correct, simple candidate for OP to start from (the project's naive kernel):\n"
     "  kproof init softmax --backend host > s.c && kproof eval s.c --op softmax"},
    {"calibrate", "kproof calibrate [--backend B] [--force]",
     "Measures this device's copy bandwidth (and GEMM rates on cuda) once and caches them;\n"
     "eval uses them for the speed-of-light fraction and to reject impossible times."},
    {"demo", "kproof demo [--backend B] [--only LIST] [--jobs N] [--time-budget S] [--json FILE] [--md FILE]",
     "Runs the project's honest kernels and the exploit corpus through the naive protocol,\n"
     "each single flaw and the rigorous protocol, and prints the matrix of claimed\n"
     "speedups and verdicts with a short reading of it.\n\n"
     "  --backend B        cuda where a GPU answers, else host (asked under the GPU's device\n"
     "                     lock: one that cannot be opened or had is exit 70)\n"
     "  --only LIST        only rows whose name contains one of these (comma-separated)\n"
     "  --jobs N           rows in flight at once (cuda default: cores/4, at most 4; host 1).\n"
     "                     They share the GPU under a device lock: one process at a time\n"
     "                     runs anything on it, and a timing phase holds it throughout.\n"
     "  --time-budget S    timing seconds per shape (default 0.3 host, 0.5 cuda)\n"
     "  --json FILE        write the matrix as JSON; --md FILE as markdown (rewritten after every\n"
     "                     row; a run cut short says so, and a cell that never ran has no verdict:\n"
     "                     \"state\": \"not run\", or \"skipped\" where its mode does not apply)\n\n"
     "Exit status 0 when every exploit is caught by the rigorous mode, fools at least\n"
     "one single-flaw mode, and every honest kernel passes; 1 otherwise."},
    {"worth", "kproof worth [OP] [--dtype T] [--shape S] [--result FILE] [--device NAME | --calib FILE] [--share P] [--trace FILE] [--json]",
     "Is more speed worth chasing? Per shape: the speed of light (bytes over bandwidth, FLOPs\n"
     "over the peak rate), the regime (memory-, compute- or launch-bound, from the arithmetic\n"
     "intensity against the ridge point), the best measured time, the headroom left, and with a\n"
     "share of the workload Amdahl's end-to-end gain; one sentence per shape (docs/worth-it.md).\n\n"
     "  OP, --op OP        op family or name (default: the op of the first --result)\n"
     "  --dtype T          f32 or bf16\n"
     "  --shape S          a shape (repeatable; default: the op's canonical shapes)\n"
     "  --result FILE      a kproof eval --json result (repeatable): the best time per shape of\n"
     "                     its candidate (PASS shapes) and its baseline; its env gives the device.\n"
     "                     A REJECTED, WRONG or ERROR shape's times are not used (listed)\n"
     "  --device NAME      judge against this device's datasheet limits (e.g. H200, H100);\n"
     "                     no GPU needed\n"
     "  --calib FILE       a calibration cache file (kproof calibrate's copy_gbs ... lines)\n"
     "  --backend B        without --device/--result/--calib: this machine's host or cuda device,\n"
     "                     from its cached calibration\n"
     "  --share P          the op's fraction of the workload's GPU time, in (0, 1]\n"
     "  --speedup X        also the end-to-end gain of this kernel speedup (default: the\n"
     "                     result's measured candidate-vs-baseline speedup)\n"
     "  --trace FILE       a torch.profiler Chrome trace: each kernel's share of GPU kernel time,\n"
     "                     mapped onto kproof's ops by name; the op's share when --share is absent\n"
     "  --top N            kernels listed from the trace (default 15)\n"
     "  --json             print JSON instead of the table and sentences\n\n"
     "Exit status: 0, 64 bad usage or input (a missing or truncated JSON, a trace that is not a\n"
     "trace, a share outside (0, 1], an option given twice, a cache folder that others could\n"
     "write), 70 the device could not be read (a device lock that cannot be opened, an unusable\n"
     "TMPDIR) or stdout could not be written."},
    {"compare", "kproof compare A.json B.json [--margin PCT] [--fail-on-regression PCT] [--force] [--json | --md]",
     "Compares two results of the same op on the same device, shape by shape: B's median\n"
     "against A's, with the ratio's 95% interval (a bootstrap from the samples when both files\n"
     "hold them, else from the stored intervals, combined on the log scale).\n\n"
     "  SAME       the ratio's interval lies within 1 +- margin\n"
     "  FASTER     B faster: the ratio's interval below 1, the medians' intervals apart\n"
     "  SLOWER     B slower: the ratio's interval above 1, the medians' intervals apart\n"
     "  AMBIGUOUS  the intervals cannot tell\n\n"
     "Only PASS times are compared: a REJECTED, WRONG or ERROR shape shows that side's verdict\n"
     "and check instead; a NOISY one is compared, marked and not counted.\n\n"
     "  --margin PCT               what counts as the same (default 2: two sessions on one GPU\n"
     "                             model drift by about 1%)\n"
     "  --fail-on-regression PCT   exit 1 when a shape is SLOWER by more than PCT% (median ratio),\n"
     "                             when B is not PASS or NOISY, or when no shape was compared\n"
     "  --force                    compare results of different ops, devices or schemas anyway\n"
     "  --json | --md              JSON or markdown instead of the table\n\n"
     "Exit status: 0, 1 --fail-on-regression failed, 64 bad input (not an eval result, an\n"
     "option given twice) or a refusal, 70 the output could not be written."},
    {"report", "kproof report RESULT.json ... [-o report.html]",
     "Writes one self-contained HTML page (no scripts, no network, no fonts) for the results:\n"
     "verdict and evidence, the per-shape table, a roofline of the device (bandwidth and\n"
     "compute ceilings from the calibration and the datasheet, log-log) with the candidate and\n"
     "its baseline as labelled points per shape, and the worth sentences. Default: stdout.\n"
     "A REJECTED, WRONG or ERROR shape shows its verdict and check, not a time.\n\n"
     "  -o, --output FILE  write the page to FILE, whole or not at all (never an input)\n\n"
     "Exit status: 0, 64 bad input (a missing, truncated or foreign JSON; an -o that cannot be\n"
     "written, the previous file kept, or that is an input), 70 stdout could not be written."},
    {"help", "kproof help [COMMAND]", "Shows help for a command."},
    {"version", "kproof version", "Prints the version."},
};

static void usage_all(FILE *f) {
    fprintf(f, "kproof %s: is this kernel speedup real?\n\nUsage:\n", KP_VERSION);
    for (size_t i = 0; i < sizeof HELP / sizeof *HELP; i++) fprintf(f, "  %s\n", HELP[i].usage);
    fprintf(f, "\nRun 'kproof help COMMAND' for details. Start with 'kproof demo'.\n");
}

static int cmd_help_run(int argc, char **argv) {
    if (argc < 1) {
        usage_all(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof HELP / sizeof *HELP; i++)
        if (!strcmp(argv[0], HELP[i].name)) {
            printf("Usage: %s\n\n", HELP[i].usage);
            fputs(HELP[i].text, stdout);
            fputs("\n", stdout);
            return 0;
        }
    fprintf(stderr, "kproof: no such command '%s' (try 'kproof help')\n", argv[0]);
    return KP_EXIT_USAGE;
}

/* ---- argument helpers ---------------------------------------------------------- */

/* ---- list, spec, init ---------------------------------------------------------- */

/* The op table as JSON, for scripts that must not keep a list of their own
 * (bench/torch_baselines.py): each op's name, family, dtype, entry point,
 * and its benchmark shapes with the cost model at each. */
static int list_json(void) {
    printf("{\"schema\": 1, \"ops\": [");
    for (int i = 0; i < kp_op_count(); i++) {
        const kp_op *op = kp_op_at(i);
        printf("%s\n {\"name\": ", i ? "," : "");
        kp_json_str(stdout, op->name);
        printf(", \"family\": ");
        kp_json_str(stdout, op->family);
        printf(", \"dtype\": \"%s\", \"entry\": ", kp_dtype_name(op->dtype));
        kp_json_str(stdout, op->entry);
        printf(", \"canonical\": [");
        for (int k = 0; k < op->canonical.n; k++) {
            const kp_shape *s = &op->canonical.shapes[k];
            printf("%s{\"shape\": [", k ? ", " : "");
            for (int d = 0; d < s->nd; d++) printf("%s%lld", d ? ", " : "", (long long)s->d[d]);
            printf("], \"min_bytes\": %.17g, \"flops\": %.17g}", op->min_bytes(s), op->flops(s));
        }
        printf("]}");
    }
    printf("\n]}\n");
    return 0;
}

static int cmd_list(int argc, char **argv) {
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else {
            fprintf(stderr, "kproof list: unexpected argument '%s'\n", argv[i]);
            return KP_EXIT_USAGE;
        }
    }
    if (json) return list_json();
    printf("%-16s %-6s %-22s %s\n", "op", "dtype", "entry point", "what it computes");
    for (int i = 0; i < kp_op_count(); i++) {
        const kp_op *op = kp_op_at(i);
        printf("%-16s %-6s %-22s %s\n", op->name, kp_dtype_name(op->dtype), op->entry, op->summary);
    }
    return 0;
}

static void print_set(const kp_op *op, const kp_shape_set *s) {
    printf("  %-10s", s->label);
    for (int i = 0; i < s->n; i++) {
        char b[64];
        kp_shape_format(&s->shapes[i], b, sizeof b);
        printf(" %s", b);
    }
    printf("\n");
}

static int cmd_spec(int argc, char **argv) {
    const char *name = NULL, *dtype = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--dtype") && i + 1 < argc) dtype = argv[++i];
        else if (argv[i][0] != '-' && !name) name = argv[i];
        else {
            fprintf(stderr, "kproof spec: unexpected argument '%s'\n", argv[i]);
            return KP_EXIT_USAGE;
        }
    }
    if (!name) {
        fprintf(stderr, "kproof spec: which op? (kproof list)\n");
        return KP_EXIT_USAGE;
    }
    const kp_op *op = kp_cli_op(name, dtype);
    if (!op) return KP_EXIT_USAGE;
    printf("%s: %s\n\n", op->name, op->summary);
    printf("entry point (host):  %s;\n", op->proto);
    printf("entry point (cuda):  the same with a trailing 'kp_stream stream' argument\n");
    printf("shape:               ");
    for (int i = 0; i < op->nd; i++) printf("%s%s", i ? " x " : "", op->dim_names[i]);
    printf("\nbuffers:\n");
    for (int b = 0; b < op->nbufs; b++)
        printf("  %-4s %-5s %s\n", op->bufs[b].name, kp_dtype_name(op->bufs[b].dtype),
               op->bufs[b].output ? "output (poisoned before every call: write every element)" : "input (read-only)");
    printf("pointers:            aligned to the element type only: some checked calls get pointers that\n"
           "                     are not 16-byte aligned (one element past a 16-byte boundary)\n");
    printf("shape sets:\n");
    print_set(op, &op->canonical);
    print_set(op, &op->edge);
    print_set(op, &op->quick);
    printf("  drawn      two random odd shapes per run\n");
    printf("input distributions:\n");
    for (int d = 0; d < op->ndists; d++) printf("  %-8s %s\n", op->dists[d].name, op->dists[d].why);
    kp_shape s0 = op->canonical.shapes[0];
    char b[64];
    kp_shape_format(&s0, b, sizeof b);
    printf("cost model at %s: %.4g FLOP, %.4g bytes minimum\n", b, op->flops(&s0), op->min_bytes(&s0));
    printf("tolerance: per element |got - want| <= tol_i (from the data and the dtype), and the RMS\n"
           "of |got - want| / tol_i at most %.3g; NaN, Inf and unwritten (poison) elements fail.\n",
           op->rms_limit);
    return 0;
}

static int cmd_init(int argc, char **argv) {
    const char *name = NULL, *dtype = NULL, *backend = "host";
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--dtype") && i + 1 < argc) dtype = argv[++i];
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
        else if (argv[i][0] != '-' && !name) name = argv[i];
        else {
            fprintf(stderr, "kproof init: unexpected argument '%s'\n", argv[i]);
            return KP_EXIT_USAGE;
        }
    }
    if (!name) {
        fprintf(stderr, "kproof init: which op? (kproof list)\n");
        return KP_EXIT_USAGE;
    }
    const kp_op *op = kp_cli_op(name, dtype);
    kp_backend be;
    if (!op) return KP_EXIT_USAGE;
    if (kp_backend_parse(backend, &be)) {
        fprintf(stderr, "kproof init: unknown backend '%s' (host or cuda)\n", backend);
        return KP_EXIT_USAGE;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/kernels/%s/%s/%s-01-naive.%s", kp_default_root(), op->family, kp_backend_name(be),
             kp_dtype_name(op->dtype), kp_backend_get(be)->src_ext);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "kproof init: no starting point at %s (set KPROOF_ROOT to the kproof tree)\n", path);
        return KP_EXIT_INTERNAL;
    }
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
    fclose(f);
    return 0;
}

/* ---- calibrate ------------------------------------------------------------------ */

static int cmd_calibrate(int argc, char **argv) {
    const char *backend = NULL;
    int force = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
        else if (!strcmp(argv[i], "--force")) force = 1;
        else {
            fprintf(stderr, "kproof calibrate: unexpected argument '%s'\n", argv[i]);
            return KP_EXIT_USAGE;
        }
    }
    const char *root = kp_default_root(), *cache = kp_default_cache();
    if (!kp_cli_cache_ok("calibrate", cache)) return KP_EXIT_USAGE;
    kp_backend be;
    if (backend) {
        if (kp_backend_parse(backend, &be)) {
            fprintf(stderr, "kproof calibrate: unknown backend '%s'\n", backend);
            return KP_EXIT_USAGE;
        }
    }
    if (kp_cli_tmp_usable("calibrate")) return KP_EXIT_INTERNAL;
    if (!backend && kp_cli_auto_backend("calibrate", root, cache, &be)) return KP_EXIT_INTERNAL;
    kp_wk *w = NULL;
    char err[600] = "";
    /* calibration measures: nobody else on the device, or no measurement */
    if (kp_devlock_open_backend(be)) {
        fprintf(stderr, "kproof calibrate: %s\n", kp_devlock_error());
        return KP_EXIT_INTERNAL;
    }
    if (kp_trusted_start(be, root, cache, &w, err, sizeof err)) {
        fprintf(stderr, "kproof calibrate: %s\n", err);
        return KP_EXIT_INTERNAL;
    }
    kp_env e;
    kp_calib_rep c;
    int measured = 0;
    int rc = kp_device_facts(w, cache, force, &e, &c, &measured, err, sizeof err);
    kp_wk_stop(w);
    if (rc) {
        fprintf(stderr, "kproof calibrate: %s\n", err);
        return KP_EXIT_INTERNAL;
    }
    if (err[0]) fprintf(stderr, "kproof calibrate: %s\n", err);
    fprintf(stderr, "kproof: %s\n", measured ? "measured now, and cached" : "from the cache (--force to measure again)");
    printf("device            %s (%s)\n", e.gpu, kp_backend_name(be));
    printf("copy bandwidth    %.1f GB/s (bytes read + written)\n", c.copy_gbs);
    if (c.gemm_f32_gflops > 0) {
        printf("GEMM fp32         %.1f TFLOP/s (cuBLAS, TF32 off)\n", c.gemm_f32_gflops / 1e3);
        printf("GEMM tf32         %.1f TFLOP/s\n", c.gemm_tf32_gflops / 1e3);
        printf("GEMM bf16         %.1f TFLOP/s\n", c.gemm_bf16_gflops / 1e3);
    }
    if (c.note[0]) printf("note              %s\n", c.note);
    return 0;
}

/* ---- eval --------------------------------------------------------------------------- */

static int exit_code(kp_verdict v) {
    switch (v) {
    case KP_PASS: return 0;
    case KP_WRONG: return 1;
    case KP_REJECTED: return 2;
    case KP_ERROR: return 3;
    case KP_NOISY: return 4;
    }
    return KP_EXIT_INTERNAL;
}

/* "canonical,edge,quick,drawn" -> kp_eval_opts.shape_sets bits. */
static int parse_shape_sets(const char *v, int *bits) {
    static const char *names[] = {"canonical", "edge", "quick", "drawn"};
    int b = 0;
    const char *p = v;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (int i = 0; i < 4; i++)
            if (n == strlen(names[i]) && !strncmp(p, names[i], n)) b |= 1 << i, found = 1;
        if (!found) {
            fprintf(stderr, "kproof eval: unknown shape set '%.*s' in --shape-set (canonical, edge, quick, drawn)\n",
                    (int)n, p);
            return -1;
        }
        p += n;
        if (*p == ',') p++;
    }
    if (!b) {
        fprintf(stderr, "kproof eval: --shape-set needs at least one of canonical, edge, quick, drawn\n");
        return -1;
    }
    *bits = b;
    return 0;
}

/* Which defences the run had, for every printer. */
static void record_sandbox(kp_result *r) {
    if (!kp_sb_enabled()) {
        r->sandbox = KP_SANDBOX_OFF;
        return;
    }
    unsigned m = kp_sb_missing();
    r->sandbox = m ? KP_SANDBOX_PARTIAL : KP_SANDBOX_FULL;
    r->nsandbox_missing = 0;
    for (unsigned b = 1; (b & KP_SBD_ALL) && r->nsandbox_missing < 8; b <<= 1)
        if (m & b)
            snprintf(r->sandbox_missing[r->nsandbox_missing++], sizeof r->sandbox_missing[0], "%s: %s",
                     kp_sb_defence_name(b), kp_sb_defence_gap(b));
}

/* --out FILE: its folder takes a new file (checked before the run, not
 * after it); no sandboxed child may write there. */
static int out_writable(const char *path) {
    char dir[PATH_MAX], probe[PATH_MAX + 32];
    kp_cli_dir_of(path, dir, sizeof dir);
    snprintf(probe, sizeof probe, "%s/.kproof-out-XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd < 0) {
        fprintf(stderr, "kproof eval: --out %s: cannot write in %s: %s\n", path, dir, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(probe);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        fprintf(stderr, "kproof eval: --out %s is not a regular file\n", path);
        return -1;
    }
    kp_sb_protect(dir);
    return 0;
}

static int write_result(const char *path, const kp_result *r, int json, int md, char *why, size_t len) {
    char tmp[PATH_MAX + 32];
    FILE *f = kp_cli_atomic_open(path, tmp, sizeof tmp, why, len);
    if (!f) return -1;
    if (json) kp_print_json(f, r);
    else if (md) kp_print_md(f, r);
    else kp_print_table(f, r);
    return kp_cli_atomic_close(f, tmp, path, why, len);
}

/* A shape the parent cannot even hold once (its inputs, its output and,
 * where the check compares every element, the float64 reference and
 * tolerances), or whose timing phase cannot hold the fewest input sets it
 * rotates over in every worker and the parent (kp_timing_mem_of), is
 * refused before anything is allocated. */
static int fits_memory(const kp_eval_opts *o) {
    const kp_op *op = o->op;
    double avail = (double)kp_host_mem_available(), total = (double)kp_host_mem_bytes();
    int nw = o->nshapes > 0 ? kp_eval_participants(o) : 0;
    for (int i = 0; i < o->nshapes; i++) {
        const kp_shape *sh = &o->shapes[i];
        char st[64];
        kp_shape_format(sh, st, sizeof st);
        double data = 0, ref = 0;
        for (int b = 0; b < op->nbufs; b++) {
            double e = (double)op->buf_elems(sh, b);
            data += e * (double)kp_dtype_size(op->bufs[b].dtype);
            if (op->bufs[b].output && !op->check) ref += 16 * e;
        }
        if (data + ref > avail) {
            fprintf(stderr,
                    "kproof eval: --shape %s needs at least %.1f GiB of host memory (inputs and output %.1f GiB, "
                    "float64 reference %.1f GiB); this machine has %.1f GiB available of %.1f GiB\n",
                    st, (data + ref) / 1073741824.0, data / 1073741824.0, ref / 1073741824.0, avail / 1073741824.0,
                    total / 1073741824.0);
            return -1;
        }
        if (nw == 0) continue;
        kp_timing_mem m;
        kp_timing_mem_of(o, sh, &m);
        double need = (double)kp_timing_mem_need(&m, nw, m.min_sets);
        if (need > avail) {
            double worker = (double)(m.worker_base + m.min_sets * m.worker_set);
            fprintf(stderr,
                    "kproof eval: --shape %s needs at least %.1f GiB of host memory to time (%d worker(s), the "
                    "candidate's and its baselines', with %d input sets %.1f GiB each; the parent %.1f GiB); this "
                    "machine has %.1f GiB available of %.1f GiB (--no-baseline times the candidate alone)\n",
                    st, need / 1073741824.0, nw, m.min_sets, worker / 1073741824.0,
                    (double)(m.parent_base + m.min_sets * m.parent_set) / 1073741824.0, avail / 1073741824.0,
                    total / 1073741824.0);
            return -1;
        }
    }
    return 0;
}

static int cmd_eval(int argc, char **argv) {
    kp_eval_opts o;
    kp_eval_opts_default(&o);
    o.root = kp_default_root();
    o.cache_dir = kp_default_cache();
    const char *file = NULL, *opname = NULL, *dtype = NULL, *backend = NULL, *dist = NULL;
    const char *shape_text[16];
    int json = 0, md = 0, budget_set = 0, target_set = 0, protocol_set = 0, flaw_set = 0, sets_set = 0;
    int no_sandbox = 0;
    const char *out_file = NULL;
    const char *seen[16];
    int nseen = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
/* A value follows; an option that takes one value may come once (a second
 * one silently winning would be a different run than the one asked for). */
#define NEEDV()                                                            \
    if (!v || !*v) {                                                       \
        fprintf(stderr, "kproof eval: %s needs a value\n", a);             \
        return KP_EXIT_USAGE;                                              \
    }                                                                      \
    i++;                                                                   \
    if (strcmp(a, "--shape") && strcmp(a, "--flaw")) {                     \
        for (int k_ = 0; k_ < nseen; k_++)                                 \
            if (!strcmp(seen[k_], a)) {                                    \
                fprintf(stderr, "kproof eval: %s given twice\n", a);       \
                return KP_EXIT_USAGE;                                      \
            }                                                              \
        if (nseen < 16) seen[nseen++] = a;                                 \
    }
        if (!strcmp(a, "--op")) { NEEDV() opname = v; }
        else if (!strcmp(a, "--dtype")) { NEEDV() dtype = v; }
        else if (!strcmp(a, "--backend")) { NEEDV() backend = v; }
        else if (!strcmp(a, "--dist")) { NEEDV() dist = v; }
        else if (!strcmp(a, "--shape")) {
            NEEDV()
            if (o.nshapes == 16) {
                fprintf(stderr, "kproof eval: at most 16 --shape\n");
                return KP_EXIT_USAGE;
            }
            shape_text[o.nshapes++] = v; /* parsed once the op is known */
        } else if (!strcmp(a, "--shape-set")) {
            NEEDV()
            if (parse_shape_sets(v, &o.shape_sets)) return KP_EXIT_USAGE;
            sets_set = 1;
        } else if (!strcmp(a, "--protocol")) {
            NEEDV()
            protocol_set = 1;
            if (!strcmp(v, "naive")) o.flaws = KP_FLAW_ALL;
            else if (!strcmp(v, "rigorous")) o.flaws = 0;
            else {
                fprintf(stderr, "kproof eval: --protocol is rigorous or naive, not '%s'\n", v);
                return KP_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--flaw")) {
            NEEDV()
            int bits = 0;
            if (kp_flaw_parse(v, &bits)) {
                fprintf(stderr, "kproof eval: unknown flaw in '%s' (launch, warm, one-input, loose-tol, weak-base, all)\n", v);
                return KP_EXIT_USAGE;
            }
            o.flaws |= bits;
            flaw_set = 1;
        } else if (!strcmp(a, "--time-budget")) {
            NEEDV()
            if (kp_cli_parse_double(a, v, 0.01, 3600, &o.stop.budget_s)) return KP_EXIT_USAGE;
            budget_set = 1;
        } else if (!strcmp(a, "--target")) {
            NEEDV()
            double pct;
            if (kp_cli_parse_double(a, v, 0.01, 50, &pct)) return KP_EXIT_USAGE;
            o.stop.target = pct / 100;
            target_set = 1;
        } else if (!strcmp(a, "--sets")) {
            NEEDV()
            uint64_t s;
            if (kp_cli_parse_u64(a, v, &s)) return KP_EXIT_USAGE;
            if (s < 1 || s > KP_MAX_SETS) {
                fprintf(stderr, "kproof eval: --sets expects 1 to %d, got %s\n", KP_MAX_SETS, v);
                return KP_EXIT_USAGE;
            }
            o.nsets = (int)s;
        } else if (!strcmp(a, "--timeout")) {
            NEEDV()
            if (kp_cli_parse_double(a, v, 0.1, 3600, &o.timeout_s)) return KP_EXIT_USAGE;
        } else if (!strcmp(a, "--seed")) {
            NEEDV()
            if (kp_cli_parse_u64(a, v, &o.seed)) return KP_EXIT_USAGE;
            if (!o.seed) { /* 0 is how the options say "none given" */
                fprintf(stderr, "kproof eval: --seed expects 1 to 18446744073709551615, got 0\n");
                return KP_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--correctness")) o.correctness_only = 1;
        else if (!strcmp(a, "--no-baseline")) o.no_baseline = 1;
        else if (!strcmp(a, "--allow-library")) o.allow_library = 1;
        else if (!strcmp(a, "--unaudited")) o.unaudited = 1;
        else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--md")) md = 1;
        else if (!strcmp(a, "--quiet")) o.progress = 0;
        else if (!strcmp(a, "--no-sandbox")) no_sandbox = 1;
        else if (!strcmp(a, "--out")) { NEEDV() out_file = v; }
        else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "kproof eval: unknown option '%s' (kproof help eval)\n", a);
            return KP_EXIT_USAGE;
        } else if (!file) file = a;
        else {
            fprintf(stderr, "kproof eval: one candidate file at a time ('%s' and '%s')\n", file, a);
            return KP_EXIT_USAGE;
        }
#undef NEEDV
    }
    if (json && md) {
        fprintf(stderr, "kproof eval: --json or --md, not both (one result on stdout)\n");
        return KP_EXIT_USAGE;
    }
    if (protocol_set && flaw_set) {
        fprintf(stderr, "kproof eval: --protocol or --flaw, not both (naive is every flaw on; rigorous, none)\n");
        return KP_EXIT_USAGE;
    }
    if (sets_set && o.nshapes) {
        fprintf(stderr, "kproof eval: --shape or --shape-set, not both (--shape runs exactly the shapes given)\n");
        return KP_EXIT_USAGE;
    }
    if (!file) {
        fprintf(stderr, "kproof eval: which candidate file? (kproof help eval)\n");
        return KP_EXIT_USAGE;
    }
    if (!opname) {
        fprintf(stderr, "kproof eval: which op does %s implement? pass --op (kproof list)\n", file);
        return KP_EXIT_USAGE;
    }
    struct stat st;
    if (access(file, R_OK) != 0 || stat(file, &st) != 0) {
        fprintf(stderr, "kproof eval: cannot read %s: %s\n", file, strerror(errno));
        return KP_EXIT_USAGE;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, "kproof eval: %s is not a regular file (a candidate is one .c or .cu source file)\n", file);
        return KP_EXIT_USAGE;
    }
    o.op = kp_cli_op(opname, dtype);
    if (!o.op) return KP_EXIT_USAGE;
    for (int i = 0; i < o.nshapes; i++) {
        const char *text = shape_text[i];
        char why[200];
        if (kp_op_parse_shape(o.op, text, &o.shapes[i], why, sizeof why)) {
            fprintf(stderr, "kproof eval: bad --shape '%s': %s\n", text, why);
            return KP_EXIT_USAGE;
        }
    }
    if (dist) {
        o.dist = -1;
        for (int d = 0; d < o.op->ndists; d++)
            if (!strcmp(o.op->dists[d].name, dist)) o.dist = d;
        if (o.dist < 0) {
            fprintf(stderr, "kproof eval: %s has no distribution '%s' (kproof spec %s)\n", o.op->name, dist,
                    o.op->family);
            return KP_EXIT_USAGE;
        }
    }
    const kp_backend_info *file_be = kp_backend_for_file(file);
    if (backend) {
        if (kp_backend_parse(backend, &o.backend)) {
            fprintf(stderr, "kproof eval: unknown backend '%s' (host or cuda)\n", backend);
            return KP_EXIT_USAGE;
        }
        /* nvcc would build a .c file as C++ and the host compiler cannot
         * build CUDA: say which backend the file is for instead. */
        if (file_be->id != o.backend) {
            fprintf(stderr, "kproof eval: %s is a %s candidate (%s); the %s backend takes .%s files\n", file,
                    file_be->title, file_be->files, kp_backend_name(o.backend), kp_backend_get(o.backend)->src_ext);
            return KP_EXIT_USAGE;
        }
    } else {
        o.backend = file_be->id;
    }
    /* The backend's own defaults (the host asks for +-3% within 5 s per
     * shape: a CPU's cold samples scatter more than a GPU's). */
    const kp_backend_info *bi = kp_backend_get(o.backend);
    if (bi->eval_budget_s > 0 && !budget_set) o.stop.budget_s = bi->eval_budget_s;
    if (bi->eval_target > 0 && !target_set) o.stop.target = bi->eval_target;
    o.candidate = file;
    if (fits_memory(&o)) return KP_EXIT_USAGE;
    if (out_file && (out_writable(out_file) || kp_cli_out_clash("eval", "--out", out_file, "candidate", file)))
        return KP_EXIT_USAGE;
    if (g_stdout_closed && !out_file) {
        fprintf(stderr, "kproof eval: standard output is closed: the result would be lost (pass --out FILE)\n");
        return KP_EXIT_INTERNAL;
    }
    if (!kp_cli_cache_ok("eval", o.cache_dir)) return KP_EXIT_USAGE;
    /* Every refusal of the command line (64) is behind: from here on the
     * run is this one, and a previous run's result under the name asked for
     * must not outlive it (a run that ends without a result, interrupted or
     * failed, then leaves no file to be taken for its own). */
    if (out_file && unlink(out_file) != 0 && errno != ENOENT) {
        fprintf(stderr, "kproof eval: --out %s: cannot remove the previous file: %s\n", out_file, strerror(errno));
        return KP_EXIT_USAGE;
    }
    /* Where the lock and the builds live, and the lock itself: a run that
     * could not keep the device to itself is not started. */
    if (kp_cli_tmp_usable("eval")) return KP_EXIT_INTERNAL;
    if (kp_devlock_open_backend(o.backend)) {
        fprintf(stderr, "kproof eval: %s\n", kp_devlock_error());
        return KP_EXIT_INTERNAL;
    }
    static char cache_off[PATH_MAX];
    if (no_sandbox) {
        /* A candidate run without a sandbox could write the cache: its
         * builds go where sandboxed runs never look. */
        kp_sb_disable();
        snprintf(cache_off, sizeof cache_off, "%s/unsandboxed", o.cache_dir);
        o.cache_dir = cache_off;
        if (o.progress) fprintf(stderr, "kproof: --no-sandbox: the candidate runs with kproof's user, files and processes in reach\n");
    } else {
        kp_sb_probe();
        unsigned m = kp_sb_missing();
        if (m && o.progress) {
            fprintf(stderr, "kproof: the sandbox is incomplete on this machine, missing:");
            for (unsigned b = 1; b & KP_SBD_ALL; b <<= 1)
                if (m & b) fprintf(stderr, " %s;", kp_sb_defence_name(b));
            fprintf(stderr, " see docs/sandbox.md\n");
        }
    }
    kp_result r;
    char err[1024] = "";
    kp_devlock_announce(o.progress);
    if (kp_eval(&o, &r, err, sizeof err)) {
        fprintf(stderr, "kproof eval: %s\n", err);
        kp_result_free(&r);
        return KP_EXIT_INTERNAL;
    }
    record_sandbox(&r);
    int code = exit_code(r.verdict);
    if (out_file) {
        char why[300];
        g_out_used = 1;
        if (write_result(out_file, &r, json, md, why, sizeof why)) {
            fprintf(stderr, "kproof eval: cannot write the result to %s: %s\n", out_file, why);
            kp_result_free(&r);
            return KP_EXIT_INTERNAL;
        }
    } else if (json) kp_print_json(stdout, &r);
    else if (md) kp_print_md(stdout, &r);
    else kp_print_table(stdout, &r);
    /* ERROR from the harness itself (no memory for inputs, no cache
     * directory, no compiler) says nothing about the candidate: 70, as
     * for any harness failure, with the result still printed. */
    if (r.verdict == KP_ERROR && !strcmp(r.check_name, "harness")) code = KP_EXIT_INTERNAL;
    kp_result_free(&r);
    return code;
}

/* ---- main ------------------------------------------------------------------------- */

/* A closed 0, 1 or 2 would be handed out again by the first pipe or open,
 * and the worker's dup2 onto its standard streams would then clobber it:
 * /dev/null takes any closed one first. */
static void standard_fds(void) {
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            if (fd == 1) g_stdout_closed = 1;
            int nf = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (nf >= 0 && nf != fd) close(nf); /* lower fds were open: nothing to fill */
        }
}

static int run(int argc, char **argv);

int main(int argc, char **argv) {
    /* Nothing of the same user reads this process's memory, environment
     * or fds through /proc, or attaches to it (the references live here). */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    standard_fds();
    int code = run(argc, argv);
    /* A result that never reached stdout (a full disk, a closed pipe) is
     * not a success. */
    int verdict_code = code == 0 || code == 1 || code == 2 || code == 3 || code == 4;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !bad) bad = 1, e = errno;
    if (bad) {
        fprintf(stderr, "kproof: cannot write the result to standard output: %s\n", strerror(e));
        if (verdict_code) code = KP_EXIT_INTERNAL;
    } else if (g_stdout_closed && verdict_code && !g_out_used) {
        fprintf(stderr, "kproof: standard output is closed: the result was lost\n");
        code = KP_EXIT_INTERNAL;
    }
    return code;
}

static int run(int argc, char **argv) {
    setvbuf(stderr, NULL, _IONBF, 0);
    if (argc < 2) {
        usage_all(stderr);
        return KP_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    for (int i = 1; i < argc; i++)
        if (!argv[i][0]) {
            fprintf(stderr, "kproof: argument %d is empty (kproof help)\n", i);
            return KP_EXIT_USAGE;
        }
    int n = argc - 2;
    char **rest = argv + 2;
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) return cmd_help_run(n, rest);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("kproof %s (schema %d)\n", KP_VERSION, KP_SCHEMA_VERSION);
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (!strcmp(rest[i], "--help") || !strcmp(rest[i], "-h")) {
            char *h[1] = {(char *)cmd};
            return cmd_help_run(1, h);
        }
    if (!strcmp(cmd, "list")) return cmd_list(n, rest);
    if (!strcmp(cmd, "spec")) return cmd_spec(n, rest);
    if (!strcmp(cmd, "init")) return cmd_init(n, rest);
    if (!strcmp(cmd, "eval")) return cmd_eval(n, rest);
    if (!strcmp(cmd, "calibrate")) return cmd_calibrate(n, rest);
    if (!strcmp(cmd, "demo")) return kp_cli_demo(n, rest);
    if (!strcmp(cmd, "worth")) return kp_cli_worth(n, rest);
    if (!strcmp(cmd, "compare")) return kp_cli_compare(n, rest);
    if (!strcmp(cmd, "report")) return kp_cli_report(n, rest);
    fprintf(stderr, "kproof: unknown command '%s' (kproof help)\n", cmd);
    return KP_EXIT_USAGE;
}
