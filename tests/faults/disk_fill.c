/* kproof fault: disk_fill
 * class: fill the disk from the worker's private folder
 * expect: PASS
 * exit: 0
 * check: -
 *
 * Defence: RLIMIT_FSIZE (16 MiB a file) stops the write; SIGXFSZ is
 * ignored here so that the write fails instead of killing the worker.
 */
#include "fault.h"

static void fault_attempt(void) {
    signal(SIGXFSZ, SIG_IGN);
    const char *t = getenv("TMPDIR");
    char p[512];
    snprintf(p, sizeof p, "%s/fill", t && *t ? t : "/tmp");
    int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0) return;
    static char buf[1 << 20];
    long long total = 0;
    for (int i = 0; i < 24; i++) {
        ssize_t n = write(fd, buf, sizeof buf);
        if (n <= 0) break;
        total += n;
    }
    close(fd);
    unlink(p);
    if (total >= 24ll << 20) fault_report("wrote 24 MiB");
}
