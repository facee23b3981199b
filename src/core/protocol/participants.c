/* participants.c: a participant (the candidate or a baseline) and its
 * worker: starting and stopping it, setting up its input sets (and proving
 * the device generated the parent's inputs), one call and the findings of
 * its report, reading outputs back, what a worker's failure means for the
 * shape, and building the participant. Part of the protocol (eval.c tells
 * the story). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/protocol/protocol_priv.h"
#include "kproof/backends.h"

/* ---- talking to a participant's worker ------------------------------------------- */

static const char *buf_name(const kp_op *op, int b) { return op->bufs[b].name; }

/* Maps a worker error to a verdict on the shape. Returns 1 (decided). */
int kpp_worker_failed(ctx *c, part *p, kp_shape_result *sr, int rc, const char *what, const char *err) {
    int64_t total = 0;
    const char *log = p->w ? kp_wk_log(p->w, &total) : "";
    char tail[160] = "";
    if (total > 0) {
        const char *t = log + strlen(log);
        int n = 0;
        while (t > log && n < 120) t--, n++;
        snprintf(tail, sizeof tail, "; its last output: \"%s\"", t);
        for (char *q = tail; *q; q++)
            if (*q == '\n' || *q == '\r') *q = ' ';
    }
    if (rc == KP_WK_TIMEOUT) return kpp_decide(sr, KP_ERROR, "timeout", "%s: %s%s", what, err, tail);
    if (rc == KP_WK_FLOOD) return kpp_decide(sr, KP_ERROR, "output", "%s: %s%s", what, err, tail);
    if (rc == KP_WK_DIED) return kpp_decide(sr, KP_ERROR, "crash", "%s: %s%s", what, err, tail);
    if (rc == KP_WK_FRAME) return kpp_decide(sr, KP_REJECTED, "frame", "%s: %s", what, err);
    if (rc == KP_WK_FAIL) return kpp_decide(sr, KP_ERROR, "device", "%s: %s", what, err);
    return kpp_decide(sr, KP_ERROR, "harness", "%s: %s", what, err);
}

int kpp_part_start(ctx *c, part *p, char *err, size_t len) {
    kp_wk_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.backend = c->o->backend;
    wo.op = c->op->name;
    wo.so_path = p->so;
    wo.start_timeout_s = c->o->timeout_s > 30 ? c->o->timeout_s : 30;
    wo.check_token = GUARD(c, KPP_G_TOKEN);
    wo.mem_limit = kp_backend_get(c->o->backend)->worker_mem_limit;
    wo.untraced = c->o->unaudited;
    int rc = kp_wk_start(&wo, &p->w, &p->hello, err, len);
    if (rc == KP_WK_OK && p->hello.status != KP_LOAD_OK) {
        snprintf(err, len, "%s", p->hello.error);
        rc = p->hello.status == KP_LOAD_DEVICE ? KP_WK_SYS : 100 + p->hello.status;
    }
    p->alive = rc == KP_WK_OK;
    /* The host worker's CPU is accounted from outside (account.c); where
     * the kernel does not give the numbers, the report says so. */
    if (p->alive && !kp_backend_get(c->o->backend)->has_tracer && kp_wk_cpu_start(p->w))
        kp_result_warn(c->r, "the CPU of %s's worker cannot be read from outside it on this machine: work it does "
                       "outside its calls is not accounted", p->name);
    /* Inputs written and outputs read by kproof itself wherever it can
     * reach the worker's memory (the host, with the account on). It reads
     * once a reply says the worker is done with a request, so only where
     * replies are proven the worker's (the session token): a forged early
     * reply would have it read an output still being written. */
    p->direct = p->alive && !kp_backend_get(c->o->backend)->has_tracer && GUARD(c, KPP_G_ACCOUNT) &&
                GUARD(c, KPP_G_TOKEN) && kp_wk_cpu_get(p->w, 0).on;
    p->snap_set = -1;
    p->mem_reached = 0;
    p->threads_ref = kp_backend_get(c->o->backend)->threads_at_hello ? p->hello.threads : -1;
    p->mem_kept = 0;
    return rc;
}

