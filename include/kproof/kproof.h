/* kproof.h: the public C API. Read it as the table of contents.
 *
 *   1. basics: dtypes, shapes, backends
 *   2. ops: the registry and what an op spec holds
 *   3. correctness: references, tolerances, checks
 *   4. statistics
 *   5. evaluation: options, results, verdicts
 *   6. printers
 *
 * Library functions return a status (0 ok, negative error) and never exit.
 */
#ifndef KPROOF_H
#define KPROOF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kproof/gen.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KP_VERSION "0.1.0"
#define KP_SCHEMA_VERSION 1

/* ===== 1. basics ======================================================== */

typedef enum kp_dtype { KP_F32 = 0, KP_BF16 = 1 } kp_dtype;
size_t kp_dtype_size(kp_dtype t);
const char *kp_dtype_name(kp_dtype t);
/* Read element i of a buffer of dtype t as a double. */
double kp_load(const void *buf, kp_dtype t, int64_t i);
/* Is element i the poison pattern? */
int kp_is_poison(const void *buf, kp_dtype t, int64_t i);

typedef enum kp_backend { KP_BACKEND_HOST = 0, KP_BACKEND_CUDA = 1 } kp_backend;
const char *kp_backend_name(kp_backend b);
int kp_backend_parse(const char *s, kp_backend *out); /* 0 ok, -1 unknown */

#define KP_MAX_DIMS 3
#define KP_MAX_BUFS 5
typedef struct kp_shape {
    int nd;                  /* number of dims used */
    int64_t d[KP_MAX_DIMS];  /* matmul: M N K; softmax/layernorm: rows cols; sum: n */
} kp_shape;

/* "4096x4096x4096" style; returns bytes written like snprintf. */
int kp_shape_format(const kp_shape *s, char *buf, size_t len);

/* ===== 2. ops ============================================================ */

typedef struct kp_bufdesc {
    const char *name; /* "A", "x", "w", "y" */
    kp_dtype dtype;   /* element type */
    int output;       /* 1 if the candidate writes it, 0 if it only reads it */
} kp_bufdesc;

typedef struct kp_dist {
    const char *name; /* "normal", "large", "offset", ... */
    const char *why;  /* what it stresses, one line */
} kp_dist;

typedef struct kp_shape_set {
    const char *label; /* "canonical" or "edge" */
    int n;
    const kp_shape *shapes;
} kp_shape_set;

typedef struct kp_ref kp_ref;
typedef struct kp_check kp_check;
typedef struct kp_op kp_op;

/* Calls the candidate's entry point `fn` on buffers bufs[0..nbufs) (inputs
 * first, then outputs). `stream` is the cudaStream_t on the cuda backend and
 * NULL on the host backend (where entry points take no stream). */
typedef int (*kp_invoke_fn)(void *fn, void *const *bufs, const kp_shape *s, void *stream, int with_stream);

struct kp_op {
    const char *name;    /* registry key: family + dtype, "softmax_f32" */
    const char *family;  /* "softmax" */
    kp_dtype dtype;      /* the task's dtype */
    const char *entry;   /* C entry point, "kp_softmax_f32" */
    const char *summary; /* one line: what it computes */
    const char *proto;   /* the prototype as C text, without the stream arg */
    int nd;              /* shape rank */
    const char *dim_names[KP_MAX_DIMS];
    int nbufs;
    kp_bufdesc bufs[KP_MAX_BUFS];
    kp_shape_set canonical; /* the benchmark shapes: timed */
    kp_shape_set edge;      /* 1, primes, non-multiples of 8/16/128, long rows */
    kp_shape_set quick;     /* small shapes for a fast run (tests, host demo) */
    int ndists;
    const kp_dist *dists;     /* dists[0] is the default */

