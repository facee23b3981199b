/* kproof fault: include_dev_stdin
 * class: #include "/dev/stdin" (a compiler that waits on kproof's stdin)
 * expect: PASS
 * exit: 0
 * check: -
 *
 * Defence: the compiler's stdin is /dev/null, so the include is empty and
 * the build goes on; a build that read a device is never reused.
 */
#include "/dev/stdin"
#include "fault.h"

static void fault_attempt(void) {}
