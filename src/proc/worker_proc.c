/* worker_proc.c: starting, talking to and stopping worker processes.
 *
 * A worker runs in its own process group with three pipes: requests in,
 * replies out (both on fd numbers picked at random here), and its stdout +
 * stderr, which we drain into a bounded tail so a flood can neither block
 * it nor fill our memory. Every wait has a deadline; on timeout the whole
 * process group is killed. The worker never gets the session token on its
 * command line: it is the first thing written to the request pipe.
 * A worker dies with the parent, and an interrupted parent kills the
 * worker's group and removes its private folder first (cleanup.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/host_api.h"
#include "kproof/backends.h"
#include "proc/cleanup.h"
#include "proc/sandbox.h"

#define LOG_TAIL 4096

struct kp_wk {
    pid_t pid;
    int req, rep, log;    /* our ends */
    uint64_t token;
    uint32_t seq;
    int check_token;
    int dead;
    int status;           /* waitpid status when dead */
    double last_wall;
    double last_cpu;      /* the worker process's CPU over that exchange, s (-1 unknown) */
    double last_main_cpu; /* and its main thread's alone */
    char tail[LOG_TAIL];  /* ring of the last bytes printed */
    size_t tail_pos;
    int64_t log_total;
    char tail_lin[LOG_TAIL + 1];
    char tmpdir[KP_TMPDIR_MAX + 32]; /* private copy of the candidate's build */
    int slot;             /* its entry in cleanup.h's list, -1 none */
    /* CPU accounting (host backend): the worker process's CPU clock, read
     * from outside at every request's edges (acct_begin, acct_end). */
    int acct;             /* on */
    pid_t target;         /* the worker process itself (under the sandbox's keeper and init) */
    pid_t init;           /* the sandbox's pid 1, or 0 */
    clockid_t clk;        /* target's process CPU clock */
    int64_t end_cpu;      /* at the end of the last request (-1: none yet) */
    kp_wk_cpu cpu;
};

static const char *bin_dir(void) {
    static char dir[PATH_MAX];
    const char *env = getenv("KPROOF_BIN_DIR");
    if (env && *env) return env;
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) return ".";
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    return dir;
}

/* Reads what the worker printed into the tail; stops once it is past the
 * limit, so a writer that keeps the pipe full cannot hold the parent here. */
static void drain_log(kp_wk *w) {
    char buf[65536];
    while (w->log_total <= KP_WK_LOG_LIMIT) {
        ssize_t n = read(w->log, buf, sizeof buf);
        if (n <= 0) return;
        w->log_total += n;
        for (ssize_t i = 0; i < n; i++) {
            w->tail[w->tail_pos % LOG_TAIL] = buf[i];
            w->tail_pos++;
        }
    }
}

const char *kp_wk_log(const kp_wk *w, int64_t *total) {
    kp_wk *m = (kp_wk *)w;
    drain_log(m);
    size_t n = m->tail_pos < LOG_TAIL ? m->tail_pos : LOG_TAIL;
    size_t start = m->tail_pos - n;
    for (size_t i = 0; i < n; i++) {
        char c = m->tail[(start + i) % LOG_TAIL];
        m->tail_lin[i] = (c == 0) ? ' ' : c;
    }
    m->tail_lin[n] = 0;
    if (total) *total = m->log_total;
    return m->tail_lin;
}

/* ---- CPU accounting (host) ----------------------------------------------- */

/* The pids listed in /proc/<pid>/task/<tid>/children for every thread of
 * pid, at most cap of them; -1 when the folder cannot be read. */
static int children_of(pid_t pid, pid_t *out, int cap) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char cp[96];
        snprintf(cp, sizeof cp, "/proc/%d/task/%.20s/children", (int)pid, e->d_name);
        FILE *f = fopen(cp, "r");
        if (!f) continue;
        long c;
        while (fscanf(f, "%ld", &c) == 1)
            if (n < cap) out[n++] = (pid_t)c;
            else n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

static int comm_is(pid_t pid, const char *prefix) {
    char path[48], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int ok = fgets(comm, sizeof comm, f) != NULL && strncmp(comm, prefix, strlen(prefix)) == 0;
    fclose(f);
    return ok;
}

/* The main thread's run time in ns (schedstat's first field), -1 unknown.
 * The kernel brings it up to date at its scheduler's events (a tick, a
 * switch), not at this read: a thread on a CPU reads short by what it ran
 * since. At a request's start the worker waits in a read (up to date, or
 * microseconds short on its way back there); at its end it may still be
 * on its way back, which reads short, never long. Time the machine
 * charges to the running thread (interrupts, where the kernel does not
 * account them apart; a hypervisor's time not reported as steal) is in
 * it: account.c measures that with a control. */
