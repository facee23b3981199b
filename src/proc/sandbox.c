/* sandbox.c: the worker's and the compiler's sandbox (sandbox.h).
 *
 * Plain Linux system calls, no library. The order matters:
 *   1. unshare the namespaces (all at once; one at a time where the
 *      machine refuses the set), map our ids to an unprivileged id;
 *   2. in the new mount namespace: the view read-only, a private tmp, the
 *      child's own folder bound back in writable;
 *   3. fork: this process stays outside as the keeper; with a pid
 *      namespace the child is its pid 1, mounts its /proc and forks the
 *      target, then reaps orphans and tells the keeper how the target
 *      ended;
 *   4. in the target: rlimits, the parent-death signal, every other fd
 *      closed, capabilities dropped, no_new_privs, the seccomp filter
 *      last (everything before it needs calls it forbids).
 * A step the machine refuses is recorded in the report; a step that must
 * work for the child to run at all (its own folder) fails the start. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/sandbox.h"

#define REPORT_MAGIC 0x6b705342u /* "kpSB" */

typedef struct report {
    uint32_t magic;
    uint32_t missing; /* KP_SBD_* bits */
    int32_t fatal;    /* 1: the child does not run */
    int32_t nomap;    /* 1: a user namespace was made, but its id maps could not be written */
    char msg[240];
} report;

/* ---- state of the parent ------------------------------------------------------ */

static int g_disabled;
static unsigned g_missing;
static int g_probed, g_seen;
/* The probe made a user namespace but could not write its id maps: the
 * children forked after it make none (inherited through fork). */
static int g_no_userns;
#define PROTECT_MAX 8
static char g_protect[PROTECT_MAX][PATH_MAX];
static int g_nprotect;

void kp_sb_disable(void) { g_disabled = 1; }
int kp_sb_enabled(void) { return !g_disabled; }
unsigned kp_sb_missing(void) { return g_disabled ? KP_SBD_ALL : g_missing; }

void kp_sb_protect(const char *path) {
    char real[PATH_MAX];
    if (!path || !*path || !realpath(path, real)) return;
    for (int i = 0; i < g_nprotect; i++)
        if (!strcmp(g_protect[i], real)) return;
    if (g_nprotect < PROTECT_MAX) snprintf(g_protect[g_nprotect++], PATH_MAX, "%s", real);
}

const char *kp_sb_defence_name(unsigned bit) {
    switch (bit) {
    case KP_SBD_USERNS: return "user namespace";
    case KP_SBD_PIDNS: return "pid namespace";
    case KP_SBD_NETNS: return "network namespace";
    case KP_SBD_MNTNS: return "mount namespace";
    case KP_SBD_IPCNS: return "ipc namespace";
    case KP_SBD_PROC: return "private /proc";
    case KP_SBD_SECCOMP: return "seccomp filter";
    case KP_SBD_NNP: return "no_new_privs";
    }
    return "?";
}

const char *kp_sb_defence_gap(unsigned bit) {
    switch (bit) {
    case KP_SBD_USERNS: return "it keeps kproof's user and capabilities";
    case KP_SBD_PIDNS: return "it sees other processes, and a setsid child can outlive it";
    case KP_SBD_NETNS: return "only seccomp keeps it off the network";
    case KP_SBD_MNTNS: return "it can write the cache, the tree and result files";
    case KP_SBD_IPCNS: return "it shares System V IPC with the machine";
    case KP_SBD_PROC: return "it sees every process in /proc";
    case KP_SBD_SECCOMP: return "ptrace, sockets and signals are not filtered";
    case KP_SBD_NNP: return "setuid programs keep their powers";
    }
    return "";
}

/* ---- small helpers, safe after fork -------------------------------------------- */

