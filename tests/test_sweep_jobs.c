/* strata sweep -j N and under mpirun (bench/sweep_jobs.c, bench/sweep_mpi.c,
 * bench/sweep_wire.c): the points run in worker processes or on MPI ranks,
 * and every output (the table on stdout, --json, --csv, the notes, the exit
 * status) is the one -j 1 gives, byte for byte, though the tasks run
 * costliest first (bench/sweep_order.c); --jobs is checked as every option
 * is. The tests run the built binary (STRATA_BIN), and the order itself is
 * read from bench/'s task functions. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/sweep.h"
#include "../bench/sweep_tasks.h"
#include "../core/config.h"
#include "../strategies/strategy.h"

TEST_SUITE_WITH_TMP_DIR(sweep_jobs);

/* Runs prefix (mpirun ..., or nothing) strata sweep args -j jobs (0: no
 * -j), --json and --csv into the test's directory under tag. */
static struct job_outputs sweep_as(const char *const *prefix, const char *const *args, int jobs,
                                   const char *tag)
{
    return run_with_jobs(prefix, "sweep", args, jobs, tag, true);
}

/* -j 1 against -j 2 and -j 3 on args. */
static void expect_jobs_agree(const char *const *args, int status)
{
    struct job_outputs one;
    expect_jobs_agree_with_one("sweep", args, status, true, &one);
    job_outputs_free(&one);
}

#define SMALL "--model", "mlp:784-32-32-10", "--steps", "4", "--batch", "64"

Test(sweep_jobs, devices_sweep_gives_the_same_bytes_with_1_2_and_3_jobs)
{
    /* 3 values x 7 strategies: more tasks than workers, the ps-* ones with
     * staleness histograms, the pipelines unfit at 4 devices of 3 layers */
    expect_jobs_agree((const char *const[]){"--devices", "1,2,4", SMALL, "--straggler",
                                            "exp:0.2", NULL}, 0);
}

Test(sweep_jobs, a_sweep_with_a_baseline_per_value_gives_the_same_bytes)
{
    /* --vary batch: every value has its own one-device baseline (tasks 0-2) */
    expect_jobs_agree((const char *const[]){"--vary", "batch=32,64,128", "--devices", "2",
                                            "--strategies", "mirrored,ps-ssp", "--model",
                                            "mlp:784-32-10", "--steps", "3", NULL}, 0);
}

Test(sweep_jobs, a_numerics_sweep_gives_the_same_loss_and_accuracy)
{
    /* loss curves and final accuracy travel with each point's report */
    expect_jobs_agree((const char *const[]){"--devices", "1,2", "--strategies",
                                            "mirrored,ps-async", SMALL_NUMERICS_RUN, NULL}, 0);
}

Test(sweep_jobs, unfit_points_are_reported_as_with_one_job)
{
    /* pipelines need a layer per stage: 2 layers, 4 and 8 devices do not fit;
     * the notes under the table and the JSON's not_run are the same */
    struct job_outputs o = sweep_as(NULL, (const char *const[]){"--devices", "2,4,8", "--strategies",
                                                            "mirrored,pipeline-1f1b", "--model",
                                                            "mlp:784-16-10", "--steps", "3",
                                                            NULL}, 2, "unfit");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    cr_expect_not_null(strstr(o.out, "not run: pipeline-1f1b at devices=4, 8: --devices 4 "
                                     "exceeds the model's 2 layers"), "stdout:\n%s", o.out);
    job_outputs_free(&o);
    expect_jobs_agree((const char *const[]){"--devices", "2,4,8", "--strategies",
                                            "mirrored,pipeline-1f1b", "--model", "mlp:784-16-10",
                                            "--steps", "3", NULL}, 0);
}

Test(sweep_jobs, a_sweep_where_nothing_fits_exits_2_with_any_jobs)
{
    /* grid_status: no point ran because none fit: exit 2, the reason printed */
    expect_jobs_agree((const char *const[]){"--devices", "4,8", "--strategies",
                                            "pipeline-gpipe,model", "--model", "mlp:784-16-10",
                                            "--steps", "3", NULL}, 2);
}

