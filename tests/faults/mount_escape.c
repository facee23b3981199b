/* kproof fault: mount_escape
 * class: undo the read-only view (umount, remount, a new user namespace)
 * expect: PASS
 * exit: 0
 * check: -
 *
 * Defence: no capability survives exec into the worker (an unprivileged id
 * inside its user namespace, an empty bounding set, no_new_privs), and the
 * seccomp filter refuses mount, umount2, unshare, setns and clone with
 * namespace flags.
 */
#include "fault.h"
#include <sched.h>
#include <sys/mount.h>

static void fault_attempt(void) {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0) fault_report("made a new user namespace");
    if (umount2("/tmp", MNT_DETACH) == 0) fault_report("unmounted the private /tmp");
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL) == 0) fault_report("remounted / writable");
}
