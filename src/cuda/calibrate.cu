/* calibrate.cu: the speed of light of this GPU, measured (threat 16).
 *
 * The parent states every timing as a fraction of what the chip can do and
 * rejects times below bytes / bandwidth or flops / rate. Datasheet peaks are
 * not reachable (H200: 4.8 TB/s nominal, about 4.3 measured), so the peaks
 * are measured here: a device-to-device cudaMemcpyAsync of 2 GiB (bytes read
 * plus bytes written) and cuBLAS GEMMs at 8192^3 on random inputs (fp32 with
 * TF32 off, TF32, bf16 with fp32 accumulation). Medians of 10 timed runs
 * after warmup. Everything is freed afterwards: a calibration worker is
 * usually followed by candidates in other workers, but a long-lived one
 * should not keep gigabytes and a cuBLAS workspace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "cuda_priv.h"
#include "worker/backend.h"

#define KP_CAL_WARMUP 3
#define KP_CAL_REPS 10
#define KP_CAL_GEMM_N 8192

static int kp_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median seconds of KP_CAL_REPS runs of fn on stream s, after warmup, each
 * run between its own pair of events. */
template <typename F>
static int kp_time_median(cudaStream_t s, F fn, double *median_s) {
    cudaEvent_t a = NULL, b = NULL;
    double t[KP_CAL_REPS];
    int rc = -1;
    if (KP_CU(cudaEventCreate(&a)) || KP_CU(cudaEventCreate(&b)))
        goto done;
    for (int i = 0; i < KP_CAL_WARMUP; i++)
        if (fn())
            goto done;
    if (KP_CU(cudaStreamSynchronize(s)))
        goto done;
    for (int i = 0; i < KP_CAL_REPS; i++) {
        float ms = 0.0f;
        /* As candidates are timed: cold clean L2, the stream held while
         * the run is enqueued. */
        if (kp_dev_flush())
            goto done;
        int held = kp_cu_block_on(s) == 0;
        int bad = KP_CU(cudaEventRecord(a, s)) || fn() || KP_CU(cudaEventRecord(b, s));
        if (held)
            kp_dev_block_end(); /* on every path: a hold left on would spin for a second */
        if (bad)
            goto done;
        if (KP_CU(cudaEventSynchronize(b)) || KP_CU(cudaEventElapsedTime(&ms, a, b)))
            goto done;
        t[i] = (double)ms * 1e-3;
    }
    qsort(t, KP_CAL_REPS, sizeof t[0], kp_cmp_double);
    *median_s = 0.5 * (t[(KP_CAL_REPS - 1) / 2] + t[KP_CAL_REPS / 2]);
    rc = *median_s > 0.0 ? 0 : -1;
    if (rc)
        kp_cu_seterr("calibrate: a timed run took no measurable time");
done:
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    return rc;
}

/* Copy bandwidth: the largest of 2 GiB, 1 GiB, ... 256 MiB that fits. */
static int kp_cal_copy(cudaStream_t s, double *gbs, size_t *used) {
    void *src = NULL, *dst = NULL;
    size_t bytes = (size_t)2 << 30;
    for (; bytes >= ((size_t)256 << 20); bytes /= 2) {
        if (cudaMalloc(&src, bytes) == cudaSuccess && cudaMalloc(&dst, bytes) == cudaSuccess)
            break;
        (void)cudaGetLastError(); /* out of memory is expected here, not the candidate's */
        if (src)
            cudaFree(src);
        src = dst = NULL;
    }
    if (!src) {
        kp_cu_seterr("calibrate: cannot allocate two 256 MiB buffers");
        return -1;
    }
    int rc = -1;
    double t = 0.0;
    /* Defined contents: copying never-written memory could be cheaper. */
    if (KP_CU(cudaMemsetAsync(src, 0x5a, bytes, s)))
        goto done;
    if (kp_time_median(s, [&] { return KP_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)); }, &t))
        goto done;
    *gbs = 2.0 * (double)bytes / t / 1e9; /* napkin: each byte read once and written once */
    *used = bytes;
    rc = 0;
