/* kproof fault: env_secrets
 * class: the cache, tree and binary paths in the worker's own environment
 * expect: PASS
 * exit: 0
 * check: -
 *
 * Defence: the worker starts without KPROOF_CACHE, KPROOF_ROOT,
 * KPROOF_BIN_DIR and XDG_CACHE_HOME.
 */
#include "fault.h"

static void fault_attempt(void) {
    static const char *names[4] = {"KPROOF_CACHE", "KPROOF_ROOT", "KPROOF_BIN_DIR", "XDG_CACHE_HOME"};
    for (int i = 0; i < 4; i++)
        if (getenv(names[i])) fault_report(names[i]);
}