    int64_t (*buf_elems)(const kp_shape *s, int buf);
    double (*flops)(const kp_shape *s);     /* napkin FLOPs of one call */
    double (*min_bytes)(const kp_shape *s); /* each input read once, each output written once */
    /* The distribution of buffer `buf` under distribution `dist`. */
    kp_gen (*gen)(const kp_shape *s, int buf, int dist);
    /* A random valid shape drawn for this run (odd sizes, primes...), at most
     * about max_elems elements in its largest buffer. */
    void (*draw_shape)(uint64_t seed, int64_t max_elems, kp_shape *out);
    /* Validates a user-given shape; writes a reason on failure. */
    int (*shape_ok)(const kp_shape *s, char *why, size_t len);
    /* float64 reference and per-element tolerances for one input set. */
    int (*reference)(const kp_op *op, const kp_shape *s, const void *const *in, kp_ref *ref);
    /* Optional: compare by sampling (large matmul). NULL: full comparison
     * against ref->want / ref->tol. `rng` seeds the parent's private
     * choices (sampled indices, projection vectors). */
    int (*check)(const kp_op *op, const kp_shape *s, const void *const *in, const kp_ref *ref,
                 const void *out, uint64_t rng, kp_check *c);
    kp_invoke_fn invoke;
    /* 1 when output row r (d[0] indexes rows) depends only on row r of each
     * input that scales with d[0] and on the whole of the others (weights):
     * the reference of a few rows is then `reference` on a sub-shape of
     * those rows, which lets timing check sampled chunks without building
     * whole references (softmax, layernorm). */
    int row_local;
    /* Optional (matmul): lazy timing sets, whose inputs the parent never
     * holds whole. lazy_at(s) is 0 where timing sets at shape s are built
     * whole, otherwise the length of one sampled column's data (matmul: K).
     * A timed output on a lazy set is then checked from whole output rows
     * and a grid of sampled elements, rows and columns drawn after the call
     * (src/core/protocol/correctness.c): lazy_col writes what every sampled
     * row shares about output column j (matmul: column j of B) into
     * col[0 .. lazy_at(s)); lazy_row computes the float64 want and tol of
     * output row i at ncols columns from their col data (cols: ncols blocks
     * of lazy_at(s)). Both regenerate the inputs they need from (dist,
     * seed) and are pure functions, so the parent runs them on all cores.
     * lazy_row returns non-zero when out of memory. */
    int64_t (*lazy_at)(const kp_shape *s);
    void (*lazy_col)(const kp_op *op, const kp_shape *s, int dist, uint64_t seed, int64_t j, double *col);
    int (*lazy_row)(const kp_op *op, const kp_shape *s, int dist, uint64_t seed, int64_t i, int64_t ncols,
                    const double *cols, double *want, double *tol);
    /* Share of elements whose error may exceed rms limit: see kp_check. */
    double rms_limit; /* limit on the RMS of |err|/tol over all elements */
};

int kp_op_count(void);
const kp_op *kp_op_at(int i);
const kp_op *kp_op_find(const char *name); /* "softmax_f32"; NULL if unknown */
/* Resolves a user's --op and --dtype ("softmax", "bf16" or NULL). */
const kp_op *kp_op_resolve(const char *family_or_name, const char *dtype);
int kp_op_output_buf(const kp_op *op); /* index of the (single) output buffer */
int kp_op_parse_shape(const kp_op *op, const char *text, kp_shape *out, char *why, size_t len);

/* Fills n elements [begin, begin+n) of buffer `buf` of an input set with
 * seed `seed`, in the buffer's dtype, on the CPU. */
void kp_gen_fill(const kp_op *op, const kp_shape *s, int dist, int buf, uint64_t seed, void *dst, int64_t begin,
                 int64_t n);
/* Allocates and fills every input buffer on the CPU (outputs NULL). */
int kp_gen_inputs(const kp_op *op, const kp_shape *s, int dist, uint64_t seed, void *bufs[KP_MAX_BUFS]);
void kp_free_bufs(const kp_op *op, void *bufs[KP_MAX_BUFS]);
/* The checksum of gen.h over n bytes, on the CPU. */
uint64_t kp_cksum(const void *p, size_t n);
/* Its part over n bytes that start at 32-bit word `first_word` of a
 * buffer (a multiple of 4 bytes in): parts add up (mod 2^64) to the whole. */
uint64_t kp_cksum_at(const void *p, size_t n, uint64_t first_word);

/* ===== 3. correctness ==================================================== */

