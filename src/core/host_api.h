/* host_api.h: what the protocol (core) needs from the operating system,
 * implemented in src/proc/ (POSIX). Core code calls these and nothing else
 * that is OS-specific: workers, candidate builds, the calibration cache. */
#ifndef KP_HOST_API_H
#define KP_HOST_API_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kproof/kproof.h"
#include "proto/proto.h"

/* ---- workers ---------------------------------------------------------------- */

typedef struct kp_wk kp_wk;

enum {
    KP_WK_OK = 0,
    KP_WK_FAIL = 1,      /* the worker answered KP_MSG_FAIL (err holds its text) */
    KP_WK_DIED = -1,     /* the worker exited or was killed (err says how) */
    KP_WK_TIMEOUT = -2,  /* no answer in time; the worker was killed */
    KP_WK_FRAME = -3,    /* a frame that is not ours: wrong token, magic, checksum, size */
    KP_WK_SYS = -4,      /* the harness could not do it (fork, pipe, ...) */
    KP_WK_FLOOD = -5     /* it printed more than KP_WK_LOG_LIMIT bytes; the worker was killed */
};
/* What a worker may print (stdout and stderr, over its life) before it is
 * killed: far more than any diagnostics, and reached in well under a second
 * by a candidate that floods, so a flood ends at once, not at the call's
 * deadline (which on a GPU holds the device lock all that time). */
#define KP_WK_LOG_LIMIT ((int64_t)64 << 20)

typedef struct kp_wk_opts {
    kp_backend backend;
    const char *op;          /* op name */
    const char *so_path;     /* the built candidate */
    double start_timeout_s;  /* until HELLO */
    int check_token;         /* 0 only in the naive weak-base flaw */
    int64_t mem_limit;       /* host backend: address-space limit in bytes (0: none) */
    int untraced;            /* 1: the worker runs without its device-work tracer (--unaudited) */
} kp_wk_opts;

/* Starts a worker and waits for its HELLO. On KP_WK_OK *out is set, even
 * when hello->status reports a load failure (then stop it). */
int kp_wk_start(const kp_wk_opts *o, kp_wk **out, kp_hello *hello, char *err, size_t errlen);
/* One request and its reply. `rep` receives at most repcap bytes; *replen
 * the payload size. The parent's wall time of the exchange is kept. */
int kp_wk_call(kp_wk *w, uint32_t type, const void *req, size_t reqlen, const void *extra, size_t extralen, void *rep,
               size_t repcap, size_t *replen, double timeout_s, char *err, size_t errlen);
double kp_wk_last_wall(const kp_wk *w);
/* The worker process's CPU (every thread) over the last exchange, read
 * from the kernel at its edges with accounting on (kp_wk_cpu_start), in
 * s; -1 when not measured. */
double kp_wk_last_cpu(const kp_wk *w);
/* The same for the worker's main thread alone (its run time in
 * /proc/<pid>/task/<pid>/schedstat), -1 when not measured. */
double kp_wk_last_main_cpu(const kp_wk *w);

/* CPU work of a host worker, read from outside it: the process's CPU clock
 * (every thread, ended ones included), in ns, taken just before each
 * request is written and just after its reply is read, and around requests
 * that run no call its main thread's run time too
 * (/proc/<pid>/task/<pid>/schedstat). The candidate shares the
 * worker's process and could forge anything the worker reports; these
 * numbers come from the kernel. */
typedef struct kp_wk_cpu {
    int on;                      /* the numbers below are measured */
    /* Since the last kp_wk_cpu_get with take: */
    int64_t idle_ns, idle_max_ns; /* between requests (the worker waits to read) */
    int gaps;
    int64_t side_ns, side_max_ns; /* threads other than the main one, in requests that run no call */
    int side_type;               /* the request type of side_max_ns */
    /* The main thread's run time in light requests (INPUTS, PING,
     * ACCOUNT: a few microseconds of the harness's own work each). */
    int64_t light_ns, light_max_ns;
    int light_n;
    int light_type;              /* the request type of light_max_ns */
} kp_wk_cpu;
/* Turns accounting on for a started host worker (0 ok, -1 when the kernel
 * does not give the numbers: then it stays off). */
