/* strata sweep and bench/sweep: the grid (a row per strategy and value),
 * --devices LIST as --vary devices=LIST, speedups that are the simulator's
 * own throughput ratios, weak scaling's batches, bad --vary values, unfit
 * points, the JSON read back, and a real sweep of MPI jobs. Command-line
 * tests run the built binary (STRATA_BIN) with its output in temp files. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../bench/run.h"
#include "../bench/sweep.h"
#include "../core/config.h"
#include "../core/report.h"
#include "../strategies/strategy.h"

/* strata sweep with the given arguments. */
#define SWEEP(...) run_strata((const char *const[]){"sweep", __VA_ARGS__, NULL})

/* The same, which must succeed. */
#define SWEEP_OK(...) sweep_ok((const char *const[]){"sweep", __VA_ARGS__, NULL})

static struct run sweep_ok(const char *const *args)
{
    struct run r = run_strata(args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    return r;
}

/* --- CSV ------------------------------------------------------------------- */

#define MAX_ROWS 128
#define MAX_FIELDS 12

struct csv {
    int n_rows;                               /* data rows, the header not counted */
    char field[MAX_ROWS][MAX_FIELDS][512];
};

/* Reads the sweep CSV at path: a header line, then rows of fields, quoted
 * as RFC 4180 when they hold commas. */
static struct csv *read_csv(const char *path)
{
    char *text = test_slurp(path);
    struct csv *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    const char *p = strchr(text, '\n');
    cr_assert_not_null(p, "%s has no header line", path);
    cr_assert(!strncmp(text, "strategy,option,value,devices,batch,step_time_s,"
                             "throughput_samples_per_s,speedup,efficiency,note\n", (size_t)(p - text + 1)),
              "unexpected header: %.*s", (int)(p - text), text);
    for (p++; *p; p++) {
        cr_assert_lt(c->n_rows, MAX_ROWS);
        int f = 0;
        size_t k = 0;
        bool quoted = false;
        for (;; p++) {
            char ch = *p;
            if (quoted && ch == '"' && p[1] == '"') {
                c->field[c->n_rows][f][k++] = '"';
                p++;
            } else if (ch == '"') {
                quoted = !quoted;
            } else if (!quoted && (ch == ',' || ch == '\n' || !ch)) {
                c->field[c->n_rows][f][k] = '\0';
                if (ch != ',') break;
                cr_assert_lt(++f, MAX_FIELDS);
                k = 0;
            } else {
                cr_assert_lt(k, 511);
                c->field[c->n_rows][f][k++] = ch;
            }
        }
        cr_assert_eq(f, 9, "row %d has %d fields, not 10", c->n_rows + 1, f + 1);
        c->n_rows++;
        if (!*p) break;
    }
    free(text);
    return c;
}

static double num_field(const struct csv *c, int row, int col)
{
    return c->field[row][col][0] ? strtod(c->field[row][col], NULL) : NAN;
}

enum { F_STRATEGY, F_OPTION, F_VALUE, F_DEVICES, F_BATCH, F_STEP, F_THROUGHPUT, F_SPEEDUP,
       F_EFFICIENCY, F_NOTE };

/* Each test writes into a fresh test_tmp_dir. */
TEST_SUITE_WITH_TMP_DIR(sweep);

/* strata sweep with args, which must succeed, writing its CSV to
 * test_tmp_dir/name; the CSV read back, which must have n_rows rows (free it). */
static struct csv *sweep_csv(const char *name, int n_rows, const char *const *args)
{
    struct run r = sweep_ok(args);
    run_free(&r);
    struct csv *c = read_csv(test_tmp_path(name));
    cr_assert_eq(c->n_rows, n_rows, "%s", name);
    return c;
}

#define SWEEP_CSV(name, n_rows, ...)                                                       \
    sweep_csv(name, n_rows,                                                                \
              (const char *const[]){"sweep", __VA_ARGS__, "--csv", test_tmp_path(name), NULL})

/* --- The grid --------------------------------------------------------------- */

/* 6 values x every strategy of the default model: one CSV row each, unfit
 * ones included, in a few seconds (it takes hundredths here; the bound is
 * loose for sanitizer builds). */
Test(sweep, grid_has_a_row_per_strategy_and_value)
{
    const char *csv = test_tmp_path("grid.csv");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct run r = SWEEP("--devices", "1,2,4,8,16,32", "--csv", csv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_lt(wall_s, 20.0, "6 points x %zu strategies took %.1f s", strategy_count, wall_s);
    struct csv *c = read_csv(csv);
    cr_expect_eq(c->n_rows, 6 * (int)strategy_count, "%d rows, want 6 x %zu", c->n_rows,
                 strategy_count);
    /* strategy-major, values in the order given */
    static const char *const values[] = {"1", "2", "4", "8", "16", "32"};
    for (int i = 0; i < c->n_rows; i++) {
        cr_expect_str_eq(c->field[i][F_STRATEGY], strategy_registry[i / 6].name);
        cr_expect_str_eq(c->field[i][F_OPTION], "devices");
        cr_expect_str_eq(c->field[i][F_VALUE], values[i % 6]);
        cr_expect_str_eq(c->field[i][F_DEVICES], values[i % 6]);
        cr_expect_str_eq(c->field[i][F_BATCH], "256", "strong scaling keeps the batch");
    }
    for (size_t k = 0; k < strategy_count; k++)
        cr_expect_not_null(strstr(r.out, strategy_registry[k].name));
    free(c);
    run_free(&r);
}

Test(sweep, devices_list_is_vary_devices)
{
    const char *a = test_tmp_path("a.csv");
    const char *b = test_tmp_path("b.csv");
    const char *c = test_tmp_path("c.csv");
    struct run ra = SWEEP("--devices", "1,2,4", "--csv", a);
    struct run rb = SWEEP("--vary", "devices=1,2,4", "--csv", b);
    struct run rc = SWEEP("--devices=1,2,4", "--csv", c);
    cr_assert_eq(ra.status, 0, "stderr: %s", ra.err);
    cr_assert_eq(rb.status, 0, "stderr: %s", rb.err);
    cr_assert_eq(rc.status, 0, "stderr: %s", rc.err);
    cr_expect_str_eq(ra.out, rb.out, "the tables differ");
    cr_expect_str_eq(ra.out, rc.out, "--devices=LIST differs");
    char *ta = test_slurp(a), *tb = test_slurp(b), *tc = test_slurp(c);
    cr_expect_str_eq(ta, tb);
    cr_expect_str_eq(ta, tc);
    free(ta);
    free(tb);
    free(tc);
    run_free(&ra);
    run_free(&rb);
    run_free(&rc);
    /* and --devices N alone stays the option: devices 1, 2, 4, then 6 */
    struct csv *cd = SWEEP_CSV("d.csv", 4, "--devices", "6", "--strategies", "mirrored");
    cr_expect_str_eq(cd->field[3][F_DEVICES], "6");
    free(cd);
}

/* Speedup is the simulator's own throughput over the one-device baseline's:
 * the CSV (%.17g, which reads back exactly) equals run_simulate and
 * run_baseline called here, bit for bit. */
Test(sweep, mirrored_speedups_on_the_ideal_cluster_are_the_simulators_throughput_ratios)
{
    struct csv *c = SWEEP_CSV("ideal.csv", 4, "--devices", "1,2,4,8", "--strategies", "mirrored",
                              "--cluster", "ideal");

    struct config cfg;
    config_init(&cfg);
    struct err e = {0};
    cr_assert_eq(config_set(&cfg, "cluster", "ideal", ~0u, &e), 0, "%s", e.msg);
    struct workload *wl = NULL;
    cr_assert_eq(workload_parse(cfg.model, &wl, &e), 0, "%s", e.msg);
    const struct strategy *m = strategy_find("mirrored", &e);
    struct sim_run base;
    cr_assert_eq(run_baseline(&cfg, wl, NULL, &base, &e), 0, "%s", e.msg);
    for (int i = 0; i < 4; i++) {
        cfg.devices = 1 << i;
        struct sim_run one;
        cr_assert_eq(run_simulate(&cfg, m, wl, 0, NULL, &one, &e), 0, "%s", e.msg);
        double want = one.report.throughput_samples_per_s / base.report.throughput_samples_per_s;
        double got = num_field(c, i, F_SPEEDUP);
        cr_expect_eq(got, want, "devices %d: speedup %.17g, the simulator's ratio %.17g",
                     1 << i, got, want);
        cr_expect_eq(num_field(c, i, F_THROUGHPUT), one.report.throughput_samples_per_s);
        cr_expect_eq(num_field(c, i, F_STEP), one.report.step_time_s.mean);
        cr_expect_eq(num_field(c, i, F_EFFICIENCY), want / (1 << i), "efficiency = speedup / N");
        run_release(&one);
    }
    run_release(&base);
    workload_free(wl);
    free(c);
}

/* Weak scaling: batch = --batch x devices / the first devices value, so
 * batch / devices stays 128 / 2 = 64; efficiency is T1 / TN against one
 * device running 64 samples (within 1e-12: the JSON's numbers). */
Test(sweep, weak_scaling_keeps_the_batch_per_device)
{
    const char *json = test_tmp_path("weak.json");
    struct run r = SWEEP_OK("--devices", "2,4,8", "--scaling", "weak", "--batch", "128",
                            "--strategies", "mirrored,ps-sync", "--json", json);
    cr_expect_not_null(strstr(r.out, "64 samples per device"), "%s", r.out);
    cJSON *doc = read_json(json);
    cr_expect_eq(num_at(doc, "strata_sweep", NULL), 1);
    const cJSON *bases = cJSON_GetObjectItemCaseSensitive(doc, "baselines");
    cr_assert_eq(cJSON_GetArraySize(bases), 1);
    const cJSON *base = cJSON_GetArrayItem(bases, 0);
    cr_expect_eq(num_at(base, "batch", NULL), 64);
    double t1 = num_at(cJSON_GetObjectItemCaseSensitive(base, "report"), "step_time_s", "mean");
    const cJSON *points = cJSON_GetObjectItemCaseSensitive(doc, "points");
    cr_assert_eq(cJSON_GetArraySize(points), 6);
    const cJSON *p;
    cJSON_ArrayForEach(p, points) {
        const cJSON *rep = cJSON_GetObjectItemCaseSensitive(p, "report");
        double batch = num_at(rep, "config", "batch"), devices = num_at(rep, "devices", NULL);
        cr_expect_eq(batch / devices, 64, "batch %g on %g devices", batch, devices);
        cr_expect_eq(num_at(p, "batch", NULL), batch);
        cr_expect_eq(num_at(p, "devices", NULL), devices);
        /* cJSON prints 15 digits when they read back within its epsilon,
         * not always exactly: compare to 1e-12 relative */
        double eff = num_at(p, "efficiency", NULL);
        double want = t1 / num_at(rep, "step_time_s", "mean");
        cr_expect_leq(fabs(eff - want), 1e-12 * want, "weak efficiency %.17g is not T1 / TN = "
                      "%.17g (difference %.3g)", eff, want, fabs(eff - want));
    }
    cJSON_Delete(doc);
    run_free(&r);
}

/* --- Other options ---------------------------------------------------------- */

/* Speedup over the strategy's first value; efficiency over one device with
 * the same value. */
Test(sweep, another_option_is_measured_against_its_first_value)
{
    struct csv *c = SWEEP_CSV("batch.csv", 4, "--vary", "batch=128,512", "--devices", "4",
                              "--strategies", "mirrored,pipeline-gpipe");
    for (int s = 0; s < 2; s++) {
        int first = 2 * s, second = first + 1;
        cr_expect_eq(num_field(c, first, F_SPEEDUP), 1);
        cr_expect_eq(num_field(c, second, F_SPEEDUP),
                     num_field(c, second, F_THROUGHPUT) / num_field(c, first, F_THROUGHPUT));
        cr_expect_str_eq(c->field[second][F_BATCH], "512");
        cr_expect_str_eq(c->field[second][F_DEVICES], "4");
    }
    free(c);
}

/* With --numerics the training options vary too, each value trains its own
 * model (a different final loss), and the one baseline, timed without
 * numerics, serves every value. */
Test(sweep, numerics_sweeps_vary_the_learning_rate)
{
    const char *json = test_tmp_path("lr.json");
    struct run r = SWEEP_OK("--vary", "lr=0.01,0.1", "--numerics", "--data", "synthetic", "--steps",
                            "10", "--strategies", "mirrored", "--json", json);
    cr_expect_not_null(strstr(r.out, "accuracy"), "no accuracy column:\n%s", r.out);
    cJSON *doc = read_json(json);
    const cJSON *points = cJSON_GetObjectItemCaseSensitive(doc, "points");
    cr_assert_eq(cJSON_GetArraySize(points), 2);
    const cJSON *r0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(points, 0), "report");
    const cJSON *r1 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(points, 1), "report");
    cr_expect_eq(num_at(r0, "config", "lr"), 0.01);
    cr_expect_eq(num_at(r1, "config", "lr"), 0.1);
    cr_expect_neq(num_at(r0, "final", "loss"), num_at(r1, "final", "loss"));
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "baselines")), 1);
    cJSON_Delete(doc);
    run_free(&r);
    /* without numerics a simulation does no arithmetic: --lr is not its option */
    r = SWEEP("--vary", "lr=0.01,0.1");
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "--numerics"), "%s", r.err);
    run_free(&r);
}

