/* test_gen.c: the input generator, bf16 rounding, poison and the checksum
 * (include/kproof/gen.h and their CPU users in src/core/registry.c).
 *
 * Known answers are hard-coded on purpose: the CPU and every GPU backend
 * must produce these exact bits forever, so any change to the generator
 * has to show up here as a failure, not pass silently.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kernel.h"
#include "kproof/kproof.h"
#include "test.h"

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ===== Philox ============================================================ */

/* Philox4x32-10 written from the paper's description (Salmon et al., SC11),
 * independently of gen.h: counter c[4], key k[2]. */
static void philox_ref(uint32_t c[4], uint32_t k[2]) {
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t o0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k[0], o1 = (uint32_t)p1;
        uint32_t o2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k[1], o3 = (uint32_t)p0;
        c[0] = o0, c[1] = o1, c[2] = o2, c[3] = o3;
        k[0] += 0x9E3779B9u;
        k[1] += 0xBB67AE85u;
    }
}

static void test_philox(void) {
    /* The reference against Random123's published known-answer vectors. */
    static const uint32_t kat[3][7] = {
        {0, 0, 0, 0, 0, 0, 0},
        {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0},
        {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u, 0},
    };
    static const uint32_t kat_out[3][4] = {
        {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
        {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
        {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u},
    };
    for (int t = 0; t < 3; t++) {
        uint32_t c[4] = {kat[t][0], kat[t][1], kat[t][2], kat[t][3]}, k[2] = {kat[t][4], kat[t][5]};
        philox_ref(c, k);
        for (int j = 0; j < 4; j++) CHECK(c[j] == kat_out[t][j]);
    }

    /* kp_philox is that function on counter (index lo, index hi, stream,
     * "kp") and key (seed lo, seed hi). */
    kp_rng r = {12345};
    for (int t = 0; t < 1000; t++) {
        uint64_t idx = kp_rng_next(&r), seed = kp_rng_next(&r);
        uint32_t stream = (uint32_t)kp_rng_next(&r);
        uint32_t c[4] = {(uint32_t)idx, (uint32_t)(idx >> 32), stream, 0x6b70u};
        uint32_t k[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
        philox_ref(c, k);
        kp_u32x4 got = kp_philox(idx, stream, seed);
        int same = 1;
        for (int j = 0; j < 4; j++) same &= got.v[j] == c[j];
        CHECK(same);
        if (!same) break;
    }

    /* Hard-coded outputs of kp_philox itself. */
    static const struct {
        uint64_t index;
        uint32_t stream;
        uint64_t seed;
        uint32_t out[4];
    } kv[] = {
        {0, 0, 0, {0x00c59528u, 0xa0ce78bcu, 0x58f866b7u, 0x066f357cu}},
        {1, 0, 0, {0x543cac86u, 0x3228b975u, 0xa4501b2eu, 0x6a8b969du}},
        {0, 1, 0, {0x28bc1561u, 0xed62378bu, 0x1d2d7076u, 0xe043725cu}},
        {0, 0, 1, {0xd24e74b3u, 0xda0365ddu, 0x35438491u, 0x18bac1c1u}},
        {0x0123456789abcdefull, 7, 0xdeadbeefcafef00dull, {0x8a619c68u, 0x3285b514u, 0xf515c7a7u, 0x5496b516u}},
        {(1ull << 32) + 5, 3, 42, {0x2184f6fcu, 0xf01d4f94u, 0x73d4aa9au, 0xb6af6fa7u}},
    };
    for (size_t t = 0; t < sizeof kv / sizeof kv[0]; t++) {
        kp_u32x4 got = kp_philox(kv[t].index, kv[t].stream, kv[t].seed);
        for (int j = 0; j < 4; j++) CHECK(got.v[j] == kv[t].out[j]);
    }
}

/* ===== values and distributions ========================================== */

static void test_values(void) {
    /* Exact bits of kp_gen_value: what a GPU fill must reproduce. */
    const kp_gen g[3] = {{KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f}, {KP_GEN_UNIFORM, 0.0f, 1.0f, 0, 0.0f},
                         {KP_GEN_SIGNED, 0.5f, 1000.0f, 0, 0.0f}};
    static const uint32_t want[3][3] = {
        {0xbf0047c1u, 0xbe7f2b8bu, 0xbeb8bb9cu},
        {0x3f4bd0dbu, 0x3f5f58e3u, 0x3f2b52fcu},
        {0x425ddb92u, 0x442fc7f9u, 0x43a420e5u},
    };
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) CHECK(f2u(kp_gen_value(&g[k], 42, (uint32_t)k, (uint64_t)i * 1000)) == want[k][i]);
    /* By hand: a signed draw is v = z * 1000 + 0.5 with z a multiple of
     * 2^-23, so (v - 0.5) / 1000 * 2^23 is an integer up to two float
     * roundings of v (ulp 2^-18 at 55: 0.03 after scaling). */
    double z = ((double)u2f(want[2][0]) - 0.5) / 1000.0 * 8388608.0;
    CHECK(fabs(z - floor(z + 0.5)) < 0.05);
}

typedef struct moments {
    double mean, var, lo, hi;
} moments;

static moments sample(const kp_gen *g, uint64_t seed, int n) {
    double s = 0, ss = 0, lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) {
        double v = kp_gen_value(g, seed, 3, (uint64_t)i);
        s += v;
        ss += v * v;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    moments m = {s / n, ss / n - (s / n) * (s / n), lo, hi};
    return m;
}

static void test_distributions(void) {
    const int n = 1000000;
    /* standard errors at 1e6 samples: mean ~1e-3 sd, variance ~1.4e-3 var */
    kp_gen gn = {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f};
    moments m = sample(&gn, 7, n);
    CHECK_NEAR(m.mean, 0.0, 0.005);
    CHECK_NEAR(m.var, 1.0, 0.01);
    CHECK(m.lo >= -2 * sqrt(3.0) - 1e-6 && m.hi <= 2 * sqrt(3.0) + 1e-6); /* Irwin-Hall(4) support */
    CHECK(m.lo < -3.0 && m.hi > 3.0);                                     /* but it reaches the tails */

    kp_gen gu = {KP_GEN_UNIFORM, 0.0f, 1.0f, 0, 0.0f};
    m = sample(&gu, 8, n);
    CHECK_NEAR(m.mean, 0.5, 0.002);
    CHECK_NEAR(m.var, 1.0 / 12, 0.001);
    CHECK(m.lo >= 0.0 && m.hi < 1.0);

    kp_gen gs = {KP_GEN_SIGNED, 0.0f, 1.0f, 0, 0.0f};
    m = sample(&gs, 9, n);
    CHECK_NEAR(m.mean, 0.0, 0.003);
    CHECK_NEAR(m.var, 1.0 / 3, 0.003);
    CHECK(m.lo >= -1.0 && m.hi < 1.0);

    /* offset and scale: the softmax "offset" and sum "cancel" shapes */
    kp_gen go = {KP_GEN_NORMAL, 1000.0f, 1.0f, 0, 0.0f};
    m = sample(&go, 10, n);
    CHECK_NEAR(m.mean, 1000.0, 0.005);
    CHECK_NEAR(m.var, 1.0, 0.02);
    kp_gen gc = {KP_GEN_SIGNED, 0.5f, 1000.0f, 0, 0.0f};
    m = sample(&gc, 11, n);
    CHECK_NEAR(m.mean, 0.5, 2.0);
    CHECK_NEAR(m.var, 1e6 / 3, 1e6 / 3 * 0.01);

    /* Different seeds and streams give unrelated values. */
    int same = 0;
    for (int i = 0; i < 1000; i++) {
        same += kp_gen_value(&gn, 1, 0, (uint64_t)i) == kp_gen_value(&gn, 2, 0, (uint64_t)i);
        same += kp_gen_value(&gn, 1, 0, (uint64_t)i) == kp_gen_value(&gn, 1, 1, (uint64_t)i);
    }
    CHECK(same < 5);

    /* Spikes: every period-th value is +-spike, both signs occur, and the
     * others are the distribution's own values, untouched. */
    kp_gen gk = {KP_GEN_NORMAL, 0.0f, 1.0f, 37, 1000.0f};
    int plus = 0, minus = 0, other_same = 1;
    for (uint64_t i = 0; i < 37 * 200; i++) {
        float v = kp_gen_value(&gk, 5, 0, i), u = kp_gen_value(&gn, 5, 0, i);
        if (i % 37 == 0) {
            plus += v == 1000.0f;
            minus += v == -1000.0f;
        } else {
            other_same &= f2u(v) == f2u(u); /* gn: the same N(0,1) without spikes */
        }
    }
    CHECK(plus + minus == 200);
    CHECK(plus > 60 && minus > 60);
    CHECK(other_same);
}

/* kp_gen_run built without AVX2 (tests/gen_sse2_path.c). */
void kp_test_gen_run_no_avx2(const kp_gen *g, uint64_t seed, uint32_t stream, uint64_t begin, int64_t n, float *out,
                             uint16_t *out16);

/* kp_gen_run (the CPU's fill: sixteen counters at once where AVX2 exists,
 * eight where SSE2 does), and the same built without AVX2, give
 * kp_gen_value's bits for every element: each kind, as float and as
 * bf16, from starts that are not multiples of eight, across the low
 * counter word's wrap at 2^32, lengths that leave a scalar tail, with and
 * without spikes (periods that do and do not divide the start). */
static void test_run(void) {
    static const kp_gen gens[] = {
        {KP_GEN_NORMAL, 0.0f, 1.0f, 0, 0.0f},      {KP_GEN_NORMAL, 1000.0f, 3.0f, 0, 0.0f},
        {KP_GEN_UNIFORM, -0.25f, 2.0f, 0, 0.0f},   {KP_GEN_SIGNED, 0.5f, 100.0f, 0, 0.0f},
        {KP_GEN_NORMAL, 0.0f, 1.0f, 37, 1000.0f},  {KP_GEN_SIGNED, 0.0f, 1.0f, 8, -7.0f},
        {KP_GEN_UNIFORM, 0.0f, 1.0f, 1, 5.0f},
    };
    static const uint64_t begins[] = {0, 3, 1000, ((uint64_t)1 << 32) - 13, ((uint64_t)5 << 32) + 77};
    static const int64_t lens[] = {0, 1, 7, 8, 9, 64, 1001};
    float f[1001], f2[1001];
    uint16_t h[1001], h2[1001];
    int bad = 0;
    for (size_t k = 0; k < sizeof gens / sizeof *gens; k++)
        for (size_t b = 0; b < sizeof begins / sizeof *begins; b++)
            for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
                uint64_t seed = 0x9e3779b97f4a7c15ull * (k + 1) + b;
                kp_gen_run(&gens[k], seed, (uint32_t)k, begins[b], lens[l], f, NULL);
                kp_gen_run(&gens[k], seed, (uint32_t)k, begins[b], lens[l], NULL, h);
                kp_test_gen_run_no_avx2(&gens[k], seed, (uint32_t)k, begins[b], lens[l], f2, NULL);
                kp_test_gen_run_no_avx2(&gens[k], seed, (uint32_t)k, begins[b], lens[l], NULL, h2);
                for (int64_t i = 0; i < lens[l]; i++) {
                    float v = kp_gen_value(&gens[k], seed, (uint32_t)k, begins[b] + (uint64_t)i);
                    bad += f2u(f[i]) != f2u(v);
                    bad += h[i] != kp_f32_to_bf16_bits(v);
                    bad += f2u(f2[i]) != f2u(v);
                    bad += h2[i] != kp_f32_to_bf16_bits(v);
                }
            }
    CHECK(bad == 0);
}

/* Every input buffer of every op under every distribution: finite, never
 * all zeros, deterministic, and the same whichever piece is filled. */
static void test_fill(void) {
    for (int o = 0; o < kp_op_count(); o++) {
        const kp_op *op = kp_op_at(o);
        const kp_shape *s = &op->quick.shapes[0];
        for (int d = 0; d < op->ndists; d++) {
            void *a[KP_MAX_BUFS], *b[KP_MAX_BUFS];
            CHECK(kp_gen_inputs(op, s, d, 99, a) == 0);
            CHECK(kp_gen_inputs(op, s, d, 99, b) == 0);
            for (int k = 0; k < op->nbufs; k++) {
                if (op->bufs[k].output) {
                    CHECK(a[k] == NULL);
                    continue;
                }
                int64_t n = op->buf_elems(s, k);
                size_t bytes = (size_t)n * kp_dtype_size(op->bufs[k].dtype);
                CHECK(memcmp(a[k], b[k], bytes) == 0);
                int64_t nonzero = 0, finite = 1;
                for (int64_t i = 0; i < n; i++) {
                    double v = kp_load(a[k], op->bufs[k].dtype, i);
                    nonzero += v != 0;
                    finite &= isfinite(v) != 0;
                }
                CHECK(finite);
                CHECK(nonzero > n * 9 / 10);
                /* a piece filled on its own equals the same piece of the whole */
                int64_t begin = n / 3, len = n - begin;
                void *part = malloc((size_t)len * kp_dtype_size(op->bufs[k].dtype));
                kp_gen_fill(op, s, d, k, 99, part, begin, len);
                CHECK(memcmp(part, (char *)a[k] + (size_t)begin * kp_dtype_size(op->bufs[k].dtype),
                             (size_t)len * kp_dtype_size(op->bufs[k].dtype)) == 0);
                free(part);
                /* element i is kp_gen_value on stream = buffer index, rounded */
                kp_gen g = op->gen(s, k, d);
                float v = kp_gen_value(&g, 99, (uint32_t)k, 5);
                if (op->bufs[k].dtype == KP_BF16) CHECK(((uint16_t *)a[k])[5] == kp_f32_to_bf16_bits(v));
                else CHECK(f2u(((float *)a[k])[5]) == f2u(v));
            }
            kp_free_bufs(op, a);
            kp_free_bufs(op, b);
            CHECK(a[0] == NULL);
        }
    }
    /* A different seed gives a different input set. */
    const kp_op *op = kp_op_find("sum_f32");
    void *a[KP_MAX_BUFS], *b[KP_MAX_BUFS];
    kp_gen_inputs(op, &op->quick.shapes[1], 0, 1, a);
    kp_gen_inputs(op, &op->quick.shapes[1], 0, 2, b);
    CHECK(memcmp(a[0], b[0], 4 * (size_t)op->quick.shapes[1].d[0]) != 0);
    kp_free_bufs(op, a);
    kp_free_bufs(op, b);
}

/* ===== bf16 rounding ====================================================== */

static void test_bf16(void) {
    static const struct {
        uint32_t in;
        uint16_t out;
    } cases[] = {
        {0x3f800000u, 0x3f80}, /* 1.0 */
        {0x3f808000u, 0x3f80}, /* 1 + 2^-8: a tie, stays on the even 1.0 */
        {0x3f818000u, 0x3f82}, /* 1 + 3*2^-8: a tie, goes up to the even */
        {0x3f808001u, 0x3f81}, /* just above the tie */
        {0x3f807fffu, 0x3f80}, /* just below */
        {0xbfc00000u, 0xbfc0}, /* -1.5 */
        {0x7f800000u, 0x7f80}, /* +inf */
        {0xff800000u, 0xff80}, /* -inf */
        {0x7f7fffffu, 0x7f80}, /* FLT_MAX rounds up to inf */
        {0x7f7f7fffu, 0x7f7f}, /* largest that stays finite */
        {0x00000001u, 0x0000}, /* smallest denormal: to +0 */
        {0x00008000u, 0x0000}, /* denormal tie: to even (0) */
        {0x00018000u, 0x0002}, /* denormal tie: to even (2) */
        {0x80000000u, 0x8000}, /* -0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK(kp_f32_to_bf16_bits(u2f(cases[i].in)) == cases[i].out);
        CHECK(kp_f32_to_bf16(u2f(cases[i].in)) == cases[i].out); /* the candidates' helper agrees */
    }
    /* NaN stays NaN, quiet, whatever its payload; never becomes inf. */
    static const uint32_t nans[] = {0x7fc00000u, 0x7f800001u, 0xffffffffu, 0x7fffffffu, 0x7f810000u};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        uint16_t h = kp_f32_to_bf16_bits(u2f(nans[i]));
        CHECK((h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0);
        CHECK(isnan(kp_bf16_bits_to_f32(h)));
        CHECK(kp_f32_to_bf16(u2f(nans[i])) == h);
    }
    CHECK(kp_bf16_bits_to_f32(0x3f81) == 1.0078125f);
    CHECK(kp_bf16_bits_to_f32(0xc2f7) == -123.5f);
    /* every bf16 value survives a round trip */
    int ok = 1;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = kp_bf16_bits_to_f32((uint16_t)h);
        if (!isnan(f)) ok &= kp_f32_to_bf16_bits(f) == h;
    }
    CHECK(ok);
}

