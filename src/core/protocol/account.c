/* account.c: the work account. On cuda, after each phase the worker
 * reports every device operation since the last account, and this judges
 * it: work outside the calls' windows, lost records, library kernels. On
 * the host, kproof reads the worker's CPU from the kernel at every
 * request's edges and judges the work outside calls.
 * Part of the protocol (eval.c tells the story). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/protocol/protocol_priv.h"
#include "kproof/backends.h"

/* ---- accounting: every device operation, every call (cuda) ----------------------- */

static const char *acct_kind(uint32_t kind) { return kind == 1 ? "copy" : kind == 2 ? "memset" : "kernel"; }

/* "launched by thread 1234 (not the calling thread)" and the like. */
static void acct_thread(const kp_acct_op *o, char *buf, size_t len) {
    if (o->thread == KP_ACCT_THREAD_OTHER)
        snprintf(buf, len, "launched by thread %d, not the thread that made the call", o->tid);
    else if (o->thread == KP_ACCT_THREAD_CALLER)
        snprintf(buf, len, "launched from inside the call");
    else
        snprintf(buf, len, "launched after the call returned");
}

/* The evidence for the first shown operation outside its window that is
 * not OVERTIME (work outside is the graver finding), else the first. */
static void acct_evidence(const kp_acct_rep *rep, char *buf, size_t len) {
    const kp_acct_op *o = &rep->show[0];
    const int n_out = rep->ops_outside - rep->ops_overtime; /* outside, OVERTIME ones apart */
    for (int i = 0; i < rep->nshow && i < KP_ACCT_SHOW; i++)
        if (rep->show[i].where != KP_ACCT_OVERTIME) {
            o = &rep->show[i];
            break;
        }
    char who[96], fmt[48];
    acct_thread(o, who, sizeof who);
    kp_fmt_time(fmt, sizeof fmt, o->outside_s, o->outside_s);
    const char *where = o->stream == rep->given_stream ? "the given stream" : "another stream";
    switch (o->where) {
    case KP_ACCT_LATE:
        snprintf(buf, len,
                 "%s %s on %s (id %u), %s, was still running %s after its call's stop event: work left running past "
                 "the window is not timed (%d operation(s) outside their calls)",
                 acct_kind(o->kind), o->name, where, o->stream, who, fmt, n_out);
        break;
    case KP_ACCT_EARLY:
        snprintf(buf, len, "%s %s on %s (id %u), %s, started %s before its call's start event (%d operation(s) outside)",
                 acct_kind(o->kind), o->name, where, o->stream, who, fmt, n_out);
        break;
    case KP_ACCT_RACE:
        snprintf(buf, len,
                 "%s %s on %s (id %u), %s, was still being launched when the call returned: where it lands "
                 "against the stop event is a race, and a call's work must be queued when it returns (%d "
                 "operation(s) outside)",
                 acct_kind(o->kind), o->name, where, o->stream, who, n_out);
        break;
    case KP_ACCT_OVERTIME: {
        char ev[48];
        kp_fmt_time(ev, sizeof ev, o->event_s, o->event_s);
        snprintf(buf, len, "the events reported %s, but %s %s, queued before the stop event, ran %s longer (%d such)",
                 ev, acct_kind(o->kind), o->name, fmt, rep->ops_overtime);
        break;
    }
    case KP_ACCT_LOAD:
        snprintf(buf, len,
                 "%s %s on %s (id %u), launched while the candidate loaded, was still running %s into the first call "
                 "(%d operation(s) outside)",
                 acct_kind(o->kind), o->name, where, o->stream, fmt, n_out);
        break;
    default:
        snprintf(buf, len,
                 "%s %s on %s (id %u), %s, ran outside every call (%s of device work between calls; %d "
                 "operation(s) outside): work done between calls is not timed",
                 acct_kind(o->kind), o->name, where, o->stream, who, fmt, n_out);
        break;
    }
}

/* ---- accounting: the worker's CPU, every request (host) ---------------------------- */

/* Honest workers wait in a read between requests and run only the
 * harness's own thread outside calls; these allow for the instructions
 * around the wait and for the kernel's bookkeeping. */
#define IDLE_FIXED_NS 5000000    /* 5 ms a phase (one gap of 3.6 ms was seen once, an idle honest worker
                                  * among the demo's rows on a loaded 2-core host: the kernel's own work
                                  * charged to the process) */
