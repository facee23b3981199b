/* kproof fault: parent_mem
 * class: read the judge's memory through /proc/<kproof>/mem (its float64 references)
 * expect: PASS
 * exit: 0
 * check: -
 *
 * Defence: kproof is not dumpable, ptrace-class access is filtered, and in
 * a pid namespace kproof is not in sight.
 */
#include "fault.h"

static void fault_attempt(void) {
    pid_t k = fault_find_kproof();
    if (!k) return;
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/mem", (int)k);
    int fd = open(p, O_RDONLY);
    if (fd >= 0) fault_report("opened kproof's memory"), close(fd);
    snprintf(p, sizeof p, "/proc/%d/maps", (int)k);
    FILE *f = fopen(p, "r");
    char line[256];
    if (f && fgets(line, sizeof line, f)) fault_report("read kproof's memory map");
    if (f) fclose(f);
}
