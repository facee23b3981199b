/* protocol_priv.h: what the protocol's files (src/core/protocol/, the story
 * in eval.c) share: the run's context, a participant, an input set, a
 * call's result, and the functions one phase's file calls in another's.
 * Each file's own helpers stay static in it. Parent side only. */
#ifndef KP_PROTOCOL_PRIV_H
#define KP_PROTOCOL_PRIV_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "core/host_api.h"

#define MAX_PART 4         /* candidate + up to 3 baselines */
#define SAMPLE_CHUNKS 64   /* chunks fetched to check a large timed output */
#define CHUNK_ELEMS 2048
#define FULL_CHECK_ELEMS (4 << 20)
/* The check of a timed output on a lazy matmul set (correctness.c): whole
 * output rows, one drawn in each of LAZY_ROWS equal bands (fewer when rows
 * are long: about LAZY_ROW_ELEMS elements in all, at least LAZY_ROWS_MIN
 * rows) plus the first and the last, scanned for poison and NaN/Inf; and a
 * grid of LAZY_GRID x LAZY_GRID of their elements recomputed in float64. */
#define LAZY_ROWS 256
#define LAZY_ROWS_MIN 16
#define LAZY_ROW_ELEMS ((int64_t)1 << 21)
#define LAZY_GRID 64

/* ---- state -------------------------------------------------------------------- */

typedef struct part {      /* a participant: the candidate or a baseline */
    char name[64];
    char path[PATH_MAX];
    char so[PATH_MAX];
    kp_wk *w;
    kp_hello hello;
    int alive;
    int threads_ref;       /* thread count a call may not exceed (-1: not yet known) */
    int64_t mem_kept;      /* memory the worker's guarded calls kept, summed since it started */
    double *t, *th;        /* samples: reported time, host time */
    double *ov;            /* and the RUN request's own time by the parent's clock (request_own) */
    double *ovf;           /* and the same with the flush the worker reported left in */
    double *ovc, *ovfc;    /* and both by the worker's CPU (host; NAN where not read) */
    double *waited;        /* and the share of the request's wall time not on a CPU (NAN: not read) */
    double *callc;         /* and the call's CPU as request_own takes it off (host; NAN: not read) */
    int ov_parallel;       /* kept samples whose request had other threads than the main one working */
    int n, cap;
    int host_bound;        /* kept samples that were the host's enqueue time */
    int retired;           /* a baseline too slow to be the strongest: no longer called this shape */
    int held_sets;         /* its last SETUP's sets, at held_shape: the worker's next SETUP reuses or */
    kp_shape held_shape;   /* frees their memory before it allocates (kpp_timing counts on that) */
    /* Host: kproof writes the inputs into the worker's memory and reads the
     * outputs there itself (kp_wk_mem), at the addresses of the last SETUP. */
    int direct;
    int mem_reached;       /* kproof has read or written the worker's memory */
    int snap_set;          /* the set whose output the worker's snapshot holds, -1 none */
    uint64_t addr[KP_MAX_SETS][KP_MAX_BUFS], snap_addr;
} part;

typedef struct iset {      /* one input set as the parent knows it */
    uint64_t seed;
    void *in[KP_MAX_BUFS];
    uint64_t cksum[KP_MAX_BUFS];
    kp_ref ref;
    int have_ref;
    int64_t ref_cap; /* > 0: ref's want and tol are the reference pool's (inputs.c), this many doubles each */
    /* Lazy (timing sets of large row-local ops, and of matmul where the
     * parent holds no full reference): nothing held but the seed and
     * distribution; what a sampled check needs is generated and referenced
     * when it needs it. */
    int lazy, dist;
} iset;

