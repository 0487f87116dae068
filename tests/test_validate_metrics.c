/* bench/validate_metrics.c: each figure of `strata validate` on hand-made
 * numbers whose value is known in closed form (worked out beside each). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../bench/validate_metrics.h"

#define TOL 1e-12

#define EXPECT_NEAR(got, want, what)                                                        \
    cr_expect(fabs((got) - (want)) < TOL, "%s: %.17g, want %.17g (|diff| %.3g, tolerance %g)", \
              what, (double)(got), (double)(want), fabs((double)(got) - (want)), TOL)

Test(validate_metrics, tvd_of_the_issues_measured_and_simulated_histograms_is_5_12)
{
    /* issue 11: measured [32, 206, 348, 10, 4], simulated [1, 1, 598], both
     * of 600 pushes: 0.5 (31 + 205 + 250 + 10 + 4) / 600 = 500 / 1200 = 5/12,
     * the "0.42" the issue quotes; the shorter one is padded with zeros. */
    const int64_t measured[] = {32, 206, 348, 10, 4}, simulated[] = {1, 1, 598};
    EXPECT_NEAR(validate_tvd(measured, 5, simulated, 3), 5.0 / 12, "measured vs simulated");
    EXPECT_NEAR(validate_tvd(simulated, 3, measured, 5), 5.0 / 12, "symmetric");
}

Test(validate_metrics, tvd_is_0_for_one_distribution_1_for_disjoint_ones)
{
    const int64_t a[] = {1, 2}, b[] = {2, 4, 0}, c[] = {0, 0, 7}, half[] = {1, 1}, one[] = {3};
    EXPECT_NEAR(validate_tvd(a, 2, b, 3), 0, "[1,2] and [2,4,0]: the same shares");
    EXPECT_NEAR(validate_tvd(a, 2, c, 3), 1, "no common support");
    /* [.5, .5] against [1, 0]: 0.5 (0.5 + 0.5) */
    EXPECT_NEAR(validate_tvd(half, 2, one, 1), 0.5, "[1,1] against [3]");
    cr_expect(isnan(validate_tvd(a, 2, NULL, 0)), "an empty histogram has no distribution");
    const int64_t zero[] = {0, 0}, negative[] = {2, -1};
    cr_expect(isnan(validate_tvd(a, 2, zero, 2)), "all zero counts");
    cr_expect(isnan(validate_tvd(a, 2, negative, 2)), "a negative count");
}

Test(validate_metrics, kendall_tau_is_1_for_the_same_order_and_minus_1_reversed)
{
    const double x[] = {0.010, 0.020, 0.030, 0.040};
    const double same[] = {1, 2, 3, 9}, reversed[] = {9, 3, 2, 1};
    EXPECT_NEAR(validate_kendall_tau(x, same, 4), 1, "same order, other values");
    EXPECT_NEAR(validate_kendall_tau(x, reversed, 4), -1, "reversed");
}

Test(validate_metrics, kendall_tau_of_one_swapped_pair_is_two_thirds)
{
    /* 4 items, 6 pairs; swapping the middle two makes 1 pair discordant:
     * (5 - 1) / 6 = 2/3 */
    const double x[] = {1, 2, 3, 4}, y[] = {1, 3, 2, 4};
    EXPECT_NEAR(validate_kendall_tau(x, y, 4), 2.0 / 3, "one adjacent swap");
}

Test(validate_metrics, kendall_tau_b_discounts_ties)
{
    /* y ties items 0 and 1: C = 2, D = 0, n0 = 3, T_x = 0, T_y = 1:
     * tau-b = 2 / sqrt(3 * 2) = 0.8165 (tau-a would say 2/3) */
    const double x[] = {1, 2, 3}, y[] = {5, 5, 6};
    EXPECT_NEAR(validate_kendall_tau(x, y, 3), 2 / sqrt(6), "one tie in y");
    /* tied the same way on both sides: a perfect match, 1 */
    const double xt[] = {1, 1, 2}, yt[] = {4, 4, 8};
    EXPECT_NEAR(validate_kendall_tau(xt, yt, 3), 1, "the same tie both sides");
    cr_expect(isnan(validate_kendall_tau(x, y, 1)), "one item has no pair");
    const double flat[] = {2, 2, 2};
    cr_expect(isnan(validate_kendall_tau(x, flat, 3)), "all tied: no order");
}