void kpp_part_stop(part *p) {
    if (p->w) kp_wk_stop(p->w);
    p->w = NULL;
    p->alive = 0;
    free(p->t);
    free(p->th);
    free(p->ov);
    free(p->ovf);
    free(p->ovc);
    free(p->ovfc);
    free(p->waited);
    free(p->callc);
    p->t = p->th = p->ov = p->ovf = p->ovc = p->ovfc = p->waited = p->callc = NULL;
    p->n = p->cap = 0;
}

static int lazy_input_probe(ctx *c, part *p, const kp_shape *sh, const iset *s, int set, int buf, kp_shape_result *sr);

/* The worker's inputs are not the parent's (at element `at`, or -1 for a
 * whole-buffer checksum). */
static int generator_mismatch(ctx *c, kp_shape_result *sr, int buf, int set, int64_t at) {
    char where[48] = "";
    if (at >= 0) snprintf(where, sizeof where, ", elements %lld..", (long long)at);
    return kpp_decide(sr, KP_ERROR, "generator",
                      "the worker's %s inputs differ from the parent's (buffer %s of set %d%s): the device generator and "
                      "the CPU generator disagree, or the candidate changed memory while it was loaded",
                      kp_backend_name(c->o->backend), c->op->bufs[buf].name, set, where);
}

/* A failed kp_wk_mem on a participant's worker (after kproof reached it
 * once), as a verdict. */
static int mem_failed(ctx *c, part *p, kp_shape_result *sr, int e, const char *what) {
    if (e == ESRCH) { /* a request says how it ended */
        char err[300];
        int rc = kp_wk_call(p->w, KP_MSG_PING, NULL, 0, NULL, 0, NULL, 0, NULL, 5, err, sizeof err);
        p->alive = 0;
        return kpp_worker_failed(c, p, sr, rc ? rc : KP_WK_DIED, what, rc ? err : "the worker process is gone");
    }
    if (e == EFAULT)
        return kpp_decide(sr, KP_REJECTED, "memory",
                          "%s: the worker's buffers were not mapped where its SETUP put them: the harness's memory "
                          "was unmapped or moved, which only code running in the worker can do",
                          what);
    if ((e == EPERM || e == EACCES) && !kp_wk_mem_assured())
        return kpp_decide(sr, KP_REJECTED, "memory",
                          "%s: kproof reached the worker's memory before and is refused it now: the worker made "
                          "itself unreachable (a process that is not dumpable), which only code running in it can do",
                          what);
    return kpp_decide(sr, KP_ERROR, "harness", "%s in the worker's memory: %s", what, strerror(e));
}

/* Direct setup (host): kproof writes every input into the worker's memory
 * itself, from its own generator, and hands the worker their checksums.
 * Between the inputs landing and the first call the worker serves no
 * request but that one light one (account.c judges its CPU); the calls'
 * own requests are bounded by the parent's clock (timing.c). Returns 0,
 * 1 (decided), or -1 when the machine refuses kproof the worker's memory
 * (the caller falls back). */