static int64_t main_run_ns(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long long v = -1;
    if (fscanf(f, "%lld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

static int64_t clock_ns(clockid_t c) {
    struct timespec ts;
    if (clock_gettime(c, &ts)) return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A process's pid in the innermost pid namespace it belongs to (the last
 * NSpid field), -1 unknown. */
static long inner_pid(pid_t pid) {
    char path[48], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long v = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "NSpid:", 6) == 0) {
            char *q = line + 6, *end;
            for (long x = strtol(q, &end, 10); end != q; x = strtol(q, &end, 10)) {
                v = x;
                q = end;
            }
            break;
        }
    fclose(f);
    return v;
}

int kp_wk_cpu_start(kp_wk *w) {
    if (!w || w->dead) return -1;
    /* The worker by the tree's shape, not by names the candidate could
     * change: kproof forked the keeper (or, with no sandbox, the worker
     * itself); the keeper's one child is the sandbox's init (pid 1 of its
     * namespace), whose child with pid 2 is the worker, or without a pid
     * namespace the worker. The keeper and init are kproof's, out of the
     * candidate's reach. */
    pid_t found = w->pid, init = 0;
    if (kp_sb_enabled()) { /* else kproof started the worker itself */
        if (!comm_is(w->pid, "kproof-keeper")) return -1;
        pid_t ch[4];
        if (children_of(w->pid, ch, 4) != 1) return -1;
        found = ch[0];
        if (inner_pid(found) == 1 && comm_is(found, "kproof-init")) {
            init = found;
            pid_t kids[64];
            int k = children_of(init, kids, 64);
            found = 0;
            for (int i = 0; i < k && i < 64 && !found; i++)
                if (inner_pid(kids[i]) == 2) found = kids[i];
            if (!found) return -1;
        }
    }
    clockid_t clk;
    if (clock_getcpuclockid(found, &clk) || clock_ns(clk) < 0 || main_run_ns(found) < 0) return -1;
    w->target = found;
    w->init = init;
    w->clk = clk;
    memset(&w->cpu, 0, sizeof w->cpu);
    w->cpu.on = 1;
    w->end_cpu = clock_ns(clk);
    w->acct = 1;
    return 0;
}

kp_wk_cpu kp_wk_cpu_get(kp_wk *w, int take) {
    kp_wk_cpu r = w->cpu;
    if (take) {
        w->cpu.idle_ns = w->cpu.idle_max_ns = 0;
        w->cpu.gaps = 0;
        w->cpu.side_ns = w->cpu.side_max_ns = 0;
        w->cpu.side_type = 0;
        w->cpu.light_ns = w->cpu.light_max_ns = 0;
        w->cpu.light_n = w->cpu.light_type = 0;
    }
    return r;
}

/* Children's CPU (cutime + cstime) of one process, in ns; -1 unknown. */
static int64_t reaped_cpu_ns(pid_t pid) {
    char path[48], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the command may hold spaces */
    if (!p) return -1;
    long long v[20];
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime */
    char st;
    if (sscanf(p + 1, " %c %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", &st, &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13]) != 15)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0) return -1;
    return (v[12] + v[13]) * (1000000000LL / hz);
}

int kp_wk_strays(kp_wk *w, int64_t *children_cpu_ns) {
    *children_cpu_ns = -1;
    if (!w->acct || w->dead) return -1;
    pid_t ch[16];
    int n = children_of(w->target, ch, 16);
    if (n < 0) return -1;
    int strays = n;
    int64_t cpu = reaped_cpu_ns(w->target);
    if (cpu < 0) return -1;
    if (w->init) {
        int k = children_of(w->init, ch, 16);
        if (k < 0) return -1;
        for (int i = 0; i < k && i < 16; i++)
            if (ch[i] != w->target) strays++;
        if (k > 16) strays += k - 16;
        int64_t ic = reaped_cpu_ns(w->init);
        if (ic < 0) return -1;
        cpu += ic;
    }
    *children_cpu_ns = cpu;
    return strays;
}

