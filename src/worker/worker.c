/* worker.c: the process that holds one candidate. Same loop for every
 * backend; the device is whatever backend.h implementation is linked in.
 *
 *   kproof-worker-<backend> REQ_FD REP_FD OP CANDIDATE.so
 *
 * It reads the session token from REQ_FD, initialises the device, loads
 * the candidate, says HELLO, then serves requests until QUIT or EOF. It
 * reports raw facts; it never decides a verdict.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "kproof/backends.h"
#include "proto/proto.h"


/* ---- state ----------------------------------------------------------------- */

static int g_req = -1, g_rep = -1;
static uint64_t g_token;
static const kp_op *g_op;
static void *g_fn;
static int g_with_stream;

typedef struct set_bufs {
    void *base[KP_MAX_BUFS]; /* allocation (guards included) */
    void *data[KP_MAX_BUFS]; /* what the candidate gets: base + guard (+ one element when misaligned) */
    size_t bytes[KP_MAX_BUFS];
} set_bufs;

static kp_shape g_shape;
static int g_nsets, g_guards;
static set_bufs g_sets[KP_MAX_SETS];
static uint64_t g_in_cksum[KP_MAX_SETS][KP_MAX_BUFS];
static uint64_t g_canary_cksum; /* kp_cksum of KP_CANARY_BYTES bytes of KP_CANARY_BYTE */
static void *g_snap;            /* end-of-window copy of the output */
static size_t g_snap_bytes;
static int g_snap_set = -1;

/* ---- a caching pool, like the frameworks' allocators -------------------------
 * Freed blocks are kept and handed out again for the same size without being
 * cleared. This is how real harnesses behave (and what the naive one-input
 * flaw relies on); the rigorous protocol defends with poison and canaries. */
#define POOL_MAX 512
static struct { void *p; size_t bytes; int used; } g_pool[POOL_MAX];
static int g_npool;

static void *pool_alloc(size_t bytes) {
    for (int i = 0; i < g_npool; i++)
        if (!g_pool[i].used && g_pool[i].bytes == bytes) {
            g_pool[i].used = 1;
            return g_pool[i].p;
        }
    if (g_npool == POOL_MAX) return NULL;
    void *p = kp_dev_alloc(bytes ? bytes : 1);
    if (!p) return NULL;
    g_pool[g_npool].p = p;
    g_pool[g_npool].bytes = bytes;
    g_pool[g_npool].used = 1;
    g_npool++;
    return p;
}

static void pool_free(void *p) {
    for (int i = 0; i < g_npool; i++)
        if (g_pool[i].p == p) g_pool[i].used = 0;
}

/* Returns every cached block to the device (between shapes). */
static void pool_trim(void) {
    int j = 0;
    for (int i = 0; i < g_npool; i++) {
        if (g_pool[i].used) g_pool[j++] = g_pool[i];
        else kp_dev_free(g_pool[i].p);
    }
    g_npool = j;
}

/* ---- replies -------------------------------------------------------------- */

static uint32_t g_seq;

static void reply(const void *p, size_t n) {
    if (kp_frame_write(g_rep, KP_MSG_OK, g_token, g_seq, p, (uint32_t)n)) _exit(3);
}

static int fail(int code, const char *fmt, ...) {
    kp_fail f;
    memset(&f, 0, sizeof f);
    f.code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f.error, sizeof f.error, fmt, ap);
    va_end(ap);
    if (kp_frame_write(g_rep, KP_MSG_FAIL, g_token, g_seq, &f, sizeof f)) _exit(3);
    return 1;
}

/* Threads of this process plus its child processes: work handed to either
 * outlives the call and escapes the timed window. */
