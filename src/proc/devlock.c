/* devlock.c: one device, one user at a time, across processes.
 *
 * Every exchange with a worker, and a whole timing phase, holds an
 * exclusive lock on a file named after the device (flock), so kproof
 * processes sharing a GPU (the demo's parallel rows, two users' evals)
 * never run work on it at the same time: a timed call never shares the
 * GPU, and the device-wide memory guard never sees another process's
 * allocations. The parent's CPU work (inputs, references, checks) runs
 * outside the lock, which is what lets processes overlap at all.
 * Re-entrant within a process (a count). Without a lock file (no /tmp, or
 * another user's file), nothing is locked, and stderr says so. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/host_api.h"

static int lock_fd = -1, depth = 0, announce = 0;
static char lock_path[512];

void kp_devlock_announce(int on) { announce = on; }
static double wait_total, held_total, held_since;

static int kp_devlock_open(const char *key);

/* The device's name, the same for every process that would use it: on
 * cuda the first entry of CUDA_VISIBLE_DEVICES (device 0 when unset), known
 * before any worker starts. A GPU named by index in one process and by
 * UUID in another gets two locks: name GPUs one way on a shared machine. */
int kp_devlock_open_backend(kp_backend be) {
    char key[160];
    if (be == KP_BACKEND_HOST) return kp_devlock_open("host");
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    size_t n = v ? strcspn(v, ",") : 0;
    snprintf(key, sizeof key, "cuda-%.*s", n ? (int)n : 1, n ? v : "0");
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
    const char *tmp = getenv("TMPDIR");
    char path[512];
    /* Shared by every user of the machine: the device is. */
    snprintf(path, sizeof path, "%s/kproof-device-%s.lock", (tmp && *tmp) ? tmp : "/tmp", safe);
    mode_t old = umask(0);
    snprintf(lock_path, sizeof lock_path, "%s", path);
    lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    umask(old);
    if (lock_fd < 0) {
        static int said;
        if (!said++)
            fprintf(stderr, "kproof: cannot open the device lock %s (%s): other kproof processes may share the device\n",
                    path, strerror(errno));
        return -1;
    }
    return 0;
}

void kp_devlock_hold(int on) {
    if (lock_fd < 0) return;
    if (on) {
        if (depth++ == 0) {
            int rc = flock(lock_fd, LOCK_EX | LOCK_NB);
            if (rc != 0 && errno == EWOULDBLOCK) { /* someone else has it: wait, and count the wait */
                static int said;
                if (announce && !said++)
                    fprintf(stderr, "kproof: waiting for the device: another kproof process holds it (%s)\n",
                            lock_path);
                double t0 = kp_wall_s();
                while ((rc = flock(lock_fd, LOCK_EX)) != 0 && errno == EINTR) {
                }
                wait_total += kp_wall_s() - t0;
            }
            held_since = kp_wall_s();
            if (rc) { /* cannot lock: say so once, run unlocked */
                fprintf(stderr, "kproof: the device lock failed (%s): other kproof processes may share the device\n",
                        strerror(errno));
                close(lock_fd);
                lock_fd = -1;
                depth = 0;
            }
        }
    } else if (depth > 0 && --depth == 0) {
        held_total += kp_wall_s() - held_since;
        flock(lock_fd, LOCK_UN);
    }
}

void kp_devlock_times(double *wait_s, double *held_s) {
    *wait_s = wait_total;
    *held_s = held_total + (depth > 0 ? kp_wall_s() - held_since : 0);
}