struct kp_ref {
    int64_t n;     /* output elements */
    double *want;  /* n float64 reference values, or NULL when op->check samples */
    double *tol;   /* n per-element tolerances, or NULL */
    void *extra;   /* op-private (matmul: projections for Freivalds) */
    void (*free_extra)(void *extra);
    double loose;  /* > 0: the naive loose-tol flaw is on: an op->check compares its
                      samples against loose + loose |want| and nothing more */
    /* How an op->check may spread its passes: runs fn(ctx, i) for i in
     * [0, n) and returns when all are done (the parent's kp_parallel_for,
     * set by the protocol where it checks); NULL: one after another on the
     * calling thread. The verdict and its evidence do not depend on it. */
    void (*parallel_for)(int n, void (*fn)(void *ctx, int i), void *ctx);
    /* KP_REF_OFFERED, set by a caller before op->reference on a zeroed
     * kp_ref: want and tol already point at n (or more) doubles of the
     * caller's, which kp_ref_alloc hands to the op instead of allocating
     * (it sets KP_REF_TAKEN); kp_ref_free leaves such buffers alone. 0:
     * the reference's own. */
    int borrowed;
};
enum { KP_REF_OFFERED = 0x6b70, KP_REF_TAKEN = 0x6b71 };
void kp_ref_free(kp_ref *r);

struct kp_check {
    int ok;               /* 1: within tolerance everywhere checked */
    int64_t checked;      /* elements compared */
    int64_t bad;          /* elements over their tolerance */
    int64_t poisoned;     /* elements still holding the poison pattern */
    int64_t nonfinite;    /* NaN/Inf elements that are not poison */
    int64_t first_bad;    /* flat output index of the first bad element, -1 if none */
    double got, want, tol;/* at first_bad (at the worst element when ok) */
    double max_ratio;     /* max |got-want|/tol */
    double rms_ratio;     /* RMS of |got-want|/tol */
    double rms_limit;     /* the op's limit for rms_ratio */
    double loose;         /* > 0: the naive loose-tol flaw: every tolerance is loose + loose |want|,
                             no RMS limit, and a poison pattern counts as the NaN it is */
    char method[48];      /* "full", "sampled 4096 + Freivalds x2" */
    char why[200];        /* one line for people when !ok */
};

/* FNV-1a over n bytes, continuing from h (start with KP_FNV_START). */
#define KP_FNV_START 0xcbf29ce484222325ull
uint64_t kp_fnv1a_more(uint64_t h, const void *p, size_t n);
/* Monotonic nanoseconds (CLOCK_MONOTONIC): the one clock of every process. */
uint64_t kp_now_ns(void);
/* The same clock in seconds. */
double kp_wall_s(void);

/* 1 when a kernel name carries the mark of one of NVIDIA's libraries
 * (cuBLAS, cuBLASLt, CUTLASS, cuDNN): a candidate must be its own kernel. */
int kp_is_library_kernel(const char *name);

/* Full comparison of out against ref->want/tol, or op->check when set. */
int kp_check_output(const kp_op *op, const kp_shape *s, const void *const *in, const kp_ref *ref, const void *out,
                    uint64_t rng, kp_check *c);
/* Per-element comparison helper that op-specific checks reuse: folds
 * (got, want, tol) at flat index i into c. Call kp_check_finish at the end. */
void kp_check_begin(kp_check *c, double rms_limit);
/* The same with the loose-tol flaw's `loose` (kp_ref.loose; 0: off): the
 * one place the flaw is applied, whichever check adds the elements. */
void kp_check_begin_loose(kp_check *c, double rms_limit, double loose);
void kp_check_add(kp_check *c, int64_t i, double got, double want, double tol, int poisoned);
/* kp_check_add of n elements of an output of dtype t (got, read in place;
 * poison by its pattern) at flat indices i0.., against want[] and tol[]
 * (tol NULL: 0, as kp_check_add takes it). */
void kp_check_add_n(kp_check *c, int64_t i0, const void *got, kp_dtype t, const double *want, const double *tol,
                    int64_t n);
/* An element seen but not compared (a sampled check's scan): counts poison
 * and NaN/Inf at flat index i; returns 1 when the element is usable. */
int kp_check_scan(kp_check *c, int64_t i, double got, int poisoned);
void kp_check_finish(kp_check *c, const kp_op *op, const kp_shape *s);

/* Floating-point unit roundoff of fp32 (2^-24) and bf16 (2^-8). */
#define KP_U32 5.9604644775390625e-08
#define KP_U16 3.90625e-03

/* ===== 4. statistics ===================================================== */

