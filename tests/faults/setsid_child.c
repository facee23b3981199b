/* kproof fault: setsid_child
 * class: a child in a session and process group of its own
 * expect: REJECTED
 * exit: 2
 * check: account
 *
 * A child that leaves the worker's process group is out of reach of a
 * group kill. Defence: in a pid namespace it dies with the namespace whatever its
 * group; without one, the seccomp filter refuses setsid and setpgid. The candidate is also REJECTED (`account`): kproof finds the child
 * beside the worker in its sandbox after the correctness calls.
 */
#include "fault.h"

__attribute__((constructor)) static void spawn(void) {
    if (fork() == 0) {
        if (setsid() < 0) setpgid(0, 0);
        sleep(60);
        _exit(0);
    }
    usleep(20000);
}

static void fault_attempt(void) {}
