/* core/goodput: the closed forms against values worked by hand, and the
 * model a set of hand-made reports implies. */
#include <criterion/criterion.h>

#include <math.h>

#include "../core/config.h"
#include "../core/goodput.h"
#include "../core/report.h"

/* Relative tolerance of the closed forms: they are a few flops each. */
#define TOL 1e-12

static void expect_close(double got, double want, const char *what)
{
    double rel = fabs(got - want) / fabs(want);
    cr_expect(rel <= TOL, "%s: %.15g, expected %.15g (relative difference %.3g > %.0e)", what,
              got, want, rel, TOL);
}

Test(goodput, job_mtbf_is_the_device_mtbf_over_the_devices)
{
    /* 1000 devices, each failing once in 1000 h: the job once an hour. */
    expect_close(goodput_job_mtbf_s(1000 * 3600.0, 1000), 3600, "job MTBF");
    cr_expect(isnan(goodput_job_mtbf_s(3600, 0)), "no devices: no MTBF");
    cr_expect(isnan(goodput_job_mtbf_s(0, 8)), "a zero MTBF is no MTBF");
}

Test(goodput, young_interval_is_sqrt_2cm)
{
    /* C = 50 s, M = 1 h: sqrt(2 x 50 x 3600) = sqrt(360000) = 600 s. */
    expect_close(goodput_young_interval_s(50, 3600), 600, "tau*");
    cr_expect_eq(goodput_young_interval_s(0, 3600), 0, "free checkpoints: as often as possible");
    cr_expect(isnan(goodput_young_interval_s(50, 0)), "no MTBF: no optimum");
    cr_expect(isnan(goodput_young_interval_s(50, INFINITY)), "never failing: no optimum");
}

Test(goodput, daly_interval_adds_the_higher_order_terms)
{
    /* C/2M = 50/7200 = 1/144, sqrt = 1/12:
     * 600 (1 + 1/36 + 1/1296) - 50 = 600 x 1333/1296 - 50 = 567.1296296... */
    expect_close(goodput_daly_interval_s(50, 3600), 600.0 * 1333 / 1296 - 50, "Daly's tau");
    /* A checkpoint as long as two MTBFs: Daly says checkpoint every M. */
    expect_close(goodput_daly_interval_s(7200, 3600), 3600, "Daly's tau at C = 2M");
    cr_expect(isnan(goodput_daly_interval_s(50, -1)));
}

Test(goodput, first_order_goodput_at_the_optimum)
{
    /* At tau* = 600 s with C = 50 s, M = 3600 s: 1 - 50/600 - 600/7200 =
     * 1 - 1/12 - 1/12 = 5/6; a restart of 36 s takes 36/3600 = 1% more. */
    expect_close(goodput_first_order(600, 50, 0, 3600), 5.0 / 6, "goodput at tau*");
    expect_close(goodput_first_order(600, 50, 36, 3600), 5.0 / 6 - 0.01, "with R = 36 s");
    /* tau* is the maximum: a step either way loses. */
    double best = goodput_first_order(600, 50, 0, 3600);
    cr_expect_lt(goodput_first_order(590, 50, 0, 3600), best);
    cr_expect_lt(goodput_first_order(610, 50, 0, 3600), best);
    /* At 60 s (ten times too often): 1 - 50/60 - 60/7200 = 0.158333... */
    expect_close(goodput_first_order(60, 50, 0, 3600), 1 - 50.0 / 60 - 60.0 / 7200, "at 60 s");
    cr_expect(isnan(goodput_first_order(0, 50, 0, 3600)));
}

Test(goodput, steps_and_seconds_convert_by_the_step_time)
{
    expect_close(goodput_steps_to_s(20, 0.05), 1.0, "20 steps of 50 ms");
    expect_close(goodput_s_to_steps(1.5, 0.05), 30, "1.5 s in steps of 50 ms");
    cr_expect(isnan(goodput_s_to_steps(1.5, 0)), "no step time: no steps");
}

/* Llama 3 405B (Meta, "The Llama 3 Herd of Models", 2024, section 3.3.4):
 * 16,384 GPUs, 466 interruptions in 54 days (one every ~2.8 h), >90%
 * effective training time. With a job MTBF of 3 h, a checkpoint that takes
 * 30 s and 2 min to detect and relaunch, Young's interval is sqrt(2 x 30 x
 * 10800) = 805 s, about 13 min, and the first-order goodput there is
 * 1 - sqrt(2C/M) - R/M = 1 - sqrt(60/10800) - 120/10800 = 0.9144: the order
 * of the figure Meta reports. */
