/* kproof fault: cache_home
 * class: rewrite the build cache and calibration found through $HOME
 * expect: PASS
 * exit: 0
 * check: -
 * needs: mount namespace
 *
 * The runner sets HOME so that the cache is $HOME/.cache/kproof. The
 * candidate overwrites every calibration file there (a later eval would be
 * judged against its numbers) and drops a file beside them. Defence: the
 * worker's view is read-only (and /tmp is private), so every write fails.
 */
#include "fault.h"

static void fault_attempt(void) {
    const char *home = getenv("HOME");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/.cache/kproof", home ? home : "/");
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "calibration-", 12)) continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        FILE *f = fopen(p, "w");
        if (f && fprintf(f, "copy_gbs 0.5\n") > 0 && fclose(f) == 0) fault_report("rewrote a calibration");
    }
    if (d) closedir(d);
    char p[1024];
    snprintf(p, sizeof p, "%s/kproof-fault-home", dir);
    int fd = open(p, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) fault_report("wrote into the cache"), close(fd);
}