int kp_wk_cpu_start(kp_wk *w);
/* The numbers so far; take=1 also resets the accumulators. */
kp_wk_cpu kp_wk_cpu_get(kp_wk *w, int take);
/* Processes in the worker's sandbox besides its init and the worker (a
 * daemon it left), and the CPU of children that ended (reaped by the
 * worker or by init), in ns at the kernel's tick. -1 when unknown. */
int kp_wk_strays(kp_wk *w, int64_t *children_cpu_ns);
/* Reads (write = 0) or writes n bytes at addr in the worker process's own
 * memory, from kproof, without any code of the worker's running: the host
 * backend's inputs go in and its outputs come out this way, where a
 * candidate that hooks the worker's calls cannot act. Needs accounting on
 * (kp_wk_cpu_start found the process). 0 done; else an errno: EFAULT the
 * range is not mapped there (the candidate unmapped or never had it),
 * ESRCH the worker is gone, EPERM/ENOSYS the machine does not allow it. */
int kp_wk_mem(kp_wk *w, int write, uint64_t addr, void *buf, size_t n);
/* 1 when nothing a worker does can take its memory from kproof (the
 * worker runs in a user namespace kproof made, or kproof holds
 * CAP_SYS_PTRACE): a refusal is then the machine's policy. Otherwise a
 * worker that makes itself not dumpable refuses kproof. */
int kp_wk_mem_assured(void);
/* The tail of what the worker printed (stdout + stderr), and how much. */
const char *kp_wk_log(const kp_wk *w, int64_t *total_bytes);
void kp_wk_stop(kp_wk *w);
/* 0 when the worker executable of this backend is built; else err says so. */
int kp_wk_available(kp_backend b, char *err, size_t errlen);
/* kproof's temporary folder (devlock.c), for the device lock, builds, the
 * workers' private copies and the cache without HOME alike: $TMPDIR when
 * set and not empty, else /tmp; NULL, with why naming the folder and the
 * reason, when it is not an absolute path of at most KP_TMPDIR_MAX
 * characters to a folder this process can write. Nothing falls back to
 * another folder. */
#define KP_TMPDIR_MAX 200
const char *kp_tmp_dir(char *why, size_t len);
/* The device lock (devlock.c): opens the lock of this process's device
 * (0 ok; -1 when it cannot be opened: every hold(1) then fails with the
 * reason, so nothing runs on the device unlocked); hold(1)/hold(0) take
 * and give it, re-entrant. kp_wk_call, kp_wk_start and kp_wk_stop hold it.
 * A process that never opens it locks nothing. */
int kp_devlock_open_backend(kp_backend be);
/* hold(1) returns -1 when the lock could not be had within its bound or
 * could not be opened (kp_devlock_error says who holds it, or why); hold(0)
 * must follow all the same. */
int kp_devlock_hold(int on);
const char *kp_devlock_error(void);
/* 1 when a take of the lock since it was opened failed (its bound passed,
 * or it could not be opened): kp_devlock_error says why. */
int kp_devlock_failed(void);
/* on: say once on stderr when this process first waits for the lock
 * (kproof eval; the demo's rows wait for each other by design). */
void kp_devlock_announce(int on);
/* Seconds this process has waited for the lock and held it, in total. */
void kp_devlock_times(double *wait_s, double *held_s);
/* Runs fn(ctx, i) for i in [0, n) on up to the machine's cores; returns
 * when all are done. The parent's own CPU work (inputs, references). */
