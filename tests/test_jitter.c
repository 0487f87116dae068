/* Tests of core/jitter.c: the ratio's mean is 1 and its log's spread is the
 * sigma asked for (the log-normal's moments), each kind draws with its own
 * sigma, nothing is drawn for a kind of sigma 0, the same seed gives the
 * same draws, and bad sigmas are refused naming the profile key. */
#include <criterion/criterion.h>
#include <math.h>

#include "../core/jitter.h"

#define N_DRAWS 200000

/* Mean of the ratio and standard deviation of its log over N_DRAWS draws. */
static void moments(struct jitter *j, int rank, enum op_kind kind, double *mean, double *sd_log)
{
    double sum = 0, sum_l = 0, sum_ll = 0;
    for (int i = 0; i < N_DRAWS; i++) {
        double r = jitter_compute_s(j, rank, kind, 1.0), l = log(r);
        sum += r;
        sum_l += l;
        sum_ll += l * l;
    }
    *mean = sum / N_DRAWS;
    double m_l = sum_l / N_DRAWS;
    *sd_log = sqrt(sum_ll / N_DRAWS - m_l * m_l);
}

/* Tolerances: the sample mean of LogNormal(-s^2/2, s) has standard error
 * sqrt(e^{s^2} - 1) / sqrt(N): 6.7e-4 at s = 0.3, N = 2e5; 1% is 15 of
 * them. The sample sd of the normal log has relative error ~ 1/sqrt(2N) =
 * 0.16%; 2% is 12 of them. */
Test(jitter, ratio_has_mean_one_and_the_sigma_of_its_kind)
{
    struct err e = {0};
    struct jitter_spec s = {.forward_sigma = 0.3, .backward_sigma = 0.1, .update_sigma = 0};
    struct jitter *j = jitter_create(&s, 42, 2, &e);
    cr_assert_not_null(j, "%s", e.msg);
    double mean, sd;
    moments(j, 0, OP_FORWARD, &mean, &sd);
    fprintf(stderr, "jitter forward sigma 0.3: mean ratio %.5f (want 1, tol 1%%), sd of log "
            "%.5f (want 0.3, tol 2%%)\n", mean, sd);
    cr_expect(fabs(mean - 1) < 0.01, "mean ratio %g", mean);
    cr_expect(fabs(sd / 0.3 - 1) < 0.02, "sd of log %g", sd);
    moments(j, 1, OP_BACKWARD, &mean, &sd);
    cr_expect(fabs(mean - 1) < 0.01, "mean ratio %g", mean);
    cr_expect(fabs(sd / 0.1 - 1) < 0.02, "sd of log %g", sd);
    /* sigma 0 and communication ops: the time as it is, exactly */
    cr_expect_eq(jitter_compute_s(j, 0, OP_UPDATE, 2.5), 2.5);
    cr_expect_eq(jitter_compute_s(j, 0, OP_ALLREDUCE, 2.5), 2.5);
    cr_expect_eq(jitter_compute_s(NULL, 0, OP_FORWARD, 2.5), 2.5);
    jitter_free(j);
}

Test(jitter, same_seed_same_draws_and_kinds_without_spread_draw_nothing)
{
    struct err e = {0};
    struct jitter_spec s = {.forward_sigma = 0.2, .backward_sigma = 0.2};
    struct jitter *a = jitter_create(&s, 7, 3, &e), *b = jitter_create(&s, 7, 3, &e),
                  *c = jitter_create(&s, 8, 3, &e);
    cr_assert(a && b && c, "%s", e.msg);
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        double x = jitter_compute_s(a, 2, OP_FORWARD, 1.0);
        /* b's stream sees UPDATEs (sigma 0) between: they must not draw */
        jitter_compute_s(b, 2, OP_UPDATE, 1.0);
        cr_assert_eq(x, jitter_compute_s(b, 2, OP_FORWARD, 1.0), "draw %d", i);
        differ += x != jitter_compute_s(c, 2, OP_FORWARD, 1.0);
    }
    cr_expect_eq(differ, 100, "another seed gives other draws");
    jitter_free(a);
    jitter_free(b);
    jitter_free(c);
    jitter_free(NULL);
}

Test(jitter, refuses_bad_sigmas_naming_the_profile_key)
{
    struct err e = {0};
    struct jitter_spec s = {.backward_sigma = -0.5};
    cr_expect_null(jitter_create(&s, 1, 2, &e));
    cr_expect_eq(e.code, ERR_INPUT);
    cr_expect(strstr(e.msg, "jitter_backward_sigma: -0.5 is not allowed"), "%s", e.msg);
    e = (struct err){0};
    s = (struct jitter_spec){.update_sigma = NAN};
    cr_expect_null(jitter_create(&s, 1, 2, &e));
    cr_expect(strstr(e.msg, "jitter_update_sigma"), "%s", e.msg);
    e = (struct err){0};
    s = (struct jitter_spec){.forward_sigma = 0.1};
    cr_expect_null(jitter_create(&s, 1, 0, &e));
    cr_expect(strstr(e.msg, "0 ranks"), "%s", e.msg);
    cr_expect(jitter_is_set(&s));
    cr_expect_not(jitter_is_set(&(struct jitter_spec){0}));
}
