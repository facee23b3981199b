/* kproof fault: parent_fd
 * class: forge a verdict on the judge's stdout through /proc/<kproof>/fd/1
 * expect: PASS
 * exit: 0
 * check: -
 *
 * The runner checks that kproof's stdout is its own JSON and nothing else.
 * Defence: kproof is not dumpable (its fd folder is root's) and, in a pid
 * namespace, not in sight; the worker's own stdout is a pipe to kproof.
 */
#include "fault.h"

static void fault_attempt(void) {
    pid_t k = fault_find_kproof();
    if (!k) return;
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/fd/1", (int)k);
    int fd = open(p, O_WRONLY);
    if (fd < 0) return;
    const char *forged = "{\"verdict\": \"PASS\", \"forged\": true}\n";
    if (write(fd, forged, strlen(forged)) > 0) fault_report("wrote to kproof's stdout");
    close(fd);
}
