/* kproof fault: proc_scan
 * class: see kproof and other processes in /proc
 * expect: PASS
 * exit: 0
 * check: -
 * needs: private /proc
 *
 * Defence: a pid namespace with a /proc of its own: the worker is pid 2
 * under its init and sees only those two and what it started.
 */
#include "fault.h"

static void fault_attempt(void) {
    if (fault_find_kproof()) fault_report("kproof is in sight in /proc");
}
