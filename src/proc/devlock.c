/* devlock.c: one device, one user at a time, across processes; and the
 * temporary folder that the lock, the builds, the workers and the cache
 * without HOME share.
 *
 * Every exchange with a worker, and a whole timing phase, holds an
 * exclusive lock on a file named after the device (flock), so kproof
 * processes sharing a GPU (the demo's parallel rows, two users' evals)
 * never run work on it at the same time: a timed call never shares the
 * GPU, and the device-wide memory guard never sees another process's
 * allocations. The parent's CPU work (inputs, references, checks) runs
 * outside the lock, which is what lets processes overlap at all.
 * Re-entrant within a process (a count). A lock file that cannot be
 * opened (another user's file without read permission, a temporary
 * folder that cannot be used) is a harness fault like a lock held too
 * long: every take of the lock fails with the reason, so nothing is run or
 * timed on the device, and no calibration is measured, without it.
 * A wait is bounded (KPROOF_LOCK_TIMEOUT, default 600 s) and names the
 * holder's pid; the lock is re-validated by inode once taken, and backed
 * by an abstract socket name, so removing the lock file while someone
 * holds it lets nobody in beside them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/host_api.h"
#include "kproof/backends.h"

static int lock_fd = -1, depth = 0, announce = 0;
static int open_failed;  /* the lock was asked for and could not be opened: open_err says why */
static int take_failed;  /* a take since the lock was opened failed: lock_err says why */
static char lock_path[512], lock_key[128], open_err[700];

/* The temporary folder, one rule for every use: $TMPDIR when it is set
 * and not empty, else /tmp; either way an absolute path of at most
 * KP_TMPDIR_MAX characters naming a folder this process can write. */
const char *kp_tmp_dir(char *why, size_t len) {
    const char *t = getenv("TMPDIR");
    int env = t && *t;
    const char *d = env ? t : "/tmp";
    const char *problem = NULL;
    char too_long[64];
    snprintf(too_long, sizeof too_long, "longer than %d characters", KP_TMPDIR_MAX);
    struct stat st;
    if (d[0] != '/') problem = "not an absolute path";
    else if (strlen(d) > KP_TMPDIR_MAX) problem = too_long;
    else if (stat(d, &st) != 0) problem = strerror(errno);
    else if (!S_ISDIR(st.st_mode)) problem = "not a directory";
    else if (access(d, W_OK | X_OK) != 0) problem = strerror(errno);
    if (!problem) return d;
    if (why && len)
        snprintf(why, len,
                 "the temporary folder %s%.*s cannot be used: %s (kproof keeps its device lock and private build "
                 "folders there: %s)",
                 env ? "TMPDIR=" : "", KP_TMPDIR_MAX + 40, d, problem,
                 env ? "set TMPDIR to an existing folder you can write, or unset it for /tmp" : "make /tmp usable, "
                                                                                               "or set TMPDIR");
    return NULL;
}

void kp_devlock_announce(int on) { announce = on; }
static double wait_total, held_total, held_since;

static int kp_devlock_open(const char *key);

/* The lock file, made for every user; flock needs no write access, so
 * another user's file that is readable serves read-only. */
static int open_lock_file(void) {
    mode_t old = umask(0);
    int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    umask(old);
    if (fd < 0 && errno == EACCES) {
        fd = open(lock_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) errno = EACCES;
    }
    return fd;
}

/* The device's name, the same for every process that would use it: the
 * backend's name, and on a backend with a device variable (cuda:
 * CUDA_VISIBLE_DEVICES) its first entry (device 0 when unset), known
 * before any worker starts. A GPU named by index in one process and by
 * UUID in another gets two locks: name GPUs one way on a shared machine. */
int kp_devlock_open_backend(kp_backend be) {
    char key[160];
    const kp_backend_info *bi = kp_backend_get(be);
    if (!bi->lock_env) return kp_devlock_open(bi->name);
    const char *v = getenv(bi->lock_env);
    size_t n = v ? strcspn(v, ",") : 0;
    snprintf(key, sizeof key, "%s-%.*s", bi->name, n ? (int)n : 1, n ? v : "0");
    return kp_devlock_open(key);
}

static int kp_devlock_open(const char *key) {
    if (lock_fd >= 0) {
        if (depth) return 0; /* held: keep this one */
        close(lock_fd);
        lock_fd = -1;
    }
    char safe[128];
    size_t n = 0;
    for (const char *k = key; *k && n + 1 < sizeof safe; k++)
        safe[n++] = (*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') || *k == '-' ? *k : '_';
    safe[n] = 0;
    open_failed = 0;
    take_failed = 0;
    snprintf(lock_key, sizeof lock_key, "%s", safe);
    const char *tmp = kp_tmp_dir(open_err, sizeof open_err);
    if (!tmp) {
        lock_path[0] = 0;
        open_failed = 1;
        return -1;
    }
    /* Shared by every user of the machine: the device is. */
    snprintf(lock_path, sizeof lock_path, "%s/kproof-device-%s.lock", tmp, safe);
    lock_fd = open_lock_file();
    if (lock_fd < 0) {
        snprintf(open_err, sizeof open_err,
                 "cannot open the device lock %s: %s (kproof runs nothing on the device without it: another "
                 "kproof process could share the device; its owner can make it readable (mode 0644 or 0666) or "
                 "remove it, or set TMPDIR to a folder every kproof on this machine uses)",
                 lock_path, strerror(errno));
        open_failed = 1;
        return -1;
    }
    return 0;
}

/* The holder of the lock on our file, from /proc/locks (0: not found). */
static long lock_holder(void) {
    struct stat st;
    if (lock_fd < 0 || fstat(lock_fd, &st)) return 0;
    FILE *f = fopen("/proc/locks", "r");
    if (!f) return 0;
    char line[256];
    long pid = 0;
    while (!pid && fgets(line, sizeof line, f)) {
        char kind[16], mode[16];
        long p;
        unsigned maj, min;
        unsigned long long ino;
        char *l = strchr(line, ':');
        if (!l || strstr(line, "->")) continue; /* a waiter, not a holder */
        if (sscanf(l + 1, " %15s %*s %15s %ld %x:%x:%llu", kind, mode, &p, &maj, &min, &ino) == 6 &&
            !strcmp(kind, "FLOCK") && ino == (unsigned long long)st.st_ino && makedev(maj, min) == st.st_dev)
            pid = p;
    }
    fclose(f);
    return pid;
}

/* Our lock file is still the one its path names (nobody removed or
 * replaced it while we waited on it). */
static int lock_file_current(void) {
    struct stat a, b;
    return fstat(lock_fd, &a) == 0 && stat(lock_path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* A second claim on the device that no file operation can remove: an
 * abstract socket name, freed by the kernel when its holder dies. A
 * process that locked a lock file since removed still holds this one. */
static int claim_fd = -1;
static int claim(void) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 1; /* no sockets: the file lock alone */
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "kproof-device-%s", lock_key);
    if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) == 0) {
        claim_fd = fd;
        return 1;
    }
    int e = errno;
    close(fd);
    return e == EADDRINUSE ? 0 : 1;
}

