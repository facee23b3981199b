/* Broken on purpose: an fp32 task computed with every value rounded to
 * bf16 (8-bit mantissa). Expect WRONG (tolerance). */
#include <kproof/kernel.h>
#include <math.h>

static float r16(float v) { return kp_bf16_to_f32(kp_f32_to_bf16(v)); }

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; c++) m = xr[c] > m ? xr[c] : m;
        float s = 0;
        for (int64_t c = 0; c < cols; c++) s = r16(s + r16(expf(r16(xr[c] - m))));
        for (int64_t c = 0; c < cols; c++) yr[c] = r16(r16(expf(r16(xr[c] - m))) / s);
    }
    return 0;
}
