/* kproof fault: pdeathsig_clear
 * class: clear PR_SET_PDEATHSIG, then outlive a kill -9 of kproof
 * expect: killed
 * exit: 137
 * check: -
 * kill9: 1
 *
 * The runner kills kproof with SIGKILL while the worker hangs in its first
 * call, and checks that nothing with its tag is left. Defence: the
 * seccomp filter refuses to clear the parent-death signal; the keeper
 * between kproof and the worker dies with kproof and takes the worker's
 * group (or its pid namespace) with it.
 */
#include "fault.h"
#include <sys/prctl.h>

static void fault_attempt(void) {
    if (prctl(PR_SET_PDEATHSIG, 0) == 0) fprintf(stderr, "fault: cleared the parent-death signal\n");
    if (fork() == 0) {
        sleep(60);
        _exit(0);
    }
    sleep(60);
}