/* A devices sweep like build/sweep_speed's, small: its costliest points are
 * its last in print order. */
#define LPT_SWEEP "--devices", "2,4,8", "--strategies", "mirrored,ps-sync,pipeline-1f1b", \
                  "--model", "mlp:784-64-64-64-64-64-64-64-10", "--batch", "64", "--steps", "40"

Test(sweep_jobs, tasks_run_costliest_first_yet_print_in_their_order)
{
    struct config cfg;
    config_init(&cfg);
    struct err e = {0};
    const char *const opts[][2] = {{"vary", "devices=2,4,8"},
                                   {"strategies", "mirrored,ps-sync,pipeline-1f1b"},
                                   {"model", "mlp:784-64-64-64-64-64-64-64-10"},
                                   {"batch", "64"}, {"steps", "2"}};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        cr_assert_eq(config_set(&cfg, opts[i][0], opts[i][1], ~0u, &e), 0, "%s", e.msg);
    struct workload *wl = NULL;
    cr_assert_eq(workload_parse(cfg.model, &wl, &e), 0, "%s", e.msg);
    const struct strategy *list[3];
    size_t n = 0;
    cr_assert_eq(strategy_parse_list(cfg.strategies, list, &n, &e), 0, "%s", e.msg);
    struct sweep_axis ax;
    cr_assert_eq(sweep_axis_parse(&cfg, &ax, &e), 0, "%s", e.msg);
    struct sweep s;
    cr_assert_eq(sweep_run(&cfg, wl, &ax, list, (int)n, NULL, NULL, NULL, &s, &e), 0, "%s",
                 e.msg);
    int total = sweep_n_tasks(&s), order[16], seen[16] = {0};
    cr_assert_eq(total, 10, "the baseline and 3 x 3 points");
    cr_assert_eq(sweep_task_order(&s, &cfg, wl, order, &e), 0, "%s", e.msg);
    /* task 0 (the baseline) first; then the points at 8 devices, then 4,
     * then 2: the reverse of the values' print order, so tasks do not run
     * in print order */
    cr_expect_eq(order[0], 0);
    long long last_devices = 1 << 30;
    bool is_print_order = true;
    for (int i = 0; i < total; i++) {
        cr_assert(order[i] >= 0 && order[i] < total && !seen[order[i]]++, "order[%d] = %d",
                  i, order[i]);
        is_print_order &= order[i] == i;
        if (i == 0) continue;
        long long devices = sweep_task_slot(&s, order[i])->devices;
        cr_expect_leq(devices, last_devices, "order[%d]: %lld devices after %lld", i, devices,
                      last_devices);
        last_devices = devices;
    }
    cr_expect_eq(sweep_task_slot(&s, order[1])->devices, 8);
    cr_expect_not(is_print_order, "the tasks would run in print order");
    /* within a value, costliest first: each strategy's plan (its ops a step,
     * a ps-* strategy's server) sets its point's cost, and the three differ */
    for (int i = 2; i < total; i++) {
        if (sweep_task_slot(&s, order[i])->devices != sweep_task_slot(&s, order[i - 1])->devices)
            continue;
        cr_expect_geq(sweep_task_cost(&s, &cfg, wl, order[i - 1]),
                      sweep_task_cost(&s, &cfg, wl, order[i]), "order[%d] after order[%d]", i,
                      i - 1);
    }
    cr_expect_gt(sweep_task_cost(&s, &cfg, wl, order[1]), sweep_task_cost(&s, &cfg, wl, order[3]));
    sweep_release(&s);
    workload_free(wl);
    config_release(&cfg);
    /* and that sweep, run costliest first by 2 and 3 workers, prints what
     * one process running it in print order does */
    expect_jobs_agree((const char *const[]){LPT_SWEEP, NULL}, 0);
}

Test(sweep_jobs, jobs_0_x_and_too_many_are_refused_naming_the_option_and_range)
{
    expect_refused(RUN("sweep", "-j", "0", "--devices", "1,2"), "--jobs: 0 is not allowed",
                   "1 to 1024");
    expect_refused(RUN("sweep", "-j", "x", "--devices", "1,2"), "--jobs: 'x' is not an integer",
                   "1 to 1024");
    expect_refused(RUN("sweep", "--jobs", "1025", "--devices", "1,2"), "--jobs: 1025",
                   "1 to 1024");
    expect_refused(RUN("sweep", "--jobs=-2", "--devices", "1,2"), "--jobs", "1 to 1024");
}

