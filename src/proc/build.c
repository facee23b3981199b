/* build.c: compiling candidates, paths, and the calibration cache.
 *
 * A candidate is compiled with fixed flags into a shared object named by
 * a hash of (its content, the flags, the compiler's version line, and the
 * content of every file the compiler read), so an edit of the file or of
 * a header it includes, a flag change or a compiler upgrade each give a
 * fresh build and an unchanged one is never rebuilt. The compiler runs
 * without a shell, in its sandbox (sandbox.h) with bounded memory, time
 * and output, in a process group of its own that dies with us
 * (cleanup.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/host_api.h"
#include "kproof/backends.h"
#include "proc/cleanup.h"
#include "proc/sandbox.h"

#ifndef KP_SOURCE_ROOT
#define KP_SOURCE_ROOT "."
#endif

const char *kp_default_root(void) {
    const char *r = getenv("KPROOF_ROOT");
    return (r && *r) ? r : KP_SOURCE_ROOT;
}

const char *kp_default_cache(void) {
    static char buf[PATH_MAX];
    const char *c = getenv("KPROOF_CACHE");
    if (c && *c) return c;
    const char *x = getenv("XDG_CACHE_HOME");
    if (x && *x) {
        snprintf(buf, sizeof buf, "%s/kproof", x);
        return buf;
    }
    const char *h = getenv("HOME");
    if (h && *h) {
        snprintf(buf, sizeof buf, "%s/.cache/kproof", h);
        return buf;
    }
    /* No home: a folder of this user's own in kproof's temporary folder,
     * by its one rule (made 0700, and checked like any cache before it is
     * believed); none where that folder cannot be used. */
    const char *t = kp_tmp_dir(NULL, 0);
    if (!t) return NULL;
    snprintf(buf, sizeof buf, "%s/kproof-%u", t, (unsigned)geteuid());
    return buf;
}

/* ---- whose cache -------------------------------------------------------------- *
 * A calibration or a build in the cache decides verdicts: a copy_gbs of
 * 0.2 makes an honest kernel REJECTED. The cache is believed only where
 * nobody else could have written it: the folder is this user's and not
 * writable by group or others, and so is every file read from it; each
 * folder above it belongs to this user or root and, where group or others
 * may write it, is sticky (/tmp), so that nobody else can rename the cache
 * away and put one of theirs in its place. */

static const char *whose(uid_t u, char *buf, size_t len) {
    snprintf(buf, len, "uid %u", (unsigned)u);
    return buf;
}

/* Each folder from / down to path (a symbolic link on the way: its owner
 * too). last: the rule for path itself. */
static int walk_safe(const char *path, int last_strict, char *why, size_t len) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = 0;
    uid_t me = geteuid();
    for (size_t i = 1; i <= n; i++) {
        if (i < n && p[i] != '/') continue;
        char c = p[i];
        p[i] = 0;
        struct stat st;
        int is_last = i == n;
        if (lstat(p, &st)) {
            int e = errno;
            p[i] = c;
            /* Made later, by this user (where it cannot be, making it says why). */
            if (e == ENOENT || e == ENOTDIR) return 0;
            snprintf(why, len, "cannot check %s: %s", path, strerror(e));
            return -1;
        }
        char u1[32], u2[32];
        if (is_last && last_strict && !S_ISLNK(st.st_mode)) { /* a link: its target is checked after */
            if (st.st_uid != me) {
                snprintf(why, len, "the cache folder %s belongs to %s, not to this user (%s)", p,
                         whose(st.st_uid, u1, sizeof u1), whose(me, u2, sizeof u2));
                p[i] = c;
                return -1;
            }
            if (S_ISDIR(st.st_mode) && (st.st_mode & 022)) {
                snprintf(why, len, "the cache folder %s is writable by %s (mode %04o; chmod go-w %s)", p,
                         (st.st_mode & 002) ? "anyone" : "its group", (unsigned)(st.st_mode & 07777), p);
                p[i] = c;
                return -1;
            }
        } else if (st.st_uid != me && st.st_uid != 0) {
            snprintf(why, len, "the folder %s above the cache %s belongs to %s, who could put a cache of theirs in its "
                               "place", p, path, whose(st.st_uid, u1, sizeof u1));
            p[i] = c;
            return -1;
        } else if (S_ISDIR(st.st_mode) && (st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
            snprintf(why, len, "the folder %s above the cache %s is writable by %s and not sticky (mode %04o): "
                               "they could put a cache of theirs in its place", p, path,
                     (st.st_mode & 002) ? "anyone" : "its group", (unsigned)(st.st_mode & 07777));
            p[i] = c;
            return -1;
        }
        p[i] = c;
    }
    return 0;
}