/* --straggler values hold commas of their own: slow:0=2,1=3 is one value. */
Test(sweep, straggler_values_keep_their_own_commas)
{
    struct config cfg;
    config_init(&cfg);
    struct err e = {0};
    cr_assert_eq(config_set(&cfg, "vary", "straggler=none,slow:0=2,1=3,exp:0.5", ~0u, &e), 0);
    struct sweep_axis ax;
    cr_assert_eq(sweep_axis_parse(&cfg, &ax, &e), 0, "%s", e.msg);
    cr_assert_eq(ax.n_values, 3);
    cr_expect_str_eq(ax.values[0], "none");
    cr_expect_str_eq(ax.values[1], "slow:0=2,1=3");
    cr_expect_str_eq(ax.values[2], "exp:0.5");
    cr_expect(!sweep_is_numeric(&ax));
    cr_expect_eq(sweep_x(&ax, 1), 2, "text values plot at their position");
}

Test(sweep, without_vary_the_devices_double_up_to_devices)
{
    struct config cfg;
    config_init(&cfg);
    struct err e = {0};
    cfg.devices = 12;
    struct sweep_axis ax;
    cr_assert_eq(sweep_axis_parse(&cfg, &ax, &e), 0, "%s", e.msg);
    cr_expect(ax.is_devices);
    cr_assert_eq(ax.n_values, 5);
    static const char *const want[] = {"1", "2", "4", "8", "12"};
    for (int i = 0; i < 5; i++) cr_expect_str_eq(ax.values[i], want[i]);
}