/* Sorts a copy; q in [0,1]; linear interpolation between order statistics. */
double kp_quantile(const double *x, int n, double q);
double kp_median(const double *x, int n);
double kp_mean(const double *x, int n);
/* Percentile bootstrap interval of the median (conf e.g. 0.95). */
void kp_boot_median_ci(const double *x, int n, double conf, int reps, uint64_t seed, double *lo, double *hi);
/* Bootstrap interval of median(a)/median(b) (a, b resampled independently). */
void kp_boot_ratio_ci(const double *a, int na, const double *b, int nb, double conf, int reps, uint64_t seed,
                      double *lo, double *hi);
/* Relative half-width of the median's interval: (hi-lo)/2/median. */
double kp_rel_halfwidth(const double *x, int n, uint64_t seed);

/* Stopping rule: keep sampling until the relative CI half-width of the
 * median is below `target` (after at least min_samples), or the budget
 * runs out (then NOISY if still above `target`). */
typedef struct kp_stop_rule {
    int min_samples;     /* default 10 */
    int max_samples;     /* default 1000 */
    double target;       /* relative CI half-width, default 0.01 */
    double budget_s;     /* wall-clock seconds for the timing phase, default 10 */
} kp_stop_rule;
/* 1: stop now (settled or out of budget/samples), 0: continue. *settled is
 * set when the noise criterion was met. */
int kp_stop_check(const kp_stop_rule *r, const double *x, int n, double elapsed_s, int *settled);

typedef struct kp_rng { uint64_t s; } kp_rng;
uint64_t kp_rng_next(kp_rng *r);            /* splitmix64 */
double kp_rng_uniform(kp_rng *r);           /* [0,1) */
uint64_t kp_rng_below(kp_rng *r, uint64_t n);
uint64_t kp_entropy_seed(void);             /* from the OS; never constant */

/* ===== 5. evaluation ===================================================== */

typedef enum kp_verdict {
    KP_PASS = 0,
    KP_WRONG = 1,
    KP_REJECTED = 2,
    KP_ERROR = 3,
    KP_NOISY = 4
} kp_verdict;
const char *kp_verdict_name(kp_verdict v);

/* The naive protocol's five flaws, each switchable. */
enum {
    KP_FLAW_LAUNCH = 1 << 0,    /* timing the launch, not the work */
    KP_FLAW_WARM = 1 << 1,      /* warm caches and toy sizes */
    KP_FLAW_ONE_INPUT = 1 << 2, /* one fixed input, checked once (reused memory) */
    KP_FLAW_LOOSE_TOL = 1 << 3, /* loose absolute tolerance */
    KP_FLAW_WEAK_BASE = 1 << 4, /* weak baseline, mean, no speed-of-light bound */
    KP_FLAW_ALL = 0x1f
};
#define KP_NFLAWS 5
const char *kp_flaw_name(int flaw_bit);         /* "launch", "warm", ... */
const char *kp_flaw_title(int flaw_bit);        /* one line for people */
int kp_flaw_parse(const char *s, int *bits);    /* comma list or "all" */

/* Device facts and the speed-of-light ceilings used for sanity bounds. */
typedef struct kp_env {
    char gpu[96];          /* "NVIDIA H200" or the CPU model */
    char gpu_uuid[64];
    char driver[32];
    char runtime[32];      /* CUDA runtime version, or libc for host */
    int sm_count;
    int64_t l2_bytes;      /* last-level cache size used for the flush */
    double peak_gbs;       /* measured copy bandwidth (read+write), GB/s; 0 unknown */
    double peak_gflops_f32;/* measured fp32 GEMM rate, GFLOP/s; 0 unknown */
    double peak_gflops_bf16;
    int sm_mhz_before, sm_mhz_after, mem_mhz_before, mem_mhz_after;
    uint64_t throttle_before, throttle_after;
    char host[64];
    char date[32];         /* ISO 8601, UTC */
} kp_env;

