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
#include "../bench/validate_axes.h"
#include "../core/report.h"

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

/* A matrix of two cells of one model on 2 ranks, "none" and "slow:1=2",
 * each with mirrored and ps-async: reports r[cell][strategy][sim|real],
 * rows made from them. ps-async's histograms: predicted [1, 1, 598],
 * measured [32, 206, 348, 10, 4] in the undisturbed cell (TVD 5/12, see
 * test_validate_metrics.c), identical in the disturbed one (TVD 0). */
struct fixture {
    struct config c[2][2][2];
    struct report r[2][2][2];
    struct validate_cell cells[2];
    struct validate_row rows[4];
    struct validate_matrix m;
};

static int64_t predicted_hist[] = {1, 1, 598}, measured_hist[] = {32, 206, 348, 10, 4};

static void make_matrix(struct fixture *f)
{
    memset(f, 0, sizeof *f);
    /* step times in ms: [cell][strategy] = {predicted, measured} */
    static const double step_ms[2][2][2] = {{{10, 12}, {20, 18}}, {{20, 20}, {26, 27}}};
    static const char *const strategy[2] = {"mirrored", "ps-async"};
    for (int c = 0; c < 2; c++) {
        struct validate_cell *cell = &f->cells[c];
        snprintf(cell->model, sizeof cell->model, "mlp:784-32-10");
        snprintf(cell->straggler, sizeof cell->straggler, "%s", c ? "slow:1=2" : "none");
        cell->np = 2;
        cell->is_undisturbed = c == 0;
        cell->first_row = 2 * c;
        cell->n_rows = 2;
        for (int s = 0; s < 2; s++) {
            for (int k = 0; k < 2; k++) {
                struct report *r = &f->r[c][s][k];
                hand_made(r, &f->c[c][s][k], k ? "real" : "sim", strategy[s],
                          step_ms[c][s][k] * 1e-3, 0.7);
                if (s == 1) {
                    r->staleness.histogram = k || c ? measured_hist : predicted_hist;
                    r->staleness.n_histogram = k || c ? 5 : 3;
                }
            }
            struct err e = {0};
            cr_assert_eq(validate_row(&f->r[c][s][0], &f->r[c][s][1], &f->rows[2 * c + s], &e), 0,
                         "%s", e.msg);
            f->rows[2 * c + s].cell = c;
        }
    }
    f->m = (struct validate_matrix){.cells = f->cells, .n_cells = 2, .rows = f->rows, .n_rows = 4,
                                    .repeat = 1,
                                    .load = {.cores = 2, .before_1min = 0.3, .after_1min = 2.5,
                                             .own_ranks = 3}};
    validate_load_judge(&f->m.load);
}

/* The summary's allocation; the reports own nothing (static histograms). */
static void drop_matrix(struct fixture *f)
{
    validate_summary_release(&f->m.summary);
}

