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

/* Values [begin, begin + n) of buffer `stream` on the CPU, as floats (out)
 * or rounded to bf16 bits (out16): bit for bit kp_gen_value of each index
 * (tests/test_gen.c compares them). The generator is most of a host
 * evaluation's CPU (the parent and the host worker both generate every
 * input), so on x86-64 eight counters go through Philox side by side in
 * SSE2 registers: the same integer steps, the same exactly rounded int ->
 * float conversion and float multiply and add, lane by lane; the spike
 * elements (a multiple of the period) are then rewritten one by one. */
#if !defined(__CUDACC__) && defined(__SSE2__)
#include <emmintrin.h>
static inline void kp_gen_mulhilo4_(__m128i a, __m128i m, __m128i *lo, __m128i *hi) {
    __m128i e = _mm_mul_epu32(a, m);                       /* lanes 0, 2: 64-bit products */
    __m128i o = _mm_mul_epu32(_mm_srli_epi64(a, 32), m);   /* lanes 1, 3 */
    __m128i el = _mm_shuffle_epi32(e, _MM_SHUFFLE(3, 1, 2, 0));
    __m128i ol = _mm_shuffle_epi32(o, _MM_SHUFFLE(3, 1, 2, 0));
    *lo = _mm_unpacklo_epi32(el, ol);
    *hi = _mm_unpackhi_epi32(el, ol);
}
/* Eight values from index i0 (period ignored: the caller's). */
static inline void kp_gen_eight_(const kp_gen *g, uint64_t seed, uint32_t stream, uint64_t i0, float *out) {
    __m128i c0[2], c1[2], c2[2], c3[2];
    for (int h = 0; h < 2; h++) {
        uint64_t a = i0 + 4 * (uint64_t)h;
        c0[h] = _mm_set_epi32((int)(uint32_t)(a + 3), (int)(uint32_t)(a + 2), (int)(uint32_t)(a + 1), (int)(uint32_t)a);
        c1[h] = _mm_set_epi32((int)(uint32_t)((a + 3) >> 32), (int)(uint32_t)((a + 2) >> 32),
                              (int)(uint32_t)((a + 1) >> 32), (int)(uint32_t)(a >> 32));
        c2[h] = _mm_set1_epi32((int)stream);
        c3[h] = _mm_set1_epi32(0x6b70);
    }
    const __m128i m0 = _mm_set1_epi32((int)0xD2511F53u), m1 = _mm_set1_epi32((int)0xCD9E8D57u);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        __m128i K0 = _mm_set1_epi32((int)k0), K1 = _mm_set1_epi32((int)k1);
        for (int h = 0; h < 2; h++) {
            __m128i lo0, hi0, lo1, hi1;
            kp_gen_mulhilo4_(c0[h], m0, &lo0, &hi0);
            kp_gen_mulhilo4_(c2[h], m1, &lo1, &hi1);
            __m128i n0 = _mm_xor_si128(_mm_xor_si128(hi1, c1[h]), K0);
            __m128i n2 = _mm_xor_si128(_mm_xor_si128(hi0, c3[h]), K1);
            c1[h] = lo1;
            c3[h] = lo0;
            c0[h] = n0;
            c2[h] = n2;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    const __m128 scale = _mm_set1_ps(g->scale), offset = _mm_set1_ps(g->offset);
    for (int h = 0; h < 2; h++) {
        __m128 z;
        if (g->kind == KP_GEN_NORMAL) {
            __m128i t = _mm_add_epi32(_mm_add_epi32(_mm_srli_epi32(c0[h], 8), _mm_srli_epi32(c1[h], 8)),
                                      _mm_add_epi32(_mm_srli_epi32(c2[h], 8), _mm_srli_epi32(c3[h], 8)));
            t = _mm_sub_epi32(t, _mm_set1_epi32(2 << 24));
            z = _mm_mul_ps(_mm_cvtepi32_ps(t), _mm_set1_ps(1.03238106e-07f));
        } else if (g->kind == KP_GEN_UNIFORM) {
            z = _mm_mul_ps(_mm_cvtepi32_ps(_mm_srli_epi32(c0[h], 8)), _mm_set1_ps(5.96046448e-08f));
        } else {
            __m128i t = _mm_sub_epi32(_mm_srli_epi32(c0[h], 8), _mm_set1_epi32(1 << 23));
            z = _mm_mul_ps(_mm_cvtepi32_ps(t), _mm_set1_ps(1.19209290e-07f));
        }
        z = _mm_add_ps(_mm_mul_ps(z, scale), offset); /* two roundings, as in kp_gen_value */
        _mm_storeu_ps(out + 4 * h, z);
    }
}

/* The same eight-lane steps on x86-64 CPUs with AVX2, sixteen counters a
 * call (two registers of eight), chosen at run time: the SSE2 path's
 * integer steps and float conversion, multiply and add, lane by lane
 * (AVX2 implies no FMA, so the multiply and add stay two roundings).
 * KP_GEN_NO_AVX2 defined before this header leaves it out (test_gen runs
 * the SSE2 path that way on a CPU that has AVX2). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(KP_GEN_NO_AVX2)
#include <immintrin.h>
#define KP_GEN_AVX2 1
__attribute__((target("avx2"))) static inline void kp_gen_mulhilo8_(__m256i a, __m256i m, __m256i *lo, __m256i *hi) {
    __m256i e = _mm256_mul_epu32(a, m);
    __m256i o = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    __m256i el = _mm256_shuffle_epi32(e, _MM_SHUFFLE(3, 1, 2, 0));
    __m256i ol = _mm256_shuffle_epi32(o, _MM_SHUFFLE(3, 1, 2, 0));
    *lo = _mm256_unpacklo_epi32(el, ol);
    *hi = _mm256_unpackhi_epi32(el, ol);
}
/* Sixteen values from index i0 (period ignored: the caller's). */
__attribute__((target("avx2"))) static inline void kp_gen_sixteen_avx2_(const kp_gen *g, uint64_t seed, uint32_t stream,
                                                                         uint64_t i0, float *out) {
    __m256i c0[2], c1[2], c2[2], c3[2];
    for (int h = 0; h < 2; h++) {
        uint64_t a = i0 + 8 * (uint64_t)h;
        c0[h] = _mm256_set_epi32((int)(uint32_t)(a + 7), (int)(uint32_t)(a + 6), (int)(uint32_t)(a + 5),
                                 (int)(uint32_t)(a + 4), (int)(uint32_t)(a + 3), (int)(uint32_t)(a + 2),
                                 (int)(uint32_t)(a + 1), (int)(uint32_t)a);
        c1[h] = _mm256_set_epi32((int)(uint32_t)((a + 7) >> 32), (int)(uint32_t)((a + 6) >> 32),
                                 (int)(uint32_t)((a + 5) >> 32), (int)(uint32_t)((a + 4) >> 32),
                                 (int)(uint32_t)((a + 3) >> 32), (int)(uint32_t)((a + 2) >> 32),
                                 (int)(uint32_t)((a + 1) >> 32), (int)(uint32_t)(a >> 32));
        c2[h] = _mm256_set1_epi32((int)stream);
        c3[h] = _mm256_set1_epi32(0x6b70);
    }
    const __m256i m0 = _mm256_set1_epi32((int)0xD2511F53u), m1 = _mm256_set1_epi32((int)0xCD9E8D57u);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        __m256i K0 = _mm256_set1_epi32((int)k0), K1 = _mm256_set1_epi32((int)k1);
        for (int h = 0; h < 2; h++) {
            __m256i lo0, hi0, lo1, hi1;
            kp_gen_mulhilo8_(c0[h], m0, &lo0, &hi0);
            kp_gen_mulhilo8_(c2[h], m1, &lo1, &hi1);
            __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1[h]), K0);
            __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3[h]), K1);
            c1[h] = lo1;
            c3[h] = lo0;
            c0[h] = n0;
            c2[h] = n2;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    const __m256 scale = _mm256_set1_ps(g->scale), offset = _mm256_set1_ps(g->offset);
    for (int h = 0; h < 2; h++) {
        __m256 z;
        if (g->kind == KP_GEN_NORMAL) {
            __m256i t = _mm256_add_epi32(_mm256_add_epi32(_mm256_srli_epi32(c0[h], 8), _mm256_srli_epi32(c1[h], 8)),
                                         _mm256_add_epi32(_mm256_srli_epi32(c2[h], 8), _mm256_srli_epi32(c3[h], 8)));
            t = _mm256_sub_epi32(t, _mm256_set1_epi32(2 << 24));
            z = _mm256_mul_ps(_mm256_cvtepi32_ps(t), _mm256_set1_ps(1.03238106e-07f));
        } else if (g->kind == KP_GEN_UNIFORM) {
            z = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(c0[h], 8)), _mm256_set1_ps(5.96046448e-08f));
        } else {
            __m256i t = _mm256_sub_epi32(_mm256_srli_epi32(c0[h], 8), _mm256_set1_epi32(1 << 23));
            z = _mm256_mul_ps(_mm256_cvtepi32_ps(t), _mm256_set1_ps(1.19209290e-07f));
        }
        z = _mm256_mul_ps(z, scale);
        z = _mm256_add_ps(z, offset); /* two roundings, as in kp_gen_value */
        _mm256_storeu_ps(out + 8 * h, z);
    }
}
/* Whether this CPU runs the AVX2 path (a bit the C runtime read at start). */
static inline int kp_gen_have_avx2_(void) { return __builtin_cpu_supports("avx2") ? 1 : 0; }
#endif
#endif

