/* Numerics in the simulator (sim/numerics, bench/run_numerics): the
 * synchronous strategies' loss curves equal a real run's step for step; the
 * asynchronous path reduces to them when nothing is asynchronous (one
 * worker) and differs when staleness is real; accuracy, time to accuracy,
 * determinism, and the memory bound. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/run.h"
#include "../bench/run_numerics.h"
#include "helpers.h"

#define MODEL "mlp:784-64-32-16-10"

/* The reports the end-to-end tests write go in a fresh test_tmp_dir. */
TEST_SUITE_WITH_TMP_DIR(numerics);

static void scenario(struct config *c, const char *strategy, int devices, int steps)
{
    struct err e = {0};
    config_init(c);
    char dev[16], st[16];
    snprintf(dev, sizeof dev, "%d", devices);
    snprintf(st, sizeof st, "%d", steps);
    const char *set[][2] = {{"strategy", strategy}, {"model", MODEL}, {"devices", dev},
                            {"steps", st}, {"batch", "64"}, {"microbatches", "4"},
                            {"data", "synthetic"}, {"seed", "7"}, {"numerics", "true"},
                            {"lr", "0.01"}, {"cluster", "cpu-loopback"}};
    for (size_t i = 0; i < sizeof set / sizeof *set; i++)
        cr_assert_eq(config_set(c, set[i][0], set[i][1], ~0u, &e), 0, "%s", e.msg);
}

static void simulate_ok(const struct config *c, struct sim_run *run)
{
    struct err e = {0};
    struct workload *wl = NULL;
    cr_assert_eq(workload_parse(c->model, &wl, &e), 0, "%s", e.msg);
    const struct strategy *st = strategy_find(c->strategy, &e);
    cr_assert_not_null(st, "%s", e.msg);
    int rc = run_simulate(c, st, wl, 0, NULL, run, &e);
    workload_free(wl);
    cr_assert_eq(rc, 0, "%s: %s", c->strategy, e.msg);
}

/* The simulated run of the scenario for strategy, devices and steps, with
 * the options of `set` (name and value pairs up to a NULL name; set itself
 * may be NULL) on top, in that order. */
static struct sim_run simulated(const char *strategy, int devices, int steps,
                                const char *const (*set)[2])
{
    struct config c;
    scenario(&c, strategy, devices, steps);
    struct err e = {0};
    for (; set && (*set)[0]; set++)
        cr_assert_eq(config_set(&c, (*set)[0], (*set)[1], ~0u, &e), 0, "%s", e.msg);
    struct sim_run r;
    simulate_ok(&c, &r);
    return r;
}

#define WITH(...) ((const char *const[][2]){__VA_ARGS__, {NULL, NULL}})

static void expect_same_curve(const struct report *a, const struct report *b, double tol,
                              const char *what)
{
    cr_assert_eq(a->n_loss_curve, b->n_loss_curve, "%s: %d and %d points", what,
                 a->n_loss_curve, b->n_loss_curve);
    for (int i = 0; i < a->n_loss_curve; i++) {
        double x = a->loss_curve[i].loss, y = b->loss_curve[i].loss;
        cr_assert_eq(a->loss_curve[i].step, b->loss_curve[i].step);
        cr_assert(fabs(x - y) <= tol * fabs(y), "%s: step %d loss %.9g vs %.9g", what, i, x, y);
    }
}

/* Whether the loss curves of a and b differ after their first point. */
static bool later_losses_differ(const struct report *a, const struct report *b)
{
    bool differs = false;
    for (int i = 1; i < a->n_loss_curve; i++)
        differs |= a->loss_curve[i].loss != b->loss_curve[i].loss;
    return differs;
}

Test(numerics, synchronous_strategies_share_one_loss_curve_and_time_it_their_own_way)
{
    struct config c;
    scenario(&c, "mirrored", 1, 12);
    struct sim_run one;
    simulate_ok(&c, &one);
    cr_assert_eq(one.report.n_loss_curve, 12);
    cr_assert(one.report.has_final);
    const char *names[] = {"mirrored", "ps-sync", "model", "pipeline-gpipe", "pipeline-1f1b"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        struct config ci;
        scenario(&ci, names[i], 4, 12);
        struct sim_run r;
        simulate_ok(&ci, &r);
        expect_same_curve(&r.report, &one.report, 0, names[i]);
        cr_assert_float_eq(r.report.final.test_accuracy, one.report.final.test_accuracy, 0);
        /* the times are the strategy's own: each step ends when its simulation says */
        for (int s = 1; s < r.report.n_loss_curve; s++)
            cr_assert_gt(r.report.loss_curve[s].time_s, r.report.loss_curve[s - 1].time_s);
        run_release(&r);
    }
    run_release(&one);
}

