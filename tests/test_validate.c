/* bench/validate.c: a row's error from its two reports, the median
 * absolute error, the strata_validate document read back by
 * core/report_read.c, and `strata validate` as a user runs it. Expected
 * values: error = predicted / measured - 1 (ARCHITECTURE.md, Reports), with
 * the step time of a report its median step (bench/validate.h). */
#include <criterion/criterion.h>

#include "helpers.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bench/validate.h"
#include "../core/report.h"

extern char **environ;

#define TOL 1e-12

/* A report of strategy on 2 devices whose median step is p50_s (the mean
 * differs, so a row that read the mean would be caught). */
static void hand_made(struct report *r, struct config *c, const char *mode, const char *strategy,
                      double p50_s, double compute)
{
    config_init(c);
    report_init(r);
    r->mode = mode;
    snprintf(r->strategy, sizeof r->strategy, "%s", strategy);
    r->devices = 2;
    r->config = c;
    r->config_groups = OPTG_SCENARIO | OPTG_RUN;
    r->step_time_s.mean = 1.5 * p50_s;
    r->step_time_s.p50 = p50_s;
    r->step_time_s.p99 = 3 * p50_s;
    r->throughput_samples_per_s = 256 / p50_s;
    r->breakdown.compute = compute;
    r->breakdown.comm = 1 - compute;
}

Test(validate, error_is_predicted_over_measured_minus_one_of_the_median_steps)
{
    struct config cp, cm;
    struct report pred, meas;
    hand_made(&pred, &cp, "sim", "mirrored", 0.012, 0.9);
    hand_made(&meas, &cm, "real", "mirrored", 0.010, 0.6);
    struct validate_row row;
    struct err e = {0};
    cr_assert_eq(validate_row(&pred, &meas, &row, &e), 0, "%s", e.msg);
    cr_expect_str_eq(row.strategy, "mirrored");
    cr_expect_eq(row.predicted_step_s, 0.012);
    cr_expect_eq(row.measured_step_s, 0.010);
    /* 0.012 / 0.010 - 1 = +20%: predicted too slow */
    cr_expect(fabs(row.error - 0.2) < TOL, "error %.17g, want 0.2", row.error);
    cr_expect_eq(row.predicted, &pred);
    cr_expect_eq(row.measured, &meas);

    /* the other way round: 0.010 / 0.012 - 1 = -1/6 */
    cr_assert_eq(validate_row(&meas, &pred, &row, &e), 0, "%s", e.msg);
    cr_expect(fabs(row.error + 1.0 / 6) < TOL, "error %.17g, want -1/6", row.error);
}

Test(validate, rows_of_different_strategies_or_without_a_step_time_are_refused)
{
    struct config cp, cm;
    struct report pred, meas;
    struct validate_row row;
    struct err e = {0};
    hand_made(&pred, &cp, "sim", "mirrored", 0.012, 0.9);
    hand_made(&meas, &cm, "real", "ps-sync", 0.010, 0.6);
    cr_expect_eq(validate_row(&pred, &meas, &row, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "ps-sync"), "%s", e.msg);

    hand_made(&meas, &cm, "real", "mirrored", 0, 0.6);
    cr_expect_eq(validate_row(&pred, &meas, &row, &e), ERR_INPUT, "a measured step of 0 s");
    hand_made(&meas, &cm, "real", "mirrored", NAN, 0.6);
    cr_expect_eq(validate_row(&pred, &meas, &row, &e), ERR_INPUT, "a NaN step (null in JSON)");
    hand_made(&meas, &cm, "real", "mirrored", 0.01, 0.6);
    meas.devices = 4;
    cr_expect_eq(validate_row(&pred, &meas, &row, &e), ERR_INPUT, "2 devices against 4");
}

Test(validate, median_absolute_error_of_odd_and_even_counts)
{
    struct validate_row rows[4] = {{.error = -0.30}, {.error = 0.05}, {.error = 0.10},
                                   {.error = -0.02}};
    /* |e| sorted: 0.02 0.05 0.10 0.30 */
    cr_expect(fabs(validate_median_abs_error(rows, 3) - 0.10) < TOL, "of -0.30, 0.05, 0.10");
    cr_expect(fabs(validate_median_abs_error(rows, 4) - 0.075) < TOL, "of all four");
    cr_expect(isnan(validate_median_abs_error(rows, 0)));
}

static char dir[64];

static void make_dir(void)
{
    test_make_dir(dir, sizeof dir, "validate");
}

static void remove_dir(void)
{
    test_remove_dir(dir);
}

