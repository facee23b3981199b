/* backend.c: the host backend: the "device" is this CPU and its memory.
 * It lets the whole protocol run, and be tested, on a machine without a GPU.
 * Times come from CLOCK_MONOTONIC; the cache flush writes a buffer twice
 * the size of the last-level cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kproof/gen.h"
#include "worker/backend.h"

const kp_backend kp_dev_kind = KP_BACKEND_HOST;

static char g_err[256];
static uint64_t g_ev0, g_ev1;
static unsigned char *g_flush;
static size_t g_flush_bytes;

const char *kp_dev_error(void) { return g_err; }

/* Last-level cache size from sysfs (the largest index), else 32 MiB. */
static size_t llc_bytes(void) {
    size_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        unsigned long v = 0;
        char unit = 0;
        if (fscanf(f, "%lu%c", &v, &unit) >= 1) {
            size_t b = v;
            if (unit == 'K') b <<= 10;
            else if (unit == 'M') b <<= 20;
            if (b > best) best = b;
        }
        fclose(f);
    }
    return best ? best : (32u << 20);
}

/* The cache size the protocol sizes its flush and rotation by. On a server
 * the last level is shared by every core of the socket (hundreds of MiB);
 * one process gets a slice of it, so count at most 32 MiB: the flush writes
 * 64 MiB and rotating sets total at least 96 MiB, both far past that slice. */
static size_t cache_bytes(void) {
    size_t b = llc_bytes();
    return b < (32u << 20) ? b : (32u << 20);
}

int kp_dev_init(char *err, size_t len) {
    g_flush_bytes = 2 * cache_bytes();
    return 0;
}

static void cpu_model(char *buf, size_t len) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(buf, len, "cpu");
    if (!f) return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ') c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(buf, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

void kp_dev_env(kp_env *e) {
    cpu_model(e->gpu, sizeof e->gpu);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    e->sm_count = n > 0 ? (int)n : 1;
    e->l2_bytes = (int64_t)cache_bytes();
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(e->driver, sizeof e->driver, "%.31s", u.release);
        snprintf(e->host, sizeof e->host, "%.63s", u.nodename);
    }
    snprintf(e->runtime, sizeof e->runtime, "host (C)");
}

/* Resident from the moment it is allocated, as cudaMalloc's memory is
 * counted on a GPU: kp_dev_mem_used reads this process's resident set,
 * and a page first written later would be charged to whichever call's
 * memory reading it falls in. The end-of-window snapshot is first written
 * inside a guarded call, so an honest kernel with 1 GiB of output was
 * judged to have kept 1 GiB. One write a page: the fill or poison that
 * follows would fault the pages in anyway. */
void *kp_dev_alloc(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1)) {
        snprintf(g_err, sizeof g_err, "out of memory (%zu bytes)", bytes);
        return NULL;
    }
    volatile char *c = (volatile char *)p;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < bytes; i += page) c[i] = 0;
    if (bytes) c[bytes - 1] = 0; /* the last page, when p is not page-aligned */
    return p;
}

void kp_dev_free(void *p) { free(p); }
int kp_dev_to_dev(void *dst, const void *src, size_t n) { memcpy(dst, src, n); return 0; }
int kp_dev_to_host(void *dst, const void *src, size_t n) { memcpy(dst, src, n); return 0; }
int kp_dev_from_host(void *dst, const void *src, size_t n) { memcpy(dst, src, n); return 0; }

int kp_dev_fill(void *dst, kp_dtype t, const kp_gen *g, uint64_t seed, uint32_t stream, int64_t n) {
    kp_gen_run(g, seed, stream, 0, n, t == KP_F32 ? (float *)dst : NULL, t == KP_F32 ? NULL : (uint16_t *)dst);
    return 0;
}

int kp_dev_pattern(void *dst, uint32_t pattern, int pattern_bytes, size_t n) {
    unsigned char *d = (unsigned char *)dst;
    unsigned char pat[4];
    for (int i = 0; i < 4; i++) pat[i] = (unsigned char)(pattern >> (8 * i)); /* little-endian */
    size_t head = n < 64 ? n : 64;
    for (size_t i = 0; i < head; i++) d[i] = pat[i % (size_t)pattern_bytes];
    /* 64 is a multiple of every pattern width: copy in doubling blocks. */
    for (size_t done = head; done < n;) {
        size_t k = done <= n - done ? done : n - done;
        memcpy(d + done, d, k);
        done += k;
    }
    return 0;
}

uint64_t kp_dev_checksum(const void *p, size_t n) { return kp_cksum(p, n); }

/* Evicts the caches by reading a buffer twice their size. Reading, not
 * writing: a written buffer leaves dirty lines whose write-back would
 * compete with the timed call for memory bandwidth and blur its time. The
 * buffer is written once, on first use, so its pages exist. */