/* --- Bad input and unfit points --------------------------------------------- */

static void expect_bad_vary(const char *vary, const char *must_name)
{
    struct run r = SWEEP("--vary", vary);
    cr_expect_eq(r.status, 2, "--vary %s: exit %d, want 2; stderr: %s", vary, r.status, r.err);
    cr_expect_not_null(strstr(r.err, "--vary"), "stderr does not name --vary: %s", r.err);
    cr_expect_not_null(strstr(r.err, must_name), "stderr does not name '%s': %s", must_name,
                       r.err);
    cr_expect_eq(r.out[0], '\0', "printed a table: %s", r.out);
    run_free(&r);
}

Test(sweep, bad_vary_exits_2_naming_vary_and_the_value)
{
    expect_bad_vary("devcies=1,2", "did you mean --devices");     /* unknown option */
    expect_bad_vary("batch=64,lots", "'lots' is not an integer");  /* not a number */
    expect_bad_vary("devices=1,0,4", "0 is not allowed (1 to 1048576)");   /* out of range */
    expect_bad_vary("bucket-mb=1,-2", "-2 is not allowed");
    expect_bad_vary("devices", "expected OPTION=V1,V2");          /* no '=' */
    expect_bad_vary("=1,2", "expected OPTION=V1,V2");             /* no name ("--: unknown") */
    expect_bad_vary("devices=1,,4", "an empty value");
    expect_bad_vary("json=a,b", "cannot be varied");
    expect_bad_vary("straggler=exp:0.1,wobbly", "'wobbly' is not a model");
    struct run r = SWEEP("--devices", "3,6", "--scaling", "weak");   /* 256 / 3 is no batch */
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "--scaling weak"), "%s", r.err);
    run_free(&r);
}