static int direct_fill(ctx *c, part *p, const kp_shape *sh, int dist, iset *sets, int nsets, const kp_setup_rep *rep,
                       kp_shape_result *sr) {
    memcpy(p->addr, rep->addr, sizeof p->addr);
    p->snap_addr = rep->snap_addr;
    p->snap_set = -1;
    kp_inputs_req *in = (kp_inputs_req *)calloc(1, sizeof *in);
    const int64_t chunk = (int64_t)1 << 20; /* elements: an even count, so every chunk starts on a 4-byte word */
    char *stage = (char *)malloc((size_t)chunk * 4);
    if (!in || !stage) {
        free(in);
        free(stage);
        return kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
    }
    int bad = 0;
    for (int i = 0; i < nsets && !bad; i++)
        for (int b = 0; b < c->op->nbufs && !bad; b++) {
            if (c->op->bufs[b].output) continue;
            const int64_t n = c->op->buf_elems(sh, b);
            const size_t es = kp_dtype_size(c->op->bufs[b].dtype);
            int e = 0;
            if (!sets[i].lazy && sets[i].in[b]) {
                e = kp_wk_mem(p->w, 1, p->addr[i][b], sets[i].in[b], (size_t)n * es);
                in->in_cksum[i][b] = sets[i].cksum[b];
            } else {
                uint64_t sum = 0;
                for (int64_t at = 0; at < n && !e; at += chunk) {
                    const int64_t len = n - at < chunk ? n - at : chunk;
                    kp_gen_fill(c->op, sh, sets[i].lazy ? sets[i].dist : dist, b, sets[i].seed, stage, at, len);
                    e = kp_wk_mem(p->w, 1, p->addr[i][b] + (uint64_t)at * es, stage, (size_t)len * es);
                    sum += kp_cksum_at(stage, (size_t)len * es, (uint64_t)at * es / 4);
                }
                in->in_cksum[i][b] = sum;
            }
            if (!e) p->mem_reached = 1;
            /* Refused before kproof ever reached this worker: the machine's
             * policy, or a worker not dumpable from load. */
            if (e && !p->mem_reached && (e == EPERM || e == ENOSYS || e == EACCES)) {
                if (kp_wk_mem_assured() || e == ENOSYS) bad = -1;
                else /* the candidate's constructor could have made the worker not dumpable */
                    bad = kpp_decide(sr, KP_ERROR, "sandbox",
                                     "kproof cannot reach %s's worker's memory (%s), and where the worker has no user "
                                     "namespace and kproof no CAP_SYS_PTRACE the worker itself can refuse it (a "
                                     "process that is not dumpable): judge it with the sandbox complete",
                                     p->name, strerror(e));
            } else if (e) bad = mem_failed(c, p, sr, e, "writing the inputs");
        }
    free(stage);
    if (!bad) {
        char err[300];
        int rc = kp_wk_call(p->w, KP_MSG_INPUTS, in, sizeof *in, NULL, 0, NULL, 0, NULL, c->o->timeout_s, err,
                            sizeof err);
        if (rc) {
            p->alive = 0;
            bad = kpp_worker_failed(c, p, sr, rc, "handing over the inputs", err);
        }
    }
    free(in);
    return bad;
}

/* misalign: per set, the buffers the worker puts one element past a
 * 16-byte boundary (kp_setup_req), or NULL for none. */
static int part_setup(ctx *c, part *p, const kp_shape *sh, int dist, iset *sets, int nsets, int guards,
                      const uint32_t *misalign, kp_shape_result *sr) {
    kp_setup_req q;
    memset(&q, 0, sizeof q);
    snprintf(q.op, sizeof q.op, "%s", c->op->name);
    q.shape = *sh;
    q.dist = dist;
    q.nsets = nsets;
    q.guards = guards;
    for (int i = 0; i < nsets; i++) q.seeds[i] = sets[i].seed;
    for (int i = 0; misalign && i < nsets; i++) q.misalign[i] = misalign[i];
    kp_setup_rep rep;
    char err[300];
    size_t got = 0;
again:
    q.parent_fills = p->direct;
    /* Where kproof writes the inputs, the worker gets no seed: the
     * generator is public (gen.h), and a seed in the worker's hands would
     * let a hooked call rebuild the inputs and work on them while SETUP is
     * served, before any clock. */
    for (int i = 0; i < nsets; i++) q.seeds[i] = p->direct ? 0 : sets[i].seed;
    memset(&rep, 0, sizeof rep);
    int rc = kp_wk_call(p->w, KP_MSG_SETUP, &q, sizeof q, NULL, 0, &rep, sizeof rep, &got, c->o->timeout_s + 60, err,
                        sizeof err);
    if (rc) return kpp_worker_failed(c, p, sr, rc, "setting up inputs", err);
    if (got != sizeof rep) return kpp_decide(sr, KP_REJECTED, "frame", "a SETUP reply of the wrong size on the result channel");
    p->held_sets = nsets;
    p->held_shape = *sh;
    p->snap_set = -1;
    if (p->direct) {
        int bad = direct_fill(c, p, sh, dist, sets, nsets, &rep, sr);
        if (bad >= 0) return bad; /* the checksums are kproof's own */
        p->direct = 0;
        kp_result_warn(c->r, "kproof cannot write into %s's worker's memory on this machine (process_vm_writev "
                       "refused by its ptrace policy): its inputs are generated and its outputs read back by the "
                       "worker's own code, which a candidate can hook", p->name);
        goto again;
    }
    /* The device must have generated exactly the inputs the parent holds:
     * whole checksums, or for lazy sets a chunk of every input at an
     * offset drawn now, compared bit for bit with the CPU's. */
    for (int i = 0; i < nsets; i++)
        for (int b = 0; b < c->op->nbufs; b++) {
            if (c->op->bufs[b].output) continue;
            if (sets[i].lazy) {
                int bad = lazy_input_probe(c, p, sh, &sets[i], i, b, sr);
                if (bad) return bad;
                continue;
            }
            if (rep.in_cksum[i][b] != sets[i].cksum[b]) return generator_mismatch(c, sr, b, i, -1);
        }
    return 0;
}