int kp_wk_mem(kp_wk *w, int write, uint64_t addr, void *buf, size_t n) {
    if (!w || w->dead || !w->acct || w->target <= 0) return ESRCH;
    /* Stands in for a machine whose ptrace policy refuses it (tests). */
    static int deny = -1;
    if (deny < 0) deny = getenv("KPROOF_DENY_PROCESS_VM") != NULL;
    if (deny) return EPERM;
    size_t done = 0;
    while (done < n) {
        size_t k = n - done;
        if (k > ((size_t)1 << 30)) k = (size_t)1 << 30;
        struct iovec local = {(char *)buf + done, k};
        struct iovec remote = {(void *)(uintptr_t)(addr + done), k};
        ssize_t got = write ? process_vm_writev(w->target, &local, 1, &remote, 1, 0)
                            : process_vm_readv(w->target, &local, 1, &remote, 1, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (got == 0) return EFAULT; /* the rest is not mapped */
        done += (size_t)got;
    }
    return 0;
}

/* CAP_SYS_PTRACE among this process's effective capabilities (root in a
 * container may lack it). */
static int can_ptrace_any(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long eff = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, "CapEff:", 7) == 0) found = sscanf(line + 7, "%llx", &eff) == 1;
    fclose(f);
    return found && (eff >> 19 & 1); /* CAP_SYS_PTRACE */
}

int kp_wk_mem_assured(void) {
    return (kp_sb_enabled() && !(kp_sb_missing() & KP_SBD_USERNS)) || can_ptrace_any();
}

/* Light requests: the worker only stores or reports a few bytes. */
static int light(uint32_t type) {
    return type == KP_MSG_INPUTS || type == KP_MSG_PING || type == KP_MSG_ACCOUNT;
}

/* Requests that run no call: only there is the main thread's share
 * judged by the accounting. (Its run time is read at every request's
 * edges, by kproof, outside the worker's window: a RUN's tells whether
 * other threads worked in it.) */
static int runs_no_call(uint32_t type) { return type != KP_MSG_RUN && type != KP_MSG_BATCH; }

/* A request's start: the gap since the last one's end is idle time. */
static void acct_begin(kp_wk *w, uint32_t type, int64_t *c0, int64_t *m0) {
    *c0 = *m0 = -1;
    if (!w->acct) return;
    *c0 = clock_ns(w->clk);
    if (*c0 < 0) return;
    *m0 = main_run_ns(w->target);
    if (w->end_cpu >= 0) {
        int64_t idle = *c0 - w->end_cpu;
        if (idle < 0) idle = 0;
        w->cpu.idle_ns += idle;
        if (idle > w->cpu.idle_max_ns) w->cpu.idle_max_ns = idle;
        w->cpu.gaps++;
    }
}

/* 1 when no thread of the process is running or waiting to run (the
 * kernel's state R is both: one waiting was brought up to date when it
 * was taken off its CPU, but /proc cannot tell the two apart). */
