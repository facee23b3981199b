/* build.c: compiling candidates, paths, and the calibration cache.
 *
 * A candidate is compiled with fixed flags into a shared object named by
 * a hash of (its content, the flags, the compiler's version line), so an
 * edit, a flag change or a compiler upgrade each give a fresh build and an
 * unchanged file is never rebuilt. The compiler runs without a shell, in
 * a process group of its own that dies with us (cleanup.h). */
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
#include "proc/cleanup.h"

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
    snprintf(buf, sizeof buf, "%s/.cache/kproof", (h && *h) ? h : "/tmp");
    return buf;
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

static int mkdir_p(const char *dir) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) && errno != EEXIST) return -1;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0755) && errno != EEXIST) return -1;
    struct stat st; /* EEXIST: a file of that name is no directory */
    if (stat(tmp, &st) || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static uint64_t fnv_more(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t kp_file_hash(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    uint64_t h = 0xcbf29ce484222325ull;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) h = fnv_more(h, buf, n);
    fclose(f);
    return h;
}

/* Runs argv, capturing stdout+stderr (tail) into out. Returns the exit
 * status, or -1 if it could not run, -2 on timeout. `slot` (cleanup.h)
 * gets the child's group while it runs. */
static int run_capture(char *const argv[], char *out, size_t outlen, double timeout_s, int slot) {
    int p[2];
    if (outlen) out[0] = 0;
    if (pipe(p)) return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        kp_die_with_parent(parent, SIGKILL);
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        close(p[1]);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* as the child does: whichever runs first */
    kp_cleanup_group(slot, pid);
    close(p[1]);
    size_t used = 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double deadline = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + timeout_s;
    int timed_out = 0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double left = deadline - ((double)ts.tv_sec + ts.tv_nsec * 1e-9);
        if (left <= 0) {
            timed_out = 1;
            kill(-pid, SIGKILL);
            break;
        }
        struct pollfd fd = {p[0], POLLIN, 0};
        int pr = poll(&fd, 1, 500);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        char buf[4096];
        ssize_t n = read(p[0], buf, sizeof buf);
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; i++) {
            if (used + 1 < outlen) out[used++] = buf[i];
        }
        if (outlen) out[used] = 0;
    }
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    kp_cleanup_group(slot, 0);
    if (timed_out) return -2;
    if (WIFEXITED(st)) return WEXITSTATUS(st) == 127 ? -1 : WEXITSTATUS(st);
    return -1;
}

/* The first line of `cc --version`, for the cache key. */
static uint64_t compiler_key(const char *cc) {
    char out[512];
    char *argv[] = {(char *)cc, (char *)"--version", NULL};
    int slot = kp_cleanup_add(NULL, NULL);
    int rc = run_capture(argv, out, sizeof out, 30, slot);
    kp_cleanup_drop(slot);
    if (rc != 0) return 0;
    out[strcspn(out, "\n")] = 0;
    return fnv_more(0xcbf29ce484222325ull, out, strlen(out));
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
    char inc[PATH_MAX];
    snprintf(inc, sizeof inc, "-I%s/include", root);
    const char *cc;
    char *argv[32];
    int n = 0;
    if (backend == KP_BACKEND_HOST) {
        cc = getenv("CC");
        if (!cc || !*cc) cc = "cc";
        argv[n++] = (char *)cc;
        argv[n++] = (char *)"-std=c11";
        argv[n++] = (char *)"-O3";
        argv[n++] = (char *)"-march=native";
        argv[n++] = (char *)"-fPIC";
        argv[n++] = (char *)"-shared";
        argv[n++] = (char *)"-D_GNU_SOURCE";
        argv[n++] = (char *)"-Wall";
        argv[n++] = (char *)"-x";
        argv[n++] = (char *)"c";
    } else {
        cc = getenv("NVCC");
        if (!cc || !*cc) cc = "nvcc";
        argv[n++] = (char *)cc;
        argv[n++] = (char *)"-O3";
        argv[n++] = (char *)"-std=c++17";
        argv[n++] = (char *)"-shared";
        argv[n++] = (char *)"-Xcompiler";
        argv[n++] = (char *)"-fPIC";
        /* One CUDA runtime in the worker: the candidate's launch errors
         * must be visible to the worker's cudaGetLastError. */
        argv[n++] = (char *)"-cudart";
        argv[n++] = (char *)"shared";
        argv[n++] = (char *)"-gencode";
        argv[n++] = (char *)"arch=compute_90a,code=sm_90a";
        argv[n++] = (char *)"-x";
        argv[n++] = (char *)"cu";
    }
    argv[n++] = inc;
    int flags_end = n;
    uint64_t key = kp_file_hash(src);
    for (int i = 1; i < flags_end; i++) key = fnv_more(key, argv[i], strlen(argv[i]) + 1);
    /* The candidate's one header is part of what it is built from. */
    char hdr[PATH_MAX];
    snprintf(hdr, sizeof hdr, "%s/include/kproof/kernel.h", root);
    key ^= kp_file_hash(hdr) * 0x9E3779B97F4A7C15ull;
    if (backend == KP_BACKEND_HOST) {
        /* -march=native means "this CPU": a cache shared between machines
         * must not hand one CPU's build to another. */
        FILE *ci = fopen("/proc/cpuinfo", "r");
        char line[512];
        while (ci && fgets(line, sizeof line, ci))
            if (!strncmp(line, "model name", 10) || !strncmp(line, "flags", 5)) key = fnv_more(key, line, strlen(line));
        if (ci) fclose(ci);
    }
    uint64_t ck = compiler_key(cc);
    if (ck == 0) {
        snprintf(log, loglen, "cannot run the compiler '%s' (set %s to choose another)", cc,
                 backend == KP_BACKEND_HOST ? "CC" : "NVCC");
        return -2;
    }
    key ^= ck;
    if (mkdir_p(cache_dir)) {
        snprintf(log, loglen, "cannot create the cache directory %s: %s", cache_dir, strerror(errno));
        return -2;
    }
    snprintf(so_path, so_len, "%s/%s-%016llx.so", cache_dir, kp_backend_name(backend), (unsigned long long)key);
    if (kp_file_exists(so_path)) return 0;
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", so_path, (int)getpid());
    argv[n++] = (char *)src;
    argv[n++] = (char *)"-o";
    argv[n++] = tmp;
    if (backend == KP_BACKEND_HOST) {
        argv[n++] = (char *)"-lpthread";
        argv[n++] = (char *)"-lm";
    } else {
        argv[n++] = (char *)"-lcublas";
    }
    argv[n] = NULL;
    int slot = kp_cleanup_add(tmp, NULL); /* before the compiler makes it */
    int rc = run_capture(argv, log, loglen, 600, slot);
    int ret = 0;
    if (rc == -1) {
        snprintf(log, loglen, "cannot run the compiler '%s'", cc);
        ret = -2;
    } else if (rc == -2) {
        snprintf(log, loglen, "the compiler ran for over 600 s and was stopped");
        ret = -1;
    } else if (rc != 0) {
        ret = -1;
    } else if (rename(tmp, so_path)) {
        snprintf(log, loglen, "cannot move the build into the cache: %s", strerror(errno));
        ret = -2;
    }
    if (ret) unlink(tmp);
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
    calib_path(path, sizeof path, cache_dir, key);
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
    if (mkdir_p(cache_dir)) return -1;
    calib_path(path, sizeof path, cache_dir, key);
    /* Written aside, then renamed: evaluations running side by side never
     * read half a file. */
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
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
