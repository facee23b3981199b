/* kproof fault: undumpable_late
 * class: a worker that refuses kproof its memory once kproof has reached it
 * expect: PASS
 * exit: 0
 * check: -
 *
 * As undumpable.c, but from its first call: kproof has written the inputs
 * and now reads the output. Defence: as there; without a user namespace
 * or CAP_SYS_PTRACE the refusal can only be the worker's doing, REJECTED
 * (memory) (faults_test.sh runs that case as uid 65534).
 */
#include "fault.h"
#include <sys/prctl.h>

static void fault_attempt(void) { prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
