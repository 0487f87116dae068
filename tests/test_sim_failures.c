/* sim/failures.c: the failure timeline (restart and shrink), step-exact on
 * constant steps, against Young and Daly's first-order goodput, and through
 * bench/run.c on the ideal cluster. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/run.h"
#include "../core/config.h"
#include "../sim/failures.h"
#include "helpers.h"

/* Steps of 12 s, as mirrored's on the ideal cluster with UNIFORM_4 (4
 * layers x 3 units); after a shrink, 16 s. */
#define STEPS 10
static double twelve[STEPS] = {12, 12, 12, 12, 12, 12, 12, 12, 12, 12};
static double sixteen[STEPS] = {16, 16, 16, 16, 16, 16, 16, 16, 16, 16};

static int on_fewer(void *ctx, int n_workers, struct failure_run *run, struct err *e)
{
    (void)ctx;
    (void)e;
    cr_assert_eq(n_workers, 3, "shrunk from 4 to %d", n_workers);
    *run = (struct failure_run){.step_s = sixteen};
    return 0;
}

/* on_fewer, with each of the 3 workers busy 1.5 s computing and 3 s
 * communicating a step */
static int on_fewer_busy(void *ctx, int n_workers, struct failure_run *run, struct err *e)
{
    static double compute3[3] = {15, 15, 15}, comm3[3] = {30, 30, 30};
    TRY(on_fewer(ctx, n_workers, run, e));
    run->compute_s = compute3;
    run->comm_s = comm3;
    return 0;
}

static struct failure_setup setup_of(enum failure_policy policy, const char *fail, int every)
{
    struct failure_setup s = {.policy = policy, .n_workers = 4, .steps = STEPS,
                              .checkpoint_every = every, .step_s = twelve,
                              .step_times = on_fewer};
    struct err e = {0};
    cr_assert_eq(failure_parse(fail, &s.failure, &e), 0, "%s", e.msg);
    return s;
}

static struct failure_outcome timeline(const struct failure_setup *s)
{
    struct failure_outcome o;
    struct err e = {0};
    cr_assert_eq(failure_timeline(s, &o, &e), 0, "%s", e.msg);
    /* every second of the run is surviving work, checkpoints or lost */
    cr_assert_float_eq(o.total_s, o.work_s + o.checkpoint_s + failure_lost_s(&o),
                       1e-12 * fmax(1, o.total_s),
                       "total %g = work %g + checkpoints %g + lost %g", o.total_s, o.work_s,
                       o.checkpoint_s, failure_lost_s(&o));
    return o;
}

/* What a recovery cost, as the closed forms of a test give it. */
struct recovery {
    double redone_s;        /* work lost and run again */
    int steps_redone;       /* whole steps among it */
    double relaunch_s;      /* relaunch and loading */
    double checkpoint_s;    /* checkpoints or commits written */
    double total_s;         /* the run's end */
};

/* o cost what want says. */
static void expect_recovery(const struct failure_outcome *o, struct recovery want)
{
    cr_assert_float_eq(o->redone_s, want.redone_s, 1e-9, "redone %g", o->redone_s);
    cr_assert_eq(o->steps_redone, want.steps_redone);
    cr_assert_float_eq(o->relaunch_s, want.relaunch_s, 1e-12, "relaunch and loading %g",
                       o->relaunch_s);
    cr_assert_float_eq(o->checkpoint_s, want.checkpoint_s, 1e-12, "checkpoints or commits %g",
                       o->checkpoint_s);
    cr_assert_float_eq(o->total_s, want.total_s, 1e-9, "end %g", o->total_s);
}

/* Restart, free costs: step k ends at 12k; a failure at T goes back to the
 * last checkpoint c, losing T - 12c, and the run ends at T + 12 (S - c). */