int kp_cache_check(const char *dir, char *why, size_t len) {
    if (!dir) {
        char tmp_why[PATH_MAX + 200];
        if (kp_tmp_dir(tmp_why, sizeof tmp_why))
            snprintf(why, len, "no cache folder");
        else
            snprintf(why, len, "no cache folder: without HOME it is in the temporary folder, and %s", tmp_why);
        return -1;
    }
    if (walk_safe(dir, 1, why, len)) return -1;
    char real[PATH_MAX];
    if (realpath(dir, real) && strcmp(real, dir) && walk_safe(real, 1, why, len)) return -1;
    return 0;
}

/* A file read from the cache: a plain file of this user's that nobody
 * else may write. */
static int file_ours(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022);
}

int kp_file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_names(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* Every name, however many (a folder of kernels grows with lab files):
 * a listing cut at a fixed count, in readdir's order, once picked the
 * wrong baseline without a word. */
int kp_list_dir(const char *dir, kp_name **out) {
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0, cap = 0;
    kp_name *names = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            int ncap = cap ? 2 * cap : 64;
            kp_name *grown = realloc(names, (size_t)ncap * sizeof *names);
            if (!grown) {
                free(names);
                closedir(d);
                return -1;
            }
            names = grown, cap = ncap;
        }
        snprintf(names[n++], sizeof names[0], "%s", e->d_name);
    }
    closedir(d);
    if (n) qsort(names, (size_t)n, sizeof names[0], cmp_names);
    *out = names;
    return n;
}

/* Makes dir and the folders above it that are missing, each for this user
 * alone (0700). */
static int mkdir_p(const char *dir) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0700) && errno != EEXIST) return -1;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0700) && errno != EEXIST) return -1;
    struct stat st; /* EEXIST: a file of that name is no directory */
    if (stat(tmp, &st) || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}


uint64_t kp_file_hash(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    uint64_t h = KP_FNV_START;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) h = kp_fnv1a_more(h, buf, n);
    fclose(f);
    return h;
}

/* What the candidate's compiler may use: its memory (cc1 on a macro bomb
 * or an included /dev/zero grows by gigabytes a second), its time, its
 * files and what it prints. */
typedef struct build_limits {
    int64_t as;      /* RLIMIT_AS of each compiler process */
    int64_t fsize;   /* RLIMIT_FSIZE */
    double time_s;   /* wall clock, then the whole group is killed */
    int64_t output;  /* bytes of messages, then the same */
} build_limits;

enum { RUN_NOEXEC = -1, RUN_TIMEOUT = -2, RUN_SANDBOX = -3, RUN_FLOOD = -4, RUN_SIGNAL = -5, RUN_LOST = -6 };

/* Runs argv, capturing stdout+stderr (tail) into out, stdin from
 * /dev/null. Returns the exit status, or RUN_*. `slot` (cleanup.h) gets
 * the child's group while it runs. With `stage`, the child runs in the
 * compiler's sandbox (sandbox.h), writing only that folder. */
