/* test.h: a tiny assertion kit. One executable per unit; each check prints
 * file:line and the expression when it fails, and main returns the count. */
#ifndef KP_TEST_H
#define KP_TEST_H

#include <math.h>
#include <stdio.h>

static int kp_test_failures;
static int kp_test_checks;

#define CHECK(expr)                                                                        \
    do {                                                                                   \
        kp_test_checks++;                                                                  \
        if (!(expr)) {                                                                     \
            kp_test_failures++;                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr);       \
        }                                                                                  \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                              \
    do {                                                                                   \
        double kp_a_ = (double)(a), kp_b_ = (double)(b);                                   \
        kp_test_checks++;                                                                  \
        if (!(fabs(kp_a_ - kp_b_) <= (tol))) {                                             \
            kp_test_failures++;                                                            \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.17g, %s = %.17g (tol %g)\n", \
                    __FILE__, __LINE__, #a, kp_a_, #b, kp_b_, (double)(tol));              \
        }                                                                                  \
    } while (0)

#define TEST_MAIN_END()                                                                    \
    do {                                                                                   \
        printf("%s: %d checks, %d failed\n", __FILE__, kp_test_checks, kp_test_failures);  \
        return kp_test_failures ? 1 : 0;                                                   \
    } while (0)

#endif
