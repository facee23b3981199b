/* stats.c: order statistics, the bootstrap, the stopping rule, and the
 * parent's private random numbers.
 *
 * The parent computes every statistic from raw samples: nothing the worker
 * reports is trusted beyond the numbers themselves (timer tampering).
 * Medians rather than means, because cold GPU timings have a long right tail
 * (clock ramps, preemption, ECC scrubs) that drags a mean but not a median.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kproof/kproof.h"

/* ===== random numbers ==================================================== */

uint64_t kp_rng_next(kp_rng *r)
{
    /* splitmix64: every seed, 0 included, gives a full-period stream, which
     * matters because seeds come from people ("--seed 1") as often as from
     * the OS. */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double kp_rng_uniform(kp_rng *r)
{
    /* 53 bits fill a double's mantissa exactly, so the result is < 1. */
    return (double)(kp_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t kp_rng_below(kp_rng *r, uint64_t n)
{
    if (n == 0)
        return 0;
    if (n <= 0xffffffffULL) {
        /* Multiply-shift on 32 bits (no division on the common path: the
         * sampled checks draw many indices), with the rejection step that
         * removes the bias of a plain modulo. */
        uint32_t n32 = (uint32_t)n;
        uint64_t m = (kp_rng_next(r) >> 32) * (uint64_t)n32;
        uint32_t low = (uint32_t)m;
        if (low < n32) {
            uint32_t floor = (uint32_t)(-n32) % n32;
            while (low < floor) {
                m = (kp_rng_next(r) >> 32) * (uint64_t)n32;
                low = (uint32_t)m;
            }
        }
        return m >> 32;
    }
    /* Wide ranges are rare; reject the short top slice that would bias r % n. */
    uint64_t floor = (0 - n) % n;
    for (;;) {
        uint64_t v = kp_rng_next(r);
        if (v >= floor)
            return v % n;
    }
}

static uint64_t mix64(uint64_t h, uint64_t v)
{
    kp_rng t = {h ^ (v * 0x9e3779b97f4a7c15ULL)};
    return kp_rng_next(&t);
}

uint64_t kp_entropy_seed(void)
{
    /* The counter and the clock are mixed in even when /dev/urandom works,
     * so that two calls in one process differ if the read ever fails. */
    static uint64_t calls;
    uint64_t h = 0x6b70726f6f66ULL; /* "kproof" */
    uint64_t dev = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&dev, sizeof dev, 1, f) != 1)
            dev = 0;
        fclose(f);
    }
    h = mix64(h, dev);
    struct timespec ts;
    if (timespec_get(&ts, TIME_UTC) == TIME_UTC) {
        h = mix64(h, (uint64_t)ts.tv_sec);
        h = mix64(h, (uint64_t)ts.tv_nsec);
    }
    h = mix64(h, (uint64_t)time(NULL));
    h = mix64(h, (uint64_t)clock());
    h = mix64(h, (uint64_t)(uintptr_t)&ts); /* stack address: ASLR */
    h = mix64(h, ++calls);
    /* 0 means "draw one from the OS" in kp_eval_opts.seed. */
    return h ? h : 0x9e3779b97f4a7c15ULL ^ calls;
}

/* ===== order statistics ================================================== */

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    /* NaN sorts last so that qsort sees a consistent total order. */
    if (isnan(a) || isnan(b))
        return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

/* q-quantile of sorted s[0..n), linear between order statistics. */
static double quantile_sorted(const double *s, int n, double q)
{
    if (n <= 0)
        return NAN;
    if (!(q > 0))
        return s[0];
    if (q >= 1)
        return s[n - 1];
    double h = q * (double)(n - 1);
    int i = (int)h;
    if (i >= n - 1)
        return s[n - 1];
    double frac = h - (double)i;
    return s[i] + frac * (s[i + 1] - s[i]);
}