typedef struct kp_eval_opts {
    kp_backend backend;
    const char *candidate;       /* path of the candidate source */
    const kp_op *op;
    int nshapes;                 /* user shapes; 0: the op's sets */
    kp_shape shapes[16];
    int shape_sets;              /* bit 0 canonical, 1 edge, 2 quick, 3 drawn */
    int dist;                    /* -1: every distribution in correctness */
    int nsets;                   /* rotating input sets in timing, >= 8 */
    kp_stop_rule stop;
    double timeout_s;            /* per worker call */
    int flaws;                   /* 0: rigorous; KP_FLAW_* bits: naive */
    int no_baseline;             /* skip baselines */
    int allow_library;           /* library kernels (cuBLAS) allowed in the candidate */
    int unaudited;               /* cuda: no device-work tracing (every row says unaudited) */
    int correctness_only;        /* no timing phase */
    const kp_env *env_hint;      /* device facts already read (demo): skips the calibration worker */
    int user_shapes_plus;        /* with user shapes: still add the edge and drawn shapes */
    int64_t max_elems;           /* skip edge/drawn shapes with a larger buffer (0: backend default) */
    int max_sets;                /* at most this many rotating sets in timing (0: KP_MAX_SETS) */
    int max_baselines;           /* at most this many baselines, strongest kinds first (0: all) */
    const char *baselines[4];    /* candidate files used as baselines; NULL-terminated */
    int nbaselines;
    uint64_t seed;               /* 0: from the OS (the default) */
    int verbose;
    int progress;                /* progress lines on stderr */
    const char *root;            /* project root (kernels/, include/) */
    const char *cache_dir;
} kp_eval_opts;
void kp_eval_opts_default(kp_eval_opts *o);

/* Timing of one candidate at one shape. All times in seconds. */
typedef struct kp_timing {
    int n;                  /* samples */
    double *samples;        /* per-call times (the reported clock) */
    double median, lo, hi;  /* median and its 95% bootstrap interval */
    double min, mean;
    double host_median;     /* worker host clock around call + device sync */
    int host_bound;         /* samples where the call's host enqueue outlasted its device time
                               (held stream; the sample is the enqueue time) */
    double parent_floor;    /* parent-side clock bound per call (batch wall / n) */
    int settled;            /* noise criterion met */
    double sol_time;        /* speed-of-light time at measured peaks; 0 unknown */
    double sol_fraction;    /* sol_time / median */
    double gbs, gflops;     /* achieved rates at the median */
    int input_sets;         /* the input sets timing rotated over (fewer where memory is short) */
    /* Host: the timed requests' own time (the harness's work around the
     * call), the candidate's and the most of its baselines', compared by
     * request_by: 1 the worker's CPU, 2 the parent's clock (10% quantiles
     * either way), 0 not compared; requests whose CPU was read;
     * request_call: the median call an excess is held to half of (by the
     * CPU: the calls' CPU, at most the timed median). */
    double request_own, request_own_base, request_call;
    int request_by, cpu_readings;
} kp_timing;

typedef struct kp_audit_kernel {
    char name[96];
    uint32_t stream;
    int on_given_stream;
    double duration_s;
} kp_audit_kernel;

enum { KP_PH_BUILD, KP_PH_START, KP_PH_CORRECT, KP_PH_AUDIT, KP_PH_TIMING, KP_NPHASES };
const char *kp_phase_name(int phase);

/* A shape's seconds by kind of work (kp_shape_result.work_s): input sets
 * generated and referenced in the parent; SETUP (the worker generates
 * them, the parent compares); calls (RUN); outputs fetched; outputs
 * checked in the parent; device-work accounts; the parent-clock batches;
 * the rest (starting baselines, statistics). */
enum { KP_WORK_GENERATE, KP_WORK_SETUP, KP_WORK_CALLS, KP_WORK_FETCH, KP_WORK_CHECK, KP_WORK_ACCOUNT,
       KP_WORK_FLOOR, KP_WORK_OTHER, KP_NWORK };
const char *kp_work_name(int work);