Test(sim_failures, restart_loses_the_work_since_the_last_checkpoint)
{
    struct {
        const char *fail;
        int every;
        double redone;
        int steps_redone, c;
    } cases[] = {
        {"1@40s", 2, 16, 1, 2},   /* 3 steps done (36): checkpoint 2 (24) */
        {"1@50s", 2, 2, 0, 4},    /* 4 done (48): checkpoint 4 */
        {"0@40s", 0, 40, 3, 0},   /* no checkpoints: from the start */
        {"3@5s", 3, 5, 0, 0},     /* before the first step ends */
        {"1@3", 2, 12, 1, 2},     /* as step 3 starts (36): checkpoint 2 */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        struct failure_setup s = setup_of(FAILURE_RESTART, cases[k].fail, cases[k].every);
        struct failure_outcome o = timeline(&s);
        double T = strchr(cases[k].fail, 's') ? atof(strchr(cases[k].fail, '@') + 1) : 36;
        cr_assert_eq(o.n_failures, 1, "%s", cases[k].fail);
        cr_assert_float_eq(o.first_time_s, T, 1e-12, "%s", cases[k].fail);
        cr_assert_float_eq(o.redone_s, cases[k].redone, 1e-9, "%s: redone %g", cases[k].fail,
                           o.redone_s);
        cr_assert_eq(o.steps_redone, cases[k].steps_redone, "%s", cases[k].fail);
        cr_assert_float_eq(o.total_s, T + 12.0 * (STEPS - cases[k].c), 1e-9, "%s: end %g",
                           cases[k].fail, o.total_s);
        cr_assert_float_eq(o.work_s, 12.0 * STEPS, 1e-9);
    }
    /* a failure after the run changes nothing */
    struct failure_setup s = setup_of(FAILURE_RESTART, "0@1000s", 0);
    struct failure_outcome o = timeline(&s);
    cr_assert_eq(o.n_failures, 0);
    cr_assert_float_eq(o.total_s, 12.0 * STEPS, 1e-12);
    cr_assert_eq(o.first_rank, -1);
}

/* Restart with every cost: checkpoints of 1 s after steps 2, 4, 6, 8,
 * detection 2 s, relaunch 3 s, loading 4 s. Step 3 runs 37 to 49 and is cut
 * at 40; 40 - 25 (checkpoint 2 complete) is redone; the ranks are back at
 * 40 + 2 + 7 = 49 and run steps 2 to 9 with checkpoints 4, 6, 8: 148. */
Test(sim_failures, restart_pays_checkpoints_detection_relaunch_and_loading)
{
    struct failure_setup s = setup_of(FAILURE_RESTART, "1@40s", 2);
    s.costs = (struct failure_costs){.checkpoint_s = 1, .load_s = 4, .commit_s = 100,
                                     .detect_s = 2, .relaunch_s = 3};
    struct failure_outcome o = timeline(&s);
    /* checkpoint_s: checkpoints 2, 4, 6, 8 (commits are shrink's) */
    expect_recovery(&o, (struct recovery){.redone_s = 15, .steps_redone = 1, .relaunch_s = 7,
                                          .checkpoint_s = 4, .total_s = 148});
    cr_assert_float_eq(o.detect_s, 2, 1e-12);
    cr_assert_float_eq(failure_goodput(&o), 120.0 / 148, 1e-12);

    /* without a failure, the checkpoints alone: 120 + 4 */
    s = setup_of(FAILURE_RESTART, "", 2);
    s.costs.checkpoint_s = 1;
    o = timeline(&s);
    cr_assert_eq(o.n_failures, 0);
    cr_assert_float_eq(o.total_s, 124, 1e-12);

    /* A failure while checkpoint 2 is written (24 to 34, cut at 30): the
     * 6 s written are spent, steps 0 and 1 are redone from the start. */
    s = setup_of(FAILURE_RESTART, "2@30s", 2);
    s.costs.checkpoint_s = 10;
    o = timeline(&s);
    cr_assert_float_eq(o.redone_s, 24, 1e-9);
    cr_assert_eq(o.steps_redone, 2);
    cr_assert_float_eq(o.checkpoint_s, 6 + 40, 1e-9);
    cr_assert_float_eq(o.total_s, 30 + 120 + 40, 1e-9);
}

/* Shrink: commits of 0.5 s after every step; the failure at 40 cuts step 3
 * (37.5 to 49.5) 2.5 s in; back to commit 3 at 40 + 2 + 3 (no loading: the
 * state is in memory), then steps 3 to 9 on 3 workers at 16 s, commits
 * after 4 to 9: 45 + 112 + 3 = 160. */
