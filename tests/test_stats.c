/* test_stats.c: order statistics, bootstrap intervals, the stopping rule
 * and the parent's random numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kproof/kproof.h"
#include "test.h"

/* Skewed samples like cold GPU timings: a floor plus an exponential tail. */
static void timing_like(double *x, int n, double floor_s, double tail_s, uint64_t seed)
{
    kp_rng r = {seed};
    for (int i = 0; i < n; i++)
        x[i] = floor_s - tail_s * log(1 - kp_rng_uniform(&r));
}

static void test_quantiles(void)
{
    double odd[] = {3, 1, 2};
    CHECK_NEAR(kp_median(odd, 3), 2, 0);
    CHECK_NEAR(kp_quantile(odd, 3, 0), 1, 0);
    CHECK_NEAR(kp_quantile(odd, 3, 1), 3, 0);
    CHECK_NEAR(kp_quantile(odd, 3, 0.25), 1.5, 1e-15); /* h = 0.5 */
    CHECK(odd[0] == 3 && odd[1] == 1 && odd[2] == 2);  /* sorts a copy */

    double even[] = {4, 1, 3, 2};
    CHECK_NEAR(kp_median(even, 4), 2.5, 0);
    CHECK_NEAR(kp_quantile(even, 4, 0.25), 1.75, 1e-15); /* h = 0.75 */
    CHECK_NEAR(kp_quantile(even, 4, 1.0 / 3), 2, 1e-15); /* h = 1 */
    CHECK_NEAR(kp_quantile(even, 4, 0), 1, 0);
    CHECK_NEAR(kp_quantile(even, 4, 1), 4, 0);
    CHECK_NEAR(kp_quantile(even, 4, -1), 1, 0); /* q clamps to [0, 1] */
    CHECK_NEAR(kp_quantile(even, 4, 2), 4, 0);

    double one[] = {7.5};
    CHECK_NEAR(kp_median(one, 1), 7.5, 0);
    CHECK_NEAR(kp_quantile(one, 1, 0.9), 7.5, 0);
    CHECK(isnan(kp_median(one, 0)));
    CHECK(isnan(kp_mean(one, 0)));

    double dup[] = {5, 5, 5, 1, 9};
    CHECK_NEAR(kp_median(dup, 5), 5, 0);
    CHECK_NEAR(kp_mean(dup, 5), 5, 1e-15);
    double m[] = {1, 2, 3, 10};
    CHECK_NEAR(kp_mean(m, 4), 4, 1e-15);
}

static void test_boot_median(void)
{
    double lo, hi;
    double one[] = {3e-6};
    kp_boot_median_ci(one, 1, 0.95, 2000, 1, &lo, &hi);
    CHECK(lo == 3e-6 && hi == 3e-6);

    double two[] = {1, 2};
    kp_boot_median_ci(two, 2, 0.95, 2000, 1, &lo, &hi);
    CHECK(lo <= 1.5 && hi >= 1.5 && lo >= 1 && hi <= 2);

    static double x[10000];
    int sizes[] = {3, 10, 30, 100, 1000, 10000};
    double width[6];
    for (int k = 0; k < 6; k++) {
        int n = sizes[k];
        timing_like(x, n, 100e-6, 5e-6, 42 + (uint64_t)k);
        double med = kp_median(x, n);
        kp_boot_median_ci(x, n, 0.95, 2000, 7, &lo, &hi);
        CHECK(lo <= med && med <= hi);
        CHECK(lo >= 100e-6 && hi <= kp_quantile(x, n, 1));
        width[k] = hi - lo;
    }
    /* Width shrinks roughly as 1/sqrt(n): allow for noise between sizes
     * next to each other, demand it strictly over a decade. */
    CHECK(width[3] < width[1]);
    CHECK(width[4] < width[2]);
    CHECK(width[5] < width[3]);
    CHECK(width[5] < 0.5 * width[4]);

    /* The interval must cover the true median (floor + tail*ln 2) at n=10000. */
    timing_like(x, 10000, 100e-6, 5e-6, 99);
    kp_boot_median_ci(x, 10000, 0.95, 2000, 5, &lo, &hi);
    double truth = 100e-6 + 5e-6 * log(2.0);
    CHECK(lo < truth + 0.2e-6 && hi > truth - 0.2e-6);

    /* Deterministic for a seed, different for another. */
    timing_like(x, 50, 1.0, 0.1, 3);
    double lo1, hi1, lo2, hi2, lo3, hi3;
    kp_boot_median_ci(x, 50, 0.95, 2000, 11, &lo1, &hi1);
    kp_boot_median_ci(x, 50, 0.95, 2000, 11, &lo2, &hi2);
    kp_boot_median_ci(x, 50, 0.95, 2000, 12, &lo3, &hi3);
    CHECK(lo1 == lo2 && hi1 == hi2);
    CHECK(lo1 != lo3 || hi1 != hi3);

    /* A wider confidence gives a wider interval; reps < 1 means the default. */
    double lo90, hi90, lo99, hi99;
    kp_boot_median_ci(x, 50, 0.90, 2000, 11, &lo90, &hi90);
    kp_boot_median_ci(x, 50, 0.99, 2000, 11, &lo99, &hi99);
    CHECK(lo99 <= lo90 && hi99 >= hi90);
    kp_boot_median_ci(x, 50, 0.95, 0, 11, &lo2, &hi2);
    CHECK(lo2 == lo1 && hi2 == hi1);

    kp_boot_median_ci(x, 0, 0.95, 2000, 11, &lo, &hi);
    CHECK(isnan(lo) && isnan(hi));
}