/* One shape's outcome. */
typedef struct kp_shape_result {
    kp_shape shape;
    const char *origin;     /* "canonical", "edge", "drawn", "user" */
    kp_verdict verdict;
    char check_name[32];    /* which check decided, "poison", "tolerance", "canary", ... */
    char detail[640];       /* evidence, one paragraph for people (the longest messages run to about 520 characters) */
    kp_check check;         /* worst correctness check at this shape */
    int timed;
    kp_timing cand;         /* candidate timing (if timed) */
    char base_name[64];     /* strongest baseline */
    char retired[128];      /* baselines no longer called once over twice as slow as another, comma-separated */
    kp_timing base;
    double speedup, speedup_lo, speedup_hi; /* base.median / cand.median */
    int nkernels;
    kp_audit_kernel kernels[16];
    /* Device-work accounting (cuda): calls whose every operation lay inside
     * their window, those operations, how many on other streams, and
     * operations at load that were over before the first call. */
    int acct_calls, acct_ops, acct_other_stream, acct_load;
    /* Seconds this shape took, every phase of it (correctness, account,
     * baselines' start, timing with its checks and the parent clock). */
    double wall_s;
    /* Where they went: by phase (KP_PH_*; build is never a shape's), and
     * by kind of work (KP_WORK_*, each second counted once), and the
     * seconds of them the device lock was held. */
    double phase_s[KP_NPHASES];
    double work_s[KP_NWORK];
    double lock_held_s;
} kp_shape_result;


typedef struct kp_result {
    kp_verdict verdict;        /* worst over shapes */
    const kp_op *op;
    kp_backend backend;
    char candidate[256];
    char protocol[64];         /* "rigorous" or "naive(launch,warm)" */
    char check_name[32];
    char detail[768];          /* headline evidence (a shape's detail, or a compile log's tail) */
    int unaudited;             /* cuda run without device-work tracing (--unaudited) */
    kp_env env;
    int nshapes;
    kp_shape_result *shapes;
    uint64_t seed;             /* the master seed of this run (for reproduction) */
    double wall_s;
    /* Where wall_s went: building, starting workers (and calibration),
     * correctness, audit, timing (with its checks and the parent clock). */
    double phase_s[KP_NPHASES];
    /* The device lock (one process on a device at a time): seconds spent
     * waiting for it and holding it during this run, and the held seconds
     * by phase (they add up to lock_held_s). */
    double lock_wait_s, lock_held_s;
    double lock_held_phase_s[KP_NPHASES];
    int nwarn;
    char warn[8][200];
    /* Where the candidate ran (filled by the caller of kp_eval, which
     * started the sandboxes): 0 not recorded, then KP_SANDBOX_*. */
    int sandbox;
    int nsandbox_missing;
    char sandbox_missing[8][96]; /* "pid namespace: it sees other processes, ..." */
} kp_result;
enum { KP_SANDBOX_FULL = 1, KP_SANDBOX_PARTIAL = 2, KP_SANDBOX_OFF = 3 };

/* Runs the whole protocol. Returns 0 when a verdict was reached (whatever
 * it is), negative when the harness itself failed (err says why). */
int kp_eval(const kp_eval_opts *o, kp_result *r, char *err, size_t errlen);
void kp_result_free(kp_result *r);

/* Host memory the timing phase of one shape holds (docs/protocol.md,
 * "Timing phase"): nworkers x (worker_base + n x worker_set) + parent_base
 * + n x parent_set with n input sets. A worker's share is 0 where the
 * device's memory is not the host's (CUDA). */
typedef struct kp_timing_mem {
    int64_t worker_base, worker_set, parent_base, parent_set;
    int min_sets;                /* the fewest sets timing rotates over */
} kp_timing_mem;
void kp_timing_mem_of(const kp_eval_opts *o, const kp_shape *sh, kp_timing_mem *m);
int64_t kp_timing_mem_need(const kp_timing_mem *m, int nworkers, int nsets);
/* The workers an eval times with: the candidate and the baselines it finds
 * (1 with --no-baseline; 0 with --correctness, which times nothing). */
int kp_eval_participants(const kp_eval_opts *o);
void kp_result_warn(kp_result *r, const char *fmt, ...);

/* ===== 6. printers ======================================================= */

/* Per shape they also show the SOL score, headroom and regime, derived
 * from the result's own data (kproof/worth.h, docs/worth-it.md). */
void kp_print_table(FILE *f, const kp_result *r);   /* for people */
void kp_print_json(FILE *f, const kp_result *r);    /* schema KP_SCHEMA_VERSION */
void kp_print_md(FILE *f, const kp_result *r);
/* Formats a time with a unit chosen from `ref` (us, ms, s) */
void kp_fmt_time(char *buf, size_t len, double t, double ref);
void kp_json_str(FILE *f, const char *s);           /* JSON string literal */

#ifdef __cplusplus
}
#endif

#endif
