/* backends.h: what each backend is, in one descriptor per backend
 * (src/core/backend.c). Every part of kproof that differs by backend reads
 * it here instead of testing the backend by name: the candidate's file and
 * build, the worker and its sandbox, the device lock, the protocol's
 * margins and caps, and the command's defaults. Adding a backend is a new
 * row of the table (docs/extending.md). */
#ifndef KPROOF_BACKENDS_H
#define KPROOF_BACKENDS_H

#include <stdint.h>

#include "kproof/kproof.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kp_backend_info {
    kp_backend id;
    const char *name;          /* "host": --backend, kernels/<op>/<name>/, kproof-worker-<name> */
    const char *alias;         /* also accepted by --backend: "cpu" */
    const char *title;         /* for people: "host", "CUDA" */
    const char *src_ext;       /* a candidate's extension, without the dot: "c", "cu" */
    const char *files;         /* the files taken as its candidates, for messages: ".cu", "not .cu" */
    int other_files;           /* 1: a file of no backend's extension is this backend's */
    int gpu;                   /* 1: a GPU (device files in the worker's sandbox, a driver that may not load) */
    int stream_arg;            /* 1: entry points take the stream (kernel.h's KP_STREAM_ARG) */

    /* Building a candidate (src/proc/build.c). */
    const char *compiler_env;  /* the variable that names the compiler: "CC" */
    const char *compiler;      /* its default: "cc" */
    const char *const *cflags; /* NULL-terminated: the flags before -I<root>/include */
    const char *const *libs;   /* NULL-terminated: what is linked after the output */
    int build_for_cpu;         /* 1: built for this CPU (-march=native): its model and flags key the cache */
    int64_t build_as_limit;    /* the compiler's address-space limit, per process */
    int64_t build_fsize_limit; /* the largest file it may write */
    double build_timeout_s;    /* default of KPROOF_BUILD_TIMEOUT */

    /* Workers (src/proc/). */
    const char *worker_missing_hint; /* appended when kproof-worker-<name> is not built */
    const char *trusted_fail_hint;   /* appended when the calibration worker does not start */
    const char *lock_env;      /* NULL: one device lock named after the backend; else the variable whose
                                  first entry names the device ("cuda-<entry>", "cuda-0" when unset) */
    int64_t worker_mem_limit;  /* a candidate's worker's address-space limit (0: none: the CUDA driver
                                  maps huge virtual ranges) */

    /* The protocol (src/core/protocol/). */
    int threads_at_hello;      /* 1: the worker's thread count at HELLO is the thread check's reference;
                                  0: the count a first call settles back to (a runtime's own threads) */
    int has_tracer;            /* 1: a device-work tracer: no account, no PASS (unless --unaudited) */
    int physical_limits;       /* 1: a known device's datasheet limits (kproof/limits.h) bound a time */
    double sol_margin;         /* otherwise: a median this many times under the measured peaks is REJECTED */
    int timed_quick;           /* 1: the op's quick shapes are timed instead of its canonical ones */
    double edge_max_flops;     /* edge shapes above these are skipped (0: no cap) */
    double edge_max_bytes;
    int64_t drawn_max_elems;   /* drawn shapes' largest buffer, at most */

    /* The command (src/cli/). */
    double eval_budget_s;      /* kproof eval's timing budget per shape (0: the protocol's default) */
    double eval_target;        /* and its interval target (0: the protocol's default) */
    double demo_timeout_s;     /* the demo's per-call timeout */
    double demo_budget_s;      /* its timing budget per shape */
    int64_t demo_max_elems;    /* its cap on edge and drawn shapes */
    int demo_medium_shapes;    /* 1: the demo's medium shapes; 0: the op's quick set */
    int demo_parallel;         /* 1: the demo's rows run in parallel processes by default */
} kp_backend_info;

/* The descriptor of a backend (never NULL for a kp_backend value). */
const kp_backend_info *kp_backend_get(kp_backend b);
/* The backend a candidate file is for, by its extension. */
const kp_backend_info *kp_backend_for_file(const char *path);

#ifdef __cplusplus
}
#endif

#endif