static int count_threads(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        n++;
        char path[96];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/children", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        long pid;
        while (fscanf(f, "%ld", &pid) == 1) n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

/* ---- sets ------------------------------------------------------------------- */

static size_t guard_bytes(void) { return g_guards ? KP_CANARY_BYTES : 0; }

/* Every block has 16 bytes to spare past its data and guards, room to put
 * the data one element off a 16-byte boundary (kp_setup_req.misalign).
 * The room is there whether a set uses it or not: a buffer's blocks keep
 * one size, so the pool hands the same blocks back round after round and
 * a later aligned round sees the pointers of an earlier one. */
#define MISALIGN_ROOM 16
static size_t block_bytes(size_t data_bytes) { return data_bytes + 2 * guard_bytes() + MISALIGN_ROOM; }

/* Where buffer b of set s starts inside its block. */
static size_t data_offset(int s, int b) { return (size_t)((char *)g_sets[s].data[b] - (char *)g_sets[s].base[b]); }

static void free_sets(void) {
    for (int s = 0; s < g_nsets; s++)
        for (int b = 0; b < KP_MAX_BUFS; b++)
            if (g_sets[s].base[b]) pool_free(g_sets[s].base[b]);
    memset(g_sets, 0, sizeof g_sets);
    g_nsets = 0;
    g_snap_set = -1;
}

static int poison_output(int s) {
    int ob = kp_op_output_buf(g_op);
    kp_dtype t = g_op->bufs[ob].dtype;
    if (t == KP_BF16) return kp_dev_pattern(g_sets[s].data[ob], KP_POISON_BF16_BITS, 2, g_sets[s].bytes[ob]);
    return kp_dev_pattern(g_sets[s].data[ob], KP_POISON_F32_BITS, 4, g_sets[s].bytes[ob]);
}

static int do_setup(const kp_setup_req *q) {
    /* Same shape: keep the cached blocks, so the candidate sees the same
     * pointers holding new data (a cache keyed on pointers then fails).
     * New shape: give the old blocks back first. */
    int same = memcmp(&q->shape, &g_shape, sizeof g_shape) == 0;
    free_sets();
    if (!same) pool_trim();
    const kp_op *op = kp_op_find(q->op);
    if (!op || op != g_op) return fail(1, "setup for op '%s' but this worker holds '%s'", q->op, g_op->name);
    if (q->nsets < 1 || q->nsets > KP_MAX_SETS) return fail(1, "bad number of sets %d", q->nsets);
    g_shape = q->shape;
    g_guards = q->guards;
    kp_setup_rep rep;
    memset(&rep, 0, sizeof rep);
    uint64_t t0 = kp_now_ns();
    size_t gb = guard_bytes();
    for (int s = 0; s < q->nsets; s++) {
        g_nsets = s + 1;
        for (int b = 0; b < op->nbufs; b++) {
            size_t es = kp_dtype_size(op->bufs[b].dtype);
            size_t bytes = (size_t)op->buf_elems(&g_shape, b) * es;
            /* The block is 256-byte aligned (cudaMalloc; 64 on the host) and
             * the guards 4 KiB: the data is 16-byte aligned, or one element
             * past that when the set asks for it. */
            size_t off = gb + (((q->misalign[s] >> b) & 1u) ? es : 0);
            void *base = pool_alloc(block_bytes(bytes));
            if (!base) return fail(2, "out of device memory allocating %zu bytes: %s", bytes, kp_dev_error());
            g_sets[s].base[b] = base;
            g_sets[s].data[b] = (char *)base + off;
            g_sets[s].bytes[b] = bytes;
            rep.bytes += (int64_t)block_bytes(bytes);
            if (gb) { /* right before and right after the data */
                if (kp_dev_pattern((char *)base + off - gb, KP_CANARY_BYTE, 1, gb) ||
                    kp_dev_pattern((char *)base + off + bytes, KP_CANARY_BYTE, 1, gb))
                    return fail(2, "canary fill failed: %s", kp_dev_error());
            }
            rep.addr[s][b] = (uint64_t)(uintptr_t)g_sets[s].data[b];
            if (op->bufs[b].output || q->parent_fills) continue;
            kp_gen g = op->gen(&g_shape, b, q->dist);
            if (kp_dev_fill(g_sets[s].data[b], op->bufs[b].dtype, &g, q->seeds[s], (uint32_t)b,
                            op->buf_elems(&g_shape, b)))
                return fail(2, "input generation failed: %s", kp_dev_error());
        }
        if (poison_output(s)) return fail(2, "poison failed: %s", kp_dev_error());
    }
    if (kp_dev_sync()) return fail(2, "device error after setup: %s", kp_dev_error());
    for (int s = 0; s < q->nsets && !q->parent_fills; s++)
        for (int b = 0; b < op->nbufs; b++)
            if (!op->bufs[b].output) {
                g_in_cksum[s][b] = kp_dev_checksum(g_sets[s].data[b], g_sets[s].bytes[b]);
                rep.in_cksum[s][b] = g_in_cksum[s][b];
            }
    int ob = kp_op_output_buf(op);
    if (g_snap && g_snap_bytes != g_sets[0].bytes[ob]) {
        kp_dev_free(g_snap);
        g_snap = NULL;
    }
    if (!g_snap) {
        g_snap_bytes = g_sets[0].bytes[ob];
        g_snap = kp_dev_alloc(g_snap_bytes ? g_snap_bytes : 1);
        if (!g_snap) return fail(2, "out of device memory for the output snapshot");
    }
    rep.snap_addr = (uint64_t)(uintptr_t)g_snap;
    rep.gen_s = (double)(kp_now_ns() - t0) * 1e-9;
    reply(&rep, sizeof rep);
    return 0;
}

/* The inputs kproof wrote into the sets itself: their checksums, which
 * the guards of every RUN compare against. Nothing else: this request's
 * CPU is judged as work (account.c). */
static int do_inputs(const kp_inputs_req *q) {
    memcpy(g_in_cksum, q->in_cksum, sizeof g_in_cksum);
    reply(NULL, 0);
    return 0;
}

/* The Sakana bug, on purpose: the reference lands in memory that is freed
 * and then handed to the candidate as its output. */
static int do_stale(const char *payload, uint32_t len) {
    kp_stale_req q;
    if (len < sizeof q) return fail(1, "short stale request");
    memcpy(&q, payload, sizeof q);
    int ob = kp_op_output_buf(g_op);
    if (q.set < 0 || q.set >= g_nsets || len != sizeof q + q.bytes) return fail(1, "bad stale request");
    /* bytes 0: no reference from the parent; this process computes one. */
    int here = q.bytes == 0 && g_sets[q.set].bytes[ob] > 0;
    if (!here && (size_t)q.bytes != g_sets[q.set].bytes[ob]) return fail(1, "bad stale request");
    size_t total = block_bytes(g_sets[q.set].bytes[ob]), off = data_offset(q.set, ob);
    void *old = g_sets[q.set].base[ob];
    pool_free(old);
    void *tmp = pool_alloc(total);
    if (!tmp) {
        pool_alloc(total); /* takes `old` back: the set keeps its output */
        return fail(2, "out of memory");
    }
    int rc = 0;
    char why[200] = "";
    if (here) {
        void *bufs[KP_MAX_BUFS];
        for (int b = 0; b < g_op->nbufs; b++) bufs[b] = g_sets[q.set].data[b];
        rc = kp_dev_reference(g_op, &g_shape, bufs, (char *)tmp + off);
        if (rc)
            snprintf(why, sizeof why, "no in-worker reference for %s: %s", g_op->name,
                     rc > 0 ? "not offered for this op" : kp_dev_error());
    } else if (kp_dev_from_host((char *)tmp + off, payload + sizeof q, (size_t)q.bytes)) {
        rc = -1;
        snprintf(why, sizeof why, "upload failed: %s", kp_dev_error());
    }
    if (rc) { /* the output block goes back to the set, nothing leaks */
        pool_free(tmp);
        void *back = pool_alloc(total);
        g_sets[q.set].base[ob] = back;
        g_sets[q.set].data[ob] = back ? (char *)back + off : NULL;
        return fail(rc > 0 ? 1 : 2, "%s", why);
    }
    pool_free(tmp);
    void *out = pool_alloc(total);
    g_sets[q.set].base[ob] = out;
    g_sets[q.set].data[ob] = (char *)out + off;
    reply(NULL, 0);
    return 0;
}

static int g_block_ok = 1; /* the stream blocker may be used */

/* Waits up to max_ms for the thread count to fall to `target`; returns the
 * count it last saw. */
static int threads_down_to(int target, int max_ms) {
    int n = count_threads();
    for (int i = 0; i < max_ms && n > target; i++) {
        usleep(1000);
        n = count_threads();
    }
    return n;
}

/* This thread's CPU, in ns. Not the process's: with a CPU-time limit set
 * (the sandbox's RLIMIT_CPU) the kernel keeps the process's total at its
 * ticks and context switches, so a running thread reads it milliseconds
 * stale. */
static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)) return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int call_candidate(int s) {
    void *bufs[KP_MAX_BUFS];
    for (int b = 0; b < g_op->nbufs; b++) bufs[b] = g_sets[s].data[b];
    return g_op->invoke(g_fn, bufs, &g_shape, kp_dev_stream(), g_with_stream);
}