/* ===== poison ============================================================= */

static void test_poison(void) {
    volatile float zero = 0.0f;
    float f[5];
    f[0] = u2f(KP_POISON_F32_BITS);
    f[1] = zero / zero; /* a NaN arithmetic makes */
    f[2] = 1.0f;
    f[3] = u2f(0x7fc00000u);
    f[4] = (float)INFINITY;
    CHECK(kp_is_poison(f, KP_F32, 0));
    for (int i = 1; i < 5; i++) CHECK(!kp_is_poison(f, KP_F32, i));
    CHECK(isnan(kp_load(f, KP_F32, 0)));
    CHECK(isnan(f[1]) && f2u(f[1]) != KP_POISON_F32_BITS && (f2u(f[1]) & 0x7fffffffu) != (KP_POISON_F32_BITS & 0x7fffffffu));
    uint16_t h[4] = {KP_POISON_BF16_BITS, kp_f32_to_bf16_bits(f[1]), 0x3f80, 0x7fc0};
    CHECK(kp_is_poison(h, KP_BF16, 0));
    for (int i = 1; i < 4; i++) CHECK(!kp_is_poison(h, KP_BF16, i));
    CHECK(isnan(kp_load(h, KP_BF16, 0)));
    CHECK(kp_load(h, KP_BF16, 2) == 1.0);
    /* both patterns are NaN, so a check that forgot to look for poison
     * would still fail the output, just with the wrong message */
    CHECK(isnan(u2f(KP_POISON_F32_BITS)) && isnan(kp_bf16_bits_to_f32(KP_POISON_BF16_BITS)));
}

