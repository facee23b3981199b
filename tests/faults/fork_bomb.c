/* kproof fault: fork_bomb
 * class: a thousand processes at load (a bounded fork bomb)
 * expect: REJECTED
 * exit: 2
 * check: account
 *
 * Defence: in a user namespace RLIMIT_NPROC counts the sandbox's own
 * processes (1024 at most); they all die with pid 1 of the namespace (or
 * with the worker's group). The candidate is also REJECTED (`account`): the
 * processes beside the worker in its sandbox could work outside the timed
 * calls.
 */
#include "fault.h"

__attribute__((constructor)) static void spawn(void) {
    for (int i = 0; i < 1200; i++) {
        pid_t c = fork();
        if (c < 0) break;
        if (c == 0) {
            sleep(60);
            _exit(0);
        }
    }
}

static void fault_attempt(void) {}
