/* proto.h: the private channel between the parent (kproof) and a worker.
 *
 * The parent starts a worker process per candidate (and per baseline). Two
 * pipes, on fd numbers the parent picks at random, carry framed messages:
 * requests parent -> worker, replies worker -> parent. Every frame carries a
 * magic, the session token (sent first over the request pipe, never on the
 * command line), a sequence number and a checksum of the payload, so bytes a
 * candidate writes anywhere else (stdout, stderr) can never become a result.
 * The worker's stdout and stderr go to a third pipe that the parent drains
 * into a bounded log.
 *
 * The worker reports raw facts (times, checksums, bytes); the parent
 * decides. Payloads are the plain structs below: parent and worker are
 * built from the same tree and run on the same machine.
 */
#ifndef KP_PROTO_H
#define KP_PROTO_H

#include <stdint.h>

#include "kproof/kproof.h"

#define KP_FRAME_MAGIC 0x4b505246u /* "KPRF" */
#define KP_FRAME_MAX (1u << 30)    /* payload bytes per frame (the one-input flaw uploads a whole output) */

typedef struct kp_frame_hdr {
    uint32_t magic;
    uint32_t type;    /* kp_msg */
    uint64_t token;   /* session token */
    uint32_t seq;     /* request number; a reply carries its request's */
    uint32_t len;     /* payload bytes */
    uint64_t cksum;   /* FNV-1a of the payload */
} kp_frame_hdr;

typedef enum kp_msg {
    KP_MSG_HELLO = 1,  /* worker -> parent, unsolicited after loading the candidate */
    KP_MSG_SETUP,      /* allocate and generate input sets */
    KP_MSG_STALE,      /* naive one-input flaw: reference through freed memory */
    KP_MSG_RUN,        /* one call, with the requested guards */
    KP_MSG_FETCH,      /* bytes of an output (the snapshot when one was taken) */
    KP_MSG_BATCH,      /* n calls back to back, for the parent-side clock */
    KP_MSG_PING,       /* empty round trip */
    KP_MSG_ACCOUNT,    /* the device work since the last ACCOUNT, against the calls' windows (cuda) */
    KP_MSG_ENV,        /* device facts and clocks now */
    KP_MSG_CALIBRATE,  /* copy bandwidth and GEMM rates (cuda) */
    KP_MSG_QUIT,
    KP_MSG_OK,         /* reply: payload depends on the request */
    KP_MSG_FAIL,       /* reply: kp_fail */
    KP_MSG_FETCHV,     /* several equal ranges of an output in one reply */
    KP_MSG_INPUTS      /* host, parent-filled sets: the inputs are in place; their checksums */
} kp_msg;

#define KP_MAX_SETS 32

/* HELLO (worker -> parent) */
typedef struct kp_hello {
    int32_t status;        /* 0 loaded; else KP_LOAD_* */
    int32_t pid;
    int32_t threads;       /* threads in the worker after loading */
    int32_t with_stream;   /* entry point takes a stream (cuda) */
    int32_t traced;        /* 1: the device-work tracer runs (cuda); 0: trace_error says why */
    char error[512];       /* dlopen/dlsym/device error text */
    char trace_error[200];
} kp_hello;
enum { KP_LOAD_OK = 0, KP_LOAD_DLOPEN = 1, KP_LOAD_NOSYM = 2, KP_LOAD_DEVICE = 3, KP_LOAD_OP = 4 };

/* SETUP. Every buffer's data starts 16-byte aligned (the blocks are
 * 256-byte aligned on cuda, 64 on the host, and the guards 4 KiB), unless
 * its set's misalign bit says otherwise: then it starts one element (4
 * bytes for f32, 2 for bf16) past a 16-byte boundary, aligned to its
 * element type only, which is all kernel.h promises. The guards still sit
 * right before and after the data. */
typedef struct kp_setup_req {
    char op[32];
    kp_shape shape;
    int32_t dist;
    int32_t nsets;
    uint64_t seeds[KP_MAX_SETS];
    int32_t guards;          /* 1: canaries around every buffer */
    uint32_t misalign[KP_MAX_SETS]; /* per set: bit b puts buffer b one element past a 16-byte boundary */
    /* 1 (host): allocate, guard and poison only; kproof writes the inputs
     * into the worker's memory itself, then sends INPUTS, the only request
     * the worker serves between the inputs landing and the first call's.
     * The seeds are then 0: the worker has no use for them. */
    int32_t parent_fills;
    int32_t pad;
} kp_setup_req;
/* (The host exploits that read these frames, in exploits/host/, spell
 * out their sizes and offsets: change them with the structs.) */