Test(sim_failures, shrink_goes_back_to_the_last_commit_on_fewer_workers)
{
    struct failure_setup s = setup_of(FAILURE_SHRINK, "1@40s", 0);
    s.commit_every = 1;
    s.costs = (struct failure_costs){.checkpoint_s = 100, .load_s = 100, .commit_s = 0.5,
                                     .detect_s = 2, .relaunch_s = 3};
    struct failure_outcome o = timeline(&s);
    /* checkpoint_s: the commits */
    expect_recovery(&o, (struct recovery){.redone_s = 2.5, .steps_redone = 0, .relaunch_s = 3,
                                          .checkpoint_s = 4.5, .total_s = 160});
    cr_assert_float_eq(o.work_s, 3 * 12 + 7 * 16, 1e-9);
    cr_assert_eq(o.n_workers_end, 3);

    /* who did the surviving work: steps 0-2 on the 4 (1 s of compute a
     * step each), 3-9 on the 3 left (1.5 s), rank 1 gone at 40 s */
    double compute4[4] = {10, 10, 10, 10}, comm4[4] = {20, 20, 20, 20};
    s.compute_s = compute4;
    s.comm_s = comm4;
    s.step_times = on_fewer_busy;
    double compute[4], comm[4], down_from[4], step_s[STEPS];
    int64_t steps[4];
    struct failure_busy busy = {compute, comm, down_from, steps, step_s};
    s.busy = &busy;
    o = timeline(&s);
    for (int w = 0; w < 4; w++) {
        bool is_dead = w == 1;
        cr_expect_float_eq(compute[w], is_dead ? 3 : 3 + 7 * 1.5, 1e-12, "rank %d: %g", w,
                           compute[w]);
        cr_expect_float_eq(comm[w], is_dead ? 6 : 6 + 7 * 3.0, 1e-12, "rank %d: %g", w, comm[w]);
        cr_expect_eq(steps[w], is_dead ? 3 : STEPS, "rank %d", w);
        cr_expect(is_dead ? down_from[w] == 40 : isinf(down_from[w]), "rank %d: %g", w,
                  down_from[w]);
    }
    for (int k = 0; k < STEPS; k++) cr_expect_eq(step_s[k], k < 3 ? 12 : 16, "step %d", k);
    s.busy = NULL;
    s.step_times = on_fewer;

    /* one worker has no survivor to shrink to */
    s.n_workers = 1;
    struct err e = {0};
    cr_assert_eq(failure_timeline(&s, &o, &e), ERR_RUN);
    cr_assert(strstr(e.msg, "shrink") && strstr(e.msg, "no survivor"), "%s", e.msg);
}

/* The relaunch starts every rank: relaunch_s + relaunch_per_rank_s for
 * each, workers and servers. 4 workers and a server restarted: 1 + 0.5 x 5
 * = 3.5 s; shrunk to 3 workers and the server: 1 + 0.5 x 4 = 3 s. */
Test(sim_failures, relaunch_grows_with_the_ranks_started)
{
    struct failure_setup s = setup_of(FAILURE_RESTART, "1@40s", 0);
    s.n_servers = 1;
    s.costs = (struct failure_costs){.relaunch_s = 1, .relaunch_per_rank_s = 0.5};
    struct failure_outcome o = timeline(&s);
    cr_expect_float_eq(o.relaunch_s, 3.5, 1e-12, "restart of 5 ranks: %g", o.relaunch_s);
    s.n_servers = 3;
    o = timeline(&s);
    cr_expect_float_eq(o.relaunch_s, 4.5, 1e-12, "restart of 7 ranks: %g", o.relaunch_s);
    s = setup_of(FAILURE_SHRINK, "1@40s", 0);
    s.n_servers = 1;
    s.costs = (struct failure_costs){.relaunch_s = 1, .relaunch_per_rank_s = 0.5};
    o = timeline(&s);
    cr_expect_float_eq(o.relaunch_s, 3, 1e-12, "shrink to 4 ranks: %g", o.relaunch_s);
}