static int guard_ok(const void *p) { return kp_dev_checksum(p, KP_CANARY_BYTES) == g_canary_cksum; }

static int do_run(const kp_run_req *q) {
    if (q->set < 0 || q->set >= g_nsets) return fail(1, "bad set %d", q->set);
    int s = q->set, ob = kp_op_output_buf(g_op);
    kp_run_rep r;
    memset(&r, 0, sizeof r);
    if (q->flags & KP_RUN_POISON) {
        if (poison_output(s)) return fail(2, "poison failed: %s", kp_dev_error());
    }
    if (q->flags & KP_RUN_FLUSH) {
        int64_t fc0 = thread_cpu_ns();
        uint64_t f0 = kp_now_ns();
        if (kp_dev_flush()) return fail(2, "flush failed: %s", kp_dev_error());
        r.flush_s = (double)(kp_now_ns() - f0) * 1e-9;
        r.flush_cpu_s = (double)(thread_cpu_ns() - fc0) * 1e-9;
    }
    if (kp_dev_sync()) return fail(2, "device error before the call: %s", kp_dev_error());
    r.threads_before = (q->flags & KP_RUN_THREADS) ? count_threads() : 0;
    int64_t mem0 = (q->flags & KP_RUN_GUARDS) ? kp_dev_mem_used() : 0;
    /* Only the naive launch flaw (no snapshot) waits for deferred work. */
    int threads0 = (q->flags & KP_RUN_SNAPSHOT) ? 0 : count_threads();

    /* A worker whose candidate once waited on the device inside its call
     * (the hold timed out) is not held again. */
    kp_dev_trace_begin();
    int held = (q->flags & KP_RUN_BLOCK) && g_block_ok && kp_dev_block_begin() == 0;
    kp_dev_trace_mark(held);

    /* ---- the timed window ---- */
    int64_t c0 = thread_cpu_ns();
    uint64_t h0 = kp_now_ns();
    kp_dev_event_start();
    kp_dev_trace_enter();
    uint64_t hc = kp_now_ns(); /* the enqueue time is the candidate's call alone */
    r.rc = call_candidate(s);
    uint64_t he = kp_now_ns();
    kp_dev_trace_leave();
    kp_dev_event_stop();
    r.event_cpu_s = (double)(thread_cpu_ns() - c0) * 1e-9;
    kp_dev_trace_end();
    if (held) kp_dev_block_end();
    if (q->flags & KP_RUN_SYNC) r.dev_error = kp_dev_sync();
    uint64_t h1 = kp_now_ns();
    if (q->flags & KP_RUN_SNAPSHOT) {
        kp_dev_to_dev(g_snap, g_sets[s].data[ob], g_sets[s].bytes[ob]);
        g_snap_set = s;
    } else {
        g_snap_set = -1;
    }
    /* ---- end of window ---- */

    if (q->flags & KP_RUN_THREADS) r.threads_after = count_threads();
    if (q->flags & KP_RUN_SETTLE) {
        /* A thread the call started and that is still running: a library's
         * pool stays, work deferred past the return ends soon. */
        r.threads_settled =
            r.threads_after > r.threads_before ? threads_down_to(r.threads_before, 200) : r.threads_after;
    }
    if (!(q->flags & KP_RUN_SNAPSHOT)) {
        /* No end-of-window copy (the naive launch flaw): like harnesses that
         * check the output "later", let deferred host work finish first. */
        threads_down_to(threads0, 1000);
    }
    if (!(q->flags & KP_RUN_SYNC)) r.dev_error = kp_dev_sync();
    if (!r.dev_error) r.dev_error = kp_dev_check_error(r.dev_error_text, sizeof r.dev_error_text);
    else snprintf(r.dev_error_text, sizeof r.dev_error_text, "%s", kp_dev_error());
    r.event_s = kp_dev_event_elapsed();
    kp_dev_trace_event(r.event_s);
    r.host_s = (double)(h1 - h0) * 1e-9;
    r.enqueue_s = (double)(he - hc) * 1e-9;
    if (held) {
        r.blocked = kp_dev_block_state() == 1 ? 1 : 2;
        if (r.blocked == 2) g_block_ok = 0;
    }
    if ((q->flags & KP_RUN_GUARDS) && !r.dev_error) {
        r.persist = kp_dev_persist_state();
        r.mem_grown = kp_dev_mem_used() - mem0;
        for (int b = 0; b < g_op->nbufs; b++) {
            if (g_guards && (!guard_ok((char *)g_sets[s].data[b] - KP_CANARY_BYTES) ||
                             !guard_ok((char *)g_sets[s].data[b] + g_sets[s].bytes[b])))
                r.canary_bad |= 1 << b;
            if (!g_op->bufs[b].output && kp_dev_checksum(g_sets[s].data[b], g_sets[s].bytes[b]) != g_in_cksum[s][b])
                r.inputs_changed |= 1 << b;
        }
    }
    reply(&r, sizeof r);
    return 0;
}