typedef struct kp_setup_rep {
    uint64_t in_cksum[KP_MAX_SETS][KP_MAX_BUFS]; /* checksums of the generated inputs (0 when parent_fills) */
    double gen_s;            /* time to generate, for progress */
    int64_t bytes;           /* device bytes allocated */
    /* Where each buffer's data starts, and the output snapshot, in the
     * worker's address space (host: kproof reads and writes them there). */
    uint64_t addr[KP_MAX_SETS][KP_MAX_BUFS];
    uint64_t snap_addr;
} kp_setup_rep;

/* INPUTS: kp_inputs_req; empty reply. What a RUN's guards compare each
 * input against. */
typedef struct kp_inputs_req {
    uint64_t in_cksum[KP_MAX_SETS][KP_MAX_BUFS];
} kp_inputs_req;

/* STALE: payload is kp_stale_req followed by the output's bytes */
typedef struct kp_stale_req {
    int32_t set;
    int32_t pad;
    int64_t bytes;
} kp_stale_req;

/* RUN */
enum {
    KP_RUN_POISON = 1 << 0,   /* poison outputs before the call */
    KP_RUN_FLUSH = 1 << 1,    /* evict caches (and reset L2 persistence) before the call */
    KP_RUN_SYNC = 1 << 2,     /* device-wide synchronize inside the timed window */
    KP_RUN_GUARDS = 1 << 3,   /* check canaries and input checksums after the call */
    KP_RUN_SNAPSHOT = 1 << 4, /* copy the output at the end of the timed window */
    KP_RUN_THREADS = 1 << 5,  /* count threads before and after */
    KP_RUN_SETTLE = 1 << 6,   /* then wait (up to 200 ms) for the count to fall back */
    KP_RUN_BLOCK = 1 << 7     /* hold the given stream while the call enqueues (cuda) */
};
typedef struct kp_run_req {
    int32_t set;
    int32_t flags;
} kp_run_req;
typedef struct kp_run_rep {
    int32_t rc;               /* the entry point's return value */
    int32_t dev_error;        /* backend error after the call (cuda: cudaGetLastError / sync) */
    char dev_error_text[128];
    double event_s;           /* events on the given stream (host backend: host clock) */
    double host_s;            /* host clock around call (+ device sync when KP_RUN_SYNC) */
    double flush_s;
    int32_t canary_bad;       /* bitmask of buffers whose guards changed */
    int32_t inputs_changed;   /* bitmask of input buffers whose checksum changed */
    int32_t threads_before, threads_after; /* threads + child processes */
    int32_t persist;          /* the call left L2 persistence set up (cuda) */
    int32_t threads_settled;  /* KP_RUN_SETTLE: the count after waiting for it to fall */
    int64_t mem_grown;        /* bytes of device memory the call kept */
    double enqueue_s;         /* host clock around the call alone */
    int32_t blocked;          /* KP_RUN_BLOCK: 1 held and released, 2 the hold timed out, 0 not held */
    int32_t pad;
    /* The worker's main thread's CPU over the call's window and over the
     * flush: the worker's own report, which the candidate could forge, so
     * kproof takes no more of it than event_s and flush_s. */
    double event_cpu_s, flush_cpu_s;
} kp_run_rep;

/* FETCH: reply payload is the raw bytes */
typedef struct kp_fetch_req {
    int32_t set;
    int32_t buf;              /* buffer index (an output) */
    int64_t offset, bytes;    /* byte range */
} kp_fetch_req;

/* FETCHV: n ranges of one buffer, each `bytes` long, in one reply (their
 * bytes in order): the whole output rows a lazy matmul check reads. The
 * snapshot when one was taken, as FETCH. */
#define KP_FETCHV_MAX 512
typedef struct kp_fetchv_req {
    int32_t set;
    int32_t buf;
    int32_t n;
    int32_t pad;
    int64_t bytes;            /* per range */
    int64_t offset[KP_FETCHV_MAX];
} kp_fetchv_req;

/* BATCH */
typedef struct kp_batch_req {
    int32_t set;
    int32_t n;
    int32_t call;             /* 1: poison, call, n times; 0: the same without the call */
    int32_t rotate;           /* > 1: call i on set `set + i % rotate` (each its own inputs); else all on `set` */
} kp_batch_req;
typedef struct kp_batch_rep {
    double host_s;            /* worker's own clock around the n calls + sync */
    int32_t rc;
} kp_batch_rep;

