/* worth.h: is more speed worth chasing? Speed of light, headroom, regime,
 * Amdahl, SOL score; comparing two runs; reading results and profiles.
 *
 *   1. ceilings and the speed of light of one call
 *   2. the judgement for one shape (headroom, Amdahl, a sentence)
 *   3. result files read back (the inverse of kp_print_json)
 *   4. comparing two runs
 *   5. torch.profiler Chrome traces
 *   6. the HTML report
 *
 * The model is the roofline (Williams, Waterman, Patterson, "Roofline: an
 * insightful visual performance model for multicore architectures", CACM
 * 2009): a call takes at least max(bytes / bandwidth, FLOPs / peak); the
 * op's arithmetic intensity (FLOPs per byte) against the ridge point
 * (peak / bandwidth) says which ceiling binds. Amdahl's law (Amdahl, AFIPS
 * 1967) turns a kernel's speedup into the workload's. The SOL score is
 * SOL-ExecBench's. docs/worth-it.md works through all of it.
 */
#ifndef KPROOF_WORTH_H
#define KPROOF_WORTH_H

#include "kproof/kproof.h"
#include "kproof/limits.h"

/* ===== 1. ceilings and the speed of light ================================= */

typedef enum kp_regime {
    KP_REGIME_UNKNOWN = 0, /* no ceilings for this device */
    KP_REGIME_MEMORY,      /* intensity below the ridge: bytes bind */
    KP_REGIME_COMPUTE,     /* intensity at or above the ridge: FLOPs bind */
    KP_REGIME_LAUNCH       /* the work at the speed of light takes less than a launch */
} kp_regime;
const char *kp_regime_name(kp_regime r); /* "memory-bound", ..., "unknown" */

/* The ceilings one op is held against on one device. */
typedef struct kp_ceilings {
    const kp_limits *limits; /* the datasheet entry (never NULL; maybe the unknown one) */
    double bw_gbs;           /* memory ceiling of the speed of light, GB/s: the measured copy when known, else the datasheet's */
    int bw_measured;         /* 1: bw_gbs is the calibration's copy bandwidth */
    double phys_bw_gbs;      /* the datasheet's bandwidth (0 unknown) */
    double peak_gflops;      /* compute ceiling for this op, GFLOP/s (kp_limits_sol_gflops; 0 unknown) */
    int peak_measured;       /* 1: not in the table, 1.3x the calibration's GEMM rate instead */
    double gemm_gflops;      /* the calibration's measured GEMM rate for this dtype (0 unknown) */
    double launch_s;         /* launch overhead (0 unknown: never launch-bound) */
} kp_ceilings;

/* From the device's name (kp_limits_for(env->gpu)) and its calibration
 * (env->peak_gbs, env->peak_gflops_*; 0 = not measured). A GPU not in the
 * table falls back to 1.3x the measured GEMM rate for arithmetic, as the
 * eval's own bound does. */
void kp_ceilings_for(const kp_op *op, const kp_env *env, kp_ceilings *c);

typedef struct kp_sol {
    double bytes;      /* op->min_bytes */
    double flops;      /* op->flops */
    double intensity;  /* flops / bytes, FLOP/byte */
    double ridge;      /* peak / bandwidth, FLOP/byte (0 unknown) */
    double mem_s;      /* bytes / bw_gbs (0 unknown) */
    double compute_s;  /* flops / peak_gflops (0 unknown) */
    double sol_s;      /* the speed of light: max(mem_s, compute_s); 0 unknown */
    double phys_s;     /* the same at the datasheet bandwidth: a harder floor (0 unknown) */
    kp_regime regime;
} kp_sol;
void kp_sol_compute(const kp_op *op, const kp_shape *s, const kp_ceilings *c, kp_sol *out);

/* SOL-ExecBench's score: S = 1 / (1 + (t_k - t_sol) / (t_b - t_sol)):
 * 0.5 when the kernel matches the baseline, 1 at the speed of light, above
 * 1 past it (a ceiling set by a measured copy can be beaten by a
 * read-only stream). NAN when undefined (a time unknown, t_b <= t_sol). */
double kp_sol_score(double t_k, double t_b, double t_sol);
/* The largest speedup left: t / t_sol (NAN unknown). */
double kp_headroom(double t, double t_sol);
/* Amdahl: the workload's speedup when a share of its time runs `speedup`
 * times faster: 1 / ((1 - share) + share / speedup). NAN when share is
 * outside (0, 1] or speedup <= 0. */
double kp_amdahl(double share, double speedup);

/* ===== 2. the judgement for one shape ===================================== */

/* Thresholds of the decision (docs/worth-it.md says why these). */
#define KP_WORTH_KERNEL_NOT 1.10   /* headroom below this: not worth it */
#define KP_WORTH_KERNEL_YES 1.50   /* headroom at least this: worth it */
#define KP_WORTH_E2E_NOT 1.02      /* with a share: end-to-end gain below this: not worth it */
#define KP_WORTH_E2E_YES 1.10      /* with a share: at least this: worth it */

typedef struct kp_worth {
    kp_shape shape;
    kp_sol sol;
    double best_s;          /* the best measured time (0 unknown) */
    char best_name[96];     /* which kernel ran it */
    double sol_fraction;    /* sol_s / best_s (NAN unknown) */
    double headroom;        /* best_s / sol_s (NAN unknown) */
    double headroom_phys;   /* best_s / phys_s (NAN unknown) */
    double share;           /* the op's share of the workload, 0 none */
    double gain_max;        /* Amdahl at max(headroom, 1) (NAN without a share) */
    double speedup;         /* a given or measured speedup (0 none) */
    char speedup_from[64];  /* "given", or the measurement it came from */
    double gain_speedup;    /* Amdahl at that speedup (NAN without both) */
    const char *decision;   /* "worth it", "marginal", "not worth it", "launch-bound", "unknown" */
    char sentence[512];     /* one plain sentence with the numbers */
} kp_worth;

