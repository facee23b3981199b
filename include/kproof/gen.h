/* gen.h: the counter-based input generator, shared by the CPU and the GPU.
 *
 * Element i of buffer b of an input set with seed s is a pure function of
 * (s, b, i): Philox4x32-10 on counter (i_lo, i_hi, b, 0) with key s. The
 * parent recomputes any element on the CPU; a backend generates whole
 * buffers on its device. Only integer arithmetic and exactly rounded float
 * operations are used, in a fixed order, so the CPU and the GPU produce the
 * same bits (compile device code that includes this with --fmad=false and
 * host code with -ffp-contract=off; kp_gen_value uses explicit steps).
 *
 * This header is included from C and from CUDA.
 */
#ifndef KP_GEN_H
#define KP_GEN_H

#include <stdint.h>

#ifdef __CUDACC__
#define KP_HD __host__ __device__ __forceinline__
#else
#define KP_HD static inline
#endif

/* How one buffer's elements are distributed: value = offset + scale * z. */
typedef enum kp_gen_kind {
    KP_GEN_NORMAL = 0,  /* z ~ approx N(0,1): centred sum of 4 uniforms, scaled */
    KP_GEN_UNIFORM = 1, /* z ~ U[0,1) */
    KP_GEN_SIGNED = 2   /* z ~ U[-1,1) */
} kp_gen_kind;

typedef struct kp_gen {
    int kind;       /* kp_gen_kind */
    float offset;   /* added after scaling */
    float scale;    /* multiplies z */
    int64_t period; /* > 0: every element whose index is a multiple of it */
    float spike;    /* is +-spike instead (the sign random): a row's first value an outlier */
} kp_gen;

typedef struct kp_u32x4 { uint32_t v[4]; } kp_u32x4;

KP_HD kp_u32x4 kp_philox(uint64_t index, uint32_t stream, uint64_t seed) {
    uint32_t c0 = (uint32_t)index, c1 = (uint32_t)(index >> 32), c2 = stream, c3 = 0x6b70u; /* "kp" */
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    kp_u32x4 out;
    out.v[0] = c0; out.v[1] = c1; out.v[2] = c2; out.v[3] = c3;
    return out;
}

/* The float value of element `index` of buffer `stream` (before any
 * rounding to the buffer's dtype). Exact integer work, then one rounding
 * int->float, then exactly two rounded float operations (mul, add). */
KP_HD float kp_gen_value(const kp_gen *g, uint64_t seed, uint32_t stream, uint64_t index) {
    kp_u32x4 r = kp_philox(index, stream, seed);
    float z;
    if (g->kind == KP_GEN_NORMAL) {
        /* Irwin-Hall(4): sum of four 24-bit uniforms, centred; variance 4/12,
         * so multiply by sqrt(3)/2^24 (done as one float multiply). */
        int32_t s = (int32_t)(r.v[0] >> 8) + (int32_t)(r.v[1] >> 8) + (int32_t)(r.v[2] >> 8) +
                    (int32_t)(r.v[3] >> 8) - (int32_t)(2u << 24);
        z = (float)s;                 /* |s| < 2^25: one rounding */
        z = z * 1.03238106e-07f;      /* sqrt(3) / 2^24, rounded once */
    } else if (g->kind == KP_GEN_UNIFORM) {
        z = (float)(r.v[0] >> 8) * 5.96046448e-08f; /* 2^-24: exact */
    } else {
        z = (float)((int32_t)(r.v[0] >> 8) - (int32_t)(1u << 23)) * 1.19209290e-07f; /* 2^-23: exact */
    }
    float v = z * g->scale;
    v = v + g->offset;
    if (g->period > 0 && index % (uint64_t)g->period == 0) v = (r.v[3] & 1u) ? g->spike : -g->spike;
    return v;
}

/* Round a float to bf16 bits (nearest even); NaN stays NaN. */
KP_HD uint16_t kp_f32_to_bf16_bits(float f) {
    union { float f; uint32_t u; } c;
    c.f = f;
    uint32_t u = c.u;
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

KP_HD float kp_bf16_bits_to_f32(uint16_t h) {
    union { float f; uint32_t u; } c;
    c.u = (uint32_t)h << 16;
    return c.f;
}

/* Checksum of a byte buffer, identical on every backend: the sum (mod
 * 2^64) over 32-bit little-endian words w_i (the last one zero-padded) of
 * kp_mix64(w_i | i << 32). A sum, so a GPU computes it in any order. */
KP_HD uint64_t kp_mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
KP_HD uint64_t kp_cksum_word(uint32_t w, uint64_t i) { return kp_mix64((uint64_t)w | (i << 32)); }

/* Poison patterns written into outputs before every call: quiet NaNs with a
 * payload no arithmetic produces, so "never written" is told apart from
 * "computed a NaN". */
#define KP_POISON_F32_BITS 0x7fe0deadu
#define KP_POISON_BF16_BITS 0x7fe1u
/* Guard bytes around every buffer. */
#define KP_CANARY_BYTE 0xa5u
#define KP_CANARY_BYTES 4096

#endif
