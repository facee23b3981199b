/* Broken on purpose: right when its pointers are 16-byte aligned, wrong
 * when they are not. Aligned rows go through a 4-wide path; the scalar
 * fallback it keeps for other pointers forgets to divide by the row sum,
 * the kind of bug that lives in a path no aligned call ever takes. Expect
 * WRONG (tolerance) at a call whose pointers are not 16-byte aligned, with
 * evidence that says so. */
#include <kproof/kernel.h>
#include <math.h>

static int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    int wide = aligned16(x) && aligned16(y);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float m = xr[0];
        for (int64_t j = 1; j < cols; j++) m = xr[j] > m ? xr[j] : m;
        double s = 0;
        for (int64_t j = 0; j < cols; j++) s += (yr[j] = expf(xr[j] - m));
        if (!wide) continue; /* the bug: the fallback never normalizes */
        const float inv = (float)(1.0 / s);
        int64_t j = 0;
        for (; j + 4 <= cols; j += 4) {
            yr[j] *= inv;
            yr[j + 1] *= inv;
            yr[j + 2] *= inv;
            yr[j + 3] *= inv;
        }
        for (; j < cols; j++) yr[j] *= inv;
    }
    return 0;
}
