/* bench/validate_failure.c: the time lost to a failure, predicted against
 * measured (medians part by part, the error of the totals), the policies
 * validate runs, and `strata validate --fail` as a user runs it on a tiny
 * model. Expected values: error = predicted / measured - 1
 * (validate_failure.h), the medians of hand-made runs, and the redone steps
 * C..S-1 of a failure at step S after a checkpoint at C. No timing is
 * asserted beyond being positive: the machine is shared. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../bench/validate_failure.h"
#include "../core/plan_memory.h"
#include "../core/report.h"
#include "../sim/cluster.h"

/* dir/costs.conf: cpu-loopback's profile and the extra keys; its path into path. */
static void write_costs(const char *dir, const char *extra, char *path, size_t n)
{
    struct cluster cl;
    struct err e = {0};
    cr_assert_eq(cluster_load("cpu-loopback", &cl, &e), 0, "%s", e.msg);
    char text[CLUSTER_TEXT_BYTES + 256];
    cluster_format(&cl, text, CLUSTER_TEXT_BYTES);
    cr_assert_lt(strlen(text) + strlen(extra), sizeof text);
    strcat(text, extra);
    snprintf(path, n, "%s/costs.conf", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* A report whose failure cost lost = detect + relaunch + redone. */
static void failed(struct report *r, const char *policy, double detect_s, double relaunch_s,
                   double redone_s, int steps)
{
    report_init(r);
    snprintf(r->strategy, sizeof r->strategy, "mirrored");
    r->failure.happened = true;
    r->failure.policy = policy;
    r->failure.n_failures = 1;
    r->failure.detect_s = detect_s;
    r->failure.relaunch_s = relaunch_s;
    r->failure.redone_s = redone_s;
    r->failure.steps_redone = steps;
    r->failure.lost_s = detect_s + relaunch_s + redone_s;
}

Test(validate_failure, compare_takes_each_parts_median_and_the_totals_error)
{
    struct report pred, m[3];
    failed(&pred, "shrink", 0.1, 1.0, 0.4, 2);
    failed(&m[0], "shrink", 0.05, 2.0, 0.3, 2);   /* lost 2.35 */
    failed(&m[1], "shrink", 0.20, 1.0, 0.5, 2);   /* lost 1.70 */
    failed(&m[2], "shrink", 0.10, 1.5, 0.4, 3);   /* lost 2.00 */
    const struct report *runs[] = {&m[0], &m[1], &m[2]};
    struct validate_failure f;
    struct err e = {0};
    cr_assert_eq(validate_failure_compare(&pred, runs, 3, &f, &e), 0, "%s", e.msg);
    cr_expect_eq(f.policy, FAILURE_SHRINK);
    cr_expect_float_eq(f.predicted.lost_s, 1.5, 1e-12);
    /* each part its own median: the parts need not add up to the total's */
    cr_expect_float_eq(f.measured.lost_s, 2.0, 1e-12);
    cr_expect_float_eq(f.measured.detect_s, 0.1, 1e-12);
    cr_expect_float_eq(f.measured.relaunch_s, 1.5, 1e-12);
    cr_expect_float_eq(f.measured.redone_s, 0.4, 1e-12);
    cr_expect_float_eq(f.measured.steps_redone, 2, 1e-12);
    cr_expect_float_eq(f.error, 1.5 / 2.0 - 1, 1e-12);
    cr_assert_eq(f.n_measured_runs, 3);
    cr_expect_float_eq(f.measured_runs_lost_s[0], 2.35, 1e-12, "in run order");
    validate_failure_release(&f);
    for (int k = 0; k < 3; k++) report_release(&m[k]);
    report_release(&pred);
}

Test(validate_failure, a_run_without_a_failure_is_refused_naming_it)
{
    struct report pred, m;
    failed(&pred, "restart", 0, 1, 0, 0);
    report_init(&m);
    snprintf(m.strategy, sizeof m.strategy, "mirrored");
    const struct report *runs[] = {&m};
    struct validate_failure f;
    struct err e = {0};
    cr_expect_eq(validate_failure_compare(&pred, runs, 1, &f, &e), ERR_RUN);
    cr_expect_not_null(strstr(e.msg, "no failure"), "%s", e.msg);
    validate_failure_release(&f);
    report_release(&m);
    report_release(&pred);
}

Test(validate_failure, policies_are_those_that_apply_or_the_one_given)
{
    struct config cfg;
    config_init(&cfg);
    struct err e = {0};
    struct workload *wl = NULL;
    cr_assert_eq(workload_parse("mlp:784-32-10", &wl, &e), 0, "%s", e.msg);
    enum failure_policy out[3];
    int n = 0;
    const struct strategy *mirrored = strategy_find("mirrored", &e);
    const struct strategy *async = strategy_find("ps-async", &e);
    const struct strategy *pipe = strategy_find("pipeline-1f1b", &e);
    cr_assert_eq(validate_failure_policies(&cfg, wl, mirrored, 2, out, &n, &e), 0, "%s", e.msg);
    cr_expect_eq(n, 2, "mirrored: restart and shrink, not continue");
    cr_expect(out[0] == FAILURE_RESTART && out[1] == FAILURE_SHRINK);
    cr_assert_eq(validate_failure_policies(&cfg, wl, async, 2, out, &n, &e), 0, "%s", e.msg);
    cr_expect_eq(n, 3, "ps-async: every policy");
    cr_assert_eq(validate_failure_policies(&cfg, wl, pipe, 2, out, &n, &e), 0, "%s", e.msg);
    cr_expect(n == 1 && out[0] == FAILURE_RESTART, "a pipeline's stages cannot shrink");
    cr_assert_eq(config_set(&cfg, "on-failure", "continue", ~0u, &e), 0, "%s", e.msg);
    cr_expect_eq(validate_failure_policies(&cfg, wl, mirrored, 2, out, &n, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "--on-failure"), "%s", e.msg);
    workload_free(wl);
    config_release(&cfg);
}

/* ---- strata validate --fail --------------------------------------------------- */

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(v), "no number \"%s\"", key);
    return v->valuedouble;
}