typedef struct ctx {
    const kp_eval_opts *o;
    const kp_op *op;
    kp_result *r;
    kp_rng rng;
    int flaws;
    kp_calib_rep calib;
    part *trusted;         /* the worker that measured the peaks (NULL: the caller gave them) */
    int peaks_again;       /* the peaks were measured again during this evaluation */
    double shape_t0;
    /* The shape in progress, whose work_s the running kind of work
     * (KP_WORK_*) is charged to since work_t0 (kpp_work). */
    kp_shape_result *work_sr;
    int work;
    /* What a sampled check of a timed output names the call it checks:
     * NULL for "a timed call" (the parent-clock batches name theirs). */
    const char *check_what;
    double work_t0;
    /* The shape's light requests were past their allowance on a machine
     * whose control requests were as slow (account.c): the evidence, for
     * NOISY once every other check of the shape has run ("" none). */
    char light_noise[640];
    /* With it, the control's allowance a light request (ns): the
     * parent-clock batches hold their INPUTS to it too (timing.c). */
    int64_t light_ctl_ns;
} ctx;

/* ---- the naive mode's policy (policy.c) ---------------------------------------- */

typedef enum kpp_guard {   /* a guard of the rigorous protocol; the flaws that drop it: policy.c */
    KPP_G_SYNC,
    KPP_G_HOLD,
    KPP_G_ACCOUNT,
    KPP_G_TIMER,
    KPP_G_FLUSH,
    KPP_G_PERSIST,
    KPP_G_ROTATE,
    KPP_G_FRESH_SETS,
    KPP_G_SHAPES,
    KPP_G_ROUNDS,
    KPP_G_POISON,
    KPP_G_CHECK_TIMED,
    KPP_G_TIGHT_TOL,
    KPP_G_MEDIAN,
    KPP_G_STRONG_BASE,
    KPP_G_SOL,
    KPP_G_LIBRARY,
    KPP_G_TOKEN,
    KPP_G_MISALIGN,
    KPP_G_COUNT
} kpp_guard;

typedef struct kpp_guard_info {
    const char *name;
    int off_by;            /* KP_FLAW_* bits that switch it off */
    const char *what;      /* what it holds, in one line */
} kpp_guard_info;

extern const kpp_guard_info kpp_guards[KPP_G_COUNT];

/* Whether the run keeps guard g (the rigorous protocol keeps every one). */
#define GUARD(c, g) (((c)->flaws & kpp_guards[g].off_by) == 0)

typedef struct run_out { /* one call: the worker's report, the parent's wall time */
    kp_run_rep rep;
    double wall;
    double cpu; /* the worker process's CPU over the request (host), -1 unknown */
    double main_cpu; /* its main thread's, -1 unknown */
} run_out;

typedef struct shape_item { /* a shape to run, where it came from, whether it is timed */
    kp_shape s;
    const char *origin;
    int timed;
} shape_item;

/* A sampled check's chunks of a lazy set (kpp_check_sampled), whose
 * reference kpp_lazy_chunk_ref builds, one chunk per job. */
typedef struct lazy_job {
    const ctx *c;
    const kp_shape *sh;
    const iset *s;
    const int64_t *start;
    double *want, *tol; /* SAMPLE_CHUNKS x CHUNK_ELEMS */
    int failed;
} lazy_job;

/* ---- shared by the phases (eval.c) ------------------------------------------------ */

void kpp_progress(const ctx *c, const char *fmt, ...);
/* Charges the seconds since the last switch to the kind of work running
 * until now, makes `work` the running one and returns the one it
 * replaces: `int was = kpp_work(c, KP_WORK_FETCH); ...; kpp_work(c, was);` */
int kpp_work(ctx *c, int work);
int kpp_decide(kp_shape_result *sr, kp_verdict v, const char *check, const char *fmt, ...);
/* What an excess of the timed requests' own time over the baselines'
 * comes to (timing.c, kpp_request_verdict): PASS, REJECTED, or NOISY as
 * the host was too busy, within the band loaded workers differ by, or
 * the calls waited for a CPU; each for the excess without the flush or,
 * FLUSH_, with it (the FLUSH_ values last). */
