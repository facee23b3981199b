/* softmax bf16, host, 01 naive: f32 01's three passes on widened values.
 *
 * The baseline. exp is recomputed in the last pass so each output is rounded
 * to bf16 once (no fp32 scratch row, no double rounding).
 * measured: PASS on every shape of the op (tests/it_host.c); not timed.
 */
#include <math.h>

#include <kproof/kernel.h>

/* y[r, :] = softmax(x[r, :]); arithmetic in fp32, one rounding at the end. */
KP_ENTRY int kp_softmax_bf16(const kp_bf16 *x, kp_bf16 *y, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const kp_bf16 *xr = x + r * cols;
        kp_bf16 *yr = y + r * cols;

        /* The row max keeps expf finite for large inputs. */
        float mx = -INFINITY;
        for (int64_t c = 0; c < cols; c++) {
            float v = kp_bf16_to_f32(xr[c]);
            if (v > mx) mx = v;
        }

        /* Double accumulator: accurate for very long rows. */
        double sum = 0.0;
        for (int64_t c = 0; c < cols; c++)
            sum += expf(kp_bf16_to_f32(xr[c]) - mx);

        float inv = (float)(1.0 / sum);
        for (int64_t c = 0; c < cols; c++)
            yr[c] = kp_f32_to_bf16(expf(kp_bf16_to_f32(xr[c]) - mx) * inv);
    }
    return 0;
}
