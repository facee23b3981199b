/* kp_gen_run built without its AVX2 path (part of test_gen): on a CPU with
 * AVX2 the generator never takes the SSE2 loop for more than a tail, so
 * this copy is how test_gen checks that loop over whole lengths. */
#define KP_GEN_NO_AVX2
#include "kproof/kproof.h"

void kp_test_gen_run_no_avx2(const kp_gen *g, uint64_t seed, uint32_t stream, uint64_t begin, int64_t n, float *out,
                             uint16_t *out16);
void kp_test_gen_run_no_avx2(const kp_gen *g, uint64_t seed, uint32_t stream, uint64_t begin, int64_t n, float *out,
                             uint16_t *out16) {
    kp_gen_run(g, seed, stream, begin, n, out, out16);
}