static void put_report_nomap(int fd, unsigned missing, int fatal, int nomap, const char *fmt, const char *a,
                             int err) {
    report r;
    memset(&r, 0, sizeof r);
    r.magic = REPORT_MAGIC;
    r.missing = missing;
    r.fatal = fatal;
    r.nomap = nomap;
    if (fmt) snprintf(r.msg, sizeof r.msg, fmt, a ? a : "", err ? strerror(err) : "");
    ssize_t n;
    do n = write(fd, &r, sizeof r);
    while (n < 0 && errno == EINTR);
}

static void put_report(int fd, unsigned missing, int fatal, const char *fmt, const char *a, int err) {
    put_report_nomap(fd, missing, fatal, 0, fmt, a, err);
}

static int write_text(int fd, const char *text) {
    size_t n = strlen(text);
    ssize_t w;
    do w = write(fd, text, n);
    while (w < 0 && errno == EINTR);
    return w == (ssize_t)n ? 0 : -1;
}

/* The pid of a process tracing this one (0: none), from /proc/self/status. */
static long tracer_pid(void) {
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    const char *t = strstr(buf, "\nTracerPid:");
    return t ? strtol(t + 12, NULL, 10) : -1;
}

/* Maps our ids to in_uid and in_gid inside the user namespace this process
 * has just made. 0, or -1 with errno (and *what: the step that failed).
 *
 * kproof is not dumpable (main), and this fork of it inherits that. The
 * files of /proc/self of a process that is not dumpable belong to root of
 * the user namespace its memory was made in (the machine's: a fork keeps
 * its parent's), so a user other than root could not open its own
 * uid_map. The process is made dumpable for the three opens only: the
 * kernel checks the right to write a map against the credentials of the
 * file's opener, taken at open, so the writes that follow need nothing
 * more. It is not dumpable again before anything else happens.
 *
 * Why the window is kept that short: this child is a copy of kproof's
 * memory until it execs (copy-on-write), and that copy holds what kproof
 * held at the fork: the session token of the worker being started (made
 * before the fork, written to the worker's request pipe only after its
 * exec), the tokens of workers already running, and the inputs and
 * references of shapes already checked when a baseline's worker starts
 * after the first shape. While dumpable, a process of the same user
 * outside any sandbox could read it (a sandboxed candidate cannot: its
 * pid namespace, its /proc and seccomp keep it from ptrace,
 * process_vm_readv and /proc/<pid>/mem); one that attached in the window
 * is caught here (TracerPid changed) and the child does not run. */
static int write_id_maps(unsigned in_uid, uid_t uid, unsigned in_gid, gid_t gid, int skip, const char **what) {
    if (skip) { /* tests: act as if the machine refused the maps */
        *what = "writing the uid map";
        errno = EPERM;
        return -1;
    }
    long tracer = tracer_pid(); /* one from before (strace -f of kproof) saw everything already */
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    int sg = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
    int um = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
    int e_um = errno;
    int gm = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
    int e_gm = errno;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    int rc = -1, e = 0;
    char map[64];
    if (tracer_pid() != tracer) {
        *what = "checking that nothing attached to the sandbox's child";
        e = EPERM;
    } else if (um < 0) {
        *what = "opening /proc/self/uid_map";
        e = e_um;
    } else if (gm < 0) {
        *what = "opening /proc/self/gid_map";
        e = e_gm;
    } else {
        if (sg >= 0) write_text(sg, "deny"); /* before an unprivileged gid map; absent on old kernels */
        snprintf(map, sizeof map, "%u %u 1\n", in_uid, (unsigned)uid);
        if (write_text(um, map)) {
            *what = "writing the uid map";
            e = errno;
        } else {
            snprintf(map, sizeof map, "%u %u 1\n", in_gid, (unsigned)gid);
            if (write_text(gm, map)) {
                *what = "writing the gid map";
                e = errno;
            } else {
                rc = 0;
            }
        }
    }
    if (sg >= 0) close(sg);
    if (um >= 0) close(um);
    if (gm >= 0) close(gm);
    errno = e;
    return rc;
}

/* Mount flags that a remount inside a user namespace must keep (the
 * kernel locks them on mounts inherited from a more privileged one). */
