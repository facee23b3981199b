/* kproof fault: process_vm
 * class: process_vm_readv and ptrace on the judge
 * expect: PASS
 * exit: 0
 * check: -
 *
 * Defence: the seccomp filter answers EPERM to ptrace and process_vm_*;
 * kproof is not dumpable and, in a pid namespace, not in sight.
 */
#include "fault.h"
#include <sys/ptrace.h>
#include <sys/uio.h>

static void fault_attempt(void) {
    pid_t k = fault_find_kproof();
    if (!k) k = getppid();
    static char buf[64];
    struct iovec local = {buf, sizeof buf}, remote = {(void *)0x400000, sizeof buf};
    if (k > 0 && process_vm_readv(k, &local, 1, &remote, 1, 0) >= 0) fault_report("process_vm_readv on kproof");
    if (k > 0 && errno != EPERM && errno != ESRCH) fprintf(stderr, "process_vm_readv: %s\n", strerror(errno));
    if (k > 0 && ptrace(PTRACE_ATTACH, k, 0, 0) == 0) {
        fault_report("attached to kproof");
        ptrace(PTRACE_DETACH, k, 0, 0);
    }
}