/* Young (1974) and Daly (2006): a checkpoint of cost C every tau of work,
 * failures at rate 1/M, restart free: goodput ~ 1 - C/tau - tau/(2M) to
 * first order in tau/M and C/tau, best at tau* = sqrt(2 C M). With C = 10 s
 * and M = 10^4 s (8 devices of 8 x 10^4 s each), tau* = 447 s: steps of 10 s,
 * every 45 steps, and half and twice that. The run spans 10^7 s, about 1000
 * failures. Tolerance 0.005: the first-order formula leaves out terms of
 * order (tau/M)^2 and C tau / M^2, about 0.001 here (the exact renewal value
 * at tau* is tau / ((e^{(tau + C)/M} - 1) M) = 0.9560 against 0.9553), and
 * 1000 failures' draws spread the goodput by about 0.001, which is also the
 * tolerance against the exact value (0.002). */
Test(sim_failures, goodput_matches_young_daly_near_the_optimum)
{
    const int steps = 1000000;
    double *step_s = malloc(steps * sizeof *step_s);
    cr_assert(step_s);
    for (int k = 0; k < steps; k++) step_s[k] = 10;
    const double C = 10, M = 1e4;
    const int every[] = {22, 45, 90};
    double g[3];
    for (int i = 0; i < 3; i++) {
        struct failure_setup s = {.policy = FAILURE_RESTART, .n_workers = 8, .steps = steps,
                                  .mtbf_s = 8 * M, .seed = 42, .checkpoint_every = every[i],
                                  .costs = {.checkpoint_s = C}, .step_s = step_s};
        struct failure_outcome o = timeline(&s);
        double tau = every[i] * 10.0, first_order = 1 - C / tau - tau / (2 * M);
        /* the exact renewal value: a segment of tau + C takes, failures
         * included, (e^{(tau + C)/M} - 1) M on average (restart free) */
        double exact = tau / (expm1((tau + C) / M) * M);
        g[i] = failure_goodput(&o);
        fprintf(stderr, "tau = %4.0f s: goodput %.4f, first order %.4f (%+.4f, tolerance "
                "0.005), exact %.4f (%+.4f, tolerance 0.002), %d failures\n", tau, g[i],
                first_order, g[i] - first_order, exact, g[i] - exact, o.n_failures);
        cr_assert_float_eq(g[i], first_order, 0.005, "tau %g: %g vs %g", tau, g[i], first_order);
        cr_assert_float_eq(g[i], exact, 0.002, "tau %g: %g vs exact %g", tau, g[i], exact);
        cr_assert(o.n_failures > 800 && o.n_failures < 1200, "%d failures", o.n_failures);
    }
    cr_assert(g[1] > g[0] && g[1] > g[2], "the optimum is best: %g %g %g", g[0], g[1], g[2]);
    free(step_s);
}

/* The same seed gives the same failures, bit for bit; another seed others. */
Test(sim_failures, mtbf_draws_are_reproducible)
{
    struct failure_setup s = setup_of(FAILURE_RESTART, "", 2);
    s.mtbf_s = 4 * 50;
    s.seed = 7;
    s.costs.detect_s = 1;
    struct failure_outcome a = timeline(&s), b = timeline(&s);
    cr_assert(a.n_failures > 0);
    cr_assert(!memcmp(&a, &b, sizeof a), "same seed, same outcome");
    s.seed = 8;
    struct failure_outcome c = timeline(&s);
    cr_assert(c.total_s != a.total_s || c.first_time_s != a.first_time_s);
}

/* Failures far faster than a step: refused before any replay, rather than
 * replaying e^(step / gap) tries a step. */
Test(sim_failures, hopeless_mtbf_is_refused_up_front_not_a_hang)
{
    struct failure_setup s = setup_of(FAILURE_RESTART, "", 0);
    s.mtbf_s = 4 * 0.01;   /* a failure every 0.01 s against steps of 12 s */
    struct failure_outcome o;
    struct err e = {0};
    cr_assert_eq(failure_timeline(&s, &o, &e), ERR_INPUT);
    cr_assert(strstr(e.msg, "--mtbf") && strstr(e.msg, "never finish"), "%s", e.msg);
    /* frequent but hopeful: a failure every 6 s against 12 s steps, each
     * checkpointed, finishes after many failures */
    s.mtbf_s = 4 * 6.0;
    s.checkpoint_every = 1;
    cr_assert_eq(failure_timeline(&s, &o, &e), 0, "%s", e.msg);
    cr_assert_gt(o.n_failures, 10);
}