static unsigned long locked_flags(const char *path) {
    struct statvfs sv;
    unsigned long f = 0;
    if (statvfs(path, &sv)) return 0;
    if (sv.f_flag & ST_NOSUID) f |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV) f |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME) f |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME) f |= MS_RELATIME;
    return f;
}

static int bind_ro(const char *path) {
    if (mount(path, path, NULL, MS_BIND | MS_REC, NULL)) return -1;
    return mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | locked_flags(path), NULL);
}

static int remount_rw(const char *path) {
    return mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | (locked_flags(path) & ~(unsigned long)MS_RDONLY), NULL);
}

#ifndef SYS_mount_setattr
#ifdef __x86_64__
#define SYS_mount_setattr 442
#elif defined(__aarch64__)
#define SYS_mount_setattr 442
#endif
#endif
#define KP_MOUNT_ATTR_RDONLY 0x00000001ull
#define KP_AT_RECURSIVE 0x8000

struct kp_mount_attr {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* Every mount under / read-only, one call (Linux 5.12). */
static int all_read_only(void) {
#ifdef SYS_mount_setattr
    struct kp_mount_attr a = {KP_MOUNT_ATTR_RDONLY, 0, 0, 0};
    return (int)syscall(SYS_mount_setattr, AT_FDCWD, "/", KP_AT_RECURSIVE, &a, sizeof a);
#else
    errno = ENOSYS;
    return -1;
#endif
}

static void dirname_of(const char *path, char *out, size_t len) {
    snprintf(out, len, "%s", path);
    char *s = strrchr(out, '/');
    if (s && s != out) *s = 0;
    else snprintf(out, len, "/");
}

/* ---- the filesystem view --------------------------------------------------------- */

/* Returns 0, or -1 when the child's own folder could not be put in place
 * (then it cannot run). *partial is set when the view is not read-only. */
static int build_view(const kp_sb_spec *s, int *view_ok, const char **why, int *why_errno) {
    *view_ok = 0;
    /* Nothing mounted here reaches the parent's namespace. */
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)) {
        *why = "making / a slave mount";
        *why_errno = errno;
        return 1; /* no view at all: reported, the child runs as is */
    }
    int stage_fd = -1;
    if (s->stage) {
        stage_fd = open(s->stage, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (stage_fd < 0) {
            *why = "opening the private folder";
            *why_errno = errno;
            return -1;
        }
    }
    int ro = 0;
    /* The whole view read-only where the backend allows it; the CUDA
     * worker keeps its view (driver files, caches of the toolkit) with the
     * cache, the tree and result folders read-only. */
    if (s->kind != KP_SB_CUDA_WORKER && all_read_only() == 0) ro = 1;
    if (!ro) {
        ro = 1;
        for (int i = 0; i < g_nprotect; i++)
            if (bind_ro(g_protect[i])) ro = 0;
    }
    if (s->kind != KP_SB_COMPILER) {
        /* A private tmp: other processes' files (device locks, staged
         * builds) out of sight; the private folder is bound back below. */
        char base[PATH_MAX] = "";
        if (s->stage) dirname_of(s->stage, base, sizeof base);
        const char *tmps[3] = {base[0] && strcmp(base, "/tmp") ? base : NULL, "/tmp",
                               s->kind == KP_SB_HOST_WORKER ? "/dev/shm" : NULL};
        for (int i = 0; i < 3; i++) {
            struct stat st;
            if (!tmps[i] || stat(tmps[i], &st) || !S_ISDIR(st.st_mode)) continue;
            if (mount("tmpfs", tmps[i], "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=256m")) ro = 0;
        }
        if (s->stage) {
            char from[64];
            snprintf(from, sizeof from, "/proc/self/fd/%d", stage_fd);
            /* Its path again, inside the new tmp (where a tmp over its
             * folder's parent hid it). */
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s", s->stage);
            for (char *c = path + 1; *c; c++)
                if (*c == '/') {
                    *c = 0;
                    mkdir(path, 0755);
                    *c = '/';
                }
            mkdir(s->stage, 0700);
            if (mount(from, s->stage, NULL, MS_BIND, NULL) || remount_rw(s->stage)) {
                *why = "binding the private folder into the sandbox";
                *why_errno = errno;
                close(stage_fd);
                return -1;
            }
        }
    } else if (s->stage) {
        /* The compiler reads anything it needs where it is; it writes only
         * its own folder (output, temporaries). */
        if (mount(s->stage, s->stage, NULL, MS_BIND, NULL) || remount_rw(s->stage)) {
            *why = "binding the compiler's folder writable";
            *why_errno = errno;
            close(stage_fd);
            return -1;
        }
    }
    if (stage_fd >= 0) close(stage_fd);
    *view_ok = ro;
    return 0;
}