/* A data set that is not there, or that the model does not take, is the
 * scenario's fault: refused once, not as a "not run" line a point. */
Test(sweep, numerics_with_bad_data_is_refused_once)
{
    struct run r = SWEEP("--devices", "1,2", "--steps", "2", "--numerics", "--data",
                         "/nonexistent", "-j", "1");
    cr_expect_null(strstr(r.err, "not run"), "%s", r.err);
    expect_refused(r, "strata sweep: --data /nonexistent: No such file or directory", NULL);
    r = SWEEP("--devices", "1,2", "--steps", "2", "--numerics", "--data", "synthetic", "--model",
              "mlp:8-4-2", "-j", "1");
    cr_expect_null(strstr(r.err, "not run"), "%s", r.err);
    expect_refused(r, "the model takes 8 inputs", NULL);
}

/* The default model has 4 layers: 8 pipeline stages do not fit. That point
 * is a '-' row with a note; the sweep still succeeds. */
Test(sweep, a_point_that_does_not_fit_is_a_dash_and_the_sweep_succeeds)
{
    const char *csv = test_tmp_path("unfit.csv"), *json = test_tmp_path("unfit.json");
    struct run r = SWEEP_OK("--devices", "2,8", "--strategies", "mirrored,pipeline-1f1b",
                            "--csv", csv, "--json", json);
    const char *row = strstr(r.out, "\npipeline-1f1b        8");
    cr_assert_not_null(row, "no row for pipeline-1f1b at 8 devices:\n%s", r.out);
    const char *eol = strchr(row + 1, '\n');
    cr_expect(eol && memchr(row, '-', (size_t)(eol - row)) && !memchr(row, '%', (size_t)(eol - row)),
              "the unfit row is not dashes: %.*s", (int)(eol - row), row);
    cr_expect_not_null(strstr(r.out, "not run: pipeline-1f1b at devices=8"), "%s", r.out);
    struct csv *c = read_csv(csv);
    cr_assert_eq(c->n_rows, 4);
    cr_expect_str_eq(c->field[3][F_SPEEDUP], "");
    cr_expect_not_null(strstr(c->field[3][F_NOTE], "4 layers"), "note: %s", c->field[3][F_NOTE]);
    cJSON *doc = read_json(json);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "points")), 3);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "not_run")), 1);
    cJSON_Delete(doc);
    free(c);
    run_free(&r);
    /* nothing fits at all: the scenario is the problem, exit 2 */
    r = SWEEP("--devices", "8,16", "--strategies", "model");
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    run_free(&r);
}

