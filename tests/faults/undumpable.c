/* kproof fault: undumpable
 * class: a worker that refuses kproof its memory (not dumpable from load)
 * expect: PASS
 * exit: 0
 * check: -
 *
 * On the host kproof writes the inputs into the worker's memory and reads
 * the outputs there itself; a process that is not dumpable refuses that
 * to anyone without CAP_SYS_PTRACE over it. Defence: in the user
 * namespace kproof made (or with CAP_SYS_PTRACE) kproof keeps it whatever
 * the worker does. Without either, the eval is ERROR (sandbox), never a
 * run whose inputs pass through a worker that chose to be unreachable
 * (faults_test.sh runs that case as uid 65534).
 */
#include "fault.h"
#include <sys/prctl.h>

__attribute__((constructor)) static void fault_early(void) { prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

static void fault_attempt(void) {}