/* ---- seccomp ---------------------------------------------------------------------- */

#if defined(__x86_64__)
#define KP_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define KP_ARCH AUDIT_ARCH_AARCH64
#endif

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG0 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define DENY(e) RET(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

#ifdef KP_ARCH
typedef struct prog {
    struct sock_filter f[256];
    int n;
} prog;

static void emit(prog *p, struct sock_filter x) {
    if (p->n < 256) p->f[p->n++] = x;
}

/* if (nr == sys) return ERRNO(e); */
static void deny_nr(prog *p, int sys, int e) {
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)sys, 0, 1));
    emit(p, (struct sock_filter)DENY(e));
}

/* if (nr == sys) { if ((u32)arg0 is one of ok[]) allow; else ERRNO(e) } */
static void arg0_only(prog *p, int sys, const uint32_t *ok, int nok, int e) {
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)sys, 0, (uint8_t)(nok + 3)));
    emit(p, (struct sock_filter)LD_ARG0);
    for (int i = 0; i < nok; i++)
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ok[i], (uint8_t)(nok - i), 0));
    emit(p, (struct sock_filter)DENY(e));
    emit(p, (struct sock_filter)RET(SECCOMP_RET_ALLOW));
}

static int install_filter(int kind, int have_pidns, int have_netns, pid_t self, pid_t group) {
    prog p;
    p.n = 0;
    emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KP_ARCH, 1, 0));
    emit(&p, (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS)); /* another ABI (int 0x80): no table for it */
    emit(&p, (struct sock_filter)LD_NR);
#ifdef __x86_64__
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1)); /* x32 */
    emit(&p, (struct sock_filter)DENY(ENOSYS));
#endif
    /* Other processes' memory, and the kernel's ways around the filter. */
    static const int eperm[] = {
        SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_kcmp,
#ifdef SYS_pidfd_getfd
        SYS_pidfd_getfd,
#endif
#ifdef SYS_pidfd_send_signal
        SYS_pidfd_send_signal,
#endif
        SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot, SYS_unshare, SYS_setns,
#ifdef SYS_open_tree
        SYS_open_tree, SYS_move_mount, SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick,
#endif
#ifdef SYS_mount_setattr
        SYS_mount_setattr,
#endif
        SYS_bpf, SYS_keyctl, SYS_add_key, SYS_request_key, SYS_userfaultfd, SYS_init_module,
        SYS_finit_module, SYS_delete_module, SYS_kexec_load, SYS_reboot, SYS_swapon, SYS_swapoff, SYS_acct,
        SYS_quotactl,
    };
    for (size_t i = 0; i < sizeof eperm / sizeof eperm[0]; i++) deny_nr(&p, eperm[i], EPERM);
    /* io_uring opens sockets and files without the calls filtered here;
     * clone3 hides its flags in memory (glibc falls back to clone). */
#ifdef SYS_io_uring_setup
    deny_nr(&p, SYS_io_uring_setup, ENOSYS);
#endif
#ifdef SYS_clone3
    deny_nr(&p, SYS_clone3, ENOSYS);
