/* cuda_priv.h: what the files of the CUDA backend share with each other
 * (backend.cu, audit.cu, calibrate.cu, nvml.c). Not part of the contract
 * (src/worker/backend.h is); nothing outside src/cuda/ includes it. */
#ifndef KP_CUDA_PRIV_H
#define KP_CUDA_PRIV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- NVML, loaded at run time (nvml.c; plain C) ------------------------- */

typedef struct kp_nvml_now {
    int ok;                /* 1: NVML answered for this device */
    unsigned sm_mhz;       /* current SM clock */
    unsigned mem_mhz;      /* current memory clock */
    uint64_t reasons;      /* clock event (throttle) reason bits */
    char driver[32];       /* "580.95.05"; "" when NVML lacks it */
} kp_nvml_now;

/* Queries the device whose UUID text is `uuid` ("GPU-..."), falling back to
 * NVML index 0. Leaves *out zeroed when NVML is missing. Never fails hard. */
void kp_nvml_query(const char *uuid, kp_nvml_now *out);

/* ---- shared state of the backend (backend.cu) ---------------------------- */

/* Records an error text (printf-style) as the backend's last error. */
void kp_cu_seterr(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void kp_cu_clearerr(void);
/* Grid size for a grid-stride helper over `items` items. */
unsigned kp_cu_grid(int64_t items, int threads);

#ifdef __cplusplus
}

/* ---- the one error macro (C++ only: overloaded per API) ----------------- */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cupti.h>

/* Stringizes the call, records "file:line: call: error" as the last error,
 * and returns 0 on success, -1 on failure. Usable as `if (KP_CU(x)) goto
 * fail;` or `return KP_CU(x);`. The runtime variant also notices sticky
 * errors, after which the context is dead. */
#define KP_CU(call) kp_cu_check((call), #call, __FILE__, __LINE__)
int kp_cu_check(cudaError_t e, const char *expr, const char *file, int line);
int kp_cu_check(CUptiResult e, const char *expr, const char *file, int line);
int kp_cu_check(cublasStatus_t e, const char *expr, const char *file, int line);

/* A sticky error leaves the CUDA context unusable for the rest of the
 * process (illegal address, trap, ...). */
bool kp_cu_is_sticky(cudaError_t e);

/* The stream the backend's helpers run on (not the candidate's). */
cudaStream_t kp_cu_util_stream(void);
/* kp_dev_block_begin on any stream (calibration holds its own); released
 * by kp_dev_block_end, state from kp_dev_block_state. */
int kp_cu_block_on(cudaStream_t stream);
#endif

#endif