#define IDLE_GAP_NS 50000        /* and 50 us a gap between requests */
/* A light request (INPUTS on the host; PING and ACCOUNT would be) reads a
 * frame, stores a few bytes and replies: 12-15 us of the main thread's
 * time (median; up to 83 us on a quiet 2-core host, single ones of 100-363
 * us while it is loaded). Allowed: 2 ms a phase, and 300 us a request. */
#define LIGHT_FIXED_NS 2000000
#define LIGHT_NS 300000
/* One request alone may take up to LIGHT_ONE_NS: the phase's other
 * requests are held to the allowance without it. A loaded VM was seen to
 * charge a single INPUTS milliseconds while the requests around it, and
 * the control after it, took microseconds (a burst over before the
 * control). Work hidden in one request a phase serves one input set: the
 * correctness phase checks every set (each needs its own work), and a
 * timed median is not moved by one fast call, so what one request may
 * hide is no gain. */
#define LIGHT_ONE_NS 20000000
/* A longest request past LIGHT_ONE_NS but within LIGHT_BURST_NS, the
 * others within their allowance, is NOISY, not REJECTED: beside clean-clone
 * CI's tests on the 2-core machine an honest rmsnorm bf16 worker's one
 * INPUTS request of a correctness phase was charged 31.77 ms, its four
 * others 0.16 ms together (results/2026-12-05-host-b9b7035). Past
 * LIGHT_BURST_NS, REJECTED. */
#define LIGHT_BURST_NS 100000000
/* A phase's light requests (n of them, total and longest in ns) against
 * an allowance of `per` a request: within it; past it (the rest, without
 * the longest, over LIGHT_FIXED_NS plus `per` a request, or the longest
 * over LIGHT_BURST_NS); or a burst (the rest within, the longest over
 * LIGHT_ONE_NS but not LIGHT_BURST_NS). */
kpp_light kpp_light_verdict(int n, int64_t total_ns, int64_t max_ns, int64_t per) {
    if (n <= 0) return KPP_LIGHT_OK;
    if (total_ns - max_ns > LIGHT_FIXED_NS + per * (int64_t)(n - 1) || max_ns > LIGHT_BURST_NS) return KPP_LIGHT_OVER;
    return max_ns > LIGHT_ONE_NS ? KPP_LIGHT_BURST : KPP_LIGHT_OK;
}
static int light_over(const kp_wk_cpu *u, int64_t per) {
    return kpp_light_verdict(u->light_n, u->light_ns, u->light_max_ns, per) != KPP_LIGHT_OK;
}
/* Past that allowance the light requests are compared with a control
 * measured right then: CONTROL_PINGS PINGs to the same worker, the
 * lightest request there is (an empty reply), read the same way. A
 * machine that charges its own time to whichever thread is running
 * (interrupts, which a kernel without IRQ time accounting charges to the
 * thread they land on; a hypervisor's time not reported as steal) adds
 * it to every request alike, a PING's as an INPUTS': by the request, so
 * the light requests are held to it in proportion. The allowance a
 * request becomes CONTROL_RATIO times the control's mean, where that is
 * more than 300 us (a mean over 75 us, 5x a quiet host's median); within
 * it, NOISY: the excess cannot be told from the machine's. Past it, or
 * with a quiet control, REJECTED: the requests took more than the
 * machine adds to one. The mean, as the check judges totals; 4x, as a
 * phase's light requests, spread over seconds, may meet more of a burst
 * than the control's fraction of a millisecond does. A candidate can
 * tell a PING from other requests (kproof sends one only here, or to
 * learn how a worker ended), and one that burns CPU in every PING to be
 * judged so gains nothing: the allowance it buys, 4 times what it burns,
 * only turns REJECTED into NOISY, and NOISY is never PASS. */
#define CONTROL_PINGS 8
#define CONTROL_RATIO 4

static void fmt_ns(char *buf, size_t len, int64_t ns) { kp_fmt_time(buf, len, ns * 1e-9, ns * 1e-9); }