#endif
    /* The CUPTI tracer of the cuda worker may use perf events; the host
     * worker and the compiler have no use for them. */
    if (kind != KP_SB_CUDA_WORKER) deny_nr(&p, SYS_perf_event_open, EACCES);
    /* clone with a namespace flag: a new namespace would be its own. */
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
    emit(&p, (struct sock_filter)LD_ARG0);
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
                                          CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                                              CLONE_NEWUTS | CLONE_NEWCGROUP,
                                          0, 1));
    emit(&p, (struct sock_filter)DENY(EPERM));
    emit(&p, (struct sock_filter)RET(SECCOMP_RET_ALLOW));
    /* Sockets: AF_UNIX only (netlink too for the cuda worker, inside its
     * own network namespace, where it reaches nothing). */
    uint32_t fam[2] = {AF_UNIX, AF_NETLINK};
    arg0_only(&p, SYS_socket, fam, kind == KP_SB_CUDA_WORKER && have_netns ? 2 : 1, EAFNOSUPPORT);
    emit(&p, (struct sock_filter)LD_NR);
    /* prctl: the parent-death signal stays. */
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 4));
    emit(&p, (struct sock_filter)LD_ARG0);
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_PDEATHSIG, 0, 1));
    emit(&p, (struct sock_filter)DENY(EPERM));
    emit(&p, (struct sock_filter)RET(SECCOMP_RET_ALLOW));
    if (!have_pidns) {
        /* Without a pid namespace the filter is what keeps kproof and
         * everyone else out of reach: signals only to this process (or its
         * group), and no leaving the group the parent kills. */
        uint32_t kill_ok[3] = {(uint32_t)self, 0, (uint32_t)-group};
        arg0_only(&p, SYS_kill, kill_ok, 3, EPERM);
        emit(&p, (struct sock_filter)LD_NR);
        uint32_t self_ok[1] = {(uint32_t)self};
        arg0_only(&p, SYS_tgkill, self_ok, 1, EPERM);
        emit(&p, (struct sock_filter)LD_NR);
        arg0_only(&p, SYS_rt_sigqueueinfo, self_ok, 1, EPERM);
        emit(&p, (struct sock_filter)LD_NR);
        arg0_only(&p, SYS_rt_tgsigqueueinfo, self_ok, 1, EPERM);
        emit(&p, (struct sock_filter)LD_NR);
        deny_nr(&p, SYS_tkill, EPERM);
        deny_nr(&p, SYS_setsid, EPERM);
        deny_nr(&p, SYS_setpgid, EPERM);
    }
    emit(&p, (struct sock_filter)RET(SECCOMP_RET_ALLOW));
    if (p.n >= 256) {
        errno = E2BIG;
        return -1;
    }
    struct sock_fprog fp = {(unsigned short)p.n, p.f};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0);
}
#else
static int install_filter(int kind, int have_pidns, int have_netns, pid_t self, pid_t group) {
    errno = ENOSYS;
    return -1;
}
#endif

/* ---- capabilities, fds, limits ------------------------------------------------------ */

static void drop_caps(void) {
    for (int c = 0; c <= 63; c++) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
#ifdef PR_CAP_AMBIENT
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
#endif
    /* root outside a user namespace: no capabilities regained at exec */
    prctl(PR_SET_SECUREBITS, 0x2f /* NOROOT, NOROOT_LOCKED, NO_SETUID_FIXUP(_LOCKED), KEEP_CAPS_LOCKED */, 0, 0, 0);
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    syscall(SYS_capset, &h, d);
}

