/* strata compare -j N (bench/compare.c's compare_run_spread over bench/jobs.c,
 * results as bench/sweep_wire.c messages): the strategies run in worker
 * processes while the baseline runs here, and every output (the table on
 * stdout, the notes and "not run" lines, stderr, --json, --csv, the exit
 * status) is the one -j 1 gives, byte for byte. Commands that keep spans
 * (--timeline, --trace) run in one process whatever -j says; --jobs is
 * checked as every option is. The tests run the built binary (STRATA_BIN). */
#include <criterion/criterion.h>

#include "helpers.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TEST_SUITE_WITH_TMP_DIR(compare_jobs);

/* strata compare args -j jobs, --json and --csv into the test's directory
 * under tag (with_files false: neither). */
static struct job_outputs compare_as(const char *const *args, int jobs, const char *tag,
                                     bool with_files)
{
    return run_with_jobs(NULL, "compare", args, jobs, tag, with_files);
}

/* -j 1 against -j 2 and -j 3 on args; -j 1's outputs are left in *one. */
static void expect_jobs_agree_files(const char *const *args, int status, bool with_files,
                                    struct job_outputs *one)
{
    expect_jobs_agree_with_one("compare", args, status, with_files, one);
}

static void expect_jobs_agree(const char *const *args, int status)
{
    struct job_outputs one;
    expect_jobs_agree_files(args, status, true, &one);
    job_outputs_free(&one);
}

/* 2 layers: the model and pipelines do not fit 4 or more devices */
#define SMALL "--model", "mlp:784-16-10", "--steps", "4", "--batch", "64"

Test(compare_jobs, every_strategy_with_unfit_ones_and_stragglers_gives_the_same_bytes)
{
    /* 11 strategies, 5 not run (a layer per stage), ps-ssp's twin note */
    struct job_outputs one;
    expect_jobs_agree_files((const char *const[]){"--devices", "4", SMALL, "--straggler",
                                                  "exp:0.3", NULL}, 0, true, &one);
    cr_expect_not_null(strstr(one.out, "  not run: pipeline-1f1b: --devices 4 exceeds"),
                       "no not-run line in:\n%s", one.out);
    cr_expect_not_null(strstr(one.out, "  note: ps-ssp"), "no ps-ssp note in:\n%s", one.out);
    job_outputs_free(&one);
}

Test(compare_jobs, a_slow_worker_and_the_ssp_bound_give_the_same_bytes)
{
    /* ps-ssp's bound binds under a slow rank: the step lead travels too */
    expect_jobs_agree((const char *const[]){"--devices", "8", "--strategies",
                                            "ps-async,ps-ssp,mirrored,ps-sync,pipelined-steps",
                                            "--straggler", "slow:1=3", SMALL, NULL}, 0);
}

Test(compare_jobs, a_deeper_model_with_pipelines_and_a_failure_gives_the_same_bytes)
{
    expect_jobs_agree((const char *const[]){"--devices", "4", "--model", "mlp:784-32-32-32-10",
                                            "--steps", "6", "--batch", "64", "--fail", "1@3",
                                            "--straggler", "lognormal:0.2", NULL}, 0);
}

/* --mtbf with a mean so long that no failure is drawn: each worker's report
 * has a failure section with no first failure (rank and time null), which
 * the parent must read back as -j 1 shows it */
Test(compare_jobs, an_mtbf_that_draws_no_failure_gives_the_same_bytes)
{
    struct job_outputs one;
    expect_jobs_agree_files((const char *const[]){"--devices", "4", "--strategies",
                                                  "mirrored,ps-sync,ps-async", "--mtbf",
                                                  "1e6", SMALL, NULL}, 0, true, &one);
    cr_expect_not_null(strstr(one.json, "\"n_failures\":\t0"), "%s", one.json);
    job_outputs_free(&one);
}

Test(compare_jobs, numerics_give_the_same_loss_and_accuracy)
{
    expect_jobs_agree((const char *const[]){"--devices", "2", "--strategies",
                                            "mirrored,ps-async,ps-sync", SMALL_NUMERICS_RUN,
                                            NULL}, 0);
}