/* What a point's builder chose (interleaved's --chunks lowered to fit the
 * layers) is said under the table as compare says it; a point past the
 * layers says what would help; a sweep of another option does not read as
 * one more value of it. */
Test(sweep, plan_notes_and_the_header_say_what_ran)
{
    struct run r = SWEEP_OK("--devices", "2,4,8", "--strategies", "pipeline-interleaved");
    cr_expect_not_null(strstr(r.out, "  note: pipeline-interleaved at devices=4: --chunks 1: the "
                                     "default 2 chunks on each of 4 devices need 8 layers, the "
                                     "model has 4\n"),
                       "%s", r.out);
    cr_expect_null(strstr(r.out, "at devices=2: --chunks"), "2 x 2 chunks fit: %s", r.out);
    cr_expect_not_null(strstr(r.out, "--devices 8 exceeds the model's 4 layers: "
                                     "pipeline-interleaved needs a layer per chunk, and every "
                                     "device holds one"),
                       "%s", r.out);
    run_free(&r);
    r = SWEEP_OK("--vary", "batch=128,256", "--strategies", "mirrored", "--steps", "2");
    cr_expect(!strncmp(r.out, "sweep of batch over 128, 256; 4 devices, simulated", 50), "%s",
              r.out);
    run_free(&r);
}

