/* Right, and it leaves files in its TMPDIR (its private folder): a file
 * and a folder with a file in it. Expect PASS, and the folder removed
 * with everything in it when the worker stops. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <kproof/kernel.h>

static void leave_files(void) {
    const char *t = getenv("TMPDIR");
    char p[4096];
    if (!t) return;
    snprintf(p, sizeof p, "%s/scratch.txt", t);
    FILE *f = fopen(p, "w");
    if (f) fputs("left behind\n", f), fclose(f);
    snprintf(p, sizeof p, "%s/sub", t);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/sub/more.txt", t);
    f = fopen(p, "w");
    if (f) fputs("left behind\n", f), fclose(f);
}

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    leave_files();
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float mx = -INFINITY;
        for (int64_t c = 0; c < cols; c++)
            if (xr[c] > mx) mx = xr[c];
        double sum = 0.0;
        for (int64_t c = 0; c < cols; c++) {
            yr[c] = expf(xr[c] - mx);
            sum += yr[c];
        }
        float inv = (float)(1.0 / sum);
        for (int64_t c = 0; c < cols; c++) yr[c] *= inv;
    }
    return 0;
}
