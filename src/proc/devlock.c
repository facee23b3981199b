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
 * another user's file), nothing is locked, and the run says so. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/host_api.h"

static int lock_fd = -1, depth = 0;

int kp_devlock_open(const char *key) {
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
    lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    umask(old);
    return lock_fd >= 0 ? 0 : -1;
}

void kp_devlock_hold(int on) {
    if (lock_fd < 0) return;
    if (on) {
        if (depth++ == 0)
            while (flock(lock_fd, LOCK_EX) && errno == EINTR) {
            }
    } else if (depth > 0 && --depth == 0) {
        flock(lock_fd, LOCK_UN);
    }
}