static const char *msg_name(int type) {
    switch (type) {
    case KP_MSG_SETUP: return "SETUP (inputs)";
    case KP_MSG_FETCH: case KP_MSG_FETCHV: return "FETCH (output read back)";
    case KP_MSG_RUN: return "RUN";
    case KP_MSG_INPUTS: return "INPUTS (inputs in place)";
    case KP_MSG_PING: return "PING";
    case KP_MSG_ENV: return "ENV";
    case KP_MSG_ACCOUNT: return "ACCOUNT";
    default: return "harness";
    }
}

/* Light requests past their allowance (u: the phase's numbers, already
 * taken): the control PINGs, then the verdict. Their own numbers are
 * taken with them, so they count in no later phase. The phase's excess is
 * measured already and the control only excuses it: a worker that fails
 * the control requests (dies, hangs, answers something else) is judged
 * on the excess, REJECTED. Within the control's allowance a baseline's
 * part is NOISY at once; the candidate's is not decided here: the shape
 * goes on through every other check, any of which may still reject it,
 * and only a shape that would PASS becomes NOISY (c->light_noise, at the
 * end of the shape). */
static int light_excess(ctx *c, part *p, kp_shape_result *sr, const char *what, const kp_wk_cpu *u, int baseline) {
    char a[48], b[48], phase[300];
    fmt_ns(a, sizeof a, u->light_ns);
    fmt_ns(b, sizeof b, u->light_max_ns);
    snprintf(phase, sizeof phase,
             "during %s the worker's own thread used %s of CPU in %d light requests (the most, %s, in one %s "
             "request, whose work is a few microseconds)",
             what, a, u->light_n, b, msg_name(u->light_type));
    const char *who = baseline ? "the baseline's" : "the candidate's";
    char err[300];
    for (int i = 0; i < CONTROL_PINGS; i++) {
        /* At least 5 s: a PING on a loaded machine must not time out as a
         * call may. */
        const double limit = c->o->timeout_s > 5 ? c->o->timeout_s : 5;
        int rc = kp_wk_call(p->w, KP_MSG_PING, NULL, 0, NULL, 0, NULL, 0, NULL, limit, err, sizeof err);
        if (rc) {
            p->alive = 0;
            if (rc == KP_WK_SYS) return kpp_worker_failed(c, p, sr, rc, "the account's control requests", err);
            return kpp_decide(sr, KP_REJECTED, "account",
                              "%s, and it failed the PING requests sent right after as a control (%s): %s code ran "
                              "inside the harness's requests, outside its calls, where its work is not timed",
                              phase, err, who);
        }
    }
    const kp_wk_cpu k = kp_wk_cpu_get(p->w, 1);
    if (k.light_n < CONTROL_PINGS)
        return kpp_decide(sr, KP_ERROR, "harness",
                          "the worker's run time could not be read around the account's control requests (%d of %d)",
                          k.light_n, CONTROL_PINGS);
    const int64_t mean = k.light_ns / k.light_n;
    const int64_t per = CONTROL_RATIO * mean > LIGHT_NS ? CONTROL_RATIO * mean : LIGHT_NS;
    char m[48], x[48], head[480];
    fmt_ns(m, sizeof m, mean);
    fmt_ns(x, sizeof x, k.light_max_ns);
    snprintf(head, sizeof head, "%s, and %d PING requests sent to it right after used %s each (mean; the most %s)",
             phase, k.light_n, m, x);
    const kpp_light lv = kpp_light_verdict(u->light_n, u->light_ns, u->light_max_ns, per);
    if (lv == KPP_LIGHT_OVER)
        return kpp_decide(sr, KP_REJECTED, "account",
                          "%s: more than the machine adds to a request; %s code ran inside the harness's requests, "
                          "outside its calls, where its work is not timed",
                          head, who);
    char ev[sizeof c->light_noise];
    if (lv == KPP_LIGHT_BURST)
        snprintf(ev, sizeof ev,
                 "%s: one request over the %.0f ms a phase's longest may take, at most %.0f ms, the others within "
                 "their allowance: a loaded machine can charge a burst of its own time to one request; work hidden "
                 "in it cannot be told from that; run again on a quieter machine",
                 head, LIGHT_ONE_NS * 1e-6, LIGHT_BURST_NS * 1e-6);
    else
        snprintf(ev, sizeof ev,
                 "%s: the machine adds its own time to every request now, and the light requests' time beyond %.0f "
                 "ms a phase is within %d times that a request; work hidden in them cannot be told from it; run "
                 "again on a quieter machine",
                 head, LIGHT_FIXED_NS * 1e-6, CONTROL_RATIO);
    if (baseline) return kpp_decide(sr, KP_NOISY, "noise", "%s", ev);
    if (!c->light_noise[0]) snprintf(c->light_noise, sizeof c->light_noise, "%s", ev);
    if (per > c->light_ctl_ns) c->light_ctl_ns = per;
    return 0;
}