static double *sorted_copy(const double *x, int n)
{
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return NULL;
    memcpy(s, x, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return s;
}

double kp_quantile(const double *x, int n, double q)
{
    if (!x || n <= 0)
        return NAN;
    if (n == 1)
        return x[0];
    double *s = sorted_copy(x, n);
    if (!s)
        return NAN;
    double v = quantile_sorted(s, n, q);
    free(s);
    return v;
}

double kp_median(const double *x, int n)
{
    return kp_quantile(x, n, 0.5);
}

double kp_mean(const double *x, int n)
{
    if (!x || n <= 0)
        return NAN;
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += x[i];
    return sum / n;
}

/* ===== bootstrap ========================================================= */

/* A bootstrap replicate draws n indices I = floor(n*U) with U uniform and
 * takes the median of x at those indices. floor(n*u) is monotone, so the
 * replicate's k-th smallest index is floor(n * U_(k)), the k-th order
 * statistic of n uniforms, which is Beta(k, n+1-k). Drawing that Beta (and,
 * for even n, the next order statistic given it) samples exactly the same
 * distribution as resampling n values, in O(1) per replicate instead of
 * O(n): 2000 replicates of 10000 samples cost microseconds, so the stopping
 * rule can run the full bootstrap after every sample. */

static double uniform_open(kp_rng *r)
{
    /* (0, 1]: safe under log() and pow(., 1/m). */
    return 1.0 - kp_rng_uniform(r);
}

static double normal(kp_rng *r)
{
    /* Marsaglia's polar method. The second variate is dropped: keeping it
     * would need state beyond kp_rng, which callers copy by value. */
    for (;;) {
        double u = 2 * kp_rng_uniform(r) - 1, v = 2 * kp_rng_uniform(r) - 1;
        double q = u * u + v * v;
        if (q > 0 && q < 1)
            return u * sqrt(-2 * log(q) / q);
    }
}

/* Gamma(a, 1) for a >= 1 (Marsaglia and Tsang's squeeze and rejection). */
static double gamma_ge1(kp_rng *r, double a)
{
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double z = normal(r), v = 1 + c * z;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = uniform_open(r);
        if (u < 1 - 0.0331 * z * z * z * z || log(u) < 0.5 * z * z + d * (1 - v + log(v)))
            return d * v;
    }
}

