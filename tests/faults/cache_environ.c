/* kproof fault: cache_environ
 * class: find the cache in /proc/<kproof>/environ and write it
 * expect: PASS
 * exit: 0
 * check: -
 *
 * The worker's own environment has no KPROOF_CACHE; the candidate reads
 * kproof's. Defence: kproof is not dumpable (its environ, mem and fd are
 * root's) and, in a pid namespace, not in sight at all.
 */
#include "fault.h"

static void fault_attempt(void) {
    if (getenv("KPROOF_CACHE") || getenv("KPROOF_ROOT")) fault_report("the worker's environment names the cache");
    pid_t k = fault_find_kproof();
    if (!k) return;
    char p[64], buf[8192];
    snprintf(p, sizeof p, "/proc/%d/environ", (int)k);
    int fd = open(p, O_RDONLY);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) fault_report("read kproof's environment");
}
