/* kproof fault: daemon
 * class: a double-forked daemon that would outlive the eval
 * expect: REJECTED
 * exit: 2
 * check: account
 * needs: pid namespace
 *
 * At load, before HELLO, the worker forks a child that forks again and
 * exits: the grandchild sleeps for a minute, reparented away from the
 * worker. The runner checks that nothing with its tag is alive once
 * kproof has exited. Defence: the grandchild is reparented to pid 1 of
 * the worker's pid namespace, and the namespace ends with the worker;
 * without a namespace it stays in the worker's process group, which
 * kproof kills. The candidate is also REJECTED
 * (`account`): kproof finds the grandchild beside the worker in its sandbox
 * after the correctness calls, a process that could work outside the
 * timed calls.
 */
#include "fault.h"

__attribute__((constructor)) static void spawn(void) {
    pid_t c = fork();
    if (c == 0) {
        if (fork() == 0) {
            sleep(60);
            _exit(0);
        }
        _exit(0);
    }
    if (c > 0) waitpid(c, NULL, 0);
    usleep(20000);
}

static void fault_attempt(void) {}