/* Through bench/run.c: mirrored on the ideal cluster takes 12 units a
 * step with UNIFORM_4's sizes; a failure at 40 with checkpoints every 2 is
 * the first case above, and it shows in the report. */
static struct sim_run simulated_on(int devices, const char *strategy, const char *cluster,
                                   const char *fail, const char *policy, int every,
                                   const char *straggler, struct err *e, int *rc)
{
    struct config cfg;
    config_init(&cfg);
    snprintf(cfg.model, sizeof cfg.model, "mlp:64-64-64-64-64");
    snprintf(cfg.cluster, sizeof cfg.cluster, "%s", cluster);
    snprintf(cfg.fail, sizeof cfg.fail, "%s", fail);
    snprintf(cfg.on_failure, sizeof cfg.on_failure, "%s", policy);
    snprintf(cfg.straggler, sizeof cfg.straggler, "%s", straggler);
    cfg.devices = devices;
    cfg.batch = 64;
    cfg.steps = STEPS;
    cfg.checkpoint_every = every;
    struct workload *wl = test_workload(cfg.model);
    const struct strategy *st = strategy_find(strategy, e);
    cr_assert(st, "%s", e->msg);
    struct sim_run run;
    *rc = run_simulate(&cfg, st, wl, 0, NULL, &run, e);
    workload_free(wl);
    return run;
}

static struct sim_run simulated(const char *strategy, const char *cluster, const char *fail,
                                const char *policy, int every, struct err *e, int *rc)
{
    return simulated_on(4, strategy, cluster, fail, policy, every, "none", e, rc);
}

static double sum_compute_s(const struct report *r)
{
    double s = 0;
    for (int w = 0; w < r->n_per_rank; w++) s += r->per_rank[w].compute_s;
    return s;
}

/* After a shrink the job ran its steps on other workers than the event
 * loop's failure-free run: its time shares, per-worker times and step
 * percentiles are the steps' as the timeline ran them. They were the
 * failure-free run's: 4 workers busy for all 10 steps inside a run whose
 * time T was set by 3 workers' steps, so a rank's shares could pass 100%
 * (idle clamped to 0 while commits stopped every rank; mirrored on
 * h100-nvlink-ib, --fail 1@5: idle 0.0% beside 4.4% of commits), the dead
 * worker ran 20 steps, and p50 was a 4-worker step. */
Test(sim_failures, shrink_counts_the_steps_on_the_workers_that_ran_them)
{
    struct err e = {0};
    int rc;
    struct sim_run four = simulated_on(4, "mirrored", "cpu-loopback", "", "auto", 0, "none", &e, &rc);
    cr_assert_eq(rc, 0, "%s", e.msg);
    struct sim_run three = simulated_on(3, "mirrored", "cpu-loopback", "", "auto", 0, "none", &e, &rc);
    cr_assert_eq(rc, 0, "%s", e.msg);
    struct sim_run run = simulated("mirrored", "cpu-loopback", "1@3", "shrink", 0, &e, &rc);
    cr_assert_eq(rc, 0, "%s", e.msg);
    const struct report *r = &run.report;
    double end_s = r->step_time_s.mean * STEPS;
    cr_assert_eq(r->n_per_rank, 4);
    double compute_s = 0, comm_s = 0, down_s = 0;
    for (int w = 0; w < 4; w++) {
        const struct rank_time *t = &r->per_rank[w];
        cr_expect_float_eq(t->compute_s + t->comm_s + t->idle_s + t->down_s, end_s,
                           1e-9 * end_s, "rank %d: %g + %g + %g + %g s in a run of %g s", w,
                           t->compute_s, t->comm_s, t->idle_s, t->down_s, end_s);
        compute_s += t->compute_s;
        comm_s += t->comm_s;
        down_s += t->down_s;
    }
    /* rank 1 died as step 3 began, and left: 3 steps, then down */
    cr_expect_eq(r->per_rank[1].steps, 3, "the dead worker ran %lld steps",
                 (long long)r->per_rank[1].steps);
    cr_expect_float_eq(r->per_rank[1].down_s, end_s - r->failure.time_s, 1e-12);
    for (int w = 0; w < 4; w++)
        if (w != 1) cr_expect_eq(r->per_rank[w].steps, STEPS, "rank %d", w);
    /* steps 0-2 on 4 workers, 3-9 on 3 (commits every step: nothing redone) */
    cr_expect_float_eq(compute_s, 0.3 * sum_compute_s(&four.report) +
                                      0.7 * sum_compute_s(&three.report), 1e-9 * compute_s);
    cr_expect_float_eq(r->breakdown.compute, compute_s / (4 * end_s), 1e-12);
    cr_expect_float_eq(r->breakdown.comm, comm_s / (4 * end_s), 1e-12);
    cr_expect_float_eq(r->breakdown.down, down_s / (4 * end_s), 1e-12);
    cr_expect_gt(r->breakdown.idle, 0, "the commits stopped every rank");
    /* 7 of the 10 steps ran on 3 workers, slower than 4 */
    cr_expect_gt(r->step_time_s.p50, four.report.step_time_s.p99,
                 "p50 %g s is not a 3-worker step (4 workers: %g s)", r->step_time_s.p50,
                 four.report.step_time_s.p99);
    run_release(&run);
    run_release(&three);
    run_release(&four);
}