static void close_others(const int *keep, int nkeep) {
    int k[8], n = 0;
    for (int i = 0; i < nkeep; i++)
        if (keep[i] > 2) k[n++] = keep[i];
    for (int i = 1; i < n; i++) /* sort */
        for (int j = i; j > 0 && k[j - 1] > k[j]; j--) {
            int t = k[j];
            k[j] = k[j - 1];
            k[j - 1] = t;
        }
    int from = 3;
    for (int i = 0; i <= n; i++) {
        int to = i < n ? k[i] - 1 : INT_MAX;
        if (to >= from) {
#ifdef SYS_close_range
            if (syscall(SYS_close_range, (unsigned)from, (unsigned)to, 0) != 0)
#endif
            {
                int hi = to < 4096 ? to : 4096;
                for (int fd = from; fd <= hi; fd++) close(fd);
            }
        }
        if (i < n) from = k[i] + 1;
    }
}

static void set_limit(int res, int64_t v) {
    if (v <= 0) return;
    struct rlimit rl;
    if (getrlimit(res, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && (rlim_t)v > rl.rlim_max) v = (int64_t)rl.rlim_max;
    rl.rlim_cur = rl.rlim_max = (rlim_t)v;
    setrlimit(res, &rl);
}

static void limits(const kp_sb_spec *s, int userns) {
    set_limit(RLIMIT_AS, s->as_limit);
    set_limit(RLIMIT_FSIZE, s->fsize_limit);
    if (s->cpu_limit_s > 0) {
        struct rlimit rl = {(rlim_t)s->cpu_limit_s, (rlim_t)s->cpu_limit_s + 5};
        setrlimit(RLIMIT_CPU, &rl);
    }
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    /* In a user namespace of its own the count is the sandbox's alone
     * (threads included); outside one it is the user's, which is not ours
     * to cut. */
    if (userns) set_limit(RLIMIT_NPROC, 1024);
}

/* ---- the keeper ----------------------------------------------------------------------- */

static void keeper_signal(int sig) {
    kill(0, SIGKILL); /* the target's group, this process included */
    _exit(128 + sig);
}

/* Waits for the target (or pid 1 of its namespace, which writes the
 * target's wait status on status_rd) and ends as the target did. */
_Noreturn static void keep(pid_t target, int status_rd) {
    /* Anything that ends kproof ends the target: PDEATHSIG (set by the
     * caller) and the usual signals kill the whole group. A name of its
     * own: it is a copy of kproof, not kproof. */
    prctl(PR_SET_NAME, "kproof-keeper", 0, 0, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = keeper_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) keeper_signal(SIGTERM);
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    int st = 0;
    while (waitpid(target, &st, 0) < 0 && errno == EINTR) {
    }
    if (status_rd >= 0) {
        int inner = 0;
        fcntl(status_rd, F_SETFL, O_NONBLOCK);
        if (read(status_rd, &inner, sizeof inner) == (ssize_t)sizeof inner) st = inner;
    }
    if (WIFEXITED(st)) _exit(WEXITSTATUS(st));
    int sig = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL;
    /* As the target ended: the parent reads the same status. */
    signal(sig, SIG_DFL);
    sigset_t all;
    sigemptyset(&all);
    sigaddset(&all, sig);
    sigprocmask(SIG_UNBLOCK, &all, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* ---- entry ------------------------------------------------------------------------------ */

int kp_sb_enter(const kp_sb_spec *s, int status_fd) {
    unsigned missing = 0;
    const char *skip = getenv("KPROOF_SANDBOX_SKIP"); /* tests: act as if the machine refused these */
    int skip_user = skip && strstr(skip, "user"), skip_pid = skip && strstr(skip, "pid"),
        skip_net = skip && strstr(skip, "net"), skip_mnt = skip && strstr(skip, "mount"),
        skip_ipc = skip && strstr(skip, "ipc"), skip_seccomp = skip && strstr(skip, "seccomp"),
        skip_maps = skip && strstr(skip, "maps");
    if (g_no_userns) skip_user = 1; /* the probe found the maps refused here */
    uid_t uid = geteuid();
    gid_t gid = getegid();
    int userns = 0, pidns = 0, netns = 0, mntns = 0, ipcns = 0;
    int want = (skip_user ? 0 : CLONE_NEWUSER) | (skip_pid ? 0 : CLONE_NEWPID) | (skip_net ? 0 : CLONE_NEWNET) |
               (skip_mnt ? 0 : CLONE_NEWNS) | (skip_ipc ? 0 : CLONE_NEWIPC);
    if (want && unshare(want) == 0) {
        userns = !!(want & CLONE_NEWUSER), pidns = !!(want & CLONE_NEWPID), netns = !!(want & CLONE_NEWNET);
        mntns = !!(want & CLONE_NEWNS), ipcns = !!(want & CLONE_NEWIPC);
    } else if (want) {
        /* One at a time: the user namespace first, the others may need it. */
        static const int order[5] = {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC};
        for (int i = 0; i < 5; i++) {
            if (!(want & order[i]) || unshare(order[i])) continue;
            if (order[i] == CLONE_NEWUSER) userns = 1;
            if (order[i] == CLONE_NEWNS) mntns = 1;
            if (order[i] == CLONE_NEWPID) pidns = 1;
            if (order[i] == CLONE_NEWNET) netns = 1;
            if (order[i] == CLONE_NEWIPC) ipcns = 1;
        }
    }
    if (userns) {
        /* Inside, an unprivileged id (never 0): exec then leaves no
         * capability; files of ours stay ours. */
        unsigned in_uid = uid ? uid : 65534, in_gid = gid ? gid : 65534;
        const char *what = "";
        if (write_id_maps(in_uid, uid, in_gid, gid, skip_maps, &what)) {
            /* A user namespace without maps cannot be left again: ids
             * unmapped, no file could be made, its mount view would be
             * broken. This child does not run; the parent starts the
             * next ones without a user namespace (the probe, started
             * before any of them, finds it first). */
            put_report_nomap(status_fd, KP_SBD_USERNS, 1, 1, "sandbox: %s of a new user namespace failed: %s", what,
                             errno);
            return -1;
        }
    }
    if (!userns) missing |= KP_SBD_USERNS;
    if (!pidns) missing |= KP_SBD_PIDNS | KP_SBD_PROC;
    if (!netns) missing |= KP_SBD_NETNS;
    if (!ipcns) missing |= KP_SBD_IPCNS;
    int view_ok = 0;
    if (mntns) {
        const char *why = NULL;
        int why_errno = 0;
        int rc = build_view(s, &view_ok, &why, &why_errno);
        if (rc < 0) {
            put_report(status_fd, missing, 1, "sandbox: %s failed: %s", why, why_errno);
            return -1;
        }
    }
    if (!view_ok) missing |= KP_SBD_MNTNS;
    if (pidns) {
        int stp[2]; /* pid 1 tells the keeper how the target ended */
        if (pipe2(stp, O_CLOEXEC)) stp[0] = stp[1] = -1;
        pid_t t = fork();
        if (t < 0) {
            put_report(status_fd, missing, 1, "sandbox: fork into the pid namespace%s failed: %s", "", errno);
            return -1;
        }
        if (t > 0) {
            close(status_fd); /* the target's exec closes its copy: EOF for the parent */
            int keepfd[1] = {stp[0]};
            close_others(keepfd, 1);
            keep(t, stp[0]);
        }
        /* pid 1 of the namespace: a /proc of its own, then an init that
         * reaps orphans and reports the target's end. The target is not
         * pid 1 itself: pid 1 ignores the signals it sends itself
         * (raise, abort), and a crash must stay a crash. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        prctl(PR_SET_NAME, "kproof-init", 0, 0, 0);
        if (!mntns || mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) missing |= KP_SBD_PROC;
        pid_t w = fork();
        if (w < 0) {
            put_report(status_fd, missing, 1, "sandbox: fork of the target%s failed: %s", "", errno);
            return -1;
        }
        if (w > 0) {
            close(status_fd);
            int keepfd[1] = {stp[1]};
            close_others(keepfd, 1);
            int st = 0;
            for (;;) {
                pid_t r = waitpid(-1, &st, 0);
                if (r == w) break;
                if (r < 0 && errno != EINTR) _exit(125);
            }
            ssize_t n;
            do n = write(stp[1], &st, sizeof st);
            while (n < 0 && errno == EINTR);
            _exit(0); /* and the kernel ends whatever else is in the namespace */
        }
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with pid 1 */
        if (stp[1] >= 0) close(stp[1]), close(stp[0]);
    } else {
        /* No pid namespace: a keeper all the same, so that what the
         * target leaves in its group dies when kproof does. */
        pid_t t = fork();
        if (t < 0) {
            put_report(status_fd, missing, 1, "sandbox: fork%s failed: %s", "", errno);
            return -1;
        }
        if (t > 0) {
            close(status_fd);
            int none[1] = {-1};
            close_others(none, 0);
            keep(t, -1);
        }
        pid_t keeper = getppid();
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != keeper) _exit(137);
    }
    limits(s, userns);
    int keepfd[5], nk = 0;
    for (int i = 0; i < 4; i++)
        if (s->keep[i] >= 0) keepfd[nk++] = s->keep[i];
    keepfd[nk++] = status_fd;
    close_others(keepfd, nk);
    drop_caps();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) missing |= KP_SBD_NNP;
    pid_t self = getpid();
    if (skip_seccomp || install_filter(s->kind, pidns, netns, self, getpgrp())) missing |= KP_SBD_SECCOMP;
    put_report(status_fd, missing, 0, NULL, NULL, 0);
    return 0;
}