/* The same, its seconds charged to setting up. */
int kpp_part_setup(ctx *c, part *p, const kp_shape *sh, int dist, iset *sets, int nsets, int guards,
                   const uint32_t *misalign, kp_shape_result *sr) {
    int was = kpp_work(c, KP_WORK_SETUP);
    int rc = part_setup(c, p, sh, dist, sets, nsets, guards, misalign, sr);
    kpp_work(c, was);
    return rc;
}

int kpp_part_run(ctx *c, part *p, int set, int flags, run_out *out, kp_shape_result *sr) {
    /* The first counted call on cuda also waits for its threads to settle
     * (judge_run says why). */
    if ((flags & KP_RUN_THREADS) && p->threads_ref < 0) flags |= KP_RUN_SETTLE;
    kp_run_req q = {set, flags};
    char err[300];
    size_t got = 0;
    memset(out, 0, sizeof *out);
    int was = kpp_work(c, KP_WORK_CALLS);
    int rc = kp_wk_call(p->w, KP_MSG_RUN, &q, sizeof q, NULL, 0, &out->rep, sizeof out->rep, &got,
                        c->o->timeout_s, err, sizeof err);
    kpp_work(c, was);
    out->wall = kp_wk_last_wall(p->w);
    out->cpu = kp_wk_last_cpu(p->w);
    out->main_cpu = kp_wk_last_main_cpu(p->w);
    p->snap_set = (flags & KP_RUN_SNAPSHOT) ? set : -1;
    if (rc) {
        p->alive = 0;
        return kpp_worker_failed(c, p, sr, rc, "calling the candidate", err);
    }
    return 0;
}

/* Findings from one call's report (rigorous guards). */
int kpp_judge_run(ctx *c, part *p, const run_out *ro, int flags, kp_shape_result *sr) {
    const kp_run_rep *r = &ro->rep;
    if (r->dev_error)
        return kpp_decide(sr, KP_ERROR, "device", "the device reported an error after the call: %s", r->dev_error_text);
    if (r->rc) return kpp_decide(sr, KP_ERROR, "rc", "the entry point %s returned %d (non-zero means failure)", c->op->entry,
                                 r->rc);
    if (flags & KP_RUN_GUARDS) {
        for (int b = 0; b < c->op->nbufs; b++) {
            if (r->canary_bad & (1 << b))
                return kpp_decide(sr, KP_REJECTED, "canary",
                                  "wrote outside its buffers: the guard bytes around %s changed during the call",
                                  buf_name(c->op, b));
            if (r->inputs_changed & (1 << b))
                return kpp_decide(sr, KP_REJECTED, "inputs",
                                  "modified its input %s (its checksum changed during the call); inputs are read-only",
                                  buf_name(c->op, b));
        }
    }
    if (flags & KP_RUN_THREADS) {
        /* Against the count before this call, and on the host also against
         * the count the worker had when it loaded the candidate (a thread
         * started by an earlier call). The cuda runtime starts its own
         * threads at initialisation, before HELLO. */
        int ref = r->threads_before;
        if (p->threads_ref < 0) {
            /* cuda: the first counted call sets the reference, since a
             * library may start a thread pool on first use. A pool stays;
             * a thread that ends within the worker's wait after the return
             * was work left running past it. */
            if (r->threads_after > r->threads_before && r->threads_settled < r->threads_after)
                return kpp_decide(sr, KP_REJECTED, "threads",
                                  "left %d thread(s) running after the call returned that ended soon after (%d before, "
                                  "%d after, %d when they ended): work deferred to a host thread is not timed",
                                  r->threads_after - r->threads_settled, r->threads_before, r->threads_after,
                                  r->threads_settled);
            p->threads_ref = r->threads_settled;
            ref = r->threads_settled;
        }
        if (p->threads_ref < ref) ref = p->threads_ref;
        if (r->threads_after > ref)
            return kpp_decide(sr, KP_REJECTED, "threads",
                              "left %d more thread(s) or child process(es) running after the call returned (%d "
                              "before, %d after): work deferred to a host thread is not timed",
                              r->threads_after - ref, ref, r->threads_after);
    }
    if (flags & KP_RUN_GUARDS) {
        if (r->persist && GUARD(c, KPP_G_PERSIST)) /* part of the cold-cache defense */
            return kpp_decide(sr, KP_REJECTED, "persist",
                              "left L2 persistence set up (a persisting-L2 limit or an access-policy window): data "
                              "pinned in L2 survives the cache flush, so the next timed call is not cold");
        /* Summed over the worker's calls: a leak of a little per call adds
         * up, and a first call's one-off workspace stays within budget.
         * (Each call's growth is taken under the device lock, so another
         * kproof worker's allocations do not count.) */
        p->mem_kept += r->mem_grown;
        if (p->mem_kept > ((int64_t)1 << 30))
            return kpp_decide(sr, KP_ERROR, "memory",
                              "kept %.2f GiB of memory after its calls returned (%.2f GiB in this one): a candidate "
                              "may use scratch memory, up to 1 GiB, not hoard the device",
                              (double)p->mem_kept / (1 << 30), (double)r->mem_grown / (1 << 30));
    }
    return 0;
}