#ifndef __CUDACC__
static inline void kp_gen_run(const kp_gen *g, uint64_t seed, uint32_t stream, uint64_t begin, int64_t n, float *out,
                              uint16_t *out16) {
    int64_t i = 0;
#ifdef __SSE2__
    float v8[16];
#ifdef KP_GEN_AVX2
    if (kp_gen_have_avx2_()) {
        for (; i + 16 <= n; i += 16) {
            if (out16) {
                kp_gen_sixteen_avx2_(g, seed, stream, begin + (uint64_t)i, v8);
                for (int j = 0; j < 16; j++) out16[i + j] = kp_f32_to_bf16_bits(v8[j]);
            } else {
                kp_gen_sixteen_avx2_(g, seed, stream, begin + (uint64_t)i, out + i);
            }
        }
    }
#endif
    for (; i + 8 <= n; i += 8) {
        if (out16) {
            kp_gen_eight_(g, seed, stream, begin + (uint64_t)i, v8);
            for (int j = 0; j < 8; j++) out16[i + j] = kp_f32_to_bf16_bits(v8[j]);
        } else {
            kp_gen_eight_(g, seed, stream, begin + (uint64_t)i, out + i);
        }
    }
    if (g->period > 0 && i > 0) { /* the spikes among the first i, one by one */
        /* offsets from begin, so no index past 2^64 is ever formed */
        uint64_t p = (uint64_t)g->period;
        for (uint64_t j = (p - begin % p) % p; j < (uint64_t)i; j += p) {
            float v = kp_gen_value(g, seed, stream, begin + j);
            if (out16) out16[j] = kp_f32_to_bf16_bits(v);
            else out[j] = v;
        }
    }
#endif
    for (; i < n; i++) {
        float v = kp_gen_value(g, seed, stream, begin + (uint64_t)i);
        if (out16) out16[i] = kp_f32_to_bf16_bits(v);
        else out[i] = v;
    }
}
#endif

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
