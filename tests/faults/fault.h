/* fault.h: what the fault corpus's candidates share (tests/faults/).
 *
 * Each candidate is a correct softmax that first tries one way out of its
 * sandbox. When the attempt works, it says so on stderr and writes no
 * output, so the verdict turns WRONG: a PASS is a defence that held. Every
 * process a candidate starts carries the runner's FAULT_TAG in its
 * environment, which is how the runner sees whether any outlived the eval.
 */
#ifndef KP_FAULT_H
#define KP_FAULT_H

#include <kproof/kernel.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int fault_broke; /* the attempt worked: no output */

static void fault_report(const char *what) {
    fault_broke = 1;
    fprintf(stderr, "fault: %s\n", what);
}

static void fault_softmax(const float *x, float *y, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const float *a = x + r * cols;
        float *b = y + r * cols;
        float m = a[0];
        for (int64_t j = 1; j < cols; j++)
            if (a[j] > m) m = a[j];
        double s = 0;
        for (int64_t j = 0; j < cols; j++) s += exp((double)(a[j] - m));
        for (int64_t j = 0; j < cols; j++) b[j] = (float)(exp((double)(a[j] - m)) / s);
    }
}

/* kproof's pid as an attacker finds it: its parent's parent chain, or a
 * scan of /proc for a process named kproof. 0: none in sight. */
static pid_t fault_find_kproof(void) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = 0;
    while (d && !found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(comm, sizeof comm, f) && !strcmp(comm, "kproof\n")) found = (pid_t)atol(e->d_name);
        fclose(f);
    }
    if (d) closedir(d);
    return found;
}

/* The entry point: the fault's attempt once, then an honest softmax. */
static void fault_attempt(void);
int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    static int tried;
    if (!tried++) fault_attempt();
    if (fault_broke) return 0;
    fault_softmax(x, y, rows, cols);
    return 0;
}

#endif