/* An asynchronous job shrunk: its steps on the survivors are the mean of
 * their run, as the first run's are. They were the event loop's ends of
 * the steps every rank had ended, which a slow worker (fewer of the
 * shared-out steps) never all reaches: the later ends stayed 0, the
 * durations went negative, and the run was refused ("analysis: makespan
 * -0.0522 s is not allowed"; ps-async, cpu-loopback, slow:2=3, 1@10). */
Test(sim_failures, shrink_of_an_async_job_with_a_slow_worker)
{
    struct err e = {0};
    int rc;
    struct sim_run whole = simulated_on(4, "ps-async", "cpu-loopback", "", "auto", 0,
                                        "slow:2=3", &e, &rc);
    cr_assert_eq(rc, 0, "%s", e.msg);
    struct sim_run run = simulated_on(4, "ps-async", "cpu-loopback", "1@3", "shrink", 0,
                                      "slow:2=3", &e, &rc);
    cr_assert_eq(rc, 0, "%s", e.msg);
    const struct report *r = &run.report;
    cr_expect_gt(r->step_time_s.mean, 0);
    cr_expect_gt(r->step_time_s.p50, 0);
    cr_expect_eq(r->samples_applied, whole.report.samples_applied, "every step's work applied");
    double end_s = r->step_time_s.mean * STEPS;
    for (int w = 0; w < r->n_per_rank; w++) {
        const struct rank_time *t = &r->per_rank[w];
        cr_expect_float_eq(t->compute_s + t->comm_s + t->idle_s + t->down_s, end_s,
                           1e-9 * end_s, "rank %d", w);
    }
    run_release(&run);
    run_release(&whole);
}