/* ===== checksum =========================================================== */

/* splitmix64's finalizer, written out again for the test. */
static uint64_t mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void test_cksum(void) {
    CHECK(kp_cksum("", 0) == 0);
    /* two words, little-endian: 1 at index 0, 2 at index 1 */
    const unsigned char two[8] = {1, 0, 0, 0, 2, 0, 0, 0};
    CHECK(kp_cksum(two, 8) == mix(1) + mix(2 | (1ull << 32)));
    /* odd length: words 0x04030201 and 0x00000005 (zero-padded) */
    const unsigned char five[5] = {1, 2, 3, 4, 5};
    CHECK(kp_cksum(five, 5) == mix(0x04030201u) + mix(5u | (1ull << 32)));
    CHECK(kp_cksum(five, 5) == 0xb30a80f177a11bfbull);
    /* padding bytes are zeros: 5 bytes == the same 5 plus three zeros */
    const unsigned char eight[8] = {1, 2, 3, 4, 5, 0, 0, 0};
    CHECK(kp_cksum(eight, 8) == kp_cksum(five, 5));
    /* position matters: swapping two words changes the sum */
    const unsigned char swapped[8] = {2, 0, 0, 0, 1, 0, 0, 0};
    CHECK(kp_cksum(swapped, 8) != kp_cksum(two, 8));
    /* one flipped bit anywhere in a buffer changes it */
    unsigned char buf[1003];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 7);
    uint64_t base = kp_cksum(buf, sizeof buf);
    int changed = 1;
    for (size_t i = 0; i < sizeof buf; i += 37) {
        buf[i] ^= 0x10;
        changed &= kp_cksum(buf, sizeof buf) != base;
        buf[i] ^= 0x10;
    }
    CHECK(changed);
    CHECK(kp_cksum(buf, sizeof buf) == base);
    /* every length and start past the four-word steps: the sum written
     * out word by word (the last word zero-padded) */
    for (size_t n = 0; n <= 40; n++)
        for (uint64_t first = 0; first < 3; first++) {
            uint64_t want = 0;
            for (size_t w = 0; 4 * w < n; w++) {
                uint32_t v = 0;
                for (size_t k = 0; k < 4 && 4 * w + k < n; k++) v |= (uint32_t)buf[4 * w + k] << (8 * k);
                want += mix((uint64_t)v | ((first + w) << 32));
            }
            CHECK(kp_cksum_at(buf, n, first) == want);
        }
}

/* The parent checksums big inputs in chunks (src/core/protocol/inputs.c): parts at
 * word offsets add up to the whole, for any split at a multiple of 4. */
static void test_cksum_parts(void) {
    unsigned char buf[1003];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 131u + 7u);
    for (size_t n = 0; n <= sizeof buf; n += 97) {
        uint64_t whole = kp_cksum(buf, n);
        for (size_t cut = 0; cut <= n; cut += 4 * 37) {
            uint64_t parts = kp_cksum_at(buf, cut, 0) + kp_cksum_at(buf + cut, n - cut, cut / 4);
            CHECK(parts == whole);
        }
    }
}

int main(void) {
    test_philox();
    test_values();
    test_distributions();
    test_run();
    test_fill();
    test_bf16();
    test_poison();
    test_cksum();
    test_cksum_parts();
    TEST_MAIN_END();
}