/* Host memory fetched bytes are staged in, kept from one fetch to the
 * next: a fresh block per fetch faults its pages in during the copy from
 * the device, every time (16K pages for a 64 MiB output). */
static char *g_stage;
static size_t g_stage_cap;

static char *stage(size_t bytes) {
    if (bytes > g_stage_cap) {
        free(g_stage);
        g_stage = (char *)malloc(bytes ? bytes : 1);
        g_stage_cap = g_stage ? bytes : 0;
    }
    return g_stage;
}

static int do_fetch(const kp_fetch_req *q) {
    if (q->set < 0 || q->set >= g_nsets || q->buf < 0 || q->buf >= g_op->nbufs) return fail(1, "bad fetch");
    size_t bytes = g_sets[q->set].bytes[q->buf];
    if (q->offset < 0 || q->bytes < 0 || (size_t)(q->offset + q->bytes) > bytes || q->bytes > (int64_t)KP_FRAME_MAX)
        return fail(1, "bad fetch range");
    const char *src = (const char *)g_sets[q->set].data[q->buf];
    if (q->buf == kp_op_output_buf(g_op) && g_snap_set == q->set) src = (const char *)g_snap;
    void *tmp = stage((size_t)q->bytes);
    if (!tmp) return fail(2, "out of host memory");
    if (kp_dev_to_host(tmp, src + q->offset, (size_t)q->bytes)) return fail(2, "copy failed: %s", kp_dev_error());
    reply(tmp, (size_t)q->bytes);
    return 0;
}

