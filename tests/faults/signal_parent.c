/* kproof fault: signal_parent
 * class: SIGSTOP, SIGTERM and SIGKILL to the judge (getppid() and a /proc scan)
 * expect: PASS
 * exit: 0
 * check: -
 *
 * Defence: in a pid namespace the worker's parent is the namespace's pid
 * 1 (which ignores signals from inside), and kproof is not in sight; without one, the seccomp filter lets a worker
 * signal only itself and its own group.
 */
#include "fault.h"

static void fault_attempt(void) {
    pid_t targets[2] = {getppid(), fault_find_kproof()};
    static const int sigs[3] = {SIGSTOP, SIGTERM, SIGKILL};
    for (int t = 0; t < 2; t++)
        for (int s = 0; s < 3; s++)
            if (targets[t] > 1 && kill(targets[t], sigs[s]) == 0) fault_report("signalled the judge");
}