done:
    cudaFree(src);
    cudaFree(dst);
    return rc;
}

/* GEMM rates at n^3 (2 n^3 flops per call). */
static int kp_cal_gemm(cudaStream_t s, kp_calib_rep *rep) {
    const int64_t n = KP_CAL_GEMM_N;
    const size_t bytes = (size_t)(n * n) * sizeof(float);
    const double flops = 2.0 * (double)n * (double)n * (double)n;
    const float one = 1.0f, zero = 0.0f;
    const kp_gen g = {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f};
    cublasHandle_t h = NULL;
    float *A = NULL, *B = NULL, *C = NULL;
    double t = 0.0;
    int rc = -1;
    if (KP_CU(cudaMalloc((void **)&A, bytes)) || KP_CU(cudaMalloc((void **)&B, bytes)) ||
        KP_CU(cudaMalloc((void **)&C, bytes)))
        goto done;
    if (kp_dev_fill(A, KP_F32, &g, 0x6b70726f6f66ull, 0, n * n) ||
        kp_dev_fill(B, KP_F32, &g, 0x6b70726f6f66ull, 1, n * n))
        goto done;
    if (KP_CU(cublasCreate(&h)) || KP_CU(cublasSetStream(h, s)))
        goto done;

    /* fp32, TF32 off: the baseline an fp32-accurate kernel must beat. */
    if (KP_CU(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH)))
        goto done;
    if (kp_time_median(s, [&] {
            return KP_CU(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, A, (int)n, B, (int)n,
                                     &zero, C, (int)n));
        }, &t))
        goto done;
    rep->gemm_f32_gflops = flops / t / 1e9;

    /* TF32: not an fp32-accurate rate, but the ceiling of a kernel that
     * downgrades precision, so the parent can tell which one it is facing. */
    if (kp_time_median(s, [&] {
            return KP_CU(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, A, CUDA_R_32F, (int)n,
                                      B, CUDA_R_32F, (int)n, &zero, C, CUDA_R_32F, (int)n,
                                      CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
        }, &t))
        goto done;
    rep->gemm_tf32_gflops = flops / t / 1e9;

    /* bf16 in and out, fp32 accumulation; the first half of each buffer. */
    if (kp_dev_fill(A, KP_BF16, &g, 0x6b70726f6f66ull, 2, n * n) ||
        kp_dev_fill(B, KP_BF16, &g, 0x6b70726f6f66ull, 3, n * n))
        goto done;
    if (kp_time_median(s, [&] {
            return KP_CU(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, A, CUDA_R_16BF,
                                      (int)n, B, CUDA_R_16BF, (int)n, &zero, C, CUDA_R_16BF, (int)n,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }, &t))
        goto done;
    rep->gemm_bf16_gflops = flops / t / 1e9;
    rc = 0;
done:
    if (h)
        cublasDestroy(h);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    return rc;
}

int kp_dev_calibrate(kp_calib_rep *rep) {
    memset(rep, 0, sizeof *rep);
    kp_cu_clearerr();
    cudaStream_t s = kp_cu_util_stream();
    if (!s) {
        kp_cu_seterr("calibrate: kp_dev_init was not called (or failed)");
        return -1;
    }
    /* Start from an idle device: nothing else may share the bandwidth. */
    if (kp_dev_sync())
        return -1;
    size_t copy_bytes = 0;
    if (kp_cal_copy(s, &rep->copy_gbs, &copy_bytes) || kp_cal_gemm(s, rep)) {
        snprintf(rep->note, sizeof rep->note, "%s", kp_dev_error());
        (void)cudaDeviceSynchronize();
        return -1;
    }
    snprintf(rep->note, sizeof rep->note,
             "cudaMemcpyAsync d2d %zu MiB; cuBLAS %d^3 (f32 default math, tf32, bf16 fp32-acc); median of %d after %d "
             "warmup, each cold and held",
             copy_bytes >> 20, KP_CAL_GEMM_N, KP_CAL_REPS, KP_CAL_WARMUP);
    return kp_dev_sync();
}
