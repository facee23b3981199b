/* policy.c: the naive mode as one table. Each guard of the rigorous
 * protocol is listed once, with the flaws that switch it off; the phases
 * ask GUARD(c, KPP_G_...) and never test a flaw by name. The rigorous
 * protocol has every guard; `--flaw NAME` drops the guards that name it.
 * docs/misleading.md tells what each flaw lets through. */
#include "core/protocol/protocol_priv.h"

#define LAUNCH KP_FLAW_LAUNCH
#define WARM KP_FLAW_WARM
#define ONE KP_FLAW_ONE_INPUT
#define LOOSE KP_FLAW_LOOSE_TOL
#define WEAK KP_FLAW_WEAK_BASE

const kpp_guard_info kpp_guards[KPP_G_COUNT] = {
    [KPP_G_SYNC] = {"sync", LAUNCH,
                    "a correctness call ends with a device-wide synchronize, the thread count and the output snapshot"},
    [KPP_G_HOLD] = {"hold", LAUNCH, "a timed call's stream is held while it enqueues: the device's time, not the launch's"},
    [KPP_G_ACCOUNT] = {"account", LAUNCH, "every device operation lies inside its call's window"},
    [KPP_G_TIMER] = {"timer", LAUNCH | WEAK,
                     "the reported time agrees with the parent's clock and with the traced work before the stop event"},
    [KPP_G_FLUSH] = {"flush", WARM, "caches are flushed before every timed call"},
    [KPP_G_PERSIST] = {"persist", WARM, "no L2 persistence left set up after a call"},
    [KPP_G_ROTATE] = {"rotate", WARM | ONE, "timed calls rotate over input sets several times the L2's size"},
    [KPP_G_FRESH_SETS] = {"fresh-sets", WARM | ONE, "every pass over the timing sets gets fresh inputs"},
    [KPP_G_SHAPES] = {"shapes", WARM | ONE, "edge shapes and shapes drawn for the run, beside the benchmark ones"},
    [KPP_G_ROUNDS] = {"rounds", ONE, "several rounds of fresh inputs, every distribution"},
    [KPP_G_POISON] = {"poison", ONE, "outputs poisoned and guard canaries checked around every call"},
    [KPP_G_CHECK_TIMED] = {"check-timed", ONE, "every timed output and the parent-clock batch's output checked"},
    [KPP_G_TIGHT_TOL] = {"tolerance", LOOSE, "the op's tolerance for its dtype and reduction length, RMS included"},
    [KPP_G_MEDIAN] = {"median", WEAK, "medians with intervals, not means"},
    [KPP_G_STRONG_BASE] = {"strong-base", WEAK, "the strongest baselines (library, best kernel), not the naive one"},
    [KPP_G_SOL] = {"speed-of-light", WEAK, "a time beyond the device's physical limits is rejected"},
    [KPP_G_LIBRARY] = {"library", WEAK, "library kernels in a candidate are rejected"},
    [KPP_G_TOKEN] = {"token", WEAK, "the result channel carries a session token"},
    [KPP_G_MISALIGN] = {"misalign", LAUNCH | WARM | ONE | LOOSE | WEAK,
                        "calls with pointers one element past a 16-byte boundary (a naive harness keeps its own)"},
};