/* Where kproof reads buffer `buf` of set `set` in a direct worker: the
 * snapshot when the last call on that set took one. */
static uint64_t direct_addr(ctx *c, const part *p, int set, int buf) {
    if (buf == kp_op_output_buf(c->op) && p->snap_set == set) return p->snap_addr;
    return p->addr[set][buf];
}

static int fetch(ctx *c, part *p, int set, int buf, int64_t off, int64_t bytes, void *dst, kp_shape_result *sr) {
    if (p->direct) {
        const int64_t size = set >= 0 && set < p->held_sets && buf >= 0 && buf < c->op->nbufs
                                 ? c->op->buf_elems(&p->held_shape, buf) * (int64_t)kp_dtype_size(c->op->bufs[buf].dtype)
                                 : -1;
        if (size < 0 || off < 0 || bytes < 0 || off + bytes > size)
            return kpp_decide(sr, KP_ERROR, "harness", "a read of buffer %d of set %d outside what the worker holds",
                              buf, set);
        /* The address is the worker's report: one it made 0 is unmapped
         * memory like any other (EFAULT), not kproof's mistake. */
        const uint64_t at = direct_addr(c, p, set, buf);
        int e = at ? kp_wk_mem(p->w, 0, at + (uint64_t)off, dst, (size_t)bytes) : EFAULT;
        if (!e) p->mem_reached = 1;
        return e ? mem_failed(c, p, sr, e, "reading the output") : 0;
    }
    char err[300];
    int64_t done = 0;
    while (done < bytes) {
        int64_t n = bytes - done;
        if (n > (int64_t)KP_FRAME_MAX) n = KP_FRAME_MAX;
        kp_fetch_req q = {set, buf, off + done, n};
        size_t got = 0;
        int rc = kp_wk_call(p->w, KP_MSG_FETCH, &q, sizeof q, NULL, 0, (char *)dst + done, (size_t)n, &got,
                            c->o->timeout_s, err, sizeof err);
        if (rc) {
            p->alive = 0;
            return kpp_worker_failed(c, p, sr, rc, "reading the output", err);
        }
        if ((int64_t)got != n) return kpp_decide(sr, KP_REJECTED, "frame", "a reply of the wrong size on the result channel");
        done += n;
    }
    return 0;
}

/* The same, its seconds charged to fetches. */
int kpp_fetch(ctx *c, part *p, int set, int buf, int64_t off, int64_t bytes, void *dst, kp_shape_result *sr) {
    int was = kpp_work(c, KP_WORK_FETCH);
    int rc = fetch(c, p, set, buf, off, bytes, dst, sr);
    kpp_work(c, was);
    return rc;
}

/* n ranges of `bytes` each at byte offsets off[] of a buffer, into dst in
 * order: as many to a request as a frame holds (FETCHV), a range larger
 * than a frame on its own. */