static int do_fetchv(const kp_fetchv_req *q) {
    if (q->set < 0 || q->set >= g_nsets || q->buf < 0 || q->buf >= g_op->nbufs || q->n < 1 || q->n > KP_FETCHV_MAX ||
        q->bytes < 0 || q->bytes > (int64_t)KP_FRAME_MAX / q->n)
        return fail(1, "bad fetch");
    size_t bytes = g_sets[q->set].bytes[q->buf];
    for (int i = 0; i < q->n; i++)
        if (q->offset[i] < 0 || (size_t)(q->offset[i] + q->bytes) > bytes) return fail(1, "bad fetch range");
    const char *src = (const char *)g_sets[q->set].data[q->buf];
    if (q->buf == kp_op_output_buf(g_op) && g_snap_set == q->set) src = (const char *)g_snap;
    size_t total = (size_t)q->n * (size_t)q->bytes;
    char *tmp = stage(total);
    if (!tmp) return fail(2, "out of host memory");
    for (int i = 0; i < q->n; i++)
        if (kp_dev_to_host(tmp + (size_t)i * (size_t)q->bytes, src + q->offset[i], (size_t)q->bytes))
            return fail(2, "copy failed: %s", kp_dev_error());
    reply(tmp, total);
    return 0;
}

/* n calls, each on a freshly poisoned output as in timed calls, so a
 * candidate cannot tell the parent's clock is watching by looking at its
 * output; call = 0 runs the same poisoning without the call, so the parent
 * can subtract it. With rotate, call i takes set `set + i % rotate`: the
 * parent sets up inputs the candidate has never seen for the batch, so its
 * first `rotate` calls cannot be served from a cache. No flush: a flush costs far more
 * than most calls, and subtracting it would leave mostly noise; warm calls
 * are at most as slow as cold ones, so the floor stays a floor. */