Test(validate, summary_of_a_hand_made_matrix)
{
    struct fixture f;
    make_matrix(&f);
    struct err e = {0};
    cr_assert_eq(validate_summarize(&f.m, &e), 0, "%s", e.msg);
    const struct validate_summary *s = &f.m.summary;
    /* errors: 10/12-1 = -1/6, 20/18-1 = +1/9, 20/20-1 = 0, 26/27-1 = -1/27;
     * |e| sorted: 0, 1/27, 1/9, 1/6: median (1/27 + 1/9) / 2 = 2/27;
     * p90 at 0.9 * 3 = 2.7: 1/9 + 0.7 (1/6 - 1/9) = 1/9 + 0.7/18 */
    cr_expect_eq(s->n_rows, 4);
    cr_expect(fabs(s->median_abs_error - 2.0 / 27) < TOL, "median %.17g", s->median_abs_error);
    cr_expect(fabs(s->p90_abs_error - (1.0 / 9 + 0.7 / 18)) < TOL, "p90 %.17g", s->p90_abs_error);
    /* Kendall tau-b: in each cell, 2 strategies in the same order both ways */
    cr_expect(fabs(f.cells[0].kendall_tau - 1) < TOL, "cell 0 tau %g", f.cells[0].kendall_tau);
    cr_expect(fabs(f.cells[1].kendall_tau - 1) < TOL, "cell 1 tau %g", f.cells[1].kendall_tau);
    cr_expect_eq(s->n_ranked_cells, 2);
    cr_expect(fabs(s->kendall_tau_mean - 1) < TOL);
    /* inflation, slow:1=2 against none: mirrored predicted 20/10 = 2,
     * measured 20/12: 2 / (5/3) - 1 = +0.2; ps-async predicted 26/20 = 1.3,
     * measured 27/18 = 1.5: 1.3 / 1.5 - 1 = -2/15 */
    cr_assert(s->has_inflation);
    cr_assert_eq(s->n_inflation, 2);
    cr_expect_str_eq(s->inflation[0].strategy, "mirrored");
    cr_expect(fabs(s->inflation[0].error - 0.2) < TOL, "mirrored %.17g", s->inflation[0].error);
    cr_expect(fabs(s->inflation[1].predicted_ratio - 1.3) < TOL);
    cr_expect(fabs(s->inflation[1].measured_ratio - 1.5) < TOL);
    cr_expect(fabs(s->inflation[1].error + 2.0 / 15) < TOL, "ps-async %.17g",
              s->inflation[1].error);
    cr_expect(fabs(s->inflation_max_abs_error - 0.2) < TOL);
    /* staleness: ps-async only (mirrored has no TVD), max of 5/12 and 0 */
    cr_expect(isnan(f.rows[0].staleness_tvd), "mirrored has no staleness TVD");
    cr_expect(fabs(f.rows[1].staleness_tvd - 5.0 / 12) < TOL, "%.17g", f.rows[1].staleness_tvd);
    cr_expect(fabs(f.rows[3].staleness_tvd) < TOL, "%.17g", f.rows[3].staleness_tvd);
    cr_expect_eq(s->n_staleness, 2);
    cr_expect(fabs(s->staleness_tvd_max - 5.0 / 12) < TOL);
    drop_matrix(&f);
}

Test(validate, inflation_is_n_a_without_an_undisturbed_cell)
{
    struct fixture f;
    make_matrix(&f);
    f.cells[0].is_undisturbed = false;   /* as if both were disturbed */
    struct err e = {0};
    cr_assert_eq(validate_summarize(&f.m, &e), 0, "%s", e.msg);
    cr_expect(!f.m.summary.has_inflation);
    cr_expect_eq(f.m.summary.n_inflation, 0);
    cr_expect(isnan(f.m.summary.inflation_max_abs_error));
    drop_matrix(&f);
}

Test(validate, document_version_2_holds_cells_rows_summary_and_reads_back, .init = make_dir,
     .fini = remove_dir)
{
    struct fixture f;
    make_matrix(&f);
    struct err e = {0};
    cr_assert_eq(validate_summarize(&f.m, &e), 0, "%s", e.msg);
    char path[128];
    snprintf(path, sizeof path, "%s/v.json", dir);
    cr_assert_eq(validate_write_json(&f.m, path, &e), 0, "%s", e.msg);

    /* core/report_read.c: cells[].rows[].predicted then .measured, in order */
    struct report_doc d;
    cr_assert_eq(report_doc_read(path, &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d.n, 8);
    for (int i = 0; i < 8; i++) {
        const struct report *want = &f.r[i / 4][i / 2 % 2][i % 2];
        cr_expect_str_eq(d.reports[i].mode, want->mode, "report %d", i);
        cr_expect_str_eq(d.reports[i].strategy, want->strategy, "report %d", i);
        /* report.c writes 15 significant digits: equal within 1e-12 relative */
        cr_expect(fabs(d.reports[i].step_time_s.p50 / want->step_time_s.p50 - 1) < 1e-12,
                  "report %d: %.17g read, %.17g written", i, d.reports[i].step_time_s.p50,
                  want->step_time_s.p50);
    }
    report_doc_release(&d);

    char *text = test_slurp(path);
    cJSON *doc = cJSON_Parse(text);
    cr_assert_not_null(doc);
    cr_expect_eq(cJSON_GetObjectItem(doc, "strata_validate")->valuedouble, 2.0);
    cJSON *load = cJSON_GetObjectItem(doc, "load");
    cr_expect_eq(cJSON_GetObjectItem(load, "before_1min")->valuedouble, 0.3);
    cr_expect_eq(cJSON_GetObjectItem(load, "after_1min")->valuedouble, 2.5);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(load, "quiet")), "0.3 and 2.5 (3 own) on 2 cores");
    cJSON *cells = cJSON_GetObjectItem(doc, "cells");
    cr_assert_eq(cJSON_GetArraySize(cells), 2);
    cJSON *c1 = cJSON_GetArrayItem(cells, 1);
    cr_expect_str_eq(cJSON_GetObjectItem(c1, "straggler")->valuestring, "slow:1=2");
    cr_expect_eq(cJSON_GetObjectItem(c1, "np")->valuedouble, 2);
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cells, 0), "rows"), 1);
    cr_expect_str_eq(cJSON_GetObjectItem(row, "strategy")->valuestring, "ps-async");
    cr_expect_eq(cJSON_GetObjectItem(row, "error")->valuedouble, f.rows[1].error);
    cJSON *st = cJSON_GetObjectItem(row, "staleness");
    cr_expect(fabs(cJSON_GetObjectItem(st, "tvd")->valuedouble - 5.0 / 12) < TOL);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(st, "measured")), 5);
    cJSON *bd = cJSON_GetObjectItem(cJSON_GetObjectItem(row, "breakdown"), "measured");
    cr_expect_eq(cJSON_GetObjectItem(bd, "compute")->valuedouble, 0.7);
    cJSON *mirrored = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cells, 0), "rows"), 0);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(mirrored, "staleness")), "mirrored: no staleness");
    cJSON *sum = cJSON_GetObjectItem(doc, "summary");
    cr_expect(fabs(cJSON_GetObjectItem(sum, "median_abs_error")->valuedouble - 2.0 / 27) < TOL);
    cr_expect_eq(cJSON_GetObjectItem(sum, "kendall_tau_mean")->valuedouble, 1);
    cJSON *infl = cJSON_GetObjectItem(sum, "inflation");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(infl, "entries")), 2);
    cJSON_Delete(doc);
    free(text);
    drop_matrix(&f);
}