void kp_sb_exec_failed(int status_fd, const char *what, int err) {
    put_report(status_fd, 0, 1, "cannot run %s: %s", what, err);
}

/* ---- parent side ------------------------------------------------------------------------ */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int kp_sb_collect(int fd, double timeout_s, char *err, size_t len) {
    double deadline = now_s() + timeout_s;
    report r;
    size_t got = 0;
    int any = 0, fatal = 0;
    unsigned missing = 0;
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) {
            snprintf(err, len, "sandbox: the child did not start within %.0f s", timeout_s);
            return -1;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int pr = poll(&p, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        ssize_t n = read(fd, (char *)&r + got, sizeof r - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
        if (got < sizeof r) continue;
        got = 0;
        if (r.magic != REPORT_MAGIC) continue;
        r.msg[sizeof r.msg - 1] = 0;
        if (!any) missing = r.missing;
        any = 1;
        if (r.nomap) g_no_userns = 1;
        if (r.fatal && !fatal) {
            fatal = 1;
            snprintf(err, len, "%s", r.msg);
        }
    }
    if (!any) {
        snprintf(err, len, "sandbox: the child ended before it was set up");
        return -1;
    }
    g_missing |= missing;
    g_seen = 1;
    return fatal ? -1 : 0;
}

void kp_sb_probe(void) {
    if (g_probed || g_disabled) return;
    g_probed = 1;
    int p[2];
    if (pipe2(p, O_CLOEXEC)) return;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid == 0) {
        close(p[0]);
        setpgid(0, 0);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        kp_sb_spec s;
        memset(&s, 0, sizeof s);
        s.kind = KP_SB_COMPILER;
        s.keep[0] = s.keep[1] = s.keep[2] = s.keep[3] = -1;
        if (kp_sb_enter(&s, p[1])) _exit(125);
        _exit(0);
    }
    setpgid(pid, pid);
    close(p[1]);
    char err[256];
    int was_no_userns = g_no_userns;
    int rc = kp_sb_collect(p[0], 10, err, sizeof err);
    close(p[0]);
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    if (rc && g_no_userns && !was_no_userns) {
        /* The machine makes user namespaces but refuses their maps: what
         * the children can have without one, probed again. */
        g_probed = 0;
        kp_sb_probe();
        return;
    }
    if (rc) g_missing |= KP_SBD_ALL;
}

int kp_sb_cache_trusted(void) {
    if (g_disabled) return 0;
    kp_sb_probe();
    return g_seen && !(g_missing & KP_SBD_MNTNS);
}
