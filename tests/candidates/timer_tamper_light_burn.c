/* exploits/host/timer_tamper.c (its worker's clock_gettime at 25% speed)
 * with softmax_light_burn.c's read hook (3 ms of its own thread in every
 * PING and INPUTS request): its light requests look like a machine that
 * adds its own time to every request, which alone is NOISY. That must not
 * hide the tampered timer: expect REJECTED (timer, or the parent-clock
 * batches' account, whose INPUTS take over 1 ms each), never NOISY (the
 * light requests' NOISY waits until every other check of the shape has
 * run).
 */
#include <kproof/kernel.h>

#include <elf.h>
#include <link.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* reported time = real time * KEEP_NUM / KEEP_DEN: 25% */
#define KEEP_NUM 1
#define KEEP_DEN 4

/* ===== the replacement ==================================================== */

static int (*g_real_clock)(clockid_t, struct timespec *);
static long long g_anchor_ns; /* CLOCK_MONOTONIC when the patch went in */

/* A monotonic clock that runs slow after the anchor: intervals shrink. */
static int slow_clock(clockid_t id, struct timespec *ts) {
    int rc = g_real_clock(id, ts);
    if (rc == 0 && id == CLOCK_MONOTONIC) {
        long long real = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
        long long v = g_anchor_ns + (real - g_anchor_ns) * KEEP_NUM / KEEP_DEN;
        ts->tv_sec = (time_t)(v / 1000000000LL);
        ts->tv_nsec = (long)(v % 1000000000LL);
    }
    return rc;
}

/* ===== GOT patching ======================================================= */

typedef struct hook {
    const char *name;
    uintptr_t to;
} hook;

/* Dynamic-section pointers are absolute once the loader relocated them and
 * offsets from the load base otherwise; offsets are below the base. */
static uintptr_t at(uintptr_t v, uintptr_t base) { return v < base ? v + base : v; }

static void patch_table(uintptr_t base, const ElfW(Rela) *rel, size_t bytes, const ElfW(Sym) *syms,
                        const char *strs, const hook *h) {
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; rel && i < bytes / sizeof *rel; i++) {
        unsigned long type = ELF64_R_TYPE(rel[i].r_info);
#if defined(__x86_64__)
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
#elif defined(__aarch64__)
        if (type != R_AARCH64_JUMP_SLOT && type != R_AARCH64_GLOB_DAT) continue;
#else
        continue;
#endif
        if (strcmp(strs + syms[ELF64_R_SYM(rel[i].r_info)].st_name, h->name) != 0) continue;
        uintptr_t slot = base + rel[i].r_offset;
        /* Full RELRO made the GOT read-only: this process may undo that. */
        if (mprotect((void *)(slot & ~(uintptr_t)(page - 1)), (size_t)page, PROT_READ | PROT_WRITE) == 0)
            *(uintptr_t *)slot = h->to;
    }
}

static int patch_main_program(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    if (info->dlpi_name && info->dlpi_name[0]) return 0; /* the executable has an empty name */
    uintptr_t base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(base + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 1;
    const ElfW(Sym) *syms = NULL;
    const char *strs = NULL;
    const ElfW(Rela) *plt = NULL, *rela = NULL;
    size_t plt_bytes = 0, rela_bytes = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: syms = (const ElfW(Sym) *)at(dyn->d_un.d_ptr, base); break;
        case DT_STRTAB: strs = (const char *)at(dyn->d_un.d_ptr, base); break;
        case DT_JMPREL: plt = (const ElfW(Rela) *)at(dyn->d_un.d_ptr, base); break;
        case DT_PLTRELSZ: plt_bytes = dyn->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)at(dyn->d_un.d_ptr, base); break;
        case DT_RELASZ: rela_bytes = dyn->d_un.d_val; break;
        default: break;
        }
    }
    if (!syms || !strs) return 1;
    patch_table(base, plt, plt_bytes, syms, strs, (const hook *)data);
    patch_table(base, rela, rela_bytes, syms, strs, (const hook *)data);
    return 1;
}

static void tamper_once(void) {
    static int done;
    if (done) return;
    done = 1;
    g_real_clock = clock_gettime;
    struct timespec now;
    g_real_clock(CLOCK_MONOTONIC, &now);
    g_anchor_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    hook h = {"clock_gettime", (uintptr_t)&slow_clock};
    dl_iterate_phdr(patch_main_program, &h);
}

