/* kproof/kernel.h: the one header a candidate kernel includes.
 *
 * A candidate is one source file that defines the entry point of one op:
 *   host backend: a C file, entry points without a stream argument;
 *   cuda backend: a .cu file, entry points take the cudaStream_t to run on
 *                 (declared here as kp_stream, the same pointer type).
 *
 * Every entry point returns 0 on success and non-zero on failure. Pointers
 * are device pointers on the cuda backend and host pointers on the host
 * backend. Matrices are row-major and densely packed; sizes are int64_t.
 * Output buffers hold a poison pattern on entry: write every element.
 *
 * Alignment: a pointer is aligned to its element type (4 bytes for float,
 * 2 for kp_bf16) and nothing more. kproof checks some calls with pointers
 * that are not 16-byte aligned (one element past a 16-byte boundary, some
 * buffers of a call off and others on it), so an access wider than one
 * element (float4, float2, a pair of bf16, a 16-byte cp.async or TMA copy)
 * must check every pointer it uses, and the row length, and fall back to
 * narrower accesses where they do not allow it.
 *
 * bf16 is passed as its raw 16-bit pattern (the high half of an IEEE float);
 * on the cuda backend reinterpret it as __nv_bfloat16 if you like.
 */
#ifndef KPROOF_KERNEL_H
#define KPROOF_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
#define KP_EXTERN extern "C"
#else
#define KP_EXTERN
#endif

/* Export an entry point from the candidate's shared object. */
#define KP_ENTRY KP_EXTERN __attribute__((visibility("default")))

typedef uint16_t kp_bf16; /* raw bfloat16 bits */
typedef struct CUstream_st *kp_stream; /* == cudaStream_t */

/* bf16 <-> float helpers for host candidates (round to nearest even). */
static inline float kp_bf16_to_f32(kp_bf16 h) {
    union { uint32_t u; float f; } v;
    v.u = (uint32_t)h << 16;
    return v.f;
}
static inline kp_bf16 kp_f32_to_bf16(float f) {
    union { uint32_t u; float f; } v;
    v.f = f;
    if ((v.u & 0x7f800000u) == 0x7f800000u && (v.u & 0x007fffffu)) return (kp_bf16)((v.u >> 16) | 0x40u); /* NaN stays NaN */
    v.u += 0x7fffu + ((v.u >> 16) & 1u);
    return (kp_bf16)(v.u >> 16);
}

/* ---- matmul: C[M,N] = A[M,K] * B[K,N], row-major ------------------------
 * f32:  fp32 inputs, fp32 output, fp32-level accuracy (no tf32, no bf16).
 * bf16: bf16 inputs, fp32 accumulation, bf16 output (as torch.mm and cuBLAS
 *       give for bf16 tensors). */
#ifdef __CUDACC__ /* cuda backend: every entry point takes the stream last */
#define KP_STREAM_ARG , kp_stream stream
#else
#define KP_STREAM_ARG
#endif

KP_ENTRY int kp_matmul_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K KP_STREAM_ARG);
KP_ENTRY int kp_matmul_bf16(const kp_bf16 *A, const kp_bf16 *B, kp_bf16 *C, int64_t M, int64_t N, int64_t K KP_STREAM_ARG);
/* ---- softmax over each row of x[rows, cols] --------------------------- */
KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols KP_STREAM_ARG);
KP_ENTRY int kp_softmax_bf16(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols KP_STREAM_ARG);
/* ---- layernorm over each row, y = (x - mean) / sqrt(var + 1e-5) * w + b,
 *      var the biased (population) variance; w, b have cols elements ----- */
KP_ENTRY int kp_layernorm_f32(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols KP_STREAM_ARG);
KP_ENTRY int kp_layernorm_bf16(const kp_bf16 *x, const kp_bf16 *w, const kp_bf16 *b, kp_bf16 *y, int64_t rows, int64_t cols KP_STREAM_ARG);
/* ---- rmsnorm over each row, y = x / sqrt(mean(x^2) + 1e-5) * w; w has
 *      cols elements ------------------------------------------------------ */
KP_ENTRY int kp_rmsnorm_f32(const float *x, const float *w, float *y, int64_t rows, int64_t cols KP_STREAM_ARG);
KP_ENTRY int kp_rmsnorm_bf16(const kp_bf16 *x, const kp_bf16 *w, kp_bf16 *y, int64_t rows, int64_t cols KP_STREAM_ARG);
/* ---- sum of a vector: out[0] = x[0] + ... + x[n-1] --------------------- */
KP_ENTRY int kp_sum_f32(const float *x, float *out, int64_t n KP_STREAM_ARG);

#define KP_LAYERNORM_EPS 1e-5
#define KP_RMSNORM_EPS 1e-5

#endif