static int index_of(double u, int n)
{
    int i = (int)(u * n);
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* The median of one bootstrap replicate of sorted s[0..n), n >= 2. */
static double replicate_median(const double *s, int n, kp_rng *r)
{
    int k = (n + 1) / 2; /* 1-based rank of the lower middle value */
    double g1 = gamma_ge1(r, k), g2 = gamma_ge1(r, n + 1 - k);
    double uk = g1 / (g1 + g2);
    double lo = s[index_of(uk, n)];
    if (n % 2)
        return lo;
    /* Given U_(k) = uk, the other n-k uniforms lie in (uk, 1); the nearest
     * is uk + (1-uk) * min of n-k uniforms, and that min is 1 - W^(1/(n-k)). */
    double m = 1 - pow(uniform_open(r), 1.0 / (n - k));
    return 0.5 * (lo + s[index_of(uk + (1 - uk) * m, n)]);
}

static void conf_tails(double conf, double *qlo, double *qhi)
{
    if (!(conf > 0 && conf < 1))
        conf = 0.95;
    *qlo = 0.5 * (1 - conf);
    *qhi = 1 - *qlo;
}

/* The k-th smallest of v[0..n) (0-based), reordering v. Replicates need
 * two order statistics each side, not a full sort. */
static double select_kth(double *v, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* The q-quantile of v[0..n) as quantile_sorted would give it, reordering v. */
static double quantile_select(double *v, int n, double q)
{
    double h = q * (double)(n - 1);
    int i = (int)h;
    if (i >= n - 1)
        return select_kth(v, n, n - 1);
    double a = select_kth(v, n, i);
    /* After selecting i, everything above index i is >= v[i]; the next
     * order statistic is the smallest of them. */
    double b = v[i + 1];
    for (int j = i + 2; j < n; j++)
        if (v[j] < b)
            b = v[j];
    return a + (h - (double)i) * (b - a);
}

/* Percentile interval from reps replicate values (reordered here), widened
 * to contain the point estimate: with few samples and ties the percentiles
 * can miss it by a hair, and a printed "median [lo, hi]" must contain it. */
static void percentile_interval(double *rep, int reps, double conf, double point, double *lo, double *hi)
{
    double qlo, qhi;
    conf_tails(conf, &qlo, &qhi);
    *lo = quantile_select(rep, reps, qlo);
    *hi = quantile_select(rep, reps, qhi);
    if (point < *lo)
        *lo = point;
    if (point > *hi)
        *hi = point;
}

#define KP_BOOT_REPS_DEFAULT 2000

/* The median's interval from an already sorted copy (no second sort). */
static void median_ci_sorted(const double *s, int n, double conf, int reps, uint64_t seed, double *lo, double *hi)
{
    double *rep = malloc((size_t)reps * sizeof *rep);
    if (!rep)
        return;
    kp_rng rng = {seed};
    for (int i = 0; i < reps; i++)
        rep[i] = replicate_median(s, n, &rng);
    percentile_interval(rep, reps, conf, quantile_sorted(s, n, 0.5), lo, hi);
    free(rep);
}

void kp_boot_median_ci(const double *x, int n, double conf, int reps, uint64_t seed, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (!x || n <= 0)
        return;
    if (n == 1) {
        *lo = *hi = x[0];
        return;
    }
    if (reps < 1)
        reps = KP_BOOT_REPS_DEFAULT;
    double *s = sorted_copy(x, n);
    if (s)
        median_ci_sorted(s, n, conf, reps, seed, lo, hi);
    free(s);
}

void kp_boot_ratio_ci(const double *a, int na, const double *b, int nb, double conf, int reps, uint64_t seed,
                      double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (!a || !b || na <= 0 || nb <= 0)
        return;
    if (reps < 1)
        reps = KP_BOOT_REPS_DEFAULT;
    double *sa = sorted_copy(a, na), *sb = sorted_copy(b, nb);
    double *rep = malloc((size_t)reps * sizeof *rep);
    if (sa && sb && rep) {
        double point = quantile_sorted(sa, na, 0.5) / quantile_sorted(sb, nb, 0.5);
        kp_rng rng = {seed};
        for (int i = 0; i < reps; i++) {
            /* A sample of one has a fixed median: nothing to resample. */
            double ma = na > 1 ? replicate_median(sa, na, &rng) : sa[0];
            double mb = nb > 1 ? replicate_median(sb, nb, &rng) : sb[0];
            rep[i] = ma / mb;
        }
        percentile_interval(rep, reps, conf, point, lo, hi);
    }
    free(sa);
    free(sb);
    free(rep);
}

double kp_rel_halfwidth(const double *x, int n, uint64_t seed)
{
    if (!x || n <= 0)
        return INFINITY;
    if (n == 1)
        return 0;
    double *s = sorted_copy(x, n);
    if (!s)
        return INFINITY;
    double lo = NAN, hi = NAN;
    median_ci_sorted(s, n, 0.95, KP_BOOT_REPS_DEFAULT, seed, &lo, &hi);
    double med = quantile_sorted(s, n, 0.5);
    free(s);
    double hw = 0.5 * (hi - lo);
    if (!(hw >= 0))
        return INFINITY;
    if (hw == 0)
        return 0;
    return med != 0 ? hw / fabs(med) : INFINITY;
}

int kp_stop_check(const kp_stop_rule *r, const double *x, int n, double elapsed_s, int *settled)
{
    static const kp_stop_rule fallback = {10, 1000, 0.01, 10.0};
    if (!r)
        r = &fallback;
    int min_n = r->min_samples > 1 ? r->min_samples : 2;
    int max_n = r->max_samples > 0 ? r->max_samples : 1000;
    if (max_n < min_n)
        max_n = min_n;
    double target = r->target > 0 ? r->target : 0.01;
    int stop = n >= max_n || (r->budget_s > 0 && elapsed_s >= r->budget_s);
    int ok = 0;
    /* Fewer than min_samples never counts as settled, even when the budget
     * ends the run: two close samples say nothing about the noise. */
    if (x && n >= min_n) {
        /* A seed from the data keeps the rule a pure function of the
         * samples: the same samples always stop the same way. */
        uint64_t seed = (uint64_t)n;
        for (int i = 0; i < n; i++) {
            uint64_t bits;
            memcpy(&bits, &x[i], sizeof bits);
            seed = mix64(seed, bits);
        }
        ok = kp_rel_halfwidth(x, n, seed) <= target;
    }
    if (settled)
        *settled = ok;
    return stop || ok;
}