Test(validate, document_reads_back_as_two_reports_a_row, .init = make_dir, .fini = remove_dir)
{
    struct config c[4];
    struct report r[4];
    hand_made(&r[0], &c[0], "sim", "mirrored", 0.012, 0.9);
    hand_made(&r[1], &c[1], "real", "mirrored", 0.010, 0.6);
    hand_made(&r[2], &c[2], "sim", "pipeline-gpipe", 0.020, 0.5);
    hand_made(&r[3], &c[3], "real", "pipeline-gpipe", 0.025, 0.4);
    struct validate_row rows[2];
    struct err e = {0};
    cr_assert_eq(validate_row(&r[0], &r[1], &rows[0], &e), 0, "%s", e.msg);
    cr_assert_eq(validate_row(&r[2], &r[3], &rows[1], &e), 0, "%s", e.msg);
    char path[128];
    snprintf(path, sizeof path, "%s/v.json", dir);
    cr_assert_eq(validate_write_json(rows, 2, path, &e), 0, "%s", e.msg);

    /* core/report_read.c: rows[].predicted then rows[].measured, in order */
    struct report_doc d;
    cr_assert_eq(report_doc_read(path, &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d.n, 4);
    for (int i = 0; i < 4; i++) {
        cr_expect_str_eq(d.reports[i].mode, r[i].mode, "report %d", i);
        cr_expect_str_eq(d.reports[i].strategy, r[i].strategy, "report %d", i);
        cr_expect_eq(d.reports[i].step_time_s.p50, r[i].step_time_s.p50, "report %d", i);
        cr_expect_eq(d.reports[i].breakdown.compute, r[i].breakdown.compute, "report %d", i);
    }
    /* and the row computed again from what was read gives the error written */
    char *text = test_slurp(path);
    cJSON *doc = cJSON_Parse(text);
    cr_assert_not_null(doc);
    cr_expect_eq(cJSON_GetObjectItem(doc, "strata_validate")->valuedouble, 1.0);
    cJSON *arr = cJSON_GetObjectItem(doc, "rows");
    cr_assert_eq(cJSON_GetArraySize(arr), 2);
    for (int i = 0; i < 2; i++) {
        cJSON *row = cJSON_GetArrayItem(arr, i);
        struct validate_row again;
        cr_assert_eq(validate_row(&d.reports[2 * i], &d.reports[2 * i + 1], &again, &e), 0,
                     "%s", e.msg);
        cr_expect_str_eq(cJSON_GetObjectItem(row, "strategy")->valuestring, again.strategy);
        cr_expect_eq(cJSON_GetObjectItem(row, "error")->valuedouble, again.error,
                     "row %d: written %.17g, recomputed %.17g", i,
                     cJSON_GetObjectItem(row, "error")->valuedouble, again.error);
        cr_expect_eq(cJSON_GetObjectItem(row, "predicted_step_s")->valuedouble,
                     again.predicted_step_s);
        cr_expect_eq(cJSON_GetObjectItem(row, "measured_step_s")->valuedouble,
                     again.measured_step_s);
    }
    cJSON_Delete(doc);
    free(text);
    report_doc_release(&d);
}

/* ---- strata validate ---------------------------------------------------------- */

struct run {
    int status;
    char *out, *err;
};

static struct run run_strata(const char *const *args)
{
    char out_path[] = "/tmp/strata-val-out-XXXXXX", err_path[] = "/tmp/strata-val-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    cr_assert(out_fd >= 0 && err_fd >= 0);
    const char *argv[40] = {STRATA_BIN};
    int n = 1;
    while (args[n - 1] && n < 39) {
        argv[n] = args[n - 1];
        n++;
    }
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, STRATA_BIN, &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    close(out_fd);
    close(err_fd);
    struct run r = {WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, test_slurp(out_path),
                    test_slurp(err_path)};
    unlink(out_path);
    unlink(err_path);
    return r;
}

#define RUN(...) run_strata((const char *const[]){__VA_ARGS__, NULL})

static void expect_bad_input(struct run r, const char *must_name)
{
    cr_expect_eq(r.status, 2, "exit %d, want 2; stderr: %s", r.status, r.err);
    cr_expect_not_null(strstr(r.err, must_name), "stderr does not name '%s': %s", must_name,
                       r.err);
    free(r.out);
    free(r.err);
}

Test(validate, bad_input_exits_2_naming_what_was_wrong)
{
    expect_bad_input(RUN("validate", "--np", "2"), "--cluster");
    expect_bad_input(RUN("validate", "--np", "2", "--cluster", "/nonexistent.profile"),
                     "/nonexistent.profile");
    expect_bad_input(RUN("validate", "--cluster", "cpu-loopback", "--epochs", "1"), "--epochs");
    expect_bad_input(RUN("validate", "--cluster", "cpu-loopback", "--strategies", "nope"),
                     "nope");
    expect_bad_input(RUN("validate", "--cluster", "cpu-loopback", "--mode", "real"), "--mode");
    expect_bad_input(RUN("validate", "--cluster", "cpu-loopback", "--timeline"), "--timeline");
}

Test(validate, strata_validate_runs_a_strategy_both_ways_into_one_document, .init = make_dir,
     .fini = remove_dir, .timeout = 300)
{
    char path[128];
    snprintf(path, sizeof path, "%s/v.json", dir);
    struct run r = RUN("validate", "--strategies", "mirrored,pipeline-gpipe", "--np", "2",
                       "--cluster", "cpu-loopback", "--data", "synthetic", "--model",
                       "mlp:784-32-10", "--batch", "32", "--steps", "4", "--json", path
#if __has_include("../plots/plots.h")
                       , "--plot", dir
#endif
                       );
    cr_assert_eq(r.status, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
    cr_expect_not_null(strstr(r.out, "median |error| over 2 strategies"), "%s", r.out);
#if __has_include("../plots/plots.h")
    /* the figure's data, written whether or not gnuplot is installed */
    char dat[160];
    snprintf(dat, sizeof dat, "%s/validation.dat", dir);
    cr_expect_eq(access(dat, R_OK), 0, "--plot %s wrote no validation.dat", dir);
#endif
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_read(path, &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d.n, 4);
    const char *strategy[] = {"mirrored", "mirrored", "pipeline-gpipe", "pipeline-gpipe"};
    for (int i = 0; i < 4; i++) {
        cr_expect_str_eq(d.reports[i].mode, i % 2 ? "real" : "sim", "report %d", i);
        cr_expect_str_eq(d.reports[i].strategy, strategy[i], "report %d", i);
        cr_expect_eq(d.reports[i].devices, 2, "report %d", i);
        cr_expect(d.reports[i].step_time_s.p50 > 0, "report %d", i);
    }
    report_doc_release(&d);
    free(r.out);
    free(r.err);
}