static int do_batch(const kp_batch_req *q) {
    const int rot = q->rotate > 1 ? q->rotate : 1;
    if (q->set < 0 || q->n < 1 || rot > g_nsets || q->set > g_nsets - rot) return fail(1, "bad batch");
    kp_batch_rep r;
    memset(&r, 0, sizeof r);
    g_snap_set = -1; /* a FETCH after the batch reads the last call's output */
    kp_dev_sync();
    uint64_t h0 = kp_now_ns();
    for (int i = 0; i < q->n; i++) {
        const int set = q->set + i % rot;
        poison_output(set);
        kp_dev_sync();
        /* The same marks in both kinds of batch: the parent subtracts them. */
        kp_dev_trace_begin();
        kp_dev_trace_mark(0);
        kp_dev_trace_enter();
        if (q->call) {
            int rc = call_candidate(set);
            if (rc) r.rc = rc;
        }
        kp_dev_trace_leave();
        kp_dev_trace_end();
    }
    kp_dev_sync();
    r.host_s = (double)(kp_now_ns() - h0) * 1e-9;
    reply(&r, sizeof r);
    return 0;
}

static int do_account(void) {
    kp_acct_rep *r = (kp_acct_rep *)calloc(1, sizeof *r);
    if (!r) return fail(2, "out of host memory");
    if (kp_dev_trace_account(r)) {
        free(r);
        return fail(2, "device error while accounting: %s", kp_dev_error());
    }
    reply(r, sizeof *r);
    free(r);
    return 0;
}

/* ---- main ------------------------------------------------------------------ */

static int g_traced;
static char g_trace_why[200];

static void hello(int status, const char *fmt, ...) {
    kp_hello h;
    memset(&h, 0, sizeof h);
    h.status = status;
    h.traced = g_traced;
    snprintf(h.trace_error, sizeof h.trace_error, "%s", g_trace_why);
    h.pid = (int32_t)getpid();
    h.threads = count_threads();
    h.with_stream = g_with_stream;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(h.error, sizeof h.error, fmt, ap);
        va_end(ap);
    }
    kp_frame_write(g_rep, KP_MSG_HELLO, g_token, 0, &h, sizeof h);
}