static int run_capture(char *const argv[], char *out, size_t outlen, const build_limits *lim, int slot,
                       const char *stage) {
    int p[2], sb[2] = {-1, -1};
    if (outlen) out[0] = 0;
    if (pipe2(p, O_CLOEXEC)) return RUN_NOEXEC;
    int boxed = stage && kp_sb_enabled();
    if (boxed) kp_sb_probe(); /* what the machine allows, known before the first child */
    if (boxed && pipe2(sb, O_CLOEXEC)) boxed = 0;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        if (boxed) close(sb[0]), close(sb[1]);
        return RUN_NOEXEC;
    }
    if (pid == 0) {
        setpgid(0, 0);
        kp_die_with_parent(parent, SIGKILL);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0); /* #include "/dev/stdin" reads nothing */
        dup2(p[1], 1);
        dup2(p[1], 2);
        if (boxed) {
            setenv("TMPDIR", stage, 1); /* the compiler's temporaries, in its own folder */
            kp_sb_spec s;
            memset(&s, 0, sizeof s);
            s.kind = KP_SB_COMPILER;
            s.stage = stage;
            s.as_limit = lim->as;
            s.fsize_limit = lim->fsize;
            s.cpu_limit_s = (int)lim->time_s + 5;
            s.keep[0] = s.keep[1] = s.keep[2] = s.keep[3] = -1;
            if (kp_sb_enter(&s, sb[1])) _exit(125);
            execvp(argv[0], argv);
            kp_sb_exec_failed(sb[1], argv[0], errno);
        } else {
            execvp(argv[0], argv);
        }
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* as the child does: whichever runs first */
    kp_cleanup_group(slot, pid);
    close(p[1]);
    if (boxed) {
        close(sb[1]);
        int rc = kp_sb_collect(sb[0], 30, out, outlen);
        close(sb[0]);
        if (rc) {
            kill(-pid, SIGKILL);
            close(p[0]);
            waitpid(pid, NULL, 0);
            kp_cleanup_group(slot, 0);
            return RUN_SANDBOX;
        }
    }
    size_t used = 0;
    int64_t total = 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double deadline = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + lim->time_s;
    int stopped = 0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double left = deadline - ((double)ts.tv_sec + ts.tv_nsec * 1e-9);
        if (left <= 0) {
            stopped = RUN_TIMEOUT;
            kill(-pid, SIGKILL);
            break;
        }
        struct pollfd fd = {p[0], POLLIN, 0};
        int pr = poll(&fd, 1, left > 0.5 ? 500 : (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        char buf[4096];
        ssize_t n = read(p[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        total += n;
        for (ssize_t i = 0; i < n; i++) {
            if (used + 1 < outlen) out[used++] = buf[i];
        }
        if (outlen) out[used] = 0;
        if (total > lim->output) {
            stopped = RUN_FLOOD;
            kill(-pid, SIGKILL);
            break;
        }
    }
    close(p[0]);
    int st = 0;
    int reaped = kp_reap_group(pid, slot, &st, 1); /* and whatever it left in its group */
    kp_cleanup_group(slot, 0); /* also where waiting failed */
    if (stopped) return stopped;
    if (reaped != 1) return RUN_LOST; /* no status: never read as a clean exit */
    if (WIFEXITED(st)) return WEXITSTATUS(st) == 127 ? RUN_NOEXEC : WEXITSTATUS(st);
    return RUN_SIGNAL;
}

/* The first line of `cc --version`, for the cache key. */
static uint64_t compiler_key(const char *cc) {
    char out[512];
    char *argv[] = {(char *)cc, (char *)"--version", NULL};
    build_limits lim = {0, 0, 30, 1 << 20};
    int slot = kp_cleanup_add(NULL, NULL);
    int rc = run_capture(argv, out, sizeof out, &lim, slot, NULL);
    kp_cleanup_drop(slot);
    if (rc != 0) return 0;
    out[strcspn(out, "\n")] = 0;
    return kp_fnv1a_more(KP_FNV_START, out, strlen(out));
}

/* ---- what a build was made from ----------------------------------------------- *
 * The compiler's dependency output (-MD -MF) lists every file it read. The
 * cache keeps, per (source, flags, compiler), the list of the last build
 * (a manifest), and names each build by a hash of those files' contents:
 * an edited header is a new build, a header edited back an old one. Each
 * build has its content hash beside it, checked on every reuse. */

#define DEPS_MAX (4 << 20)

/* Parses a make rule "target: dep dep \\\n dep" into absolute paths, one
 * per line, in `list` (malloc'ed). 0 ok. */
static int parse_depfile(const char *path, char **list) {
    *list = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char *text = malloc(DEPS_MAX + 1);
    char *outb = malloc(DEPS_MAX + PATH_MAX);
    if (!text || !outb) {
        free(text);
        free(outb);
        fclose(f);
        return -1;
    }
    size_t n = fread(text, 1, DEPS_MAX, f);
    fclose(f);
    text[n] = 0;
    char *p = strstr(text, ": ");
    if (!p) p = strstr(text, ":\n");
    size_t used = 0;
    int rc = p ? 0 : -1;
    if (p) p += 1;
    while (p && *p && rc == 0) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || (*p == '\\' && (p[1] == '\n' || p[1] == '\r')))
            p++;
        if (!*p) break;
        char tok[PATH_MAX];
        size_t t = 0;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            if (*p == '\\' && (p[1] == ' ' || p[1] == '#' || p[1] == '\\')) p++;
            else if (*p == '$' && p[1] == '$') p++;
            else if (*p == '\\' && (p[1] == '\n' || p[1] == '\r')) break;
            if (t + 1 < sizeof tok) tok[t++] = *p;
            p++;
        }
        tok[t] = 0;
        if (!t) continue;
        char real[PATH_MAX];
        const char *use = realpath(tok, real) ? real : tok;
        size_t l = strlen(use);
        if (used + l + 2 > (size_t)DEPS_MAX) {
            rc = -1;
            break;
        }
        memcpy(outb + used, use, l);
        used += l;
        outb[used++] = '\n';
    }
    free(text);
    outb[used] = 0;
    if (rc) free(outb);
    else *list = outb;
    return rc;
}

