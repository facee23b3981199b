/* common.c: what the kproof command's files share: argument parsing, the
 * op lookup, whether a GPU answers, files written whole, output paths that
 * must not name an input, the temporary folder. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/common.h"
#include "core/host_api.h"
#include "kp_config.h"

/* Plain decimal: digits, one point, an exponent; no sign, space, hex,
 * inf or nan (strtod takes all of them). */
static int decimal_syntax(const char *s) {
    const char *p = s;
    int digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    return *p == 0;
}

int kp_cli_parse_double(const char *flag, const char *s, double lo, double hi, double *out) {
    char *end = NULL;
    errno = 0;
    double v = decimal_syntax(s) ? strtod(s, &end) : 0;
    if (!decimal_syntax(s) || errno || !end || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "kproof: %s expects a number in [%g, %g], got '%s'\n", flag, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Decimal digits only: no sign, no spaces, no 0x or leading-0 octal. */
int kp_cli_parse_u64(const char *flag, const char *s, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    unsigned long long v = s[0] >= '0' && s[0] <= '9' ? strtoull(s, &end, 10) : 0;
    if (errno || !end || end == s || *end) {
        fprintf(stderr, "kproof: %s expects a non-negative decimal integer, got '%s'\n", flag, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Does a GPU worker exist, and does a GPU answer? Decided by starting the
 * cuda worker on the project's naive sum kernel, under the GPU's device
 * lock (calibration measures: nobody else on the device). A worker that
 * is not built, or does not start, means no GPU: the host. A lock that
 * cannot be opened, or had within its bound, leaves the question open: a
 * harness fault, never a host run in the GPU's place. */
int kp_cli_auto_backend(const char *cmd, const char *root, const char *cache, kp_backend *be) {
    *be = KP_BACKEND_HOST;
    if (!KP_HAVE_CUDA_BUILD) return 0;
    kp_wk *w = NULL;
    char err[600];
    int no_lock = kp_devlock_open_backend(KP_BACKEND_CUDA) != 0;
    if (!no_lock) {
        if (!kp_trusted_start(KP_BACKEND_CUDA, root, cache, &w, err, sizeof err)) {
            kp_wk_stop(w);
            *be = KP_BACKEND_CUDA;
            return 0;
        }
        no_lock = kp_devlock_failed();
    }
    if (!no_lock) return 0; /* no GPU answered */
    fprintf(stderr, "kproof %s: no --backend given, and whether a GPU answers cannot be asked without its device "
                    "lock: %s; --backend host runs on the CPU\n",
            cmd, kp_devlock_error());
    return -1;
}

const kp_op *kp_cli_op(const char *name, const char *dtype) {
    const kp_op *op = kp_op_resolve(name, dtype);
    if (!op) {
        fprintf(stderr, "kproof: unknown op '%s'%s%s (known:", name, dtype ? " with dtype " : "", dtype ? dtype : "");
        for (int i = 0; i < kp_op_count(); i++) fprintf(stderr, " %s", kp_op_at(i)->name);
        fprintf(stderr, ")\n");
    }
    return op;
}

int kp_cli_cache_ok(const char *cmd, const char *cache) {
    char why[PATH_MAX + 200];
    /* No cache without HOME and a usable temporary folder: nothing here to
     * refuse, and the temporary folder's check (70) ends the command before
     * anything would read or write a cache. */
    if (!cache) return 1;
    if (!kp_cache_check(cache, why, sizeof why)) return 1;
    fprintf(stderr, "kproof %s: %s: a cache that others can write could change a verdict (a calibration, a build), "
                    "so kproof refuses it; or set KPROOF_CACHE to a folder of your own (docs/sandbox.md)\n",
            cmd, why);
    return 0;
}

void kp_cli_dir_of(const char *path, char *dir, size_t len) {
    snprintf(dir, len, "%s", path);
    char *s = strrchr(dir, '/');
    if (!s) snprintf(dir, len, ".");
    else if (s == dir) dir[1] = 0;
    else *s = 0;
}

/* A file whole or not at all: written to a temporary file beside it,
 * synced, then renamed over it. open returns NULL with why set. */
FILE *kp_cli_atomic_open(const char *path, char *tmp, size_t tmplen, char *why, size_t len) {
    char dir[PATH_MAX];
    kp_cli_dir_of(path, dir, sizeof dir);
    snprintf(tmp, tmplen, "%s/.kproof-out-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(why, len, "%s", strerror(errno));
        return NULL;
    }
    fchmod(fd, 0644);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        snprintf(why, len, "%s", strerror(errno));
        close(fd);
        unlink(tmp);
    }
    return f;
}

int kp_cli_atomic_close(FILE *f, const char *tmp, const char *path, char *why, size_t len) {
    int bad = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
    int e = errno;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    if (!bad && rename(tmp, path) != 0) bad = 1, e = errno;
    if (bad) {
        snprintf(why, len, "%s", strerror(e));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* A path made absolute without needing the file itself: its folder
 * resolved (links included) and its last name appended. */
static int canonical(const char *path, char *out, size_t len) {
    char dir[PATH_MAX], real[PATH_MAX];
    kp_cli_dir_of(path, dir, sizeof dir);
    if (!realpath(dir, real)) return -1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) return -1;
    return snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", base) < (int)len ? 0 : -1;
}

int kp_cli_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea != eb) return 0; /* one exists, the other does not */
    char ca[PATH_MAX], cb[PATH_MAX];
    return canonical(a, ca, sizeof ca) == 0 && canonical(b, cb, sizeof cb) == 0 && !strcmp(ca, cb);
}

int kp_cli_out_clash(const char *cmd, const char *flag, const char *out, const char *what, const char *input) {
    if (!kp_cli_same_file(out, input)) return 0;
    if (!strcmp(out, input))
        fprintf(stderr, "kproof %s: %s %s is the %s: writing it would destroy it (name another file)\n", cmd, flag,
                out, what);
    else
        fprintf(stderr, "kproof %s: %s %s names the same file as the %s (%s): writing it would destroy it (name another "
                "file)\n", cmd, flag, out, what, input);
    return -1;
}

int kp_cli_tmp_usable(const char *cmd) {
    char why[PATH_MAX + 200];
    if (kp_tmp_dir(why, sizeof why)) return 0;
    fprintf(stderr, "kproof %s: %s\n", cmd, why);
    return -1;
}