void kp_parallel_for(int n, void (*fn)(void *ctx, int i), void *ctx);
/* The same on at most `threads` threads (0: the machine's cores). */
void kp_parallel_for_n(int n, int threads, void (*fn)(void *ctx, int i), void *ctx);
int kp_cores(void); /* cores this process may run on (its affinity), at least 1 */
int64_t kp_host_mem_bytes(void); /* physical memory of this machine */
/* Memory a new allocation can take without swapping (MemAvailable of
 * /proc/meminfo, else the physical memory). KPROOF_MEM_AVAILABLE (bytes,
 * or with a K, M or G suffix) stands in for it: a test that needs a small
 * machine. */
int64_t kp_host_mem_available(void);

/* ---- candidate builds ------------------------------------------------------- */

/* Compiles `src` for `backend` into a shared object in the cache (by hash
 * of content, flags and compiler version). 0 ok (so_path set); -1 the
 * compiler failed (log holds its message); -2 cannot read the file or run
 * the compiler (log says why). */
int kp_build(kp_backend backend, const char *src, const char *root, const char *cache_dir, char *so_path,
             size_t so_len, char *log, size_t loglen);
/* FNV-1a hash of a file's content; 0 when unreadable. */
uint64_t kp_file_hash(const char *path);
int kp_file_exists(const char *path);
/* 1 when a project kernel's header comment says "kproof-best: no": a
 * numbered step that measured slower than an earlier one. The highest
 * number without it is the project's best (the baseline, the demo row). */
int kp_kernel_not_best(const char *path);
/* The text of a file up to the end of its first comment (at most 64 KiB
 * of the file), malloc'ed; NULL if unreadable. */
char *kp_first_comment(const char *path);
/* Every name in a directory (dot files left out), sorted, in *out (the
 * caller frees it); returns how many, -1 if unreadable or out of memory. */
typedef char kp_name[256];
int kp_list_dir(const char *dir, kp_name **out);

/* ---- paths and the calibration cache --------------------------------------- */

const char *kp_default_root(void);       /* KPROOF_ROOT or the source tree */
/* KPROOF_CACHE, XDG_CACHE_HOME/kproof, ~/.cache/kproof, or without HOME
 * kproof-<uid> in the temporary folder (kp_tmp_dir: $TMPDIR, else /tmp);
 * NULL without HOME where that folder cannot be used (nothing falls back
 * to another folder). kp_cache_check and kp_build refuse NULL, saying why. */
const char *kp_default_cache(void);
/* 0 when the cache folder dir may be believed: it is this user's and not
 * writable by group or others, and each folder above it is this user's or
 * root's and, where others may write it, sticky (a folder not made yet
 * passes: kproof makes it 0700). -1 with why said otherwise. Builds and
 * calibrations are read only from such a folder, and only files of this
 * user that nobody else may write. */
int kp_cache_check(const char *dir, char *why, size_t len);
/* Reads/writes "key value" lines of a calibration for this device. */
int kp_calib_load(const char *cache_dir, const char *device_key, kp_calib_rep *c);
int kp_calib_save(const char *cache_dir, const char *device_key, const kp_calib_rep *c);
void kp_now_iso(char *buf, size_t len);  /* UTC date-time */

/* ---- device facts ------------------------------------------------------------ */

/* Starts a worker holding the project's naive sum kernel (never a
 * candidate): the one that reads device facts and measures peaks. */
int kp_trusted_start(kp_backend be, const char *root, const char *cache, kp_wk **w, char *err, size_t len);
/* The calibration cache's key for a device. */
void kp_device_key(const kp_env *e, char *buf, size_t len);
/* Device facts now, and the peaks from the cache, or measured (and cached)
 * when absent or `force`. *measured says which. 0 ok. */
int kp_device_facts(kp_wk *w, const char *cache, int force, kp_env *e, kp_calib_rep *c, int *measured, char *err,
                    size_t len);
/* Measures the peaks again and keeps, peak by peak, the higher of that and
 * *c (a busy device only measures lower), caching the result where it
 * rose. Returns 1 when a peak rose, 0 when none did, -1 when the worker
 * did not answer, -2 when its answer was not a calibration. */
int kp_device_remeasure(kp_wk *w, const char *cache, const kp_env *e, kp_calib_rep *c, char *err, size_t len);

#endif