Test(sim_failures, strata_sim_reports_the_policy_and_its_cost)
{
    struct err e = {0};
    int rc;
    struct sim_run run = simulated("mirrored", "ideal", "1@3", "auto", 2, &e, &rc);
    cr_assert_eq(rc, 0, "%s", e.msg);
    const struct report *r = &run.report;
    double step = run.result.makespan_s / STEPS;   /* the event loop's, failure-free */
    cr_assert(r->failure.happened);
    cr_assert_str_eq(r->failure.policy, "restart");
    cr_assert_eq(r->failure.rank, 1);
    cr_assert_float_eq(r->failure.time_s, 3 * step, 1e-9);
    cr_assert_float_eq(r->failure.redone_s, step, 1e-9);
    cr_assert_eq(r->failure.steps_redone, 1);
    /* the step time holds the redone step */
    cr_assert_float_eq(r->step_time_s.mean, step * (STEPS + 1) / STEPS, 1e-9, "%g",
                       r->step_time_s.mean);
    /* updates made the final model (docs/metrics.md): every step once, the
     * redone one too, as a restarted real run counts them
     * (tests/test_real_failure.c) */
    cr_assert_eq(r->updates, STEPS, "updates %lld", (long long)r->updates);
    run_release(&run);
    /* asynchronous: each of the 4 workers' pushes of every job step once */
    run = simulated("ps-async", "ideal", "1@3", "restart", 0, &e, &rc);
    cr_assert_eq(rc, 0, "%s", e.msg);
    cr_assert_eq(run.report.updates, 4 * STEPS, "updates %lld", (long long)run.report.updates);
    run_release(&run);

    /* shrink refuses a pipeline, with the policy's reason */
    run = simulated("pipeline-1f1b", "ideal", "1@3", "shrink", 0, &e, &rc);
    cr_assert_eq(rc, ERR_INPUT);
    cr_assert(strstr(e.msg, "--on-failure"), "%s", e.msg);
    run_release(&run);

    /* shrink goes on without a dead worker: a server (ps-sync's rank 4 of
     * 4 workers) is refused, not reported as a worker lost */
    run = simulated("ps-sync", "ideal", "4@3", "shrink", 0, &e, &rc);
    cr_assert_eq(rc, ERR_INPUT, "the server's death under shrink was simulated");
    cr_assert(strstr(e.msg, "rank 4 is a parameter server"), "%s", e.msg);
    run_release(&run);
    e = (struct err){0};
    run = simulated("ps-sync", "ideal", "4@3", "restart", 0, &e, &rc);
    cr_assert_eq(rc, 0, "%s", e.msg);
    cr_assert_eq(run.report.failure.rank, 4);
    run_release(&run);

    /* shrink of mirrored where compute has a cost: 3 workers after the
     * failure, each with a third of the batch, slower than 4 */
    struct sim_run whole = simulated("mirrored", "cpu-loopback", "", "auto", 0, &e, &rc);
    cr_assert_eq(rc, 0, "%s", e.msg);
    run = simulated("mirrored", "cpu-loopback", "1@3", "shrink", 0, &e, &rc);
    cr_assert_eq(rc, 0, "%s", e.msg);
    cr_assert_str_eq(run.report.failure.policy, "shrink");
    cr_assert_eq(run.report.failure.steps_redone, 0, "commits every step: nothing redone");
    cr_assert_gt(run.report.step_time_s.mean, whole.report.step_time_s.mean,
                 "3 workers are slower than 4: %g vs %g s a step", run.report.step_time_s.mean,
                 whole.report.step_time_s.mean);
    run_release(&run);
    run_release(&whole);
}

/* Failure options a simulation will not read are said, not dropped: a
 * policy or commits with no failure scheduled, commits under a policy that
 * takes none; where they are read, no note. */
Test(sim_failures, failure_options_the_run_does_not_read_are_noted)
{
    static const struct {
        const char *const args[6];
        const char *note;   /* NULL: none of the failure options noted */
    } cases[] = {
        {{"--commit-every", "2"}, "note: --commit-every 2: no failure is scheduled"},
        {{"--on-failure", "restart"}, "note: --on-failure restart: no failure is scheduled"},
        {{"--fail", "1@3", "--commit-every", "2"},
         "note: --commit-every 2: read only by --on-failure shrink, and this run's policy is "
         "restart"},
        {{"--fail", "1@3", "--commit-every", "2", "--on-failure", "shrink"}, NULL},
        {{"--mtbf", "1000", "--on-failure", "shrink"}, NULL},
        {{"--fail", "1@3", "--on-failure", "restart"}, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[16] = {"sim", "--steps", "5", "--cluster", "ideal"};
        int n = 5;
        for (int k = 0; k < 6 && cases[i].args[k]; k++) argv[n++] = cases[i].args[k];
        struct run r = run_strata(argv);
        cr_expect_eq(r.status, 0, "case %zu: %s", i, r.err);
        if (cases[i].note)
            cr_expect(strstr(r.out, cases[i].note), "case %zu: no '%s' in:\n%s", i,
                      cases[i].note, r.out);
        else
            cr_expect(!strstr(r.out, "note: --commit-every") && !strstr(r.out, "note: --on-failure"),
                      "case %zu noted an option it reads:\n%s", i, r.out);
        run_free(&r);
    }
}
