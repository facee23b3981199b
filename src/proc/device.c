/* device.c: device facts and the calibration, read through a trusted
 * worker: one that holds the project's naive sum kernel, never a candidate,
 * so nothing a candidate does can change the peaks it is judged against. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/host_api.h"
#include "kproof/backends.h"
#include "proc/sandbox.h"

int kp_trusted_start(kp_backend be, const char *root, const char *cache, kp_wk **w, char *err, size_t len) {
    char src[PATH_MAX], so[PATH_MAX], log[2048];
    *w = NULL;
    snprintf(src, sizeof src, "%s/kernels/sum/%s/f32-01-naive.%s", root, kp_backend_name(be),
             kp_backend_get(be)->src_ext);
    if (kp_build(be, src, root, cache, so, sizeof so, log, sizeof log)) {
        snprintf(err, len, "cannot build %s: %s", src, log);
        return -1;
    }
    kp_wk_opts wo = {be, "sum_f32", so, 60, 1, 0, 0};
    kp_hello h;
    memset(&h, 0, sizeof h);
    char e2[300] = "";
    if (kp_wk_start(&wo, w, &h, e2, sizeof e2) != KP_WK_OK || h.status != KP_LOAD_OK) {
        snprintf(err, len, "cannot start the %s worker: %s%s", kp_backend_name(be), h.error[0] ? h.error : e2,
                 kp_backend_get(be)->trusted_fail_hint);
        if (*w) kp_wk_stop(*w);
        *w = NULL;
        return -1;
    }
    return 0;
}

void kp_device_key(const kp_env *e, char *buf, size_t len) {
    snprintf(buf, len, "%s-%s", e->gpu_uuid[0] ? e->gpu_uuid : e->gpu, e->gpu_uuid[0] ? "" : e->host);
}

int kp_device_remeasure(kp_wk *w, const char *cache, const kp_env *e, kp_calib_rep *c, char *err, size_t len) {
    kp_calib_rep now;
    size_t got;
    memset(&now, 0, sizeof now);
    if (kp_wk_call(w, KP_MSG_CALIBRATE, NULL, 0, NULL, 0, &now, sizeof now, &got, 600, err, len)) return -1;
    if (got != sizeof now) {
        snprintf(err, len, "a calibration reply of %zu bytes", got);
        return -2;
    }
    int rose = 0;
    double *have[] = {&c->copy_gbs, &c->gemm_f32_gflops, &c->gemm_tf32_gflops, &c->gemm_bf16_gflops};
    const double got_now[] = {now.copy_gbs, now.gemm_f32_gflops, now.gemm_tf32_gflops, now.gemm_bf16_gflops};
    for (int i = 0; i < 4; i++)
        if (got_now[i] > *have[i]) {
            *have[i] = got_now[i];
            rose = 1;
        }
    if (!rose) return 0;
    char key[200];
    kp_device_key(e, key, sizeof key);
    if (kp_sb_cache_trusted() && kp_calib_save(cache, key, c))
        snprintf(err, len, "cannot write the calibration cache in %s", cache);
    return 1;
}

int kp_device_facts(kp_wk *w, const char *cache, int force, kp_env *e, kp_calib_rep *c, int *measured, char *err,
                    size_t len) {
    size_t got;
    memset(e, 0, sizeof *e);
    memset(c, 0, sizeof *c);
    if (measured) *measured = 0;
    if (kp_wk_call(w, KP_MSG_ENV, NULL, 0, NULL, 0, e, sizeof *e, &got, 60, err, len)) return -1;
    char key[200];
    kp_device_key(e, key, sizeof key);
    /* A cache that a candidate could have written (no read-only view
     * here) is measured again rather than believed. */
    if (!force && kp_sb_cache_trusted() && kp_calib_load(cache, key, c) == 0) return 0;
    if (kp_wk_call(w, KP_MSG_CALIBRATE, NULL, 0, NULL, 0, c, sizeof *c, &got, 600, err, len)) return -1;
    if (measured) *measured = 1;
    if (kp_calib_save(cache, key, c)) snprintf(err, len, "cannot write the calibration cache in %s", cache);
    return 0;
}