static char lock_err[800];
static int held_ok;

static double lock_timeout(void) {
    const char *v = getenv("KPROOF_LOCK_TIMEOUT");
    char *end = NULL;
    double x = v && *v ? strtod(v, &end) : 0;
    return v && *v && end && !*end && x > 0 ? x : 600;
}

/* Takes the lock within KPROOF_LOCK_TIMEOUT seconds (default 600). */
static int acquire(void) {
    double t0 = kp_wall_s(), limit = lock_timeout();
    int said = 0, slept_us = 200;
    long holder = 0;
    for (;;) {
        int rc = flock(lock_fd, LOCK_EX | LOCK_NB);
        if (rc == 0) {
            if (!lock_file_current()) { /* removed or replaced: lock what the path names now */
                flock(lock_fd, LOCK_UN);
                close(lock_fd);
                lock_fd = open_lock_file();
                if (lock_fd < 0) {
                    snprintf(open_err, sizeof open_err, "cannot open the device lock %s again after it was replaced: %s",
                             lock_path, strerror(errno));
                    open_failed = 1;
                    snprintf(lock_err, sizeof lock_err, "%s", open_err);
                    return -1;
                }
                continue;
            }
            if (claim()) {
                wait_total += kp_wall_s() - t0;
                return 0;
            }
            flock(lock_fd, LOCK_UN); /* someone holds the device under a removed file */
        } else if (errno != EWOULDBLOCK && errno != EINTR) {
            snprintf(lock_err, sizeof lock_err, "the device lock %s could not be taken: %s", lock_path,
                     strerror(errno));
            return -1;
        }
        double waited = kp_wall_s() - t0;
        if (!said && waited > 0.5) {
            /* /proc/locks is read for the message only, not on each of a
             * waiter's polls (one a millisecond) */
            holder = lock_holder();
            said = 1;
            if (announce) {
                if (holder)
                    fprintf(stderr, "kproof: waiting for the device: process %ld holds it (%s)\n", holder, lock_path);
                else
                    fprintf(stderr, "kproof: waiting for the device: another kproof process holds it (%s)\n",
                            lock_path);
            }
        }
        if (waited > limit) {
            holder = lock_holder();
            if (holder)
                snprintf(lock_err, sizeof lock_err,
                         "the device lock %s has been held by process %ld for over %g s (KPROOF_LOCK_TIMEOUT)",
                         lock_path, holder, limit);
            else
                snprintf(lock_err, sizeof lock_err,
                         "the device has been held by another kproof process for over %g s (%s; KPROOF_LOCK_TIMEOUT)",
                         limit, lock_path);
            wait_total += waited;
            errno = ETIMEDOUT;
            return -2;
        }
        /* A waiter sleeps at most 1 ms: the device idles from a release
         * until the next waiter wakes, and the demo's rows hand it over
         * thousands of times. */
        usleep((useconds_t)slept_us);
        if (slept_us < 1000) slept_us *= 2;
    }
}

int kp_devlock_hold(int on) {
    if (lock_fd < 0 && !open_failed) return 0; /* no lock was asked for: nothing to take */
    if (on) {
        if (depth++ == 0) {
            lock_err[0] = 0;
            /* A lock that cannot be had is never worked around: every
             * take fails with the reason, as a wait past its bound does. */
            int rc = lock_fd >= 0 ? acquire() : -1;
            held_since = kp_wall_s();
            held_ok = rc == 0;
            if (rc) take_failed = 1;
            if (rc && !lock_err[0]) snprintf(lock_err, sizeof lock_err, "%s", open_err);
        }
        return held_ok ? 0 : -1;
    }
    if (depth > 0 && --depth == 0) {
        held_total += held_ok ? kp_wall_s() - held_since : 0;
        if (held_ok) {
            if (claim_fd >= 0) close(claim_fd);
            claim_fd = -1;
            flock(lock_fd, LOCK_UN);
        }
        held_ok = 0;
    }
    return 0;
}

int kp_devlock_failed(void) { return take_failed; }

const char *kp_devlock_error(void) {
    if (lock_err[0]) return lock_err;
    return open_failed ? open_err : "the device lock could not be taken";
}

void kp_devlock_times(double *wait_s, double *held_s) {
    *wait_s = wait_total;
    *held_s = held_total + (depth > 0 && held_ok ? kp_wall_s() - held_since : 0);
}
