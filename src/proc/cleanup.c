/* cleanup.c: what an interrupted kproof must not leave behind (cleanup.h).
 *
 * A fixed table of slots, so the signal handler reads plain memory and
 * calls only async-signal-safe functions (getpid, kill, unlink, rmdir,
 * open, openat, unlinkat, lseek, close, nanosleep, the getdents64 system
 * call, sigaction, raise): a folder is emptied without opendir, which
 * allocates. A slot is filled, then published by its state; the
 * process that filled it is recorded, so a process forked from kproof
 * (a demo row) never kills or removes what its parent listed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "proc/cleanup.h"

#define SLOTS 32
enum { FREE = 0, FILLING, LIVE };

static struct slot {
    atomic_int state;
    atomic_int pgid; /* 0: none (not started, or reaped) */
    pid_t owner;
    char file[PATH_MAX];
    char dir[256];
} g_slot[SLOTS];

static struct sigaction g_default; /* SIG_DFL, set up before the handler can run */

/* ---- removing a folder and what is in it ------------------------------------ */

#define TREE_DEPTH 8 /* folders below the removed one; deeper ones are left */

struct kp_dirent64 { /* what the getdents64 system call writes */
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Removes every entry of the open folder fd. Symbolic links are removed,
 * never followed; a folder is emptied (depth more levels) and removed.
 * The listing is read again until a pass removes nothing: entries removed
 * while it is read may make it skip others. */
static void empty_dir(int fd, int depth) {
    union {
        char c[1024];
        uint64_t align;
    } buf;
    for (int pass = 0; pass < 64; pass++) {
        if (lseek(fd, 0, SEEK_SET) < 0) return;
        int seen = 0, removed = 0;
        for (;;) {
            long n = syscall(SYS_getdents64, fd, buf.c, sizeof buf.c);
            if (n <= 0) break;
            for (long off = 0; off < n;) {
                struct kp_dirent64 *d = (struct kp_dirent64 *)(buf.c + off);
                off += d->d_reclen;
                const char *name = d->d_name;
                if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))) continue;
                seen++;
                if (unlinkat(fd, name, 0) == 0) {
                    removed++;
                    continue;
                }
                if (errno != EISDIR || depth <= 0) continue;
                int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0) {
                    empty_dir(sub, depth - 1);
                    close(sub);
                }
                if (unlinkat(fd, name, AT_REMOVEDIR) == 0) removed++;
            }
        }
        if (!seen || !removed) return;
    }
}

int kp_rm_tree(const char *dir, int settle_ms) {
    for (int waited = 0;; waited += 10) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) return errno == ENOENT ? 0 : -1;
        empty_dir(fd, TREE_DEPTH);
        close(fd);
        if (rmdir(dir) == 0 || errno == ENOENT) return 0;
        /* A process killed a moment ago may still finish the call that
         * makes a file: look again, for settle_ms at most. */
        if (errno != ENOTEMPTY && errno != EEXIST) return -1;
        if (waited >= settle_ms) return -1;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void on_signal(int sig) {
    pid_t me = getpid();
    for (int i = 0; i < SLOTS; i++) {
        struct slot *s = &g_slot[i];
        if (atomic_load(&s->state) != LIVE || s->owner != me) continue;
        int g = atomic_load(&s->pgid);
        if (g > 0) kill(-g, SIGKILL);
        if (s->file[0]) unlink(s->file);
        /* and whatever the child made there: a compiler's temporaries, a
         * worker's files */
        if (s->dir[0]) kp_rm_tree(s->dir, g > 0 ? 200 : 0);
    }
    /* Blocked while this handler runs: delivered, with the default action,
     * as it returns, so the exit status says which signal ended us. */
    sigaction(sig, &g_default, NULL);
    raise(sig);
}

static void install(void) {
    static int done;
    if (done) return;
    done = 1;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    g_default.sa_handler = SIG_DFL;
    sigemptyset(&g_default.sa_mask);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++) sigaddset(&sa.sa_mask, sigs[i]); /* one cleanup at a time */
    for (int i = 0; i < 3; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
            sigaction(sigs[i], &sa, NULL);
    }
}

static sigset_t g_deferred_mask;

void kp_cleanup_defer(int on) {
    if (on) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &set, &g_deferred_mask);
    } else {
        pthread_sigmask(SIG_SETMASK, &g_deferred_mask, NULL);
    }
}

static int fits(const char *p, size_t cap) { return !p || strlen(p) < cap; }

int kp_cleanup_add(const char *file, const char *dir) {
    if (!fits(file, sizeof g_slot[0].file) || !fits(dir, sizeof g_slot[0].dir)) return -1;
    install();
    for (int i = 0; i < SLOTS; i++) {
        struct slot *s = &g_slot[i];
        int expect = FREE;
        if (!atomic_compare_exchange_strong(&s->state, &expect, FILLING)) continue;
        s->owner = getpid();
        atomic_store(&s->pgid, 0);
        strcpy(s->file, file ? file : "");
        strcpy(s->dir, dir ? dir : "");
        atomic_store(&s->state, LIVE);
        return i;
    }
    return -1;
}

void kp_cleanup_group(int slot, pid_t pgid) {
    if (slot >= 0 && slot < SLOTS) atomic_store(&g_slot[slot].pgid, (int)pgid);
}

void kp_cleanup_drop(int slot) {
    if (slot >= 0 && slot < SLOTS) atomic_store(&g_slot[slot].state, FREE);
}

void kp_die_with_parent(pid_t parent, int sig) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, sig);
#endif
    if (getppid() != parent) { /* it died before prctl: nobody will send sig */
        raise(sig);
        _exit(128 + sig); /* sig was ignored */
    }
}

int kp_reap_group(pid_t pid, int slot, int *status, int block) {
    siginfo_t si;
    for (;;) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | (block ? 0 : WNOHANG)) == 0) break;
        if (errno != EINTR) return -1;
    }
    if (si.si_pid != pid) return 0; /* WNOHANG: still running */
    kill(-pid, SIGKILL);
    kp_cleanup_group(slot, 0); /* before the number is freed: no signal can reach a reused one */
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    if (status) *status = st;
    return 1;
}
