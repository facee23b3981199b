/* kproof fault: lock_squat
 * class: hold the device lock from inside the worker (file lock and abstract socket)
 * expect: PASS
 * exit: 0
 * check: -
 * needs: mount namespace
 * env: KPROOF_LOCK_TIMEOUT=3
 *
 * A worker that holds the device lock between its calls stalls every
 * kproof on the machine, its own judge first. Defence: the worker's /tmp
 * is private (the lock file it opens is its own) and it has a network
 * namespace of its own (the abstract name it binds is its own); were they
 * missing, the wait would end after KPROOF_LOCK_TIMEOUT with a harness
 * fault naming the holder.
 */
#include "fault.h"
#include <pthread.h>
#include <stddef.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>

static void fault_attempt(void) {
    const char *tmp = getenv("KPROOF_FAULT_TMPDIR"); /* kproof's TMPDIR, as the runner set it */
    char p[512];
    snprintf(p, sizeof p, "%s/kproof-device-host.lock", tmp && *tmp ? tmp : "/tmp");
    int fd = open(p, O_RDWR | O_CREAT, 0666);
    if (fd >= 0) flock(fd, LOCK_EX | LOCK_NB);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "kproof-device-host");
    if (s >= 0) bind(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n));
    /* both stay held for the rest of the worker's life */
}
