/* kproof fault: tree_write
 * class: write the source tree (baselines' sources, results) found through __FILE__ or /proc/<kproof>/exe
 * expect: PASS
 * exit: 0
 * check: -
 * needs: mount namespace
 *
 * A candidate that rewrote a baseline's source would make a later honest
 * eval's speedup anything it likes; this one only tries to create a file
 * beside itself in the tree and in kproof's build folder. Defence: the
 * view is read-only.
 */
#include "fault.h"

static void fault_attempt(void) {
    char p[1024];
    snprintf(p, sizeof p, "%s", __FILE__);
    char *slash = strrchr(p, '/');
    if (slash) {
        snprintf(slash + 1, sizeof p - (size_t)(slash + 1 - p), "kproof-fault-tree");
        int fd = open(p, O_CREAT | O_WRONLY, 0644);
        if (fd >= 0) fault_report("wrote into the tree"), close(fd), unlink(p);
    }
    pid_t k = fault_find_kproof();
    char exe[64], bin[1024];
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)k);
    ssize_t n = k ? readlink(exe, bin, sizeof bin - 32) : -1;
    if (n > 0) {
        fault_report("read kproof's executable path");
    }
}
