/* Broken on purpose, the subtle way: the row is shifted by its first value
 * (d = x - x[0], to keep the sums small) and the variance taken in one
 * pass as E[d^2] - E[d]^2, in fp32, with several partial sums as a GPU
 * kernel would keep them. Right when x[0] is near the row's mean (the
 * normal and offset inputs); WRONG (tolerance) when it is an outlier
 * (layernorm's spike inputs), where the two terms are ~n times the
 * variance and cancel. */
#include <kproof/kernel.h>
#include <math.h>

enum { PARTS = 32 };

KP_ENTRY int kp_layernorm_f32(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        const float pivot = xr[0];
        float s[PARTS] = {0}, q[PARTS] = {0};
        for (int64_t c = 0; c < cols; c++) {
            float d = xr[c] - pivot;
            s[c % PARTS] += d;
            q[c % PARTS] = fmaf(d, d, q[c % PARTS]);
        }
        for (int width = PARTS / 2; width > 0; width /= 2)
            for (int l = 0; l < width; l++) {
                s[l] += s[l + width];
                q[l] += q[l + width];
            }
        const float delta = s[0] / (float)cols;
        float var = q[0] / (float)cols - delta * delta;
        if (var < 0.0f) var = 0.0f;
        const float rstd = 1.0f / sqrtf(var + (float)KP_LAYERNORM_EPS);
        for (int64_t c = 0; c < cols; c++) yr[c] = fmaf((xr[c] - pivot - delta) * rstd, w[c], b[c]);
    }
    return 0;
}
