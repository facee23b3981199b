/* Correct: a 4-wide path where x, y and the row length allow it (the
 * compiler is told the rows are 16-byte aligned there), a scalar path
 * everywhere else. Expect PASS, misaligned calls included. */
#include <kproof/kernel.h>
#include <math.h>

static void row_softmax(const float *xr, float *yr, int64_t cols) {
    float m = xr[0];
    for (int64_t j = 1; j < cols; j++) m = xr[j] > m ? xr[j] : m;
    double s = 0;
    for (int64_t j = 0; j < cols; j++) s += (yr[j] = expf(xr[j] - m));
    const float inv = (float)(1.0 / s);
    for (int64_t j = 0; j < cols; j++) yr[j] *= inv;
}

static void row_softmax4(const float *xr, float *yr, int64_t cols) {
    const float *xa = (const float *)__builtin_assume_aligned(xr, 16);
    float *ya = (float *)__builtin_assume_aligned(yr, 16);
    float m4[4] = {xa[0], xa[1], xa[2], xa[3]};
    for (int64_t j = 4; j < cols; j += 4)
        for (int l = 0; l < 4; l++) m4[l] = xa[j + l] > m4[l] ? xa[j + l] : m4[l];
    float m = fmaxf(fmaxf(m4[0], m4[1]), fmaxf(m4[2], m4[3]));
    double s = 0;
    for (int64_t j = 0; j < cols; j++) s += (ya[j] = expf(xa[j] - m));
    const float inv = (float)(1.0 / s);
    for (int64_t j = 0; j < cols; j++) ya[j] *= inv;
}

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    int wide = ((uintptr_t)x | (uintptr_t)y) % 16 == 0 && cols % 4 == 0;
    for (int64_t r = 0; r < rows; r++) {
        if (wide) row_softmax4(x + r * cols, y + r * cols, cols);
        else row_softmax(x + r * cols, y + r * cols, cols);
    }
    return 0;
}
