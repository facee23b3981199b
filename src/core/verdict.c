/* verdict.c: verdict and flaw names, evaluation defaults, result upkeep. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kproof.h"

const char *kp_verdict_name(kp_verdict v)
{
    switch (v) {
    case KP_PASS: return "PASS";
    case KP_WRONG: return "WRONG";
    case KP_REJECTED: return "REJECTED";
    case KP_ERROR: return "ERROR";
    case KP_NOISY: return "NOISY";
    }
    return "UNKNOWN";
}

/* The naive protocol's flaws, in bit order (docs/protocol.md, "The naive protocol"). */
static const struct {
    int bit;
    const char *name;
    const char *title;
} flaws[KP_NFLAWS] = {
    {KP_FLAW_LAUNCH, "launch", "timing the launch, not the work (host timer without a device sync)"},
    {KP_FLAW_WARM, "warm", "warm caches and toy sizes (same buffers every call, no L2 flush)"},
    {KP_FLAW_ONE_INPUT, "one-input", "one fixed input, checked once (reused memory, no poisoning)"},
    {KP_FLAW_LOOSE_TOL, "loose-tol", "loose absolute tolerance (zeros and bf16-level error pass)"},
    {KP_FLAW_WEAK_BASE, "weak-base", "weak baseline, mean without an interval, no speed-of-light bound"},
};

const char *kp_flaw_name(int flaw_bit)
{
    for (int i = 0; i < KP_NFLAWS; i++)
        if (flaws[i].bit == flaw_bit)
            return flaws[i].name;
    return "unknown";
}

const char *kp_flaw_title(int flaw_bit)
{
    for (int i = 0; i < KP_NFLAWS; i++)
        if (flaws[i].bit == flaw_bit)
            return flaws[i].title;
    return "unknown flaw";
}

/* Compares one comma-list item with a name; '_' stands for '-' so that
 * "one_input" works as well as "one-input". */
static int item_is(const char *item, size_t len, const char *name)
{
    if (strlen(name) != len)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = item[i] == '_' ? '-' : item[i];
        if (c != name[i])
            return 0;
    }
    return 1;
}

int kp_flaw_parse(const char *s, int *bits)
{
    if (!s || !bits)
        return -1;
    int out = 0, items = 0;
    const char *p = s;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0)
            return -1; /* "", "launch,," : a typo, not a request */
        int bit = -1;
        if (item_is(p, len, "all"))
            bit = KP_FLAW_ALL;
        else if (item_is(p, len, "none"))
            bit = 0;
        for (int i = 0; i < KP_NFLAWS && bit < 0; i++)
            if (item_is(p, len, flaws[i].name))
                bit = flaws[i].bit;
        if (bit < 0)
            return -1;
        out |= bit;
        items++;
        if (!end)
            break;
        p = end + 1;
    }
    *bits = out;
    return items > 0 ? 0 : -1;
}

void kp_eval_opts_default(kp_eval_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = KP_BACKEND_HOST;
    o->shape_sets = (1 << 0) | (1 << 1) | (1 << 3); /* canonical, edge, drawn */
    o->dist = -1;
    /* 8 sets of the canonical shapes exceed the H200's 50 MB L2 several times. */
    o->nsets = 8;
    o->stop.min_samples = 10;
    o->stop.max_samples = 2000;
    o->stop.target = 0.01;
    o->stop.budget_s = 10.0;
    o->timeout_s = 60.0;
    o->seed = 0; /* drawn from the OS at run time */
    o->progress = 1;
}

void kp_result_free(kp_result *r)
{
    if (!r)
        return;
    for (int i = 0; r->shapes && i < r->nshapes; i++) {
        free(r->shapes[i].cand.samples);
        free(r->shapes[i].base.samples);
    }
    free(r->shapes);
    r->shapes = NULL;
    r->nshapes = 0;
}

void kp_result_warn(kp_result *r, const char *fmt, ...)
{
    if (!r || !fmt)
        return;
    int cap = (int)(sizeof r->warn / sizeof r->warn[0]);
    /* nwarn keeps counting past the array so printers can say how many
     * warnings did not fit. */
    if (r->nwarn >= 0 && r->nwarn < cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->warn[r->nwarn], sizeof r->warn[0], fmt, ap);
        va_end(ap);
    }
    r->nwarn++;
}

const char *kp_phase_name(int phase) {
    static const char *names[KP_NPHASES] = {"build", "start", "correctness", "audit", "timing"};
    return phase >= 0 && phase < KP_NPHASES ? names[phase] : "?";
}

const char *kp_work_name(int work) {
    static const char *names[KP_NWORK] = {"generate", "setup", "calls", "fetch", "check", "account", "floor", "other"};
    return work >= 0 && work < KP_NWORK ? names[work] : "?";
}