Test(report_read_v1, a_version_1_document_still_reads, .init = make_dir, .fini = remove_dir)
{
    struct config c;
    struct report r;
    hand_made(&r, &c, "sim", "mirrored", 0.01, 0.9);
    cJSON *rep = report_to_json(&r);
    char *rtext = cJSON_PrintUnformatted(rep);
    char path[128];
    snprintf(path, sizeof path, "%s/v1.json", dir);
    FILE *fp = fopen(path, "w");
    fprintf(fp, "{\"strata_validate\": 1, \"rows\": [{\"strategy\": \"mirrored\", "
                "\"predicted\": %s, \"measured\": %s}]}\n", rtext, rtext);
    fclose(fp);
    struct report_doc d;
    struct err e = {0};
    cr_expect_eq(report_doc_read(path, &d, &e), 0, "%s", e.msg);
    cr_expect_eq(d.n, 2);
    report_doc_release(&d);
    cJSON_free(rtext);
    cJSON_Delete(rep);
}

/* ---- the lists ------------------------------------------------------------------ */

Test(validate_axes, commas_inside_a_spec_continue_it)
{
    char out[8][VALIDATE_SPEC_BYTES];
    int n = 0;
    struct err e = {0};
    cr_assert_eq(validate_split_list("--stragglers", "none,slow:1=2,3=4,exp:0.5", out, 8, &n,
                                     &e), 0, "%s", e.msg);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(out[0], "none");
    cr_expect_str_eq(out[1], "slow:1=2,3=4");
    cr_expect_str_eq(out[2], "exp:0.5");
    cr_expect_eq(validate_split_list("--models", "a,,b", out, 8, &n, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "--models"), "%s", e.msg);
    cr_expect_eq(validate_split_list("--np", "1,2,3", out, 2, &n, &e), ERR_INPUT, "over cap");
}

static int parse_axes(struct validate_axes *ax, struct err *e, const char *const *kv)
{
    struct config c;
    config_init(&c);
    for (int i = 0; kv[i]; i += 2)
        cr_assert_eq(config_set(&c, kv[i], kv[i + 1], ~0u, e), 0, "%s", e->msg);
    int rc = validate_axes_parse(&c, ax, e);
    validate_axes_release(ax);
    return rc;
}

#define AXES(ax, e, ...) parse_axes(ax, e, (const char *const[]){__VA_ARGS__, NULL})