int kp_dev_flush(void) {
    if (!g_flush) {
        g_flush = (unsigned char *)malloc(g_flush_bytes);
        if (!g_flush) {
            snprintf(g_err, sizeof g_err, "cannot allocate the flush buffer");
            return -1;
        }
        memset(g_flush, 1, g_flush_bytes);
    }
    const uint64_t *p = (const uint64_t *)(const void *)g_flush;
    size_t n = g_flush_bytes / sizeof *p;
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i += 8) acc += p[i]; /* one load per 64-byte line */
    volatile uint64_t sink = acc;
    (void)sink;
    return 0;
}

int kp_dev_sync(void) { return 0; }
void *kp_dev_stream(void) { return NULL; }
int kp_dev_event_start(void) { g_ev0 = kp_now_ns(); return 0; }
int kp_dev_event_stop(void) { g_ev1 = kp_now_ns(); return 0; }
double kp_dev_event_elapsed(void) { return (double)(g_ev1 - g_ev0) * 1e-9; }
/* The host has no queue to hold: its calls run as they are made. */
int kp_dev_block_begin(void) { return 1; }
void kp_dev_block_end(void) {}
int kp_dev_block_state(void) { return 0; }
int kp_dev_check_error(char *text, size_t len) { if (len) text[0] = 0; return 0; }

/* No device: nothing to trace (the threads check covers deferred work). */
int kp_dev_trace_start(char *why, size_t len) {
    snprintf(why, len, "the host backend has no device activity to trace");
    return -1;
}
void kp_dev_trace_load(int loading) { (void)loading; }
void kp_dev_trace_begin(void) {}
void kp_dev_trace_mark(int held) { (void)held; }
void kp_dev_trace_enter(void) {}
void kp_dev_trace_leave(void) {}
void kp_dev_trace_end(void) {}
void kp_dev_trace_event(double event_s) { (void)event_s; }
int kp_dev_trace_account(kp_acct_rep *rep) {
    rep->supported = 0;
    snprintf(rep->error, sizeof rep->error, "the host backend has no device activity to trace");
    return 0;
}

/* The one-input flaw's in-worker reference: what a naive harness computes
 * next to the candidate (float accumulation, as such a harness would).
 * Matmul only; the parent stages every other op's reference itself. */
int kp_dev_reference(const kp_op *op, const kp_shape *s, void *const *bufs, void *out) {
    if (strcmp(op->family, "matmul") != 0) return 1;
    int64_t M = s->d[0], N = s->d[1], K = s->d[2];
    float *acc = (float *)calloc((size_t)N, sizeof(float));
    if (!acc) {
        snprintf(g_err, sizeof g_err, "out of memory");
        return -1;
    }
    for (int64_t i = 0; i < M; i++) {
        memset(acc, 0, (size_t)N * sizeof(float));
        for (int64_t k = 0; k < K; k++) {
            float a = op->dtype == KP_F32 ? ((const float *)bufs[0])[i * K + k]
                                          : kp_bf16_bits_to_f32(((const uint16_t *)bufs[0])[i * K + k]);
            for (int64_t j = 0; j < N; j++) {
                float b = op->dtype == KP_F32 ? ((const float *)bufs[1])[k * N + j]
                                              : kp_bf16_bits_to_f32(((const uint16_t *)bufs[1])[k * N + j]);
                acc[j] += a * b;
            }
        }
        for (int64_t j = 0; j < N; j++) {
            if (op->dtype == KP_F32) ((float *)out)[i * N + j] = acc[j];
            else ((uint16_t *)out)[i * N + j] = kp_f32_to_bf16_bits(acc[j]);
        }
    }
    free(acc);
    return 0;
}

/* Copy bandwidth over a buffer much larger than the cache (bytes read +
 * written), best of a few: the host's speed-of-light for bandwidth. */
int kp_dev_calibrate(kp_calib_rep *rep) {
    size_t bytes = 256u << 20;
    char *a = (char *)malloc(bytes), *b = (char *)malloc(bytes);
    if (!a || !b) {
        free(a);
        free(b);
        snprintf(g_err, sizeof g_err, "out of memory");
        return -1;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double best = 0;
    for (int r = 0; r < 5; r++) {
        uint64_t t0 = kp_now_ns();
        memcpy(r & 1 ? a : b, r & 1 ? b : a, bytes);
        double s = (double)(kp_now_ns() - t0) * 1e-9;
        double gbs = 2.0 * (double)bytes / s * 1e-9;
        if (gbs > best) best = gbs;
    }
    free(a);
    free(b);
    rep->copy_gbs = best;
    snprintf(rep->note, sizeof rep->note, "memcpy of 256 MiB, best of 5; no GEMM peak on the host");
    return 0;
}

int kp_dev_persist_state(void) { return 0; }

int64_t kp_dev_mem_used(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    long size = 0, resident = 0;
    int ok = fscanf(f, "%ld %ld", &size, &resident) == 2;
    fclose(f);
    return ok ? (int64_t)resident * (int64_t)sysconf(_SC_PAGESIZE) : 0;
}
