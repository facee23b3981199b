/* op_priv.h: what the op files (src/ops/<family>.c), the registry and the output
 * check share and the public header does not need to show. Private to
 * kproof_core; nothing outside src/core and src/ops includes it.
 */
#ifndef KP_OP_PRIV_H
#define KP_OP_PRIV_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kproof/kproof.h"

/* ---- the registered ops (defined in src/ops/<family>.c) ---------------- */
/* The one list of ops: each X(name) is a descriptor kp_op_<name> defined in
 * src/ops/<family>.c. It declares them here and makes the registry's table
 * (registry.c), in this order: what `kproof list` prints, family by family,
 * f32 first, since kp_op_resolve falls back to the f32 variant of a family.
 * Everything else that enumerates ops (tests, the demo, scripts, the torch
 * baselines) asks the registry or `kproof list`. */
#define KP_OPS(X)                                                                                          \
    X(matmul_f32) X(matmul_bf16) X(softmax_f32) X(softmax_bf16) X(layernorm_f32) X(layernorm_bf16)         \
    X(rmsnorm_f32) X(rmsnorm_bf16) X(sum_f32)
#define KP_OP_DECLARE(name) extern const kp_op kp_op_##name;
KP_OPS(KP_OP_DECLARE)
#undef KP_OP_DECLARE

/* ---- element access ------------------------------------------------------ */

/* kp_load without the call: the references read every element. */
static inline double kp_ld(const void *p, kp_dtype t, int64_t i) {
    if (t == KP_BF16) return (double)kp_bf16_bits_to_f32(((const uint16_t *)p)[i]);
    return (double)((const float *)p)[i];
}
static inline int kp_poison_at(const void *p, kp_dtype t, int64_t i) {
    if (t == KP_BF16) return ((const uint16_t *)p)[i] == KP_POISON_BF16_BITS;
    uint32_t u;
    memcpy(&u, (const float *)p + i, sizeof u);
    return u == KP_POISON_F32_BITS;
}

/* An input buffer as floats: bf16 widened (exactly) into a new array, f32
 * used in place. Returns NULL when out of memory; *owned says whether the
 * caller frees it. */
const float *kp_as_f32(const void *p, kp_dtype t, int64_t n, int *owned);

/* ---- the check's private half (check.c) --------------------------------- */

/* Records what a scan that compares nothing can see at flat index i:
 * poison and NaN/Inf. Sampled checks scan every element with it and
 * compare only some with kp_check_add. Returns 1 when the element is
 * usable (finite, not poison). */
/* Folds `later`, a scan of elements that all come after those c has seen
 * (kp_check_begin_loose'd with c's loose), into c: the counts add and
 * first_bad names what one scan over both would have named. A scan split
 * into blocks of indices and merged in block order is the serial scan. */
void kp_check_scan_merge(kp_check *c, const kp_check *later);

/* ---- function pointers --------------------------------------------------- */

/* dlsym hands back an object pointer; POSIX guarantees it converts to a
 * function pointer, ISO C does not, so copy the bits instead of casting. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function and object pointers differ in size");
#define KP_FN_FROM(dst, fn) memcpy(&(dst), &(fn), sizeof(dst))

/* ---- shapes drawn per run (registry.c) ----------------------------------- */

/* A dimension in [lo, hi], log-uniform, pushed to an odd number and half
 * the time to a prime, so a kernel never sees a multiple of 8 by luck. */
int64_t kp_draw_dim(kp_rng *r, int64_t lo, int64_t hi);
/* A size up to hi: within 256x of hi three times in four, anywhere from 1
 * otherwise, so most drawn shapes do real work and some are tiny. */
int64_t kp_draw_size(kp_rng *r, int64_t hi);
/* rows x cols with rows * cols <= max_elems: a total from kp_draw_size,
 * split at a log-uniform row length, both odd or prime. */
void kp_draw_rows_cols(uint64_t seed, int64_t max_elems, kp_shape *out);

/* Shape validation shared by every op: dims at least 1, every buffer and
 * the op's work below limits that keep int64 byte counts exact. */
int kp_shape_common_ok(const kp_op *op, const kp_shape *s, char *why, size_t len);

/* ---- tolerance building blocks (the policy is in check.c) ---------------- */

/* sqrt of a length, as the random-walk factor of a sequential reduction. */
static inline double kp_sqrt_len(int64_t n) { return sqrt((double)(n > 0 ? n : 1)); }

/* Added to every tolerance: flush-to-zero and denormal results are honest
 * where want is tiny, and a handful of smallest normals is far below
 * anything a wrong answer gets away with elsewhere. */
#define KP_TOL_FLOOR (16.0 * 1.17549435082228751e-38)

/* M*N*K above which the matmul reference samples (tests lower it). */
extern double kp_matmul_full_limit;

/* A fresh reference with n outputs and both arrays allocated (0 ok). r is
 * zeroed by the caller, or offered buffers (kp_ref.borrowed), which it
 * takes where they hold n. A row-local op's reference allocates through
 * this, once, and writes every element of want and tol: the parent reuses
 * set references (src/core/protocol/inputs.c). */
int kp_ref_alloc(kp_ref *r, int64_t n);

#endif