int kpp_fetch_ranges(ctx *c, part *p, int set, int buf, int n, const int64_t *off, int64_t bytes, void *dst,
                     kp_shape_result *sr) {
    if (p->direct) {
        int bad = 0, was = kpp_work(c, KP_WORK_FETCH);
        for (int i = 0; i < n && !bad; i++) bad = fetch(c, p, set, buf, off[i], bytes, (char *)dst + (size_t)i * (size_t)bytes, sr);
        kpp_work(c, was);
        return bad;
    }
    kp_fetchv_req *q = (kp_fetchv_req *)calloc(1, sizeof *q);
    if (!q) return kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
    int bad = 0, was = kpp_work(c, KP_WORK_FETCH);
    for (int i = 0; i < n && !bad;) {
        int64_t per = bytes > 0 ? (int64_t)KP_FRAME_MAX / bytes : KP_FETCHV_MAX;
        int k = per < 1 ? 1 : per > KP_FETCHV_MAX ? KP_FETCHV_MAX : (int)per;
        if (k > n - i) k = n - i;
        char *at = (char *)dst + (size_t)i * (size_t)bytes;
        if (bytes > (int64_t)KP_FRAME_MAX) {
            bad = kpp_fetch(c, p, set, buf, off[i], bytes, at, sr);
            i++;
            continue;
        }
        memset(q, 0, sizeof *q);
        q->set = set, q->buf = buf, q->n = k, q->bytes = bytes;
        for (int j = 0; j < k; j++) q->offset[j] = off[i + j];
        char err[300];
        size_t got = 0, want = (size_t)k * (size_t)bytes;
        int rc = kp_wk_call(p->w, KP_MSG_FETCHV, q, sizeof *q, NULL, 0, at, want, &got, c->o->timeout_s, err,
                            sizeof err);
        if (rc) {
            p->alive = 0;
            bad = kpp_worker_failed(c, p, sr, rc, "reading the output", err);
        } else if (got != want) {
            bad = kpp_decide(sr, KP_REJECTED, "frame", "a reply of the wrong size on the result channel");
        }
        i += k;
    }
    kpp_work(c, was);
    free(q);
    return bad;
}

/* One input chunk of a lazy set, fetched from the worker after SETUP and
 * compared bit for bit with the CPU generator at an offset drawn now. */
static int lazy_input_probe(ctx *c, part *p, const kp_shape *sh, const iset *s, int set, int buf, kp_shape_result *sr) {
    int64_t n = c->op->buf_elems(sh, buf), len = n < CHUNK_ELEMS ? n : CHUNK_ELEMS;
    size_t es = kp_dtype_size(c->op->bufs[buf].dtype);
    int64_t begin = (int64_t)kp_rng_below(&c->rng, (uint64_t)(n - len + 1));
    char *got = (char *)malloc((size_t)len * es), *want = (char *)malloc((size_t)len * es);
    int bad = 0;
    if (!got || !want) bad = kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
    if (!bad) bad = kpp_fetch(c, p, set, buf, begin * (int64_t)es, len * (int64_t)es, got, sr);
    if (!bad) {
        kp_gen_fill(c->op, sh, s->dist, buf, s->seed, want, begin, len);
        if (memcmp(got, want, (size_t)len * es)) bad = generator_mismatch(c, sr, buf, set, begin);
    }
    free(got);
    free(want);
    return bad;
}

/* ---- building a participant ------------------------------------------------------ */

int kpp_build_part(ctx *c, part *p, kp_result *r, int is_candidate) {
    char log[4096];
    const char *cache = c->o->cache_dir ? c->o->cache_dir : kp_default_cache();
    int rc = kp_build(c->o->backend, p->path, c->o->root, cache, p->so, sizeof p->so, log, sizeof log);
    if (rc == 0) return 0;
    if (!is_candidate) {
        kp_result_warn(r, "baseline %s did not build; left out", p->name);
        return -1;
    }
    r->verdict = KP_ERROR;
    /* -1: the compiler refused the candidate; otherwise the harness could
     * not build anything (no compiler, no cache directory). */
    snprintf(r->check_name, sizeof r->check_name, "%s", rc == -1 ? "build" : "harness");
    if (rc == -1) snprintf(r->detail, sizeof r->detail, "the candidate does not compile:\n%s", log);
    else snprintf(r->detail, sizeof r->detail, "%s", log);
    return -1;
}
