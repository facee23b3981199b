/* sandbox.h: where a worker and the candidate's compiler run.
 *
 * Each is started by a fresh child of kproof that calls kp_sb_enter before
 * exec. It builds the sandbox from what this Linux machine allows, one
 * defence at a time, and keeps going without a defence the machine refuses;
 * what was missing travels back to the parent on a status pipe, and every
 * report names it (kp_sb_missing). The defences:
 *
 *   user namespace   ids mapped to an unprivileged id inside: no
 *                    capability survives exec; the others can be made
 *                    without privilege
 *   pid namespace    the target runs under a small init (pid 1) of its
 *                    own: it cannot see or signal kproof or anything
 *                    outside, and everything it starts dies with it (a
 *                    private /proc shows only them)
 *   network ns       no network device but a down loopback
 *   mount namespace  the filesystem read-only (host backend, compiler) or
 *                    the cache, tree and result folders read-only (cuda),
 *                    a private tmp, the child's own folder writable
 *   ipc namespace    no System V IPC or POSIX queues shared with anyone
 *   seccomp          no ptrace, process_vm_*, sockets but AF_UNIX, io_uring,
 *                    mounts or new namespaces, no clearing of the
 *                    parent-death signal (and without a pid namespace: no
 *                    signals to other processes, no new session or group)
 *   no_new_privs, a dropped capability bounding set, rlimits, the
 *   parent-death signal, and a keeper process between kproof and the
 *   target that kills the target's group when kproof dies.
 */
#ifndef KP_SANDBOX_H
#define KP_SANDBOX_H

#include <stdint.h>
#include <sys/types.h>

enum { KP_SB_HOST_WORKER, KP_SB_CUDA_WORKER, KP_SB_COMPILER };

/* Defences, as bits of kp_sb_missing(). */
enum {
    KP_SBD_USERNS = 1 << 0,
    KP_SBD_PIDNS = 1 << 1,
    KP_SBD_NETNS = 1 << 2,
    KP_SBD_MNTNS = 1 << 3,  /* and with it the read-only view */
    KP_SBD_IPCNS = 1 << 4,
    KP_SBD_PROC = 1 << 5,   /* a /proc of the pid namespace only */
    KP_SBD_SECCOMP = 1 << 6,
    KP_SBD_NNP = 1 << 7,
    KP_SBD_ALL = (1 << 8) - 1
};

typedef struct kp_sb_spec {
    int kind;              /* KP_SB_* */
    const char *stage;     /* the child's own writable folder (absolute; NULL: none) */
    int64_t as_limit;      /* RLIMIT_AS in bytes (0: none) */
    int64_t fsize_limit;   /* RLIMIT_FSIZE in bytes (0: none) */
    int cpu_limit_s;       /* RLIMIT_CPU in seconds (0: none) */
    int keep[4];           /* fds kept open besides 0, 1, 2 and status_fd (-1: unused) */
} kp_sb_spec;

/* In a fresh child of kproof, once its fds are in place: builds the
 * sandbox. Returns 0 in the process that is to exec (the report is written
 * to status_fd, which must be close-on-exec), -1 when the sandbox could
 * not be built (the reason is on status_fd; _exit then). The calling
 * process becomes the keeper and never returns when a pid namespace is
 * made: it waits for the target and exits as the target did. */
int kp_sb_enter(const kp_sb_spec *s, int status_fd);
/* In the same child when exec failed: says why on status_fd. */
void kp_sb_exec_failed(int status_fd, const char *what, int err);
/* Parent side: reads the child's reports until its exec (EOF), within
 * timeout_s. 0: the target runs; -1: it does not (err says why, a
 * harness fault). Folds what was missing into kp_sb_missing(). */
int kp_sb_collect(int status_rd, double timeout_s, char *err, size_t len);

/* Folders no sandboxed child may write, wherever the whole view cannot be
 * made read-only (the cache, the tree, a result file's folder). */
void kp_sb_protect(const char *path);
/* --no-sandbox: children run as plain processes (and reports say so). */
void kp_sb_disable(void);
int kp_sb_enabled(void);
/* Defences missing in any child started so far (0 before any). */
unsigned kp_sb_missing(void);
/* Starts one child that only builds the sandbox, so that what this
 * machine allows is known before anything runs. Once per process. */
void kp_sb_probe(void);
/* 1 when the cache cannot be written from inside a sandbox here: its
 * builds and calibrations may be reused. Probes first. */
int kp_sb_cache_trusted(void);
/* One defence's name, "pid namespace" (bit: one KP_SBD_*). */
const char *kp_sb_defence_name(unsigned bit);
/* What a missing defence lets a candidate do, one phrase. */
const char *kp_sb_defence_gap(unsigned bit);

#endif