static int cmp_dbl(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* The bootstrap distribution of a small sample's median can be enumerated
 * (n^n equally likely resamples); the percentile bounds must match its
 * quantiles wherever those are not at a jump of the distribution. */
static void test_boot_exact(void)
{
    for (int n = 4; n <= 5; n++) {
        double x[5] = {9, 0, 4, 1, 2.5}; /* unsorted, uneven gaps */
        int total = 1;
        for (int i = 0; i < n; i++)
            total *= n;
        double *meds = malloc((size_t)total * sizeof *meds);
        for (int t = 0; t < total; t++) {
            double r[5];
            for (int i = 0, tt = t; i < n; i++, tt /= n)
                r[i] = x[tt % n];
            qsort(r, (size_t)n, sizeof r[0], cmp_dbl);
            meds[t] = 0.5 * (r[(n - 1) / 2] + r[n / 2]);
        }
        qsort(meds, (size_t)total, sizeof meds[0], cmp_dbl);
        int compared = 0;
        for (double q = 0.02; q < 0.5; q += 0.02) {
            /* Compare a bound only where the exact CDF is flat within 0.005
             * of its level: at a jump, Monte Carlo may land on either side. */
            int l0 = (int)((q - 0.005) * total), l1 = (int)((q + 0.005) * total);
            int h0 = (int)((1 - q - 0.005) * total), h1 = (int)((1 - q + 0.005) * total);
            double lo, hi;
            kp_boot_median_ci(x, n, 1 - 2 * q, 100000, 17, &lo, &hi);
            if (meds[l0] == meds[l1]) {
                CHECK_NEAR(lo, meds[l0], 1e-12);
                compared++;
            }
            if (meds[h0] == meds[h1]) {
                CHECK_NEAR(hi, meds[h0], 1e-12);
                compared++;
            }
        }
        CHECK(compared >= 5);
        free(meds);
    }
}

static void test_boot_ratio(void)
{
    static double a[3000], b[3000];
    /* Symmetric noise around known medians: 2 ms and 1 ms. */
    kp_rng r = {8};
    for (int i = 0; i < 3000; i++) {
        a[i] = 2e-3 * (1 + 0.02 * (kp_rng_uniform(&r) - 0.5));
        b[i] = 1e-3 * (1 + 0.02 * (kp_rng_uniform(&r) - 0.5));
    }
    double lo, hi;
    kp_boot_ratio_ci(a, 3000, b, 3000, 0.95, 2000, 1, &lo, &hi);
    double point = kp_median(a, 3000) / kp_median(b, 3000);
    CHECK(lo <= point && point <= hi);
    CHECK(lo < 2 && hi > 2);
    CHECK(hi - lo < 0.01);

    /* Different sample counts, and determinism. */
    double lo2, hi2;
    kp_boot_ratio_ci(a, 200, b, 31, 0.95, 2000, 9, &lo, &hi);
    kp_boot_ratio_ci(a, 200, b, 31, 0.95, 2000, 9, &lo2, &hi2);
    CHECK(lo == lo2 && hi == hi2);
    CHECK(lo < 2 && hi > 2);

    double one_a[] = {6}, one_b[] = {3};
    kp_boot_ratio_ci(one_a, 1, one_b, 1, 0.95, 2000, 1, &lo, &hi);
    CHECK(lo == 2 && hi == 2);
    /* One side fixed: the interval comes from the other side alone. */
    kp_boot_ratio_ci(one_a, 1, b, 3000, 0.95, 2000, 1, &lo, &hi);
    CHECK(lo < 6000 && hi > 6000 && hi - lo < 30);
}

static void test_stop_rule(void)
{
    kp_stop_rule rule = {10, 2000, 0.01, 10.0};
    static double x[2000];
    int settled = -1;

    /* Tight samples: settled as soon as min_samples are in. */
    timing_like(x, 2000, 1e-3, 1e-6, 4);
    CHECK(kp_stop_check(&rule, x, 5, 0.1, &settled) == 0 && settled == 0);
    CHECK(kp_stop_check(&rule, x, 10, 0.1, &settled) == 1 && settled == 1);
    CHECK(kp_stop_check(&rule, x, 500, 0.1, &settled) == 1 && settled == 1);
    /* Out of budget before min_samples: stop, but nothing is settled. */
    CHECK(kp_stop_check(&rule, x, 5, 10.5, &settled) == 1 && settled == 0);
    /* Out of budget with tight samples: stop, settled. */
    CHECK(kp_stop_check(&rule, x, 50, 12, &settled) == 1 && settled == 1);

    /* Noisy samples (uniform 0.5..1.5: about 2% half-width at n=2000). */
    kp_rng r = {5};
    for (int i = 0; i < 2000; i++)
        x[i] = 0.5 + kp_rng_uniform(&r);
    CHECK(kp_stop_check(&rule, x, 50, 1.0, &settled) == 0 && settled == 0);
    CHECK(kp_stop_check(&rule, x, 1500, 1.0, &settled) == 0 && settled == 0);
    CHECK(kp_stop_check(&rule, x, 100, 10.0, &settled) == 1 && settled == 0); /* budget */
    CHECK(kp_stop_check(&rule, x, 2000, 1.0, &settled) == 1 && settled == 0); /* max */
    /* A looser target settles the same noise. */
    kp_stop_rule loose = {10, 2000, 0.05, 10.0};
    CHECK(kp_stop_check(&loose, x, 1500, 1.0, &settled) == 1 && settled == 1);
    /* settled may be NULL; n = 0 continues until the budget says stop. */
    CHECK(kp_stop_check(&rule, x, 50, 1.0, NULL) == 0);
    CHECK(kp_stop_check(&rule, NULL, 0, 1.0, &settled) == 0 && settled == 0);
    CHECK(kp_stop_check(&rule, NULL, 0, 11.0, &settled) == 1 && settled == 0);

    CHECK(kp_rel_halfwidth(x, 1, 1) == 0);
    CHECK(isinf(kp_rel_halfwidth(x, 0, 1)));
    double hw = kp_rel_halfwidth(x, 2000, 1);
    CHECK(hw > 0.01 && hw < 0.05);
}

static void test_rng(void)
{
    /* splitmix64's published first output for state 0. */
    kp_rng r = {0};
    CHECK(kp_rng_next(&r) == 0xe220a8397b1dcdafULL);

    kp_rng a = {123}, b = {123};
    for (int i = 0; i < 100; i++)
        CHECK(kp_rng_next(&a) == kp_rng_next(&b));

    kp_rng u = {77};
    double sum = 0, umin = 1, umax = 0;
    for (int i = 0; i < 100000; i++) {
        double v = kp_rng_uniform(&u);
        sum += v;
        umin = v < umin ? v : umin;
        umax = v > umax ? v : umax;
    }
    CHECK(umin >= 0 && umax < 1);
    CHECK_NEAR(sum / 100000, 0.5, 0.01);

    kp_rng g = {3};
    uint64_t ns[] = {1, 2, 7, 1000, 0xffffffffULL, 0x100000000ULL, 1ULL << 40, (1ULL << 63) + 5, UINT64_MAX};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int in_range = 1;
        for (int i = 0; i < 10000; i++)
            if (kp_rng_below(&g, ns[k]) >= ns[k])
                in_range = 0;
        CHECK(in_range);
    }
    CHECK(kp_rng_below(&g, 0) == 0);

    /* Chi-square over 10 bins; 33.7 is the 99.99th percentile at 9 dof. */
    int bins[10] = {0};
    for (int i = 0; i < 100000; i++)
        bins[kp_rng_below(&g, 10)]++;
    double chi2 = 0;
    for (int i = 0; i < 10; i++)
        chi2 += (bins[i] - 10000.0) * (bins[i] - 10000.0) / 10000.0;
    CHECK(chi2 < 33.7);

    /* A range just over 2^63 is where a plain modulo would be most biased:
     * half the values would come up twice as often. */
    uint64_t n = (1ULL << 63) + (1ULL << 62);
    int upper = 0;
    for (int i = 0; i < 20000; i++)
        upper += kp_rng_below(&g, n) >= n / 2;
    CHECK_NEAR(upper / 20000.0, 0.5, 0.02);

    uint64_t s1 = kp_entropy_seed(), s2 = kp_entropy_seed(), s3 = kp_entropy_seed();
    CHECK(s1 != s2 && s2 != s3 && s1 != s3);
    CHECK(s1 != 0 && s2 != 0 && s3 != 0);
}

int main(void)
{
    test_quantiles();
    test_boot_median();
    test_boot_exact();
    test_boot_ratio();
    test_stop_rule();
    test_rng();
    TEST_MAIN_END();
}