Test(numerics, async_path_with_one_worker_is_the_synchronous_sequence)
{
    /* nothing is stale with one worker: the hooks' arithmetic must give the
     * very numbers of one device's sequence */
    struct sim_run one = simulated("mirrored", 1, 10, NULL);
    struct sim_run a = simulated("ps-async", 1, 10, NULL);
    expect_same_curve(&a.report, &one.report, 1e-6, "ps-async on 1 worker");
    cr_assert_float_eq(a.report.final.test_accuracy, one.report.final.test_accuracy, 1e-9);
    run_release(&one);
    run_release(&a);
}

Test(numerics, staleness_changes_the_arithmetic_and_training_still_learns)
{
    struct sim_run a = simulated("ps-async", 4, 40, WITH({"momentum", "0.5"}));
    struct sim_run s = simulated("ps-sync", 4, 40, WITH({"momentum", "0.5"}));
    cr_assert_gt(a.report.staleness.max, 0, "async workers read stale parameters");
    cr_assert(later_losses_differ(&a.report, &s.report),
              "stale gradients must change the loss curve");
    double first = a.report.loss_curve[0].loss, last = a.report.loss_curve[39].loss;
    cr_assert_lt(last, first, "ps-async loss %g -> %g", first, last);
    run_release(&a);
    run_release(&s);
}

Test(numerics, a_dropped_backup_push_is_really_dropped)
{
    /* rank 3 is 20x slower, so under backup:1 its push is always the one
     * dropped; the result differs from plain ps-sync, which waits for it */
    struct sim_run sync = simulated("ps-sync", 4, 10, WITH({"straggler", "slow:3=20"}));
    struct sim_run backup = simulated("ps-sync", 4, 10,
                                      WITH({"straggler", "slow:3=20"}, {"backup-workers", "1"}));
    cr_assert_lt(backup.report.step_time_s.mean, sync.report.step_time_s.mean);
    cr_assert(later_losses_differ(&sync.report, &backup.report),
              "dropping a worker's gradient must change the trajectory");
    run_release(&sync);
    run_release(&backup);
}

Test(numerics, time_to_accuracy_is_the_first_evaluation_at_or_above_the_target)
{
    struct sim_run r = simulated("mirrored", 2, 60, WITH({"target-accuracy", "0.3"}));
    const struct report *rp = &r.report;
    cr_assert_geq(rp->n_accuracy_curve, 20, "about 20 evaluations when a target is set");
    int first = -1;
    for (int i = 0; i < rp->n_accuracy_curve && first < 0; i++)
        if (rp->accuracy_curve[i].accuracy >= 0.3) first = i;
    cr_assert_geq(first, 0, "the run never reached 0.3: pick an easier target");
    cr_assert(rp->has_time_to_accuracy);
    cr_assert_float_eq(rp->time_to_accuracy_s, rp->accuracy_curve[first].time_s, 0);
    run_release(&r);
    r = simulated("mirrored", 2, 60, WITH({"target-accuracy", "0.999"}));
    cr_assert(!r.report.has_time_to_accuracy, "0.999 is out of reach in 60 steps");
    run_release(&r);
}

Test(numerics, too_many_workers_for_the_memory_budget_is_bad_input)
{
    struct config c;
    scenario(&c, "ps-async", 4096, 2);
    config_set(&c, "model", "mlp:784-4096-4096-10", ~0u, &(struct err){0});
    config_set(&c, "batch", "4096", ~0u, &(struct err){0});
    struct workload *wl = test_workload(c.model);
    struct err e = {0};
    struct sim_run r;
    int rc = run_simulate(&c, strategy_find("ps-async", &e), wl, 0, NULL, &r, &e);
    cr_assert_eq(rc, ERR_INPUT, "rc %d: %s", rc, e.msg);
    cr_assert_not_null(strstr(e.msg, "GiB"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "--devices"), "%s", e.msg);
    run_release(&r);
    workload_free(wl);
}

/* ---- against a real run ------------------------------------------------------ */