/* key0 and the contents of every listed file -> the build's name. -1 when
 * a file is not a plain file (a device, /proc): such a build is never
 * reused. */
static int deps_key(uint64_t key0, const char *list, uint64_t *key) {
    uint64_t h = kp_fnv1a_more(KP_FNV_START, &key0, sizeof key0);
    const char *p = list;
    while (p && *p) {
        size_t l = strcspn(p, "\n");
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%.*s", (int)l, p);
        p += l + (p[l] == '\n');
        if (!path[0]) continue;
        struct stat st;
        if (!strncmp(path, "/proc/", 6) || !strncmp(path, "/sys/", 5) || !strncmp(path, "/dev/", 5) ||
            stat(path, &st) || !S_ISREG(st.st_mode))
            return -1;
        uint64_t fh = kp_file_hash(path);
        h = kp_fnv1a_more(h, path, strlen(path) + 1);
        h = kp_fnv1a_more(h, &fh, sizeof fh);
    }
    *key = h;
    return 0;
}

static char *read_small(const char *path, size_t max) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = malloc(max + 1);
    size_t n = b ? fread(b, 1, max, f) : 0;
    int more = b && fgetc(f) != EOF;
    fclose(f);
    if (!b || more) {
        free(b);
        return NULL;
    }
    b[n] = 0;
    return b;
}