/* The header, the table's columns and the figures' titles say what ran:
 * --vary batch showed two batch columns, --vary steps a header with the
 * default 20 steps, --vary straggler a figure titled "stragglers none". */
Test(sweep, the_header_and_columns_say_the_varied_value_once)
{
    struct run r = SWEEP_OK("--vary", "batch=128,256", "--strategies", "mirrored", "--steps", "2");
    const char *row = strstr(r.out, "\n\nstrategy");
    cr_assert_not_null(row, "%s", r.out);
    const char *end = strchr(row + 2, '\n'), *second = strstr(strstr(row, "batch") + 1, "batch");
    cr_expect(!second || second > end, "one batch column:\n%s", r.out);
    cr_expect_not_null(strstr(r.out, "mirrored        4    256"), "%s", r.out);
    run_free(&r);
    r = SWEEP_OK("--vary", "steps=2,3", "--strategies", "mirrored");
    const char *header = "sweep of steps over 2, 3; 4 devices, batch 256, simulated on "
                         "h100-nvlink-ib, stragglers none\n";
    cr_expect(!strncmp(r.out, header, strlen(header)), "no step count: %s", r.out);
    run_free(&r);
    const char *dir = test_tmp_path("fig");
    r = SWEEP_OK("--vary", "straggler=none,exp:0.5", "--strategies", "mirrored", "--steps", "2",
                 "--plot", dir);
    run_free(&r);
    char gp[256];
    snprintf(gp, sizeof gp, "%s/speedup.gp", dir);
    char *script = test_slurp(gp);
    cr_expect_not_null(strstr(script, "over straggler, simulated on h100-nvlink-ib; "
                              "mlp:784-256-256-256-10, batch 256 (strong scaling)'"), "%s", script);
    cr_expect_null(strstr(script, "stragglers"), "%s", script);
    free(script);
}

/* The figures say what the table's legend says: a --vary sweep's speedup is
 * over its first value, not one device, and its efficiency is against one
 * device at each value; values that are not numbers are the x tics (the
 * axis read "straggler (position in --vary)" with tics 1, 1.5, 2). A weak
 * sweep's title gave "batch 64", its first batch, as if it stayed. */