Test(validate_axes, lists_default_to_the_single_options)
{
    struct validate_axes ax;
    struct err e = {0};
    cr_assert_eq(AXES(&ax, &e, "np", "3", "straggler", "exp:0.5"), 0, "%s", e.msg);
    cr_expect_eq(ax.n_models, 1);
    cr_expect_str_eq(ax.models[0], "mlp:784-256-256-256-10", "--model's default");
    cr_expect_eq(ax.n_np, 1);
    cr_expect_eq(ax.np[0], 3);
    cr_expect_eq(ax.n_stragglers, 1);
    cr_expect_str_eq(ax.stragglers[0], "exp:0.5");
    cr_expect_eq(ax.repeat, 1);
    cr_assert_eq(AXES(&ax, &e, "models", "mlp:784-32-10,mlp:784-64-10", "np-list", "2,4",
                      "stragglers", "none,slow:1=2", "repeat", "3"), 0, "%s", e.msg);
    cr_expect_eq(ax.n_models, 2);
    cr_expect_eq(ax.n_np, 2);
    cr_expect_eq(ax.np[1], 4);
    cr_expect_eq(ax.straggler_specs[1].kind, STRAG_SLOW);
    cr_expect_eq(ax.repeat, 3);
}

static void expect_axes_error(int rc, const struct err *e, const char *a, const char *b)
{
    cr_expect_eq(rc, ERR_INPUT, "%s", e->msg);
    cr_expect_not_null(strstr(e->msg, a), "'%s' not named: %s", a, e->msg);
    if (b) cr_expect_not_null(strstr(e->msg, b), "'%s' not named: %s", b, e->msg);
}

Test(validate_axes, each_bad_element_is_named_with_its_option)
{
    struct validate_axes ax;
    struct err e = {0};
    expect_axes_error(AXES(&ax, &e, "np-list", "2,x"), &e, "--np", "'x'");
    expect_axes_error(AXES(&ax, &e, "np-list", "2,0"), &e, "--np", "1 to 65536");
    expect_axes_error(AXES(&ax, &e, "np-list", "2,2"), &e, "--np", "twice");
    expect_axes_error(AXES(&ax, &e, "np", "2", "np-list", "4"), &e, "--np 2 and --np-list 4",
                      "give one");
    expect_axes_error(AXES(&ax, &e, "models", "mlp:784-32-10,bogus"), &e, "--models", "bogus");
    expect_axes_error(AXES(&ax, &e, "stragglers", "none,fast:2"), &e, "--stragglers",
                      "fast:2");
    /* rank 3 computes at --np 4 but not at --np 2: both named */
    expect_axes_error(AXES(&ax, &e, "np-list", "4,2", "stragglers", "none,slow:3=2"), &e,
                      "rank 3", "--np 2");
    expect_axes_error(AXES(&ax, &e, "np", "2", "straggler", "slow:2=2"), &e, "--straggler",
                      "rank 2");
    /* sizes only: real runs cannot train it, so no cell could run */
    expect_axes_error(AXES(&ax, &e, "models", "mlp:784-32-10,transformer:layers=2,hidden=8,"
                           "seq=4,vocab=16"), &e, "--models",
                      "'transformer:layers=2,hidden=8,seq=4,vocab=16' is described by sizes");
    expect_axes_error(AXES(&ax, &e, "model", "gpt2-small"), &e, "--model", "mlp:");
}

/* ---- strata validate ---------------------------------------------------------- */

Test(validate, bad_input_exits_2_naming_what_was_wrong)
{
    expect_refused(RUN("validate", "--np", "2"), "--cluster", NULL);
    expect_refused(RUN("validate", "--np", "2", "--cluster", "/nonexistent.profile"),
                     "/nonexistent.profile", NULL);
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--epochs", "1"), "--epochs", NULL);
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--strategies", "nope"),
                     "nope", NULL);
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--mode", "real"), "--mode", NULL);
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--timeline"), "--timeline", NULL);
}

/* What every real job would refuse alike (the device, the data set, a
 * model the data set does not fit) was said per cell and strategy, as "not
 * run", after each cell's simulation: now once, before any cell. */