/* The host worker's CPU since the last account, read by kproof from the
 * kernel (kp_wk_cpu): the candidate's code may run on any of the worker's
 * threads or hook the harness's own calls, but the process's CPU clock and
 * its threads' run times are not the worker's to report. Work between
 * requests, on other threads during requests that run no call, or in
 * another process is work the timed calls do not carry. */
static int host_cpu_account(ctx *c, part *p, kp_shape_result *sr, const char *what, int baseline) {
    if (!p->alive || !p->w || !GUARD(c, KPP_G_ACCOUNT)) return 0;
    kp_wk_cpu u = kp_wk_cpu_get(p->w, 1);
    if (!u.on) return 0;
    char a[48], b[48];
    const int64_t allow = IDLE_FIXED_NS + IDLE_GAP_NS * (int64_t)u.gaps;
    if (u.idle_ns > allow) {
        fmt_ns(a, sizeof a, u.idle_ns);
        fmt_ns(b, sizeof b, u.idle_max_ns);
        return kpp_decide(sr, KP_REJECTED, "account",
                          "during %s the worker's process used %s of CPU between kproof's requests (%d waits, the "
                          "longest %s), when it had nothing to do: work done between calls (a thread computing ahead, "
                          "or work deferred past a call) is not timed; a thread pool must sleep between calls",
                          what, a, u.gaps, b);
    }
    if (u.side_ns > allow) {
        fmt_ns(a, sizeof a, u.side_ns);
        fmt_ns(b, sizeof b, u.side_max_ns);
        return kpp_decide(sr, KP_REJECTED, "account",
                          "during %s threads other than the worker's own used %s of CPU in requests that run no call "
                          "(the most, %s, in a %s request): kproof cannot tell that from work done outside the "
                          "calls; a pool's threads must sleep (block) once a call's work is done, not spin",
                          what, a, b, msg_name(u.side_type));
    }
    int64_t reaped = 0;
    int strays = kp_wk_strays(p->w, &reaped);
    if (strays > 0)
        return kpp_decide(sr, KP_REJECTED, "account",
                          "after %s %d process(es) besides the worker were running in its sandbox (started by the "
                          "candidate, left behind): work in another process is not timed",
                          what, strays);
    if (reaped > 0) {
        fmt_ns(a, sizeof a, reaped);
        return kpp_decide(sr, KP_REJECTED, "account",
                          "by the end of %s child processes of the worker had used %s of CPU and ended: work in "
                          "another process is not timed",
                          what, a);
    }
    /* Last, as it may come out NOISY: NOISY must not stand in for a finding above. */
    if (light_over(&u, LIGHT_NS))
        return light_excess(c, p, sr, what, &u, baseline);
    return 0;
}

/* Asks the worker for its account of the device work since the last one
 * and judges it. `what` names the phase for the evidence. Decides the
 * shape on a finding; 0 otherwise. */