Test(validate_metrics, inflation_error_compares_the_ratios_of_disturbed_to_undisturbed)
{
    /* predicted 10 ms -> 20 ms (x2.0), measured 10 ms -> 25 ms (x2.5):
     * 2.0 / 2.5 - 1 = -0.2, the simulator underestimates the straggler */
    EXPECT_NEAR(validate_inflation_error(0.010, 0.010, 0.020, 0.025), -0.2, "x2 vs x2.5");
    /* the undisturbed step times cancel: predicted 5 -> 15 (x3), measured
     * 8 -> 12 (x1.5): 3 / 1.5 - 1 = +1 */
    EXPECT_NEAR(validate_inflation_error(5, 8, 15, 12), 1, "x3 vs x1.5");
    EXPECT_NEAR(validate_inflation_error(1, 2, 3, 6), 0, "the same ratio");
    cr_expect(isnan(validate_inflation_error(0, 1, 1, 1)), "a step of 0 s");
    cr_expect(isnan(validate_inflation_error(1, 1, NAN, 1)), "no prediction");
}

Test(validate_metrics, median_and_p90_interpolate_between_order_statistics)
{
    const double e[] = {0.30, 0.05, 0.10, 0.02};
    /* sorted 0.02 0.05 0.10 0.30: median (0.05 + 0.10) / 2; p90 at position
     * 0.9 * 3 = 2.7: 0.10 + 0.7 (0.30 - 0.10) = 0.24 */
    EXPECT_NEAR(validate_quantile(e, 4, 0.5), 0.075, "median of four");
    EXPECT_NEAR(validate_quantile(e, 4, 0.9), 0.24, "p90 of four");
    EXPECT_NEAR(validate_quantile(e, 3, 0.5), 0.10, "median of 0.30, 0.05, 0.10");
    double eleven[11];
    for (int i = 0; i < 11; i++) eleven[i] = 10 - i;   /* 10 .. 0 */
    EXPECT_NEAR(validate_quantile(eleven, 11, 0.9), 9, "p90 of 0..10: position 9");
    const double with_nan[] = {NAN, 1, 3};
    EXPECT_NEAR(validate_quantile(with_nan, 3, 0.5), 2, "a NaN is left out");
    cr_expect(isnan(validate_quantile(e, 0, 0.5)), "no values");
    cr_expect_eq(e[0], 0.30, "the input is not sorted in place");
}

Test(validate_metrics, load_average_is_the_first_figure_of_proc_loadavg)
{
    double l = -1;
    struct err e = {0};
    cr_expect_eq(validate_load_parse("0.42 0.30 0.25 1/123 4567\n", &l, &e), 0, "%s", e.msg);
    EXPECT_NEAR(l, 0.42, "load");
    cr_expect_eq(validate_load_parse("busy", &l, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "/proc/loadavg"), "%s", e.msg);
    cr_expect_eq(validate_load_parse("-1 0 0", &l, &e), ERR_INPUT, "a negative load");
}

Test(validate_metrics, a_run_is_quiet_only_below_half_a_process_per_core)
{
    /* 2 cores: 1.0 allowed before; after, also the 3 ranks of the largest job */
    struct validate_load l = {.cores = 2, .before_1min = 0.9, .after_1min = 3.8, .own_ranks = 3};
    validate_load_judge(&l);
    cr_expect(l.is_quiet, "0.9 before, 3.8 after with 3 own ranks");
    EXPECT_NEAR(l.threshold_per_core, 0.5, "threshold");
    l.before_1min = 1.1;
    validate_load_judge(&l);
    cr_expect(!l.is_quiet, "1.1 before on 2 cores");
    l.before_1min = 0.2, l.after_1min = 4.2;
    validate_load_judge(&l);
    cr_expect(!l.is_quiet, "4.2 after: 0.2 more than 1.0 + 3 own ranks");
    l.after_1min = NAN;
    validate_load_judge(&l);
    cr_expect(!l.is_quiet, "an unknown load is not quiet");
}