typedef enum {
    KPP_OWN_PASS,
    KPP_OWN_REJECTED,
    KPP_OWN_BUSY,
    KPP_OWN_BAND,
    KPP_OWN_WAITED,
    KPP_OWN_FLUSH_REJECTED,
    KPP_OWN_FLUSH_BUSY,
    KPP_OWN_FLUSH_BAND,
    KPP_OWN_FLUSH_WAITED
} kpp_own;
kpp_own kpp_request_verdict(double ex, double fex, double base, double fbase, double ref, double med, int too_busy);
/* The host account's judgement of a phase's light requests (account.c). */
typedef enum { KPP_LIGHT_OK, KPP_LIGHT_BURST, KPP_LIGHT_OVER } kpp_light;
kpp_light kpp_light_verdict(int n, int64_t total_ns, int64_t max_ns, int64_t per);

/* ---- input sets (inputs.c) -------------------------------------------------------- */

void kpp_iset_free(const kp_op *op, iset *s);
/* Host memory one whole set takes in the parent: its inputs, and a float64
 * value and tolerance per output element. */
int64_t kpp_iset_host_bytes(const kp_op *op, const kp_shape *sh);
/* 1: the timing sets at sh are lazy (the parent holds their seeds only). */
int kpp_sets_lazy(const kp_op *op, const kp_shape *sh);
void kpp_ref_pool_drain(void); /* frees the references kept for later sets (inputs.c) */
int kpp_iset_make(ctx *c, const kp_shape *sh, int dist, uint64_t seed, iset *s, int threads, char *err, size_t len);
int kpp_iset_make_many(ctx *c, const kp_shape *sh, int dist, iset *sets, int n, char *err, size_t len);
int kpp_iset_make_rounds(ctx *c, const kp_shape *sh, const int *dist_of, int nr, const uint64_t *seeds, iset *sets,
                         char *err, size_t len);
void kpp_lazy_chunk_ref(void *arg, int j); /* kp_parallel_for over a lazy_job's chunks */

/* ---- participants and their workers (participants.c) ------------------------------ */

int kpp_build_part(ctx *c, part *p, kp_result *r, int is_candidate);
int kpp_worker_failed(ctx *c, part *p, kp_shape_result *sr, int rc, const char *what, const char *err);
int kpp_part_start(ctx *c, part *p, char *err, size_t len);
void kpp_part_stop(part *p);
int kpp_part_setup(ctx *c, part *p, const kp_shape *sh, int dist, iset *sets, int nsets, int guards,
                   const uint32_t *misalign, kp_shape_result *sr);
int kpp_part_run(ctx *c, part *p, int set, int flags, run_out *out, kp_shape_result *sr);
int kpp_judge_run(ctx *c, part *p, const run_out *ro, int flags, kp_shape_result *sr);
int kpp_fetch(ctx *c, part *p, int set, int buf, int64_t off, int64_t bytes, void *dst, kp_shape_result *sr);
int kpp_fetch_ranges(ctx *c, part *p, int set, int buf, int n, const int64_t *off, int64_t bytes, void *dst,
                     kp_shape_result *sr);

/* ---- phase 1 and the output checks (correctness.c) -------------------------------- */

int kpp_check_sampled(ctx *c, part *p, const kp_shape *sh, iset *s, int set, kp_shape_result *sr);
int kpp_rigorous_flags(const ctx *c);
int kpp_correctness(ctx *c, part *p, const kp_shape *sh, kp_shape_result *sr);
int kpp_correctness_one_input(ctx *c, part *p, const kp_shape *sh, kp_shape_result *sr);

/* ---- the device-work account (account.c) ------------------------------------------ */

/* defer_ev (the candidate's timed calls): a timer finding is kept there, not decided. */
int kpp_account(ctx *c, part *p, kp_shape_result *sr, const char *what, int baseline, char *defer_ev, size_t len);
void kpp_account_baseline(ctx *c, part *p, kp_shape_result *bsr);

/* ---- phase 2 and the sanity bounds (timing.c) ------------------------------------- */

int kpp_timing(ctx *c, part *parts, int np, const kp_shape *sh, kp_shape_result *sr);

/* ---- shapes, baselines, calibration (baselines.c) --------------------------------- */

int kpp_pick_shapes(ctx *c, shape_item *items, int cap);
int kpp_find_baselines(ctx *c, part *parts, int maxp, uint64_t cand_hash);
void kpp_calibrate(ctx *c, part *p);
void kpp_env_after(ctx *c, part *p);

#endif
