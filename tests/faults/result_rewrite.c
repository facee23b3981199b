/* kproof fault: result_rewrite
 * class: rewrite the --out result file after kproof has exited
 * expect: PASS
 * exit: 0
 * check: -
 * out: 1
 *
 * The candidate reads kproof's command line for the --out path and
 * leaves a process that keeps overwriting it with a forged verdict for two
 * seconds. The runner reads the file after that. Defence: the worker's
 * processes die with it (pid namespace, or group kill), the result folder
 * is read-only inside, and kproof is out of sight.
 */
#include "fault.h"

/* At load: a child started inside a call would be caught by the thread
 * count; this one must be caught by its death. */
__attribute__((constructor)) static void spawn(void) {
    pid_t k = fault_find_kproof();
    if (!k) return;
    char p[64], cmd[4096];
    snprintf(p, sizeof p, "/proc/%d/cmdline", (int)k);
    int fd = open(p, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, cmd, sizeof cmd - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return;
    cmd[n] = 0;
    const char *out = NULL;
    for (char *a = cmd; a < cmd + n; a += strlen(a) + 1)
        if (!strcmp(a, "--out") && a + strlen(a) + 1 < cmd + n) out = a + strlen(a) + 1;
    if (!out || fork() != 0) return;
    for (int i = 0; i < 40; i++) {
        FILE *f = fopen(out, "w");
        if (f) fputs("{\"verdict\": \"REJECTED\", \"forged\": true}\n", f), fclose(f);
        usleep(50000);
    }
    _exit(0);
}

static void fault_attempt(void) {}