/* ===== the honest part ==================================================== */

/* Max-subtracted, exp in float, sums in double. */
static void softmax_row(const float *x, float *y, int64_t cols) {
    float m = x[0];
    for (int64_t j = 1; j < cols; j++)
        if (x[j] > m) m = x[j];
    double s = 0.0;
    for (int64_t j = 0; j < cols; j++) {
        y[j] = expf(x[j] - m);
        s += y[j];
    }
    for (int64_t j = 0; j < cols; j++) y[j] = (float)(y[j] / s);
}

KP_ENTRY int kp_softmax_f32(const float *x, float *y, int64_t rows, int64_t cols) {
    tamper_once();
    for (int64_t r = 0; r < rows; r++) softmax_row(x + r * cols, y + r * cols, cols);
    return 0;
}
#define FRAME_MAGIC 0x4b505246u
#define TYPE_PING 7
#define TYPE_INPUTS 15
#define BURN_NS 3000000

static ssize_t (*g_real_read)(int, void *, size_t);

static int64_t thread_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static ssize_t burning_read(int fd, void *buf, size_t n) {
    ssize_t r = g_real_read(fd, buf, n);
    uint32_t magic, type;
    if (r >= 32) {
        memcpy(&magic, buf, 4);
        memcpy(&type, (const char *)buf + 4, 4);
        if (magic == FRAME_MAGIC && (type == TYPE_PING || type == TYPE_INPUTS)) {
            const int64_t until = thread_ns() + BURN_NS;
            while (thread_ns() < until) {}
        }
    }
    return r;
}

/* Dynamic-section pointers are absolute once the loader relocated them and
 * offsets from the load base otherwise; offsets are below the base. */
static uintptr_t lb_at(uintptr_t v, uintptr_t base) { return v < base ? v + base : v; }

static void lb_patch_table(uintptr_t base, const ElfW(Rela) *rel, size_t bytes, const ElfW(Sym) *syms,
                        const char *strs) {
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; rel && i < bytes / sizeof *rel; i++) {
        unsigned long type = ELF64_R_TYPE(rel[i].r_info);
#if defined(__x86_64__)
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
#elif defined(__aarch64__)
        if (type != R_AARCH64_JUMP_SLOT && type != R_AARCH64_GLOB_DAT) continue;
#else
        continue;
#endif
        if (strcmp(strs + syms[ELF64_R_SYM(rel[i].r_info)].st_name, "read") != 0) continue;
        uintptr_t slot = base + rel[i].r_offset;
        if (mprotect((void *)(slot & ~(uintptr_t)(page - 1)), (size_t)page, PROT_READ | PROT_WRITE) == 0)
            *(uintptr_t *)slot = (uintptr_t)&burning_read;
    }
}

static int lb_patch_main_program(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    if (info->dlpi_name && info->dlpi_name[0]) return 0; /* the executable has an empty name */
    uintptr_t base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(base + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 1;
    const ElfW(Sym) *syms = NULL;
    const char *strs = NULL;
    const ElfW(Rela) *plt = NULL, *rela = NULL;
    size_t plt_bytes = 0, rela_bytes = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: syms = (const ElfW(Sym) *)lb_at(dyn->d_un.d_ptr, base); break;
        case DT_STRTAB: strs = (const char *)lb_at(dyn->d_un.d_ptr, base); break;
        case DT_JMPREL: plt = (const ElfW(Rela) *)lb_at(dyn->d_un.d_ptr, base); break;
        case DT_PLTRELSZ: plt_bytes = dyn->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)lb_at(dyn->d_un.d_ptr, base); break;
        case DT_RELASZ: rela_bytes = dyn->d_un.d_val; break;
        default: break;
        }
    }
    if (!syms || !strs) return 1;
    lb_patch_table(base, plt, plt_bytes, syms, strs);
    lb_patch_table(base, rela, rela_bytes, syms, strs);
    return 1;
}

__attribute__((constructor)) static void lb_hook_at_load(void) {
    g_real_read = read; /* this library's own reference: libc's */
    dl_iterate_phdr(lb_patch_main_program, NULL);
}