/* Judges one shape; best_s 0 when no measurement is known. share 0 when
 * none was given; speedup 0 when none. */
void kp_worth_judge(const kp_op *op, const kp_shape *s, const kp_ceilings *c, double best_s, const char *best_name,
                    double share, double speedup, const char *speedup_from, kp_worth *w);

/* The per-shape figures of an eval result that the printers show (table,
 * JSON, markdown, HTML): derived from the result's data alone. */
typedef struct kp_shape_worth {
    int known;          /* 0: no speed of light (unknown device, or not timed) */
    kp_sol sol;
    double score;       /* kp_sol_score(candidate, baseline, sol) (NAN without a baseline) */
    double headroom;    /* candidate median / sol_s (NAN unknown) */
} kp_shape_worth;
void kp_shape_worth_of(const kp_result *r, const kp_shape_result *sr, kp_shape_worth *out);

/* ===== 3. result files read back ========================================== */

/* Fills r from a parsed result file (schema 1, any later additive one):
 * verdicts, env, per-shape timings and baselines, samples when the file
 * has them (`samples_s`). *schema gets the file's schema number. Free with
 * kp_result_free. 0 ok; -1 with err set (one line) when it is not a kproof
 * result or names an op this build does not know. */
struct kp_json;
int kp_result_from_json(const struct kp_json *root, kp_result *r, int *schema, char *err, size_t errlen);
/* The same from a file: err names the file and what is wrong with it
 * ("empty", "truncated: ...", "not a kproof result"). */
int kp_result_read_file(const char *path, kp_result *r, int *schema, char *err, size_t errlen);
/* The kernel name a result's candidate path stands for: the file name
 * without its directory and extension ("f32-10-keep-x"). */
void kp_candidate_label(const char *path, char *buf, size_t len);

/* ===== 4. comparing two runs ============================================== */

typedef enum kp_cmp_status {
    KP_CMP_SAME = 0,  /* the ratio's interval lies within +-margin of 1 */
    KP_CMP_FASTER,    /* B faster: the ratio's interval below 1 and the medians' intervals apart */
    KP_CMP_SLOWER,    /* B slower: the ratio's interval above 1 and the medians' intervals apart */
    KP_CMP_AMBIGUOUS  /* the intervals cannot tell */
} kp_cmp_status;
const char *kp_cmp_status_name(kp_cmp_status s);

typedef struct kp_cmp {
    double a_med, a_lo, a_hi; /* A's median and its interval, seconds */
    double b_med, b_lo, b_hi;
    double ratio;             /* b_med / a_med: below 1 is B faster */
    double ratio_lo, ratio_hi;/* its 95% interval */
    int from_samples;         /* 1: bootstrapped from both runs' samples; 0: from the stored intervals */
    kp_cmp_status status;
} kp_cmp;

/* Compares one shape's two timings (B against A). With samples on both
 * sides, the ratio's interval is a bootstrap (kp_boot_ratio_ci, `seed`);
 * otherwise it comes from the stored 95% intervals, each read as normal on
 * the log scale (its lower and upper halves apart), the ratio's halves
 * added in quadrature. margin: the relative difference that counts as the
 * same (0.02 = 2%). -1 when either timing has no median. */
int kp_compare_timing(const kp_timing *a, const kp_timing *b, double margin, uint64_t seed, kp_cmp *out);

/* 0 when two results may be compared; otherwise -1 and why (one line):
 * different ops (name and dtype), devices (GPU name and backend) or
 * schema versions. */
int kp_compare_refusal(const kp_result *a, int schema_a, const kp_result *b, int schema_b, char *why, size_t len);

/* ===== 5. torch.profiler Chrome traces ==================================== */

typedef struct kp_trace_kernel {
    char *name;          /* the kernel name as the trace has it */
    double total_s;      /* summed duration */
    int64_t calls;
    const char *family;  /* the kproof op family ("softmax", "layernorm", "matmul", "sum"), or NULL */
    const char *why;     /* the name pattern that mapped it, or NULL */
} kp_trace_kernel;

typedef struct kp_trace {
    int n;               /* distinct kernel names */
    kp_trace_kernel *k;  /* sorted by total_s, largest first */
    double total_s;      /* all GPU kernel time */
    double memcpy_s;     /* memcpy and memset time, not counted in the shares */
    int64_t events;      /* kernel events read */
} kp_trace;

/* Reads the GPU kernel events of a parsed Chrome trace: the object with a
 * "traceEvents" array or a bare array of events, events with "ph": "X",
 * "cat": "kernel" and a duration "dur" in microseconds. -1 with err (one
 * line) when it is not a trace or holds no kernel event. */
int kp_trace_read(const struct kp_json *root, kp_trace *t, char *err, size_t errlen);
void kp_trace_free(kp_trace *t);
/* The kproof op family a kernel name maps onto, or NULL; *why gets the
 * pattern that matched (case-insensitive, first match in a fixed order). */
const char *kp_trace_family(const char *kernel_name, const char **why);
/* The share of kernel time of the kernels mapped onto a family (0..1). */
double kp_trace_share(const kp_trace *t, const char *family);

/* ===== 6. the HTML report ================================================= */

/* One self-contained page (no scripts, no network, no fonts): per result
 * its verdict and evidence, the per-shape table and an SVG roofline of the
 * device with the candidate and its baseline as labelled points per
 * shape. paths[i] names results[i] in the page (NULL allowed). */
void kp_print_html(FILE *f, const kp_result *const *results, const char *const *paths, int n);

#endif
