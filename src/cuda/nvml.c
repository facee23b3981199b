/* nvml.c: SM and memory clocks and clock-event (throttle) reasons through
 * NVML, loaded with dlopen at run time.
 *
 * A speedup measured while the GPU throttled is not a speedup, so the
 * worker records clocks before and after a run. NVML ships with the driver
 * (libnvidia-ml.so.1), not with the toolkit, and nvml.h is not installed
 * here: the few functions used are declared below with the ABI the driver
 * exports. Without NVML everything stays zero; nothing fails.
 */
#include <dlfcn.h>
#include <string.h>

#include "cuda_priv.h"

typedef int kp_nvml_ret;                     /* nvmlReturn_t; 0 is NVML_SUCCESS */
typedef struct kp_nvml_dev_st *kp_nvml_dev;  /* nvmlDevice_t */
enum { KP_NVML_CLOCK_SM = 1, KP_NVML_CLOCK_MEM = 2 };

typedef kp_nvml_ret (*kp_nvml_init_fn)(void);
typedef kp_nvml_ret (*kp_nvml_by_index_fn)(unsigned, kp_nvml_dev *);
typedef kp_nvml_ret (*kp_nvml_by_uuid_fn)(const char *, kp_nvml_dev *);
typedef kp_nvml_ret (*kp_nvml_clock_fn)(kp_nvml_dev, int, unsigned *);
typedef kp_nvml_ret (*kp_nvml_reasons_fn)(kp_nvml_dev, unsigned long long *);
typedef kp_nvml_ret (*kp_nvml_driver_fn)(char *, unsigned);

static struct {
    int tried, ok;
    void *lib;
    kp_nvml_by_index_fn by_index;
    kp_nvml_by_uuid_fn by_uuid;
    kp_nvml_clock_fn clock;
    kp_nvml_reasons_fn reasons;
    kp_nvml_driver_fn driver;
    int have_dev;
    kp_nvml_dev dev;
} g_nvml;

/* dlsym returns an object pointer; ISO C has no cast from it to a function
 * pointer, so the bits are copied (what POSIX guarantees to work). */
static void kp_sym(const char *name, void *fnptr, size_t size) {
    void *p = dlsym(g_nvml.lib, name);
    if (p)
        memcpy(fnptr, &p, size);
}

static int kp_nvml_load(void) {
    if (g_nvml.tried)
        return g_nvml.ok;
    g_nvml.tried = 1;
    g_nvml.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!g_nvml.lib)
        return 0;
    kp_nvml_init_fn init = NULL;
    kp_sym("nvmlInit_v2", &init, sizeof init);
    kp_sym("nvmlDeviceGetHandleByIndex_v2", &g_nvml.by_index, sizeof g_nvml.by_index);
    kp_sym("nvmlDeviceGetHandleByUUID", &g_nvml.by_uuid, sizeof g_nvml.by_uuid);
    kp_sym("nvmlDeviceGetClockInfo", &g_nvml.clock, sizeof g_nvml.clock);
    /* The newer name first; drivers before 535 only have the old one. */
    kp_sym("nvmlDeviceGetCurrentClocksEventReasons", &g_nvml.reasons, sizeof g_nvml.reasons);
    if (!g_nvml.reasons)
        kp_sym("nvmlDeviceGetCurrentClocksThrottleReasons", &g_nvml.reasons, sizeof g_nvml.reasons);
    kp_sym("nvmlSystemGetDriverVersion", &g_nvml.driver, sizeof g_nvml.driver);
    if (!init || init() != 0 || (!g_nvml.by_index && !g_nvml.by_uuid))
        return 0;
    g_nvml.ok = 1;
    return 1;
}

void kp_nvml_query(const char *uuid, kp_nvml_now *out) {
    memset(out, 0, sizeof *out);
    if (!kp_nvml_load())
        return;
    if (g_nvml.driver && g_nvml.driver(out->driver, (unsigned)sizeof out->driver) != 0)
        out->driver[0] = '\0';
    if (!g_nvml.have_dev) {
        /* NVML's index 0 need not be CUDA's device 0 (CUDA_VISIBLE_DEVICES,
         * PCI order), so the UUID decides when there is one. */
        if (uuid && uuid[0] && g_nvml.by_uuid && g_nvml.by_uuid(uuid, &g_nvml.dev) == 0)
            g_nvml.have_dev = 1;
        else if (g_nvml.by_index && g_nvml.by_index(0, &g_nvml.dev) == 0)
            g_nvml.have_dev = 1;
        else
            return;
    }
    unsigned mhz = 0;
    if (g_nvml.clock && g_nvml.clock(g_nvml.dev, KP_NVML_CLOCK_SM, &mhz) == 0)
        out->sm_mhz = mhz;
    if (g_nvml.clock && g_nvml.clock(g_nvml.dev, KP_NVML_CLOCK_MEM, &mhz) == 0)
        out->mem_mhz = mhz;
    unsigned long long r = 0;
    if (g_nvml.reasons && g_nvml.reasons(g_nvml.dev, &r) == 0)
        out->reasons = (uint64_t)r;
    out->ok = 1;
}