static int parse_fd(const char *s) {
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!end || *end || v < 0 || v > 65535) return -1;
    return (int)v;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "kproof worker: started by kproof, not by hand\n");
        return 2;
    }
    g_req = parse_fd(argv[1]);
    g_rep = parse_fd(argv[2]);
    if (g_req < 0 || g_rep < 0 || kp_read_full(g_req, &g_token, sizeof g_token)) return 2;
    struct rlimit rl = {0, 0};
    setrlimit(RLIMIT_CORE, &rl);

    unsigned char canary[KP_CANARY_BYTES];
    memset(canary, KP_CANARY_BYTE, sizeof canary);
    g_canary_cksum = kp_cksum(canary, sizeof canary);

    g_with_stream = kp_backend_get(kp_dev_kind)->stream_arg;
    g_op = kp_op_find(argv[3]);
    if (!g_op) {
        hello(KP_LOAD_OP, "unknown op '%s'", argv[3]);
        return 2;
    }
    char err[512] = "";
    if (kp_dev_init(err, sizeof err)) {
        hello(KP_LOAD_DEVICE, "%s", err);
        return 2;
    }
    /* The tracer starts before the candidate loads, so work it does at
     * load is seen too; the parent turns it off only when told to time
     * unaudited. */
    const char *untraced = getenv("KPROOF_WORKER_UNTRACED");
    if (untraced && untraced[0] == '1') snprintf(g_trace_why, sizeof g_trace_why, "tracing switched off (--unaudited)");
    else g_traced = kp_dev_trace_start(g_trace_why, sizeof g_trace_why) == 0;
    unsetenv("KPROOF_WORKER_UNTRACED");
    kp_dev_trace_load(1);
    void *so = dlopen(argv[4], RTLD_NOW | RTLD_LOCAL);
    kp_dev_trace_load(0);
    if (!so) {
        hello(KP_LOAD_DLOPEN, "%s", dlerror());
        return 2;
    }
    g_fn = dlsym(so, g_op->entry);
    if (!g_fn) {
        hello(KP_LOAD_NOSYM, "the candidate does not define %s (expected: %s)", g_op->entry, g_op->proto);
        return 2;
    }
    hello(KP_LOAD_OK, NULL);

    char *payload = NULL;
    size_t cap = 0;
    for (;;) {
        kp_frame_hdr h;
        if (kp_read_full(g_req, &h, sizeof h)) break;
        if (h.magic != KP_FRAME_MAGIC || h.token != g_token || h.len > KP_FRAME_MAX) break;
        if (h.len + 1 > cap) {
            free(payload);
            cap = h.len + 1;
            payload = (char *)malloc(cap);
            if (!payload) break;
        }
        if (h.len && kp_read_full(g_req, payload, h.len)) break;
        if (kp_fnv1a(payload, h.len) != h.cksum) break;
        g_seq = h.seq;
#define NEED(T) \
    if (h.len != sizeof(T)) { fail(1, "bad request size"); continue; }
        switch (h.type) {
        case KP_MSG_SETUP: NEED(kp_setup_req) do_setup((const kp_setup_req *)(void *)payload); break;
        case KP_MSG_STALE: do_stale(payload, h.len); break;
        case KP_MSG_RUN: NEED(kp_run_req) do_run((const kp_run_req *)(void *)payload); break;
        case KP_MSG_FETCH: NEED(kp_fetch_req) do_fetch((const kp_fetch_req *)(void *)payload); break;
        case KP_MSG_FETCHV: NEED(kp_fetchv_req) do_fetchv((const kp_fetchv_req *)(void *)payload); break;
        case KP_MSG_INPUTS: NEED(kp_inputs_req) do_inputs((const kp_inputs_req *)(void *)payload); break;
        case KP_MSG_BATCH: NEED(kp_batch_req) do_batch((const kp_batch_req *)(void *)payload); break;
        case KP_MSG_ACCOUNT: do_account(); break;
        case KP_MSG_PING: reply(NULL, 0); break;
        case KP_MSG_ENV: {
            kp_env e;
            memset(&e, 0, sizeof e);
            kp_dev_env(&e);
            reply(&e, sizeof e);
            break;
        }
        case KP_MSG_CALIBRATE: {
            kp_calib_rep c;
            memset(&c, 0, sizeof c);
            if (kp_dev_calibrate(&c)) fail(2, "calibration failed: %s", kp_dev_error());
            else reply(&c, sizeof c);
            break;
        }
        case KP_MSG_QUIT: free(payload); return 0;
        default: fail(1, "unknown request %u", h.type);
        }
#undef NEED
    }
    free(payload);
    return 0;
}