int kpp_account(ctx *c, part *p, kp_shape_result *sr, const char *what, int baseline, char *defer_ev, size_t len) {
    if (!kp_backend_get(c->o->backend)->has_tracer) return host_cpu_account(c, p, sr, what, baseline);
    if (c->o->unaudited || !p->alive) return 0;
    kp_acct_rep *rep = (kp_acct_rep *)calloc(1, sizeof *rep);
    if (!rep) return kpp_decide(sr, KP_ERROR, "harness", "out of host memory");
    char err[300];
    size_t got = 0;
    int bad = 0;
    int rc = kp_wk_call(p->w, KP_MSG_ACCOUNT, NULL, 0, NULL, 0, rep, sizeof *rep, &got, c->o->timeout_s + 30, err,
                        sizeof err);
    if (rc) {
        p->alive = 0;
        bad = kpp_worker_failed(c, p, sr, rc, "accounting for the device work", err);
    } else if (got != sizeof *rep) {
        bad = kpp_decide(sr, KP_REJECTED, "frame", "a reply of the wrong size on the result channel");
    } else if (rep->harness_lost > 0) {
        bad = kpp_decide(sr, KP_ERROR, "harness",
                         "the worker ran out of memory for its record of %d call(s) during %s: it cannot account for "
                         "them", rep->harness_lost, what);
    } else if (!rep->supported) {
        bad = kpp_decide(sr, KP_ERROR, "harness", "device activity tracing stopped working (%s): %s", what, rep->error);
    } else if (rep->dropped > 0) {
        bad = kpp_decide(sr, KP_REJECTED, "account",
                         "the tracer lost %d record(s) of device work during %s: kproof must see every operation to vouch "
                         "for the time",
                         rep->dropped, what);
    } else if (rep->missing_marks > 0) {
        bad = kpp_decide(sr, KP_REJECTED, "account",
                         "the trace of %d of %d call(s) during %s lacks the marks kproof put around them: something in "
                         "the worker disturbed the tracer",
                         rep->missing_marks, rep->calls, what);
    } else if (rep->ops_outside > rep->ops_overtime && GUARD(c, KPP_G_ACCOUNT)) {
        char ev[400];
        acct_evidence(rep, ev, sizeof ev);
        bad = kpp_decide(sr, KP_REJECTED, "account", "during %s: %s", what, ev);
    } else if (rep->ops_overtime > 0 && GUARD(c, KPP_G_TIMER)) {
        /* The events' time is shorter than the work the trace saw before
         * the stop event: the reported time is false, a timer finding.
         * Timing defers it until the speed-of-light bound has spoken (an
         * impossible time is the plainer evidence); the two flaws that
         * trust the process's own times do not look. */
        char ev[400];
        acct_evidence(rep, ev, sizeof ev);
        if (defer_ev) {
            snprintf(defer_ev, len, "during %s: %s", what, ev);
        } else {
            bad = kpp_decide(sr, KP_REJECTED, "timer", "during %s: %s", what, ev);
        }
    } else if (rep->library && !baseline && !c->o->allow_library && GUARD(c, KPP_G_LIBRARY)) {
        /* A baseline may be a library wrapper (cuBLAS): that is what it is for. */
        bad = kpp_decide(sr, KP_REJECTED, "library",
                         "ran %d library kernel(s), e.g. %s: the candidate must be its own kernel (pass --allow-library "
                         "to measure a library wrapper)",
                         rep->library, rep->library_name);
    }
    if (!bad) {
        sr->acct_calls += rep->calls;
        sr->acct_ops += rep->ops_inside;
        sr->acct_other_stream += rep->ops_other_stream;
        if (rep->ops_load > 0 && !sr->acct_load) {
            sr->acct_load = rep->ops_load;
            kp_result_warn(c->r, "the candidate ran %d device operation(s) while it loaded (over before its first "
                           "call; inputs did not exist yet)", rep->ops_load);
        }
    }
    for (int i = 0; i < rep->nkernels && sr->nkernels < 16; i++) {
        const kp_acct_op *o = &rep->kernels[i];
        int seen = 0;
        for (int j = 0; j < sr->nkernels && !seen; j++)
            seen = !strcmp(sr->kernels[j].name, o->name) && sr->kernels[j].stream == o->stream;
        if (seen) continue;
        kp_audit_kernel *k = &sr->kernels[sr->nkernels++];
        snprintf(k->name, sizeof k->name, "%s", o->name);
        k->stream = o->stream;
        k->on_given_stream = o->stream == rep->given_stream;
        k->duration_s = o->duration_s;
    }
    free(rep);
    return bad;
}

/* A baseline's account: a baseline that works outside its calls is
 * dropped with the reason, so every participant is held to one rule. */
void kpp_account_baseline(ctx *c, part *p, kp_shape_result *bsr) {
    if (!p->alive) return;
    kp_shape_result tmp;
    memset(&tmp, 0, sizeof tmp);
    int bad = kpp_account(c, p, &tmp, "timing", 1, NULL, 0);
    if (bad || tmp.verdict != KP_PASS) {
        bsr->verdict = tmp.verdict;
        p->alive = 0;
        kp_result_warn(c->r, "baseline %s dropped: %s", p->name, tmp.detail);
    }
}