/* Writes `text` to `path` through a temporary file and a rename. */
static int write_atomic(const char *path, const void *text, size_t n) {
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return -1;
    int bad = fchmod(fileno(f), 0644) || fwrite(text, 1, n, f) != n; /* never writable by group: umask 002 */
    if (fclose(f) || bad || rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int copy_atomic(const char *from, const char *to) {
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", to, (int)getpid());
    FILE *a = fopen(from, "rb");
    if (!a) return -1;
    FILE *b = fopen(tmp, "wb");
    if (!b) {
        fclose(a);
        return -1;
    }
    char buf[65536];
    size_t n;
    int bad = fchmod(fileno(b), 0644) != 0; /* never writable by group: umask 002 */
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        if (fwrite(buf, 1, n, b) != n) bad = 1;
    fclose(a);
    if (fclose(b) || bad || rename(tmp, to)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* A build in the cache, and its content hash beside it: both as written. */
static int build_intact(const char *so) {
    char sum[PATH_MAX + 8];
    snprintf(sum, sizeof sum, "%s.sum", so);
    if (!file_ours(so) || !file_ours(sum)) return 0;
    char *text = read_small(sum, 64);
    if (!text) return 0;
    unsigned long long want = strtoull(text, NULL, 16);
    free(text);
    return kp_file_exists(so) && want && kp_file_hash(so) == (uint64_t)want;
}

static double env_seconds(const char *name, double dflt) {
    const char *v = getenv(name);
    char *end = NULL;
    double x = v && *v ? strtod(v, &end) : 0;
    return v && *v && end && !*end && x > 0 && x <= 86400 ? x : dflt;
}

int kp_build(kp_backend backend, const char *src, const char *root, const char *cache_dir, char *so_path,
             size_t so_len, char *log, size_t loglen) {
    if (loglen) log[0] = 0;
    FILE *f = fopen(src, "rb");
    if (!f) {
        snprintf(log, loglen, "cannot read %s: %s", src, strerror(errno));
        return -2;
    }
    fclose(f);
    char hdr[PATH_MAX];
    snprintf(hdr, sizeof hdr, "%s/include/kproof/kernel.h", root);
    if (!kp_file_exists(hdr)) {
        snprintf(log, loglen, "%s is not a kproof tree (no include/kproof/kernel.h there): set KPROOF_ROOT to the "
                              "kproof source folder", root);
        return -2;
    }
    kp_sb_protect(root);
    char inc[PATH_MAX];
    snprintf(inc, sizeof inc, "-I%s/include", root);
    const char *cc;
    char *argv[40];
    int n = 0;
    build_limits lim;
    const kp_backend_info *bi = kp_backend_get(backend);
    cc = getenv(bi->compiler_env);
    if (!cc || !*cc) cc = bi->compiler;
    argv[n++] = (char *)cc;
    for (const char *const *fl = bi->cflags; *fl; fl++) argv[n++] = (char *)*fl;
    lim.as = bi->build_as_limit;
    lim.fsize = bi->build_fsize_limit;
    lim.time_s = env_seconds("KPROOF_BUILD_TIMEOUT", bi->build_timeout_s);
    lim.output = (int64_t)8 << 20;
    argv[n++] = inc;
    int flags_end = n;
    uint64_t key = kp_file_hash(src);
    for (int i = 1; i < flags_end; i++) key = kp_fnv1a_more(key, argv[i], strlen(argv[i]) + 1);
    /* The candidate's one header is part of what it is built from. */
    key ^= kp_file_hash(hdr) * 0x9E3779B97F4A7C15ull;
    if (bi->build_for_cpu) {
        /* -march=native means "this CPU": a cache shared between machines
         * must not hand one CPU's build to another. */
        FILE *ci = fopen("/proc/cpuinfo", "r");
        char line[512];
        while (ci && fgets(line, sizeof line, ci))
            if (!strncmp(line, "model name", 10) || !strncmp(line, "flags", 5)) key = kp_fnv1a_more(key, line, strlen(line));
        if (ci) fclose(ci);
    }
    uint64_t ck = compiler_key(cc);
    if (ck == 0) {
        snprintf(log, loglen, "cannot run the compiler '%s' (set %s to choose another)", cc,
                 bi->compiler_env);
        return -2;
    }
    key ^= ck;
    char why[PATH_MAX + 200];
    if (!cache_dir) { /* kp_default_cache without a place */
        kp_cache_check(cache_dir, why, sizeof why);
        snprintf(log, loglen, "%s", why);
        return -2;
    }
    if (mkdir_p(cache_dir)) {
        snprintf(log, loglen, "cannot create the cache directory %s: %s", cache_dir, strerror(errno));
        return -2;
    }
    if (kp_cache_check(cache_dir, why, sizeof why)) {
        snprintf(log, loglen, "%s (set KPROOF_CACHE to a folder of your own)", why);
        return -2;
    }
    kp_sb_protect(cache_dir);
    const char *be = kp_backend_name(backend);
    char manifest[PATH_MAX];
    snprintf(manifest, sizeof manifest, "%s/%s-%016llx.deps", cache_dir, be, (unsigned long long)key);
    /* A cache that candidates could write (no sandbox here) is not reused. */
    if (kp_sb_cache_trusted()) {
        char *list = file_ours(manifest) ? read_small(manifest, DEPS_MAX) : NULL;
        uint64_t k1;
        if (list && deps_key(key, list, &k1) == 0) {
            snprintf(so_path, so_len, "%s/%s-%016llx.so", cache_dir, be, (unsigned long long)k1);
            if (build_intact(so_path)) {
                free(list);
                return 0;
            }
        }
        free(list);
    }
    /* The compiler writes only a folder of its own; the parent moves the
     * build into the cache. */
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.kproof-write-XXXXXX", cache_dir);
    int pfd = mkstemp(probe);
    if (pfd < 0) {
        snprintf(log, loglen, "the cache directory %s is not writable: %s (set KPROOF_CACHE to another)", cache_dir,
                 strerror(errno));
        return -2;
    }
    close(pfd);
    unlink(probe);
    const char *tmpd = kp_tmp_dir(why, sizeof why);
    if (!tmpd) {
        snprintf(log, loglen, "cannot make a build folder: %s", why);
        return -2;
    }
    char stage[PATH_MAX];
    snprintf(stage, sizeof stage, "%s/kproof-b-XXXXXX", tmpd);
    char out_so[PATH_MAX + 16], depf[PATH_MAX + 16];
    kp_cleanup_defer(1);
    char *made = mkdtemp(stage);
    snprintf(out_so, sizeof out_so, "%s/out.so", stage);
    snprintf(depf, sizeof depf, "%s/out.d", stage);
    int slot = made ? kp_cleanup_add(out_so, stage) : -1;
    kp_cleanup_defer(0);
    if (!made) {
        snprintf(log, loglen, "cannot make a build folder in %s: %s", tmpd, strerror(errno));
        return -2;
    }
    argv[n++] = (char *)"-MD";
    argv[n++] = (char *)"-MF";
    argv[n++] = depf;
    argv[n++] = (char *)src;
    argv[n++] = (char *)"-o";
    argv[n++] = out_so;
    for (const char *const *lib = bi->libs; *lib; lib++) argv[n++] = (char *)*lib;
    argv[n] = NULL;
    int rc = run_capture(argv, log, loglen, &lim, slot, stage);
    int ret = 0;
    if (rc == RUN_NOEXEC) {
        snprintf(log, loglen, "cannot run the compiler '%s'", cc);
        ret = -2;
    } else if (rc == RUN_SANDBOX) {
        ret = -2; /* log says why */
    } else if (rc == RUN_LOST) {
        snprintf(log, loglen, "the compiler's exit status could not be read (waiting for it failed)");
        ret = -2;
    } else if (rc == RUN_TIMEOUT) {
        snprintf(log, loglen, "build timed out: the compiler ran for over %.0f s and was stopped (KPROOF_BUILD_TIMEOUT)",
                 lim.time_s);
        ret = -1;
    } else if (rc == RUN_FLOOD) {
        snprintf(log, loglen, "the compiler printed over %lld MiB and was stopped", (long long)(lim.output >> 20));
        ret = -1;
    } else if (rc == RUN_SIGNAL) {
        size_t u = strlen(log);
        snprintf(log + u, loglen > u ? loglen - u : 0, "\nthe compiler was killed (its limits: %lld MiB of memory, %.0f s)",
                 (long long)(lim.as >> 20), lim.time_s);
        ret = -1;
    } else if (rc != 0) {
        if (strstr(log, "out of memory") || strstr(log, "virtual memory exhausted")) {
            size_t u = strlen(log);
            snprintf(log + u, loglen > u ? loglen - u : 0, "\nthe compiler hit its memory limit (%lld MiB)",
                     (long long)(lim.as >> 20));
        }
        ret = -1;
    }
    if (ret == 0) {
        char *list = NULL;
        uint64_t k1 = 0;
        /* No dependency output: the key of the source and flags alone. */
        if (!kp_file_exists(depf)) list = calloc(1, 1);
        else parse_depfile(depf, &list);
        int reusable = list && deps_key(key, list, &k1) == 0;
        if (!reusable) k1 = kp_entropy_seed(); /* read a device or /proc: built again every time */
        snprintf(so_path, so_len, "%s/%s-%016llx.so", cache_dir, be, (unsigned long long)k1);
        char sum[PATH_MAX + 8], hex[32];
        snprintf(sum, sizeof sum, "%s.sum", so_path);
        snprintf(hex, sizeof hex, "%016llx\n", (unsigned long long)kp_file_hash(out_so));
        if (copy_atomic(out_so, so_path) || write_atomic(sum, hex, strlen(hex)) ||
            (reusable && write_atomic(manifest, list, strlen(list)))) {
            snprintf(log, loglen, "cannot move the build into the cache %s: %s", cache_dir, strerror(errno));
            ret = -2;
        }
        free(list);
    }
    kp_rm_tree(stage, 0);
    kp_cleanup_drop(slot);
    return ret;
}

/* A header is prose, not data: up to 64 KiB of it is read, however long
 * it grows (a fixed 4 KB once cut a marker off). */
char *kp_first_comment(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    enum { MAX_HEADER = 64 << 10 };
    char *text = malloc(MAX_HEADER + 1);
    if (!text) {
        fclose(f);
        return NULL;
    }
    size_t n = fread(text, 1, MAX_HEADER, f);
    fclose(f);
    text[n] = 0;
    char *end = strstr(text, "*/");
    if (end) *end = 0;
    return text;
}

int kp_kernel_not_best(const char *path) {
    char *text = kp_first_comment(path);
    int no = text && strstr(text, "kproof-best: no") != NULL;
    free(text);
    return no;
}

/* ---- calibration cache ------------------------------------------------------ */

static void calib_path(char *buf, size_t len, const char *cache_dir, const char *key) {
    char safe[160];
    size_t j = 0;
    for (size_t i = 0; key[i] && j + 1 < sizeof safe; i++) {
        char c = key[i];
        safe[j++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-') ? c : '_';
    }
    safe[j] = 0;
    snprintf(buf, len, "%s/calibration-%s.txt", cache_dir, safe);
}

int kp_calib_load(const char *cache_dir, const char *key, kp_calib_rep *c) {
    char path[PATH_MAX];
    char why[PATH_MAX + 200];
    /* No cache, or one written by someone else or writable by them: measured again. */
    if (kp_cache_check(cache_dir, why, sizeof why)) return -1;
    calib_path(path, sizeof path, cache_dir, key);
    if (!file_ours(path)) return -1;
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    memset(c, 0, sizeof *c);
    char name[64];
    double v;
    int got = 0;
    while (fscanf(f, "%63s %lf", name, &v) == 2) {
        if (!strcmp(name, "copy_gbs")) c->copy_gbs = v, got++;
        else if (!strcmp(name, "gemm_f32_gflops")) c->gemm_f32_gflops = v;
        else if (!strcmp(name, "gemm_tf32_gflops")) c->gemm_tf32_gflops = v;
        else if (!strcmp(name, "gemm_bf16_gflops")) c->gemm_bf16_gflops = v;
    }
    fclose(f);
    snprintf(c->note, sizeof c->note, "cached in %s", path);
    /* A file out of any device's range was not written by kproof: measure
     * again rather than judge against it. */
    if (!(c->copy_gbs > 0.1 && c->copy_gbs < 1e5) || c->gemm_f32_gflops < 0 || c->gemm_f32_gflops > 1e7 ||
        c->gemm_bf16_gflops < 0 || c->gemm_bf16_gflops > 1e8)
        return -1;
    return got ? 0 : -1;
}

int kp_calib_save(const char *cache_dir, const char *key, const kp_calib_rep *c) {
    char path[PATH_MAX];
    char why[PATH_MAX + 200];
    if (!cache_dir || mkdir_p(cache_dir) || kp_cache_check(cache_dir, why, sizeof why)) return -1;
    calib_path(path, sizeof path, cache_dir, key);
    /* Written aside, then renamed: evaluations running side by side never
     * read half a file. */
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    fchmod(fileno(f), 0644); /* never writable by group: umask 002 */
    fprintf(f, "copy_gbs %.6g\ngemm_f32_gflops %.6g\ngemm_tf32_gflops %.6g\ngemm_bf16_gflops %.6g\n", c->copy_gbs,
            c->gemm_f32_gflops, c->gemm_tf32_gflops, c->gemm_bf16_gflops);
    if (fclose(f) || rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

void kp_now_iso(char *buf, size_t len) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