Test(compare_jobs, nothing_that_fits_exits_2_with_the_same_reasons)
{
    struct job_outputs one;
    expect_jobs_agree_files((const char *const[]){"--devices", "8", "--strategies",
                                                  "pipeline-1f1b,pipeline-gpipe,model", SMALL,
                                                  NULL}, 2, true, &one);
    cr_expect_not_null(strstr(one.err, "no strategy ran"), "%s", one.err);
    cr_expect_null(one.json, "nothing ran, yet --json was written");
    job_outputs_free(&one);
}

Test(compare_jobs, timeline_and_trace_run_in_one_process_with_the_same_output)
{
    /* spans are kept for them: -j changes nothing, and the traces are
     * those of -j 1 */
    struct job_outputs one;
    expect_jobs_agree_files((const char *const[]){"--devices", "2", "--strategies",
                                                  "mirrored,ps-async", "--timeline", SMALL, NULL},
                            0, false, &one);
    cr_expect_not_null(strstr(one.out, "mirrored"), "%s", one.out);
    job_outputs_free(&one);
    for (int jobs = 1; jobs <= 2; jobs++) {
        char tag[16], trace[256];
        snprintf(tag, sizeof tag, "t%d.json", jobs);
        snprintf(trace, sizeof trace, "%s", test_tmp_path(tag));
        struct job_outputs o = compare_as((const char *const[]){"--devices", "2", "--strategies",
                                                            "mirrored,ps-async", "--trace",
                                                            trace, SMALL, NULL},
                                      jobs, jobs == 1 ? "a" : "b", true);
        cr_expect_eq(o.status, 0, "%s", o.err);
        job_outputs_free(&o);
    }
    const char *const names[] = {"mirrored", "ps-async"};
    for (int i = 0; i < 2; i++) {
        char a[256], b[256];
        snprintf(a, sizeof a, "%s/t1.%s.json", test_tmp_dir, names[i]);
        snprintf(b, sizeof b, "%s/t2.%s.json", test_tmp_dir, names[i]);
        char *ta = test_slurp(a), *tb = test_slurp(b);
        cr_expect_str_eq(ta, tb, "%s's trace differs with -j 2", names[i]);
        free(ta);
        free(tb);
    }
}

Test(compare_jobs, jobs_0_x_and_too_many_are_refused_naming_the_option_and_range)
{
    expect_refused(RUN("compare", "-j", "0", "--devices", "2"), "--jobs: 0 is not allowed",
                   "1 to 1024");
    expect_refused(RUN("compare", "-j", "x", "--devices", "2"), "--jobs: 'x' is not an integer",
                   "1 to 1024");
    expect_refused(RUN("compare", "--jobs", "1025"), "--jobs: 1025", "1 to 1024");
    expect_refused(RUN("-j", "0"), "--jobs: 0 is not allowed", "1 to 1024");
}

Test(compare_jobs, help_lists_jobs_and_what_runs_in_one_process)
{
    struct run r = RUN("compare", "--help");
    cr_expect_eq(r.status, 0);
    cr_expect_not_null(strstr(r.out, "-j, --jobs N"), "no -j, --jobs in:\n%s", r.out);
    cr_expect_not_null(strstr(r.out, "default one per online core; 1 to 1024"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "--timeline, --plot or --html it runs in one process"),
                       "%s", r.out);
    run_free(&r);
}

/* A scenario file's value that only the runs check (--fail's rank, which
 * each plan has or not; its form is checked at load) made "not run" notes
 * without the file and line, though a run's own errors name them
 * (config_err_locate): alone and in jobs, each note names them now. */
Test(compare_jobs, a_not_run_note_names_the_scenario_file_and_line)
{
    const char *conf = test_tmp_file("f.conf", "strategies = mirrored,ps-sync\nfail = 9@1\n");
    char where[512];
    snprintf(where, sizeof where, "%s:2: --fail: rank 9 does not exist", conf);
    expect_refused(RUN("compare", "-f", conf), "not run: mirrored", where);
    expect_refused(RUN("compare", "-f", conf, "--jobs", "2"), "not run: ps-sync", where);
}