Test(validate_failure, strata_validate_fail_writes_each_policys_time_lost_both_ways,
     .timeout = 300)
{
    char dir[64], path[128];
    test_make_dir(dir, sizeof dir, "validate-fail");
    snprintf(path, sizeof path, "%s/v.json", dir);
    /* rank 1 dies as step 3 starts; the checkpoint of step 2 is the last:
     * restart redoes step 2, one step, both ways; shrink's commits are every
     * step (--commit-every 1): none */
    struct run r = RUN("validate", "--strategies", "mirrored", "--np", "2", "--cluster",
                       "cpu-loopback", "--data", "synthetic", "--model", "mlp:784-32-10",
                       "--batch", "32", "--steps", "6", "--fail", "1@3", "--checkpoint-every",
                       "2", "--json", path);
    cr_assert_eq(r.status, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
    cr_expect_not_null(strstr(r.out, "time lost to the failure"), "%s", r.out);
    char *text = test_slurp(path);
    cJSON *doc = cJSON_Parse(text);
    cr_assert_not_null(doc);
    const cJSON *rows =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cells"), 0), "rows");
    cr_assert_eq(cJSON_GetArraySize(rows), 2, "a row for restart, one for shrink");
    const char *want[] = {"restart", "shrink"};
    for (int i = 0; i < 2; i++) {
        const cJSON *row = cJSON_GetArrayItem(rows, i);
        cr_expect(isfinite(num(row, "predicted_step_s")), "the old fields stay");
        const cJSON *f = cJSON_GetObjectItem(row, "failure");
        cr_assert(cJSON_IsObject(f), "row %d has no failure", i);
        cr_expect_str_eq(cJSON_GetObjectItem(f, "policy")->valuestring, want[i]);
        const cJSON *p = cJSON_GetObjectItem(f, "predicted"), *m = cJSON_GetObjectItem(f, "measured");
        double redone = i == 0 ? 1 : 0;
        cr_expect_eq(num(p, "steps_redone"), redone, "%s predicted", want[i]);
        cr_expect_eq(num(m, "steps_redone"), redone, "%s measured", want[i]);
        cr_expect(num(m, "lost_s") > 0 && num(m, "relaunch_s") > 0 && num(m, "detect_s") >= 0,
                  "%s: a relaunch was measured", want[i]);
        cr_expect_float_eq(num(p, "lost_s"),
                           num(p, "detect_s") + num(p, "relaunch_s") + num(p, "redone_s"), 1e-9);
        cr_expect(isfinite(num(f, "error")), "%s", want[i]);
        cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(f, "measured_runs_lost_s")), 1);
    }
    const cJSON *sf = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary"), "failure");
    cr_assert(cJSON_IsObject(sf));
    cr_expect_eq(num(sf, "rows"), 2);
    cr_expect(num(sf, "max_abs_error") >= num(sf, "median_abs_error"));
    cJSON_Delete(doc);
    free(text);
    run_free(&r);
    test_remove_dir(dir);
}