/* ACCOUNT. The tracer (cuda: CUPTI) runs from before the candidate loads
 * to the end. Each call (RUN or one call of a BATCH) owns a window on the
 * device: from the end of the mark before its start event (the stream hold
 * when the call is held) to the start of the mark after its stop event,
 * and the range of API correlation ids between its start and stop events.
 * An operation launched inside a call's range must run inside that call's
 * window; one launched outside every range by the worker's own thread is
 * the harness's (on its private stream); anything else is outside. */
enum {
    KP_ACCT_INSIDE = 0,
    KP_ACCT_LATE,     /* launched in a call, still running after its stop mark */
    KP_ACCT_EARLY,    /* launched in a call, started before its start mark */
    KP_ACCT_BETWEEN,  /* launched outside every call (another thread, or after the return) */
    KP_ACCT_LOAD,     /* launched while the candidate loaded, still running at the first call */
    KP_ACCT_RACE,     /* launched by another thread, its launch not returned when the call returned */
    KP_ACCT_OVERTIME  /* on the given stream before the stop event, yet ended after start + the events' time */
};
enum { KP_ACCT_THREAD_UNKNOWN = 0, KP_ACCT_THREAD_CALLER = 1, KP_ACCT_THREAD_OTHER = 2 };
#define KP_ACCT_SHOW 8
#define KP_ACCT_KERNELS 16
typedef struct kp_acct_op {
    char name[96];
    uint32_t stream;          /* tracer's stream id */
    uint32_t kind;            /* 0 kernel, 1 memcpy, 2 memset */
    int32_t where;            /* KP_ACCT_* */
    int32_t thread;           /* KP_ACCT_THREAD_* */
    int32_t tid;              /* the launching thread's id when another thread */
    int32_t call;             /* calls since the last ACCOUNT, 0-based; -1 none */
    double outside_s;         /* how far outside its window it ran (BETWEEN, LOAD: its duration) */
    double duration_s;
    double event_s;           /* OVERTIME: the events' time its call reported */
} kp_acct_op;
typedef struct kp_acct_rep {
    int32_t supported;        /* 0: no tracer (host, or it could not start: error says why) */
    int32_t calls;            /* calls accounted */
    int32_t ops_inside;       /* the candidate's operations inside their call's window */
    int32_t ops_other_stream; /* of those, on a stream other than the given one */
    int32_t ops_outside;      /* operations outside every window (OVERTIME ones included) */
    int32_t ops_overtime;     /* of those, OVERTIME: the events' time contradicts the trace */
    int32_t ops_load;         /* operations launched while loading that ended before the first call */
    int32_t missing_marks;    /* calls whose window marks are missing from the trace */
    int32_t dropped;          /* records the tracer lost */
    int32_t library;          /* library kernels among the candidate's operations */
    int32_t harness_lost;     /* calls the worker could not keep a record of (its own memory) */
    uint32_t given_stream;
    int32_t nshow, nkernels;
    char library_name[96];
    char error[200];
    kp_acct_op show[KP_ACCT_SHOW];       /* the first operations outside */
    kp_acct_op kernels[KP_ACCT_KERNELS]; /* distinct operations of the candidate seen inside */
} kp_acct_rep;

/* CALIBRATE */
typedef struct kp_calib_rep {
    double copy_gbs;          /* device copy, bytes read + written per second / 1e9 */
    double gemm_f32_gflops;   /* cuBLAS SGEMM, TF32 off */
    double gemm_tf32_gflops;
    double gemm_bf16_gflops;
    char note[160];
} kp_calib_rep;

/* FAIL */
typedef struct kp_fail {
    int32_t code;
    char error[256];
} kp_fail;

/* Framing, used by both sides (proto.c). */
uint64_t kp_fnv1a(const void *p, size_t n);
/* Blocking write of a whole frame; 0 ok, -1 error. */
int kp_frame_write(int fd, uint32_t type, uint64_t token, uint32_t seq, const void *payload, uint32_t len);
int kp_frame_write2(int fd, uint32_t type, uint64_t token, uint32_t seq, const void *a, uint32_t alen, const void *b,
                    uint32_t blen);
/* Blocking read of exactly n bytes; 0 ok, -1 error or EOF. */
int kp_read_full(int fd, void *p, size_t n);
/* Blocking write of all n bytes (again after EINTR); 0 ok, -1 error. The
 * one write-all of the tree: frames, and the session token before them. */
int kp_write_full(int fd, const void *p, size_t n);

#endif