Test(validate, inputs_every_job_refuses_are_refused_once_before_the_cells)
{
    const char *const bad[][2] = {{"--device", "gpu"}, {"--data", "/nonexistent"},
                                  {"--models", "mlp:784-8-10,mlp:8-4-2"}};
    const char *const says[] = {"strata validate: --device: 'gpu' is not a device",
                                "strata validate: --data /nonexistent:",
                                "strata validate: --models mlp:8-4-2: "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct run r = RUN("validate", "--cluster", "cpu-loopback", "--np", "2", "--steps", "2",
                           "--strategies", "mirrored,ps-sync", "--data", "synthetic", bad[i][0],
                           bad[i][1]);
        cr_expect_null(strstr(r.err, "not run"), "%s", r.err);
        cr_expect_null(strstr(r.out, "cell 1 of"), "a cell ran: %s", r.out);
        expect_refused(r, says[i], NULL);
    }
}

Test(validate, list_options_refuse_bad_elements_with_exit_2)
{
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--np", "2,x"), "'x'", NULL);
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--np=2,0"), "--np", NULL);
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--np", "2,4", "--stragglers",
                         "none,slow:3=2"), "--np 2", NULL);
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--models", "mlp:784-10,nope"),
                     "nope", NULL);
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--repeat", "0"), "--repeat", NULL);
    /* a model real runs cannot train is refused before any cell runs (it
     * went through every cell, then printed an empty table) */
    struct run r = RUN("validate", "--cluster", "cpu-loopback", "--models",
                       "transformer:layers=2,hidden=8,seq=4,vocab=16", "--np", "2");
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect_not_null(strstr(r.err, "--models: 'transformer:"), "%s", r.err);
    cr_expect_eq(r.out[0], '\0', "something ran: %s", r.out);
    cr_expect_null(strstr(r.err, "cell 1"), "a cell ran: %s", r.err);
    run_free(&r);
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--stragglers", "none,,exp:1"),
                     "--stragglers", NULL);
}

Test(validate, strata_validate_runs_a_matrix_both_ways_into_one_document, .init = make_dir,
     .fini = remove_dir, .timeout = 300)
{
    char path[128];
    snprintf(path, sizeof path, "%s/v.json", dir);
    /* 2 cells (none, slow:1=2) x 2 strategies: 4 tiny real jobs */
    struct run r = RUN("validate", "--strategies", "mirrored,ps-async", "--np", "2",
                       "--stragglers", "none,slow:1=2", "--cluster", "cpu-loopback", "--data",
                       "synthetic", "--model", "mlp:784-32-10", "--batch", "32", "--steps", "5",
                       "--json", path, "--plot", dir);
    cr_assert_eq(r.status, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
    cr_expect_not_null(strstr(r.out, "|step-time error|: median"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "p90"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "straggler inflation error: median"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "Kendall tau-b"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "staleness TVD"), "%s", r.out);
    cr_expect(strstr(r.out, ": quiet") || strstr(r.out, "machine was loaded"), "%s", r.out);
    cr_expect_not_null(strstr(r.err, "cell 2 of 2"), "progress on stderr: %s", r.err);
    /* the figure's data, written whether or not gnuplot is installed */
    char dat[160];
    snprintf(dat, sizeof dat, "%s/validation.dat", dir);
    cr_expect_eq(access(dat, R_OK), 0, "--plot %s wrote no validation.dat", dir);
    /* and says so, as compare and plot do (validate said nothing) */
    char where[200];
    snprintf(where, sizeof where, "plots in %s/: validation (each NAME.png", dir);
    cr_expect_not_null(strstr(r.out, where), "%s", r.out);
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_read(path, &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d.n, 8);
    const char *strategy[] = {"mirrored", "ps-async"};
    for (int i = 0; i < 8; i++) {
        cr_expect_str_eq(d.reports[i].mode, i % 2 ? "real" : "sim", "report %d", i);
        cr_expect_str_eq(d.reports[i].strategy, strategy[i / 2 % 2], "report %d", i);
        cr_expect_eq(d.reports[i].devices, 2, "report %d", i);
        cr_expect(d.reports[i].step_time_s.p50 > 0, "report %d", i);
    }
    report_doc_release(&d);
    char *text = test_slurp(path);
    cJSON *doc = cJSON_Parse(text);
    cr_assert_not_null(doc);
    cJSON *load = cJSON_GetObjectItem(doc, "load");
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(load, "before_1min")), "/proc/loadavg read");
    cr_expect(cJSON_IsBool(cJSON_GetObjectItem(load, "quiet")));
    cJSON *infl = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary"), "inflation");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(infl, "entries")), 2);
    cJSON_Delete(doc);
    free(text);
    free(r.out);
    free(r.err);
}