/* A real continue relaunches the survivors from the servers' last commit
 * (real/supervise.h): validate predicts that, not the event loop's free
 * carry-on. ps-async on 2 workers and a server, rank 1 dies as step 5
 * starts, commits every 4 steps: the work since step 4 is redone, the
 * detection is the profile's 0.05 s and the relaunch of 1 worker and the
 * server 0.5 + 0.1 x 2 = 0.7 s. */
Test(validate_failure, continue_is_predicted_as_the_real_relaunch_of_the_survivors)
{
    char dir[128];
    test_make_dir(dir, sizeof dir, "validate-continue");
    char path[256];
    write_costs(dir, "restart_s = 0.5\nrestart_per_rank_s = 0.1\ndetect_s = 0.05\n", path,
                sizeof path);
    struct err e = {0};

    struct config cfg;
    config_init(&cfg);
    static const char *const set[][2] = {
        {"devices", "2"}, {"steps", "10"}, {"fail", "1@5"}, {"on-failure", "continue"},
        {"commit-every", "4"}, {"model", "mlp:784-32-10"}, {"strategy", "ps-async"}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
        cr_assert_eq(config_set(&cfg, set[i][0], set[i][1], ~0u, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(&cfg, "cluster", path, ~0u, &e), 0, "%s", e.msg);
    struct workload *wl = NULL;
    cr_assert_eq(workload_parse(cfg.model, &wl, &e), 0, "%s", e.msg);
    const struct strategy *st = strategy_find("ps-async", &e);

    struct sim_run own, as_real;
    cr_assert_eq(run_simulate(&cfg, st, wl, 0, NULL, &own, &e), 0, "%s", e.msg);
    cr_expect_eq(own.report.failure.lost_s, 0, "the simulator's own continue loses nothing");
    cr_assert_eq(validate_failure_simulate(&cfg, st, wl, &as_real, &e), 0, "%s", e.msg);
    const struct report *r = &as_real.report;
    cr_expect_str_eq(r->failure.policy, "continue");
    cr_expect_str_eq(as_real.cfg.on_failure, "continue");
    cr_expect_float_eq(r->failure.detect_s, 0.05, 1e-12);
    cr_expect_float_eq(r->failure.relaunch_s, 0.7, 1e-12, "relaunch %g", r->failure.relaunch_s);
    cr_expect_gt(r->failure.redone_s, 0, "the work since the commit at step 4 is redone");
    cr_expect_gt(r->failure.lost_s, 0.75);
    run_release(&own);
    run_release(&as_real);
    workload_free(wl);
    config_release(&cfg);
    test_remove_dir(dir);
}

/* cfg for mirrored on a tiny model, 10 steps on `devices`, the options in
 * set (name, value; NULL ends), on the profile at path. */
static void tiny_config(struct config *cfg, const char *path, const char *devices,
                        const char *const *set)
{
    struct err e = {0};
    config_init(cfg);
    cr_assert_eq(config_set(cfg, "devices", devices, ~0u, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(cfg, "steps", "10", ~0u, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(cfg, "model", "mlp:784-32-10", ~0u, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(cfg, "cluster", path, ~0u, &e), 0, "%s", e.msg);
    for (; set && set[0]; set += 2)
        cr_assert_eq(config_set(cfg, set[0], set[1], ~0u, &e), 0, "%s", e.msg);
}

static struct sim_run simulated(const struct config *cfg, const struct workload *wl)
{
    struct sim_run run;
    struct err e = {0};
    cr_assert_eq(validate_failure_simulate(cfg, strategy_find("mirrored", NULL), wl, &run, &e), 0,
                 "%s", e.msg);
    return run;
}

/* A failure row's step counts what the real report of the job that
 * finished the run counts (validate_failure.h): restart from the
 * checkpoint of step 5 of 10 relaunches 2 workers for steps 5..9 with no
 * save among them, so its step is the step of the run without --fail;
 * shrink with a commit every step ends on 1 worker whose steps 6..9 each
 * follow a commit, a checkpoint write of the state at the profile's 1e8
 * bytes/s, so its median is the one-worker step plus that write; and a run
 * without failure has no such step (NaN: the report's p50 stands). */
Test(validate_failure, failure_row_step_is_the_final_jobs_as_the_real_report_counts_it)
{
    char dir[128];
    test_make_dir(dir, sizeof dir, "validate-step");
    char path[256];
    write_costs(dir, "ckpt_write_bw_bytes_per_s = 1e8\nrestart_s_at_ranks = 1:0.6,2:0.7\n"
                     "detect_s = 0.05\n",
                path, sizeof path);
    struct err e = {0};
    struct workload *wl = NULL;
    cr_assert_eq(workload_parse("mlp:784-32-10", &wl, &e), 0, "%s", e.msg);

    struct config plain2, plain1, restart, shrink;
    tiny_config(&plain2, path, "2", NULL);
    tiny_config(&plain1, path, "1", NULL);
    tiny_config(&restart, path, "2",
                (const char *const[]){"fail", "1@5", "on-failure", "restart", "checkpoint-every",
                                      "5", NULL});
    tiny_config(&shrink, path, "2",
                (const char *const[]){"fail", "1@5", "on-failure", "shrink", "commit-every", "1",
                                      NULL});
    struct sim_run p2 = simulated(&plain2, wl), p1 = simulated(&plain1, wl);
    struct sim_run r = simulated(&restart, wl), s = simulated(&shrink, wl);
    cr_expect(isnan(validate_failure_step_s(&p2)), "no failure, no final job");

    cr_expect_eq(r.final_first_step, 5);
    cr_expect_eq(r.n_final_steps, 5);
    double step2 = p2.report.step_time_s.p50, got = validate_failure_step_s(&r);
    cr_expect(fabs(got / step2 - 1) < 1e-9, "restart: %.9g s, without --fail %.9g s", got, step2);

    cr_expect_eq(s.final_n_workers, 1);
    struct plan_memory mem;
    plan_memory_max(s.plan, &mem);
    double commit_s = (double)(mem.params + mem.optimizer) / 1e8;
    double want = p1.report.step_time_s.p50 + commit_s;
    got = validate_failure_step_s(&s);
    cr_expect(fabs(got / want - 1) < 1e-9, "shrink: %.9g s, want %.9g s (1 worker %.9g + commit "
              "%.9g)", got, want, p1.report.step_time_s.p50, commit_s);
    cr_expect_gt(got, 1.5 * s.report.step_time_s.p50,
                 "the report's own p50 (2 workers, no commit) is not what real counts");

    struct sim_run *runs[] = {&p2, &p1, &r, &s};
    for (size_t i = 0; i < 4; i++) run_release(runs[i]);
    struct config *cfgs[] = {&plain2, &plain1, &restart, &shrink};
    for (size_t i = 0; i < 4; i++) config_release(cfgs[i]);
    workload_free(wl);
    test_remove_dir(dir);
}