Test(sweep, the_figures_axes_say_what_speedup_is_over_and_name_the_values)
{
    const char *dir = test_tmp_path("fig");
    struct run r = SWEEP_OK("--vary", "straggler=none,exp:0.5", "--strategies", "mirrored",
                            "--steps", "2", "--plot", dir);
    run_free(&r);
    char gp[256];
    snprintf(gp, sizeof gp, "%s/speedup.gp", dir);
    char *script = test_slurp(gp);
    cr_expect_not_null(strstr(script, "set ylabel 'speedup (x straggler=none, the first value)'"),
                       "%s", script);
    cr_expect_null(strstr(script, "one device"), "%s", script);
    cr_expect_not_null(strstr(script, "set xlabel 'straggler'\n"), "%s", script);
    cr_expect_not_null(strstr(script, "set xtics ('none' 1, 'exp:0.5' 2)"), "%s", script);
    free(script);
    snprintf(gp, sizeof gp, "%s/efficiency.gp", dir);
    script = test_slurp(gp);
    cr_expect_not_null(strstr(script, "set ylabel 'efficiency (samples/s over devices x one "
                              "device''s)'"), "%s", script);
    free(script);
    r = SWEEP_OK("--devices", "1,2", "--scaling", "weak", "--batch", "64", "--strategies",
                 "mirrored", "--steps", "2", "--plot", dir);
    run_free(&r);
    snprintf(gp, sizeof gp, "%s/speedup.gp", dir);
    script = test_slurp(gp);
    cr_expect_not_null(strstr(script, "64 samples per device (weak scaling)"), "%s", script);
    cr_expect_not_null(strstr(script, "set ylabel 'speedup (x one device)'"), "%s", script);
    cr_expect_null(strstr(script, "xtics ("), "%s", script);
    free(script);
}

/* core/report_read.c reads a sweep document's points[].report. */
Test(sweep, the_json_reads_back_as_report_documents)
{
    const char *json = test_tmp_path("doc.json");
    struct run r = SWEEP_OK("--vary", "straggler=none,exp:0.5", "--strategies", "mirrored,ps-async",
                            "--json", json);
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_read(json, &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d.n, 4);
    cr_expect_str_eq(d.reports[0].strategy, "mirrored");
    cr_expect_str_eq(d.configs[1].straggler, "exp:0.5");
    cr_expect_str_eq(d.reports[3].strategy, "ps-async");
    report_doc_release(&d);
    cJSON *doc = read_json(json);
    const cJSON *p1 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "points"), 1);
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(p1, "option")->valuestring, "straggler");
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(p1, "value")->valuestring, "exp:0.5");
    cJSON_Delete(doc);
    run_free(&r);
}

Test(sweep, help_lists_vary_scaling_and_plot)
{
    struct run r = run_strata((const char *const[]){"sweep", "--help", NULL});
    cr_assert_eq(r.status, 0);
    cr_expect_not_null(strstr(r.out, "--vary "));
    cr_expect_not_null(strstr(r.out, "--scaling "));
    cr_expect_not_null(strstr(r.out, "--plot "));
    cr_expect_not_null(strstr(r.out, "--mode "));
    run_free(&r);
}

/* --- Real ------------------------------------------------------------------- */

/* Two MPI jobs (and the one-rank baseline), launched through real_job_run. */
Test(sweep, real_mode_runs_an_mpi_job_a_point, .timeout = 300)
{
    const char *json = test_tmp_path("real.json");
    struct run r = SWEEP("--mode", "real", "--vary", "devices=1,2", "--data", "synthetic",
                         "--steps", "5", "--strategies", "mirrored", "--json", json);
    cr_assert_eq(r.status, 0, "stdout: %s\nstderr: %s", r.out, r.err);
    cJSON *doc = read_json(json);
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(doc, "mode")->valuestring, "real");
    const cJSON *points = cJSON_GetObjectItemCaseSensitive(doc, "points");
    cr_assert_eq(cJSON_GetArraySize(points), 2);
    int i = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, points) {
        const cJSON *rep = cJSON_GetObjectItemCaseSensitive(p, "report");
        cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(rep, "mode")->valuestring, "real");
        cr_expect_eq(num_at(rep, "devices", NULL), i + 1);
        cr_expect_eq(num_at(rep, "config", "steps"), 5);
        double s = num_at(p, "speedup", NULL);
        cr_expect(s > 0 && isfinite(s), "speedup %g", s);
        if (i == 0) {   /* the baseline's plan, measured apart: said to be the noise */
            char said[64];
            snprintf(said, sizeof said, "its speedup %.2fx\n  (1 by definition)", s);
            cr_expect_not_null(strstr(r.out, said), "'%s' in:\n%s", said, r.out);
        }
        i++;
    }
    cJSON_Delete(doc);
    run_free(&r);
}