Test(sweep_jobs, help_lists_jobs_with_its_default_of_one_per_core)
{
    struct run r = RUN("sweep", "--help");
    cr_expect_eq(r.status, 0);
    cr_expect_not_null(strstr(r.out, "-j, --jobs N"), "no -j, --jobs in:\n%s", r.out);
    cr_expect_not_null(strstr(r.out, "default one per online core; 1 to 1024"),
                       "the default is not said:\n%s", r.out);
    run_free(&r);
}

/* ---- under mpirun ------------------------------------------------------------ */

/* strata sweep args -j 1 against the same sweep as a job of np ranks
 * (mpirun --oversubscribe -np np, no -j): the same bytes. */
static void expect_mpirun_agrees(const char *const *args, int np)
{
    mpirun_env_prepare();
    char np_text[16], alone[16], tag[16], what[48];
    snprintf(np_text, sizeof np_text, "%d", np);
    snprintf(alone, sizeof alone, "alone%d", np);
    snprintf(tag, sizeof tag, "mpirun%d", np);
    snprintf(what, sizeof what, "-j 1 and mpirun -np %d", np);
    struct job_outputs one = sweep_as(NULL, args, 1, alone);
    struct job_outputs job = sweep_as((const char *const[]){"mpirun", "--oversubscribe", "-np",
                                                        np_text, NULL}, args, 0, tag);
    cr_assert_eq(one.status, 0, "stderr: %s", one.err);
    expect_same_outputs(&one, &job, what);
    job_outputs_free(&one);
    job_outputs_free(&job);
}

Test(sweep_jobs, under_mpirun_np_2_rank_0_prints_what_one_process_does)
{
    expect_mpirun_agrees((const char *const[]){"--devices", "1,2,4", SMALL, "--strategies",
                                               "mirrored,ps-sync,ps-async,pipeline-1f1b", NULL},
                         2);
}

Test(sweep_jobs, under_mpirun_np_3_tasks_dealt_costliest_first_print_the_same)
{
    /* 10 tasks dealt by estimated cost over 3 ranks, not round robin: rank 0
     * holds the baseline and fewer points; the same bytes */
    expect_mpirun_agrees((const char *const[]){LPT_SWEEP, NULL}, 3);
}

Test(sweep_jobs, under_mpirun_a_real_sweep_is_refused_once)
{
    mpirun_env_prepare();
    struct run r = run_argv((const char *const[]){"mpirun", "--oversubscribe", "-np", "2",
                                                  STRATA_BIN, "sweep", "--mode", "real",
                                                  "--devices", "1,2", NULL});
    cr_expect_neq(r.status, 0);
    const char *said = strstr(r.err, "a real sweep starts an MPI job for each point");
    cr_expect_not_null(said, "stderr:\n%s", r.err);
    cr_expect(!said || !strstr(said + 1, "a real sweep starts"), "more than one rank said it:\n%s",
              r.err);
    run_free(&r);
}

/* A scenario file's value that only the runs check (--fail's rank, which
 * each plan has or not; its form is checked at load) made sweep's "not
 * run" notes without the file and line, though compare's notes name them
 * (config_err_locate): alone and in jobs, each note names them now. */
Test(sweep_jobs, a_not_run_note_names_the_scenario_file_and_line)
{
    const char *conf = test_tmp_file("f.conf", "strategies = mirrored,ps-sync\nfail = 9@1\n");
    char where[512];
    snprintf(where, sizeof where, "%s:2: --fail: rank 9 does not exist", conf);
    expect_refused(RUN("sweep", "-f", conf, "--devices", "2,4"), "not run: mirrored at devices=2, 4",
                   where);
    expect_refused(RUN("sweep", "-f", conf, "--devices", "2,4", "-j", "2"),
                   "not run: ps-sync at devices=2, 4", where);
}