Test(goodput, llama3_scale_keeps_over_90_percent_at_the_optimum)
{
    double job_s = goodput_job_mtbf_s(3 * 3600.0 * 16384, 16384);
    expect_close(job_s, 10800, "job MTBF of 16,384 devices");
    double tau = goodput_young_interval_s(30, job_s);
    expect_close(tau, sqrt(648000.0), "tau*");
    double g = goodput_first_order(tau, 30, 120, job_s);
    expect_close(g, 1 - sqrt(60.0 / 10800) - 120.0 / 10800, "goodput at tau*");
    cr_expect_gt(g, 0.9);
}

/* --- The model of a set of reports ------------------------------------------ */

/* Two points of a checkpoint sweep, each 100 steps of 64 samples at 640
 * samples/s (10 s), checkpointing every 10 steps (9 checkpoints, after
 * steps 10 to 90 and none after the last, as sim/failures.h writes them:
 * 1.8 s of writing in all, 0.2 s each), one failure each costing 0.5 s to
 * detect and 1.5 s to relaunch. The model counted 10 checkpoints (steps /
 * K), and C came out 0.18 s. */
static void make_points(struct report r[2], struct config c[2])
{
    for (int i = 0; i < 2; i++) {
        config_init(&c[i]);
        c[i].steps = 100;
        c[i].batch = 64;
        c[i].checkpoint_every = 10;
        report_init(&r[i]);
        r[i].mode = "sim";
        r[i].devices = 4;
        r[i].config = &c[i];
        r[i].throughput_samples_per_s = 640;
        r[i].failure.happened = true;
        r[i].failure.n_failures = 1;
        r[i].failure.detect_s = 0.5;
        r[i].failure.relaunch_s = 1.5;
        r[i].failure.checkpoint_s = 1.8;
    }
    r[0].step_time_s.p50 = 0.12;
    r[1].step_time_s.p50 = 0.1;
}

Test(goodput, model_of_reports_observes_the_mtbf_and_the_costs)
{
    struct report r[2];
    struct config c[2];
    make_points(r, c);
    const struct report *rs[] = {&r[0], &r[1]};
    struct goodput_model m;
    cr_assert(goodput_model_of(rs, 2, &m));
    expect_close(m.step_s, 0.1, "step: the least p50");
    expect_close(m.checkpoint_s, 3.6 / 18, "C: 3.6 s over 18 checkpoints");
    expect_close(m.restart_s, 2, "R: detection + relaunch");
    expect_close(m.job_mtbf_s, 20.0 / 2, "M: 20 s of runs over 2 failures");
    cr_expect(m.is_mtbf_observed);
    cr_expect_eq(m.n_failures, 2);
    for (int i = 0; i < 2; i++) config_release(&c[i]);
}

Test(goodput, model_of_reports_takes_the_mtbf_option_when_given)
{
    struct report r[2];
    struct config c[2];
    make_points(r, c);
    c[0].mtbf_hours = c[1].mtbf_hours = 2;   /* per device; 4 devices: the job every 30 min */
    const struct report *rs[] = {&r[0], &r[1]};
    struct goodput_model m;
    cr_assert(goodput_model_of(rs, 2, &m));
    expect_close(m.job_mtbf_s, 1800, "M from --mtbf");
    cr_expect(!m.is_mtbf_observed);
    for (int i = 0; i < 2; i++) config_release(&c[i]);
}

Test(goodput, model_of_reports_without_failures_has_no_mtbf)
{
    struct report r;
    report_init(&r);
    r.step_time_s.p50 = 0.01;
    const struct report *rs[] = {&r};
    struct goodput_model m;
    cr_assert(goodput_model_of(rs, 1, &m));
    cr_expect(isnan(m.job_mtbf_s), "no config, no failure: M unknown");
    cr_expect_eq(m.checkpoint_s, 0);
    report_init(&r);   /* no step time at all: nothing to model */
    cr_expect(!goodput_model_of(rs, 1, &m));
}