/* --- Sizes and limits ------------------------------------------------------- */

/* "batch=1,2,...,n" */
static void vary_batches(char *buf, size_t size, int n)
{
    size_t used = (size_t)snprintf(buf, size, "batch=");
    for (int i = 1; i <= n; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%d", i > 1 ? "," : "", i);
    cr_assert_lt(used, size);
}

/* --vary takes up to SWEEP_MAX_VALUES values; one more is bad input that
 * names the limit, never a sweep silently cut short. */
Test(sweep, vary_holds_the_named_limit_of_values_and_refuses_one_more)
{
    struct config cfg;
    config_init(&cfg);
    struct err e = {0};
    char vary[1024];
    struct sweep_axis ax;
    vary_batches(vary, sizeof vary, SWEEP_MAX_VALUES);
    cr_assert_eq(config_set(&cfg, "vary", vary, ~0u, &e), 0, "%s", e.msg);
    cr_assert_eq(sweep_axis_parse(&cfg, &ax, &e), 0, "%s", e.msg);
    cr_expect_eq(ax.n_values, SWEEP_MAX_VALUES);
    cr_expect_str_eq(ax.values[SWEEP_MAX_VALUES - 1], "64");
    vary_batches(vary, sizeof vary, SWEEP_MAX_VALUES + 1);
    cr_assert_eq(config_set(&cfg, "vary", vary, ~0u, &e), 0, "%s", e.msg);
    cr_expect_eq(sweep_axis_parse(&cfg, &ax, &e), ERR_INPUT);
    char limit[48];
    snprintf(limit, sizeof limit, "more than %d values", SWEEP_MAX_VALUES);
    cr_expect_not_null(strstr(e.msg, limit), "%s", e.msg);
    config_release(&cfg);
}

/* The grid's strategies are sized from the list: every registered strategy
 * gets its row, in order (no fixed array to cut them short). */
Test(sweep, grid_keeps_every_strategy_of_the_list)
{
    struct config cfg;
    config_init(&cfg);
    struct err e = {0};
    cr_assert_eq(config_set(&cfg, "vary", "devices=1,2", ~0u, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(&cfg, "steps", "2", ~0u, &e), 0, "%s", e.msg);
    struct workload *wl = NULL;
    cr_assert_eq(workload_parse(cfg.model, &wl, &e), 0, "%s", e.msg);
    struct sweep_axis ax;
    cr_assert_eq(sweep_axis_parse(&cfg, &ax, &e), 0, "%s", e.msg);
    const struct strategy *all[16];
    size_t n_all = 0;
    cr_assert_eq(strategy_parse_list("all", all, &n_all, &e), 0, "%s", e.msg);
    struct sweep s;
    cr_assert_eq(sweep_run(&cfg, wl, &ax, all, (int)n_all, NULL, NULL,
                           NULL, &s, &e), 0, "%s", e.msg);
    cr_assert_eq(s.n_strategies, (int)strategy_count);
    cr_expect_eq(s.n_points, (int)strategy_count * 2);
    for (size_t i = 0; i < strategy_count; i++)
        cr_expect_eq(s.strategies[i], &strategy_registry[i], "row %zu", i);
    sweep_release(&s);
    cr_expect_null(s.strategies, "released");
    workload_free(wl);
    config_release(&cfg);
}

/* Workers hand their reports back as JSON: a one-device baseline of
 * Llama 3's size (6.28e16 bytes of activations, past 2^53) was refused
 * there, and `-j 2` failed where `-j 1` ran. */
Test(sweep, parallel_points_hand_back_reports_of_petabytes)
{
    struct run r = RUN("sweep", "-f", STRATA_SOURCE_DIR "/labs/llama3-failures.conf", "--devices",
                       "16", "--steps", "20", "--vary", "checkpoint-every=5,10", "-j", "2");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_null(strstr(r.err, "not a whole number"), "%s", r.err);
    run_free(&r);
}