static int threads_asleep(pid_t pid) {
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return 0;
    int asleep = 1;
    struct dirent *e;
    while (asleep && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char buf[512];
        snprintf(path, sizeof path, "/proc/%d/task/%.20s/stat", (int)pid, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue; /* a thread that ended meanwhile */
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *q = strrchr(buf, ')'); /* the command may hold spaces */
        if (!q || q[1] != ' ' || q[2] == 'R') asleep = 0;
    }
    closedir(d);
    return asleep;
}

/* A request's end: in one that runs no call, the CPU of threads other
 * than the main one. The request's CPU (last_cpu) of a RUN or BATCH is
 * read once every thread of the worker sleeps, waiting up to 2 ms for
 * that (a thread waiting for a CPU counts as running), or not at all:
 * where a CPU-time limit is set (the sandbox's RLIMIT_CPU) the kernel
 * brings a process's total up to date at its ticks
 * and context switches only, so a thread still running after its reply
 * (by accident, or a candidate spinning on purpose) reads milliseconds
 * short. */
static void acct_end(kp_wk *w, uint32_t type, int64_t c0, int64_t m0) {
    if (!w->acct || c0 < 0) return;
    int asleep = 0;
    if (!runs_no_call(type)) {
        const double until = kp_wall_s() + 0.002;
        while (!(asleep = threads_asleep(w->target)) && kp_wall_s() < until) usleep(50);
    }
    int64_t c1 = clock_ns(w->clk);
    if (c1 < 0) return;
    w->end_cpu = c1;
    if (asleep) {
        w->last_cpu = c1 > c0 ? (double)(c1 - c0) * 1e-9 : 0;
        int64_t m1 = m0 >= 0 ? main_run_ns(w->target) : -1;
        w->last_main_cpu = m1 >= m0 && m0 >= 0 ? (double)(m1 - m0) * 1e-9 : -1;
    }
    if (!runs_no_call(type) || m0 < 0) return;
    int64_t m1 = main_run_ns(w->target);
    if (m1 < 0) return;
    int64_t side = (c1 - c0) - (m1 - m0);
    if (side < 0) side = 0;
    if (light(type)) {
        int64_t main = m1 - m0 > 0 ? m1 - m0 : 0;
        w->cpu.light_ns += main;
        w->cpu.light_n++;
        if (main > w->cpu.light_max_ns) {
            w->cpu.light_max_ns = main;
            w->cpu.light_type = (int)type;
        }
    }
    w->cpu.side_ns += side;
    if (side > w->cpu.side_max_ns) {
        w->cpu.side_max_ns = side;
        w->cpu.side_type = (int)type;
    }
}

static void describe_death(kp_wk *w, char *err, size_t len) {
    if (WIFSIGNALED(w->status)) {
        int sig = WTERMSIG(w->status);
        snprintf(err, len, "the worker was killed by signal %d (%s)", sig, strsignal(sig));
    } else if (WIFEXITED(w->status)) {
        snprintf(err, len, "the worker exited with status %d in the middle of a request", WEXITSTATUS(w->status));
    } else {
        snprintf(err, len, "the worker stopped");
    }
}

static void reap(kp_wk *w, int block) {
    if (w->dead) return;
    int st = 0;
    if (kp_reap_group(w->pid, w->slot, &st, block) == 1) { /* what it left in its group goes with it */
        w->dead = 1;
        w->status = st;
    }
}

static void kill_group(kp_wk *w) {
    if (w->dead) return;
    kill(-w->pid, SIGKILL);
    kill(w->pid, SIGKILL);
    reap(w, 1);
}

/* Reads exactly n bytes from the reply pipe before `deadline`, draining the
 * log meanwhile. 0 ok, KP_WK_TIMEOUT, KP_WK_DIED, KP_WK_FLOOD. */
static int read_deadline(kp_wk *w, void *p, size_t n, double deadline) {
    char *c = (char *)p;
    while (n > 0) {
        double left = deadline - kp_wall_s();
        if (left <= 0) return KP_WK_TIMEOUT;
        struct pollfd fds[2] = {{w->rep, POLLIN, 0}, {w->log, POLLIN, 0}};
        int ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
        int pr = poll(fds, 2, ms);
        if (pr < 0) {
            if (errno == EINTR) continue;
            return KP_WK_DIED;
        }
        if (fds[1].revents) {
            drain_log(w);
            if (w->log_total > KP_WK_LOG_LIMIT) return KP_WK_FLOOD;
        }
        if (fds[0].revents & POLLIN) {
            ssize_t r = read(w->rep, c, n);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return KP_WK_DIED;
            c += r;
            n -= (size_t)r;
        } else if (fds[0].revents & (POLLHUP | POLLERR)) {
            return KP_WK_DIED;
        }
    }
    return 0;
}

static uint64_t random_u64(void) { return kp_entropy_seed(); }

static int copy_file(const char *from, const char *to) {
    FILE *a = fopen(from, "rb");
    if (!a) return -1;
    FILE *b = fopen(to, "wb");
    if (!b) {
        fclose(a);
        return -1;
    }
    char buf[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        if (fwrite(buf, 1, n, b) != n) rc = -1;
    fclose(a);
    if (fclose(b)) rc = -1;
    return rc;
}

/* Reads one frame's header and checks it. */
static int read_header(kp_wk *w, kp_frame_hdr *h, double deadline, char *err, size_t errlen) {
    int rc = read_deadline(w, h, sizeof *h, deadline);
    if (rc) return rc;
    if (h->magic != KP_FRAME_MAGIC || h->len > KP_FRAME_MAX) {
        snprintf(err, errlen, "a frame on the result channel that is not kproof's (bad magic or size)");
        return KP_WK_FRAME;
    }
    if (w->check_token && h->token != w->token) {
        snprintf(err, errlen, "a frame on the result channel carried the wrong session token: someone "
                              "other than the worker wrote it");
        return KP_WK_FRAME;
    }
    return 0;
}

/* Reads one frame: KP_WK_OK with payload in *buf (malloc'd) or an error. */
static int read_payload(kp_wk *w, const kp_frame_hdr *h, char **buf, double deadline, char *err, size_t errlen);

static int read_frame(kp_wk *w, kp_frame_hdr *h, char **buf, double deadline, char *err, size_t errlen) {
    *buf = NULL;
    int rc = read_header(w, h, deadline, err, errlen);
    return rc ? rc : read_payload(w, h, buf, deadline, err, errlen);
}

/* The payload of a frame whose header read_header passed. */
static int read_payload(kp_wk *w, const kp_frame_hdr *h, char **buf, double deadline, char *err, size_t errlen) {
    int rc;
    *buf = (char *)malloc(h->len + 1);
    if (!*buf) return KP_WK_SYS;
    rc = read_deadline(w, *buf, h->len, deadline);
    if (rc) {
        free(*buf);
        *buf = NULL;
        return rc;
    }
    if (kp_fnv1a(*buf, h->len) != h->cksum) {
        free(*buf);
        *buf = NULL;
        snprintf(err, errlen, "a frame on the result channel had a bad checksum");
        return KP_WK_FRAME;
    }
    return 0;
}

static int finish_error(kp_wk *w, int rc, char *err, size_t errlen, double timeout) {
    if (rc == KP_WK_TIMEOUT) {
        kill_group(w);
        snprintf(err, errlen, "no answer within %.0f s: the worker was killed", timeout);
    } else if (rc == KP_WK_DIED) {
        /* give it a moment to be reaped so we can say how it died */
        for (int i = 0; i < 200 && !w->dead; i++) {
            reap(w, 0);
            if (!w->dead) usleep(5000);
        }
        if (!w->dead) kill_group(w);
        describe_death(w, err, errlen);
    } else if (rc == KP_WK_FRAME) {
        kill_group(w);
    } else if (rc == KP_WK_FLOOD) {
        kill_group(w);
        snprintf(err, errlen, "it printed over %lld MiB to stdout and stderr: the worker was killed",
                 (long long)(KP_WK_LOG_LIMIT >> 20));
    }
    return rc;
}

int kp_wk_available(kp_backend b, char *err, size_t errlen) {
    char exe[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/kproof-worker-%s", bin_dir(), kp_backend_name(b));
    if (access(exe, X_OK) == 0) return 0;
    snprintf(err, errlen, "the %s backend is not built here (no %s)%s", kp_backend_name(b), exe,
             kp_backend_get(b)->worker_missing_hint);
    return -1;
}

static int start_worker(const kp_wk_opts *o, kp_wk **out, kp_hello *hello, char *err, size_t errlen, int *held);
static void release_worker(kp_wk *w);

/* The parent's buffers (inputs, float64 references, fetched outputs, a
 * shape's worth each) are freed and allocated again shape after shape. By
 * default glibc maps each one over 128 KiB afresh and unmaps it on free,
 * so every shape pays its page faults and zeroing again: a third of a host
 * evaluation's CPU was the kernel's. Those up to 32 MiB now come from the
 * heap (free memory at its top never trimmed), so the parent reuses pages
 * it already has; larger ones are still mapped each time. Set once,
 * in the parent, before its first worker: a worker is a fresh exec, with
 * glibc's defaults, so what its candidate allocates is measured as before. */
static void parent_heap_setup(void) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

/* A worker's start (its CUDA context, its first allocations) under the
 * device lock too: another process's memory guard must not see it. The
 * lock is taken once the worker waits for its session token, the first
 * thing it reads: staging the build, the sandbox, exec and the dynamic
 * loader run before that, touch no device, and need no lock. */
int kp_wk_start(const kp_wk_opts *o, kp_wk **out, kp_hello *hello, char *err, size_t errlen) {
    static pthread_once_t heap_once = PTHREAD_ONCE_INIT;
    pthread_once(&heap_once, parent_heap_setup);
    int held = 0;
    int rc = start_worker(o, out, hello, err, errlen, &held);
    if (held) kp_devlock_hold(0);
    return rc;
}

static int start_worker(const kp_wk_opts *o, kp_wk **out, kp_hello *hello, char *err, size_t errlen, int *held) {
    *out = NULL;
    kp_wk *w = (kp_wk *)calloc(1, sizeof *w);
    if (!w) return KP_WK_SYS;
    w->slot = -1;
    w->last_cpu = w->last_main_cpu = -1;
    w->check_token = o->check_token;
    w->token = random_u64() | 1;
    char exe[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/kproof-worker-%s", bin_dir(), kp_backend_name(o->backend));
    if (access(exe, X_OK) != 0) {
        snprintf(err, errlen, "worker %s not found: the %s backend is not built here", exe,
                 kp_backend_name(o->backend));
        free(w);
        return KP_WK_SYS;
    }
    int rq[2] = {-1, -1}, rp[2] = {-1, -1}, lg[2] = {-1, -1};
    if (pipe2(rq, O_CLOEXEC) || pipe2(rp, O_CLOEXEC) || pipe2(lg, O_CLOEXEC)) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        int all[6] = {rq[0], rq[1], rp[0], rp[1], lg[0], lg[1]};
        for (int i = 0; i < 6; i++)
            if (all[i] >= 0) close(all[i]);
        free(w);
        return KP_WK_SYS;
    }
    /* A reply pipe of 1 MiB where the system allows it (64 KiB by
     * default): a whole output crosses it in 16 times fewer turns. */
    (void)fcntl(rp[0], F_SETPIPE_SZ, 1 << 20);
    /* Random fd numbers for the channel, distinct and above the usual ones. */
    int fd_in = 100 + (int)(random_u64() % 400), fd_out;
    do fd_out = 100 + (int)(random_u64() % 400); while (fd_out == fd_in);
    char a_in[16], a_out[16];
    snprintf(a_in, sizeof a_in, "%d", fd_in);
    snprintf(a_out, sizeof a_out, "%d", fd_out);

    /* The worker loads a private copy of the build: its path (visible in
     * the worker's command line) then says nothing about the cache. */
    char why[PATH_MAX + 200];
    const char *tmp = kp_tmp_dir(why, sizeof why);
    snprintf(w->tmpdir, sizeof w->tmpdir, "%s/kproof-w-XXXXXX", tmp ? tmp : "");
    char so_copy[PATH_MAX];
    kp_cleanup_defer(1); /* no signal between making the folder and listing it */
    char *made = tmp ? mkdtemp(w->tmpdir) : NULL;
    if (made) {
        snprintf(so_copy, sizeof so_copy, "%s/candidate.so", w->tmpdir);
        w->slot = kp_cleanup_add(so_copy, w->tmpdir);
    }
    kp_cleanup_defer(0);
    if (!made || copy_file(o->so_path, so_copy)) {
        if (!tmp) snprintf(err, errlen, "cannot stage the build: %s", why);
        else snprintf(err, errlen, "cannot stage the build in a private directory under %s: %s", tmp, strerror(errno));
        int all[6] = {rq[0], rq[1], rp[0], rp[1], lg[0], lg[1]};
        for (int i = 0; i < 6; i++) close(all[i]);
        if (made) {
            unlink(so_copy);
            rmdir(w->tmpdir);
        }
        kp_cleanup_drop(w->slot);
        free(w);
        return KP_WK_SYS;
    }
    if (kp_sb_enabled()) kp_sb_probe(); /* what the machine allows, known before the first child */
    int sb[2] = {-1, -1}; /* the sandbox's report, until exec */
    if (pipe2(sb, O_CLOEXEC)) sb[0] = sb[1] = -1;
    kp_sb_protect(bin_dir());
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        if (sb[0] >= 0) close(sb[0]), close(sb[1]);
        unlink(so_copy);
        rmdir(w->tmpdir);
        kp_cleanup_drop(w->slot);
        snprintf(err, errlen, "fork: %s", strerror(errno));
        int all[6] = {rq[0], rq[1], rp[0], rp[1], lg[0], lg[1]};
        for (int i = 0; i < 6; i++) close(all[i]);
        free(w);
        return KP_WK_SYS;
    }
    if (pid == 0) {
        setpgid(0, 0);
        kp_die_with_parent(parent, SIGKILL); /* even a parent killed by SIGKILL takes it along */
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(lg[1], 1);
        dup2(lg[1], 2);
        if (dup2(rq[0], fd_in) < 0 || dup2(rp[1], fd_out) < 0) _exit(126);
        /* Tell the candidate nothing about where kproof keeps its cache. */
        unsetenv("KPROOF_CACHE");
        unsetenv("KPROOF_ROOT");
        unsetenv("KPROOF_BIN_DIR");
        unsetenv("XDG_CACHE_HOME");
        if (o->untraced) setenv("KPROOF_WORKER_UNTRACED", "1", 1);
        else unsetenv("KPROOF_WORKER_UNTRACED");
        char *args[] = {exe, a_in, a_out, (char *)o->op, so_copy, NULL};
        if (kp_sb_enabled() && sb[1] >= 0) {
            /* The executable by descriptor: the sandbox's private tmp may
             * hide the folder it is in. */
            int exe_fd = open(exe, O_PATH | O_CLOEXEC);
            setenv("TMPDIR", w->tmpdir, 1);
            kp_sb_spec s;
            memset(&s, 0, sizeof s);
            const kp_backend_info *bi = kp_backend_get(o->backend);
            s.kind = bi->gpu ? KP_SB_CUDA_WORKER : KP_SB_HOST_WORKER;
            s.stage = w->tmpdir;
            /* No address-space limit where the backend takes none (the
             * CUDA driver maps huge virtual ranges). */
            s.as_limit = o->mem_limit;
            s.fsize_limit = (int64_t)16 << 20; /* no file of a worker needs more */
            s.cpu_limit_s = 3600;
            s.keep[0] = fd_in;
            s.keep[1] = fd_out;
            s.keep[2] = exe_fd;
            s.keep[3] = -1;
            if (kp_sb_enter(&s, sb[1])) _exit(125);
            if (exe_fd >= 0) fexecve(exe_fd, args, environ);
            kp_sb_exec_failed(sb[1], exe, errno);
            _exit(127);
        }
        if (o->mem_limit > 0) {
            struct rlimit rl = {(rlim_t)o->mem_limit, (rlim_t)o->mem_limit};
            setrlimit(RLIMIT_AS, &rl);
        }
        /* dup2'd fds are not close-on-exec; everything else of ours is. */
        execv(exe, args);
        _exit(127);
    }
    setpgid(pid, pid);
    kp_cleanup_group(w->slot, pid);
    close(rq[0]);
    close(rp[1]);
    close(lg[1]);
    w->pid = pid;
    w->req = rq[1];
    w->rep = rp[0];
    w->log = lg[0];
    fcntl(w->log, F_SETFL, O_NONBLOCK);
    signal(SIGPIPE, SIG_IGN);
    *out = w;
    if (sb[0] >= 0) {
        close(sb[1]);
        int src = kp_sb_enabled() ? kp_sb_collect(sb[0], o->start_timeout_s, err, errlen) : 0;
        close(sb[0]);
        if (src) { /* the harness's fault, not the candidate's */
            kill_group(w);
            return KP_WK_SYS;
        }
    }
    /* Nothing has touched the device yet: the worker waits for its token. */
    *held = 1;
    if (kp_devlock_hold(1)) {
        snprintf(err, errlen, "%s", kp_devlock_error());
        /* Killed while it waits for its token, before it reaches the
         * device: a QUIT frame would be read as the token, and the worker
         * would go on to make its context without the lock. */
        kill_group(w);
        release_worker(w);
        *out = NULL;
        return KP_WK_SYS;
    }
    if (kp_write_full(w->req, &w->token, sizeof w->token)) {
        snprintf(err, errlen, "cannot write to the worker");
        return finish_error(w, KP_WK_DIED, err, errlen, o->start_timeout_s);
    }
    kp_frame_hdr h;
    char *buf = NULL;
    double t0 = kp_wall_s();
    int rc = read_frame(w, &h, &buf, t0 + o->start_timeout_s, err, errlen);
    w->last_wall = kp_wall_s() - t0;
    if (rc) return finish_error(w, rc, err, errlen, o->start_timeout_s);
    if (h.type != KP_MSG_HELLO || h.len != sizeof(kp_hello)) {
        free(buf);
        snprintf(err, errlen, "the worker's first frame was not HELLO");
        return finish_error(w, KP_WK_FRAME, err, errlen, 0);
    }
    memcpy(hello, buf, sizeof *hello);
    free(buf);
    return KP_WK_OK;
}

static int call_locked(kp_wk *w, uint32_t type, const void *req, size_t reqlen, const void *extra, size_t extralen,
                       void *rep, size_t repcap, size_t *replen, double timeout_s, char *err, size_t errlen, int *held);

int kp_wk_call(kp_wk *w, uint32_t type, const void *req, size_t reqlen, const void *extra, size_t extralen, void *rep,
               size_t repcap, size_t *replen, double timeout_s, char *err, size_t errlen) {
    if (replen) *replen = 0;
    if (w->dead) {
        describe_death(w, err, errlen);
        return KP_WK_DIED;
    }
    if (kp_devlock_hold(1)) {
        kp_devlock_hold(0);
        snprintf(err, errlen, "%s", kp_devlock_error());
        return KP_WK_SYS;
    }
    int held = 1;
    int rc = call_locked(w, type, req, reqlen, extra, extralen, rep, repcap, replen, timeout_s, err, errlen, &held);
    if (held) kp_devlock_hold(0);
    return rc;
}

/* Replies whose bytes may cross the pipe without the device lock: a
 * fetch's header is written after its device copy, and while the bytes
 * follow, the worker runs no candidate code (only a thread the candidate
 * left running could act, and it could as well between requests, when no
 * lock is held for this worker at all). A RUN's header could be forged by
 * the call itself, whose device work may not have ended: those replies
 * keep the lock to their last byte. */
static int unlocks_early(uint32_t type) { return type == KP_MSG_FETCH || type == KP_MSG_FETCHV; }

static int call_locked(kp_wk *w, uint32_t type, const void *req, size_t reqlen, const void *extra, size_t extralen,
                       void *rep, size_t repcap, size_t *replen, double timeout_s, char *err, size_t errlen, int *held) {
    uint32_t seq = ++w->seq;
    int64_t c0, m0;
    w->last_cpu = w->last_main_cpu = -1;
    acct_begin(w, type, &c0, &m0);
    double t0 = kp_wall_s();
    if (kp_frame_write2(w->req, type, w->token, seq, req, (uint32_t)reqlen, extra, (uint32_t)extralen))
        return finish_error(w, KP_WK_DIED, err, errlen, timeout_s);
    double deadline = t0 + timeout_s;
    for (;;) {
        kp_frame_hdr h;
        char *buf = NULL;
        int rc = read_header(w, &h, deadline, err, errlen);
        if (!rc && h.seq == seq && h.type == KP_MSG_OK && *held && unlocks_early(type)) {
            kp_devlock_hold(0);
            *held = 0;
        }
        /* The answer, when the caller's buffer holds it, straight into it
         * (a whole output is 256 MiB at 8192^3: no second copy). */
        int direct = !rc && h.seq == seq && h.type == KP_MSG_OK && rep && h.len > 0 && h.len <= repcap;
        if (direct) {
            rc = read_deadline(w, rep, h.len, deadline);
            if (!rc && kp_fnv1a(rep, h.len) != h.cksum) {
                snprintf(err, errlen, "a frame on the result channel had a bad checksum");
                rc = KP_WK_FRAME;
            }
        } else if (!rc) {
            rc = read_payload(w, &h, &buf, deadline, err, errlen);
        }
        if (rc && !*held) { /* killing the worker ends its context: device work */
            *held = 1;
            if (kp_devlock_hold(1)) {
                /* The worker is ended all the same (it must not be left
                 * running); the report says its end may have overlapped
                 * another process's device work. */
                char lock[160];
                snprintf(lock, sizeof lock, "%s", kp_devlock_error());
                finish_error(w, rc, err, errlen, timeout_s);
                size_t n = strlen(err);
                snprintf(err + n, errlen - n, " (ended without the device lock: %s)", lock);
                return rc;
            }
        }
        if (rc) return finish_error(w, rc, err, errlen, timeout_s);
        if (h.seq != seq) {
            free(buf);
            if (!w->check_token && h.seq < seq) continue; /* naive: a stale duplicate, skip it */
            snprintf(err, errlen, "a frame on the result channel answered request %u while %u was pending", h.seq,
                     seq);
            return finish_error(w, KP_WK_FRAME, err, errlen, 0);
        }
        w->last_wall = kp_wall_s() - t0;
        acct_end(w, type, c0, m0);
        if (h.type == KP_MSG_FAIL) {
            kp_fail f;
            memset(&f, 0, sizeof f);
            memcpy(&f, buf, h.len < sizeof f ? h.len : sizeof f);
            f.error[sizeof f.error - 1] = 0;
            snprintf(err, errlen, "%s", f.error);
            free(buf);
            return KP_WK_FAIL;
        }
        if (h.type != KP_MSG_OK) {
            free(buf);
            snprintf(err, errlen, "unexpected frame type %u on the result channel", h.type);
            return finish_error(w, KP_WK_FRAME, err, errlen, 0);
        }
        size_t n = h.len < repcap ? h.len : repcap;
        if (rep && n && !direct) memcpy(rep, buf, n);
        if (replen) *replen = h.len;
        free(buf);
        return KP_WK_OK;
    }
}

double kp_wk_last_wall(const kp_wk *w) { return w->last_wall; }
double kp_wk_last_cpu(const kp_wk *w) { return w->last_cpu; }
double kp_wk_last_main_cpu(const kp_wk *w) { return w->last_main_cpu; }

void kp_wk_stop(kp_wk *w) {
    if (!w) return;
    /* A worker's exit (its context torn down, a killed kernel) is device
     * work too: under the lock, so nobody's timing overlaps it. */
    kp_devlock_hold(1);
    release_worker(w);
    kp_devlock_hold(0);
}

/* Asks the worker to quit, kills what is left of its group, closes its
 * pipes, removes its folder and frees it. */
static void release_worker(kp_wk *w) {
    if (!w->dead) {
        kp_frame_write(w->req, KP_MSG_QUIT, w->token, ++w->seq, NULL, 0);
        for (int i = 0; i < 100 && !w->dead; i++) {
            reap(w, 0);
            if (!w->dead) usleep(2000);
        }
    }
    kill_group(w); /* and whatever it left behind in its group (reaping kills that too) */
    close(w->req);
    close(w->rep);
    close(w->log);
    if (w->tmpdir[0]) kp_rm_tree(w->tmpdir, 0); /* the build's copy, and what the candidate wrote there */
    kp_cleanup_drop(w->slot);
    free(w);
}