Test(numerics, simulated_loss_curve_of_a_synchronous_strategy_equals_a_real_run, .timeout = 120)
{
    const char *sim_json = test_tmp_path("sim.json"), *real_json = test_tmp_path("real.json");
    const char *sim[] = {STRATA_BIN, "sim", "--strategy", "pipeline-1f1b", "--model", MODEL,
                         "--devices", "2", "--batch", "64", "--microbatches", "4", "--steps",
                         "8", "--data", "synthetic", "--seed", "7", "--numerics", "--json",
                         sim_json, NULL};
    const char *real[] = {STRATA_BIN, "real", "--strategy", "pipeline-1f1b", "--model", MODEL,
                          "--np", "2", "--batch", "64", "--microbatches", "4", "--steps", "8",
                          "--data", "synthetic", "--seed", "7", "--json", real_json, NULL};
    run_argv_ok(sim);
    run_argv_ok(real);
    cJSON *js = read_json(sim_json), *jr = read_json(real_json);
    const cJSON *ls = cJSON_GetObjectItem(js, "loss_curve");
    const cJSON *lr = cJSON_GetObjectItem(jr, "loss_curve");
    cr_assert_eq(cJSON_GetArraySize(ls), 8);
    cr_assert_eq(cJSON_GetArraySize(lr), 8);
    for (int i = 0; i < 8; i++) {
        double a = cJSON_GetArrayItem(cJSON_GetArrayItem(ls, i), 2)->valuedouble;
        double b = cJSON_GetArrayItem(cJSON_GetArrayItem(lr, i), 2)->valuedouble;
        cr_assert(fabs(a - b) <= 1e-5 * fabs(b), "step %d: simulated %.9g, real %.9g", i, a, b);
    }
    cJSON_Delete(js);
    cJSON_Delete(jr);
}

Test(numerics, same_seed_same_report_bytes)
{
    const char *a = test_tmp_path("a.json"), *b = test_tmp_path("b.json");
    const char *argv[] = {STRATA_BIN, "sim", "--strategy", "ps-async", "--model", MODEL,
                          "--devices", "3", "--steps", "10", "--data", "synthetic",
                          "--numerics", "--straggler", "exp:0.5", "--json", a, NULL};
    const size_t json_at = sizeof argv / sizeof *argv - 2;
    run_argv_ok(argv);
    argv[json_at] = b;   /* the same run again, into b */
    run_argv_ok(argv);
    char *ta = test_slurp(a), *tb = test_slurp(b);
    cr_assert_str_eq(ta, tb);
    free(ta);
    free(tb);
}

/* ---- what one command's runs share (struct run_numerics) ------------------- */

static void simulate_shared(const struct config *c, struct run_numerics *shared,
                            struct sim_run *run)
{
    struct err e = {0};
    struct workload *wl = NULL;
    cr_assert_eq(workload_parse(c->model, &wl, &e), 0, "%s", e.msg);
    int rc = run_simulate(c, strategy_find(c->strategy, &e), wl, 0, shared, run, &e);
    workload_free(wl);
    cr_assert_eq(rc, 0, "%s: %s", c->strategy, e.msg);
}

/* A context shared by runs gives each the numbers it would compute alone,
 * and an input the numerics read (--lr here) that differs between runs is
 * seen, whichever option it is: the sequence is kept with its inputs. */
Test(numerics, a_shared_context_gives_each_run_its_own_numbers)
{
    struct err e = {0};
    struct run_numerics *shared = run_numerics_create(&e);
    cr_assert_not_null(shared, "%s", e.msg);
    struct config c;
    scenario(&c, "mirrored", 2, 8);
    struct sim_run alone, first, other_lr, again;
    simulate_ok(&c, &alone);
    simulate_shared(&c, shared, &first);
    expect_same_curve(&first.report, &alone.report, 0, "shared, first run");
    config_set(&c, "lr", "0.05", ~0u, &e);
    simulate_shared(&c, shared, &other_lr);
    cr_expect_neq(other_lr.report.loss_curve[other_lr.report.n_loss_curve - 1].loss,
                  alone.report.loss_curve[alone.report.n_loss_curve - 1].loss,
                  "--lr 0.05 must not reuse --lr 0.01's sequence");
    scenario(&c, "pipeline-1f1b", 2, 8);   /* --lr 0.01 again; synchronous: the same sequence */
    simulate_shared(&c, shared, &again);
    expect_same_curve(&again.report, &alone.report, 0, "shared, back to --lr 0.01");
    run_release(&alone);
    run_release(&first);
    run_release(&other_lr);
    run_release(&again);
    run_numerics_free(shared);
    run_numerics_free(NULL);
}
