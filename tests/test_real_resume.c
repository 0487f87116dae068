/* Checkpoints of real runs (real/checkpoint), end to end through the built
 * binary: a synchronous run stopped at a checkpoint and resumed ends with
 * the very bytes of one never stopped, for every synchronous strategy on 2
 * ranks; a data-parallel checkpoint resumes on fewer workers; damaged,
 * foreign or missing checkpoints exit 2 naming the file and what is wrong.
 *
 * Stopping: a run of --steps 10 with --checkpoint-every 10 writes its
 * checkpoint at its end, as it would mid-way through a longer run: nothing
 * a synchronous step computes depends on --steps (the sampler is a
 * function of the step, real/checkpoint.h), so resuming it with --steps 20
 * is the second half of a 20-step run.
 *
 * Small model and synthetic data as tests/test_real.c: about a second a run. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/config.h"
#include "../real/checkpoint.h"
#include "helpers.h"

#define MODEL "mlp:784-64-32-16-10"
#define SAME "--data", "synthetic", "--seed", "7", "--batch", "64", "--microbatches", "4"

TEST_SUITE_WITH_TMP_DIR(resume, .timeout = 180);

static bool same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = test_slurp_n(a, &na), *y = test_slurp_n(b, &nb);
    bool same = na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* 20 steps straight vs 10, a checkpoint, and a resume to 20. */
static void expect_resume_bit_identical(const char *strategy)
{
    char *a = test_tmp_path("straight.params"), *b = test_tmp_path("resumed.params"),
         *dir = test_tmp_path("ckpt");
    expect_ok(RUN("real", "--strategy", strategy, "--np", "2", "--model", MODEL, SAME, "--steps",
                  "20", "--save-params", a), "the straight run");
    expect_ok(RUN("real", "--strategy", strategy, "--np", "2", "--model", MODEL, SAME, "--steps",
                  "10", "--checkpoint-every", "10", "--checkpoint-dir", dir), "the first half");
    expect_ok(RUN("real", "--strategy", strategy, "--np", "2", "--model", MODEL, SAME, "--steps",
                  "20", "--resume", dir, "--save-params", b), "the resumed half");
    cr_expect(same_bytes(a, b), "%s: resumed parameters differ from the straight run's", strategy);
}

/* The curve `key` of the report in json (curve_at). */
static int curve_of(const char *json, const char *key, double out[][3], int cap)
{
    cJSON *doc = read_json(json);
    int n = curve_at(doc, key, out, cap);
    cJSON_Delete(doc);
    return n;
}

/* A resumed run's curves began at its resume step: the losses and the
 * --eval-every points before it were the first run's alone. The
 * checkpoint carries them, and the resume step, which the first run
 * evaluated as its final model, is a point again (taken from the resumed
 * parameters, gathered from the stages), at the time training had reached
 * then: one curve, equal to a straight run's. */
Test(resume, a_resumed_runs_curves_go_on_from_the_first_runs)
{
    char *dir = test_tmp_path("ckpt"), *straight = test_tmp_path("straight.json"),
         *half = test_tmp_path("half.json"), *resumed = test_tmp_path("resumed.json");
#define P1F1B "real", "--strategy", "pipeline-1f1b", "--np", "2", "--model", MODEL, SAME, \
              "--eval-every", "5"
    expect_ok(RUN(P1F1B, "--steps", "20", "--json", straight), "the straight run");
    expect_ok(RUN(P1F1B, "--steps", "10", "--checkpoint-every", "10", "--checkpoint-dir", dir,
                  "--json", half), "the first half");
    expect_ok(RUN(P1F1B, "--steps", "20", "--resume", dir, "--json", resumed), "the resumed half");
#undef P1F1B
    double want[8][3], got[8][3], first[8][3], loss[24][3], want_loss[24][3];
    int n_want = curve_of(straight, "accuracy_curve", want, 8);
    int n_got = curve_of(resumed, "accuracy_curve", got, 8);
    int n_first = curve_of(half, "accuracy_curve", first, 8);
    cr_assert_eq(n_want, 4, "points 5, 10, 15 and the final one");
    cr_assert_eq(n_got, n_want, "the resumed run has %d points", n_got);
    cr_assert_eq(n_first, 2);
    for (int i = 0; i < n_want; i++) {
        cr_expect(got[i][0] == want[i][0] && got[i][2] == want[i][2],
                  "point %d: step %g accuracy %g, the straight run's step %g %g", i, got[i][0],
                  got[i][2], want[i][0], want[i][2]);
        cr_expect(i == 0 || got[i][1] > got[i - 1][1], "point %d's time goes back", i);
    }
    /* step 5 as the first run measured it; step 10 when it had got there */
    cr_expect_eq(got[0][1], first[0][1]);
    cr_expect(got[1][1] >= first[1][1] && got[1][1] < first[1][1] + 1, "step 10 at %g s, the "
              "first run ended at %g s", got[1][1], first[1][1]);
    cJSON *doc = read_json(resumed);
    cr_expect_eq(num_at(doc, "final", "time_resumed_s"), got[1][1],
                 "the run's clock at the resume is step 10's time");
    cJSON_Delete(doc);
    int n_loss = curve_of(resumed, "loss_curve", loss, 24);
    cr_assert_eq(curve_of(straight, "loss_curve", want_loss, 24), 20);
    cr_assert_eq(n_loss, 20, "the loss curve from step 1: %d steps", n_loss);
    for (int i = 0; i < n_loss; i++)
        cr_expect(loss[i][0] == want_loss[i][0] && loss[i][2] == want_loss[i][2],
                  "step %g: loss %.17g, the straight run's %.17g", loss[i][0], loss[i][2],
                  want_loss[i][2]);
}

Test(resume, mirrored_stopped_and_resumed_is_bit_identical)
{
    expect_resume_bit_identical("mirrored");
}

Test(resume, ps_sync_stopped_and_resumed_is_bit_identical)
{
    expect_resume_bit_identical("ps-sync");
}

Test(resume, model_stopped_and_resumed_is_bit_identical)
{
    expect_resume_bit_identical("model");
}

Test(resume, pipeline_gpipe_stopped_and_resumed_is_bit_identical)
{
    expect_resume_bit_identical("pipeline-gpipe");
}

Test(resume, pipeline_1f1b_stopped_and_resumed_is_bit_identical)
{
    expect_resume_bit_identical("pipeline-1f1b");
}

/* The loss the report's loss curve gives at (0-based) step. */
static double loss_at(const char *json, int64_t step)
{
    cJSON *doc = read_json(json);
    const cJSON *curve = cJSON_GetObjectItem(doc, "loss_curve"), *pt;
    double loss = NAN;
    cJSON_ArrayForEach(pt, curve)
        if ((int64_t)cJSON_GetArrayItem(pt, 0)->valuedouble == step)
            loss = cJSON_GetArrayItem(pt, 2)->valuedouble;
    cJSON_Delete(doc);
    cr_assert(!isnan(loss), "%s: no loss at step %lld", json, (long long)step);
    return loss;
}

Test(resume, mirrored_on_2_resumes_on_1_worker_with_the_same_global_batch)
{
    char *big = test_tmp_path("big.json"), *small = test_tmp_path("small.json"),
         *dir = test_tmp_path("ckpt");
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "12", "--json", big), "the 2-worker run");
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "10", "--checkpoint-every", "10", "--checkpoint-dir", dir), "the 2-worker half");
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "1", "--model", MODEL, SAME, "--steps",
                  "12", "--resume", dir, "--json", small), "the 1-worker resume");
    /* the same global batch from the same parameters: one worker sums what
     * two all-reduced, so the loss may differ by float reordering only */
    double want = loss_at(big, 10), got = loss_at(small, 10);
    double rel = fabs(got - want) / fabs(want);
    cr_expect_lt(rel, 1e-5, "step 11's loss: %.9g on 1 worker, %.9g on 2 (relative %.3g)", got,
                 want, rel);
    cr_log_info("shrunk resume: step 11's loss differs by %.3g relative", rel);
    /* the model's updates: the checkpoint's 10 steps, then 2 (docs/metrics.md) */
    cJSON *doc = read_json(small);
    cr_expect_eq(num_at(doc, "final", "updates"), 12);
    cr_expect_eq(num_at(doc, "final", "updates_resumed"), 10);
    cJSON_Delete(doc);
}

Test(resume, the_newest_two_whole_checkpoints_are_kept_and_found)
{
    char *dir = test_tmp_path("ckpt");
    char path[1024];
    int64_t step = -1;
    struct err e = {0};
    cr_expect_eq(checkpoint_newest(dir, path, sizeof path, &step, &e), 1, "no directory: none");
    expect_ok(RUN("real", "--strategy", "model", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "20", "--checkpoint-every", "5", "--checkpoint-dir", dir), "the run");
    const char *names[] = {"step-0000000005", "step-0000000010", "step-0000000015",
                           "step-0000000020"};
    for (int k = 0; k < 4; k++) {
        char p[1024];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, names[k]);
        cr_expect_eq(stat(p, &st) == 0, k >= 2, "%s %s", p, k >= 2 ? "missing" : "not deleted");
    }
    cr_assert_eq(checkpoint_newest(dir, path, sizeof path, &step, &e), 0, "%s", e.msg);
    cr_expect_eq(step, 20);
    cr_expect(strstr(path, "step-0000000020"), "%s", path);
    /* a step directory without its MANIFEST is not whole */
    char partial[1024];
    snprintf(partial, sizeof partial, "%s/step-0000000025", dir);
    cr_assert_eq(mkdir(partial, 0755), 0);
    cr_expect_eq(checkpoint_newest(dir, path, sizeof path, &step, &e), 0);
    cr_expect_eq(step, 20, "a partial checkpoint was taken for whole");
}

Test(resume, a_temporary_checkpoint_directory_is_removed_after_a_successful_run)
{
    cr_assert_eq(setenv("TMPDIR", test_tmp_dir, 1), 0);
    struct run r = RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME,
                       "--steps", "6", "--checkpoint-every", "2");
    cr_expect(strstr(r.out, "checkpoints: 3 written"), "%s", r.out);
    expect_ok(r, "the run");
    DIR *d = opendir(test_tmp_dir);
    cr_assert_not_null(d);
    for (struct dirent *de; (de = readdir(d));)
        cr_expect(strncmp(de->d_name, "strata-ckpt-", 12) != 0, "%s/%s left behind", test_tmp_dir,
                  de->d_name);
    closedir(d);
}

/* ---- refused checkpoints -------------------------------------------------- */

/* A whole mirrored checkpoint at step 10 in test_tmp_dir/ckpt; returns the
 * path of its rank-1 file. */
static const char *make_checkpoint(void)
{
    char *dir = test_tmp_path("ckpt");
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "10", "--checkpoint-every", "10",
                  "--checkpoint-dir", dir), "the checkpointed run");
    return test_tmp_path("ckpt/step-0000000010/rank-1.ckpt");
}

static struct run resume_mirrored(const char *model)
{
    return RUN("real", "--strategy", "mirrored", "--np", "2", "--model", model, SAME, "--steps",
               "20", "--resume", test_tmp_path("ckpt"));
}

static int64_t resumed_step_of(const char *json);

/* Refused by the supervisor before any rank started (real/checkpoint.h's
 * checkpoint_check_resume): strata's message alone, no rank's, no abort
 * banner of mpirun's. */
static void expect_refused_up_front(struct run r, const char *must_name, const char *too)
{
    cr_expect(!strstr(r.err, "MPI_ABORT") && !strstr(r.err, "mpirun") &&
                  !strstr(r.err, ": rank "),
              "the refusal came from inside the job:\n%s", r.err);
    expect_refused(r, must_name, too);
}

static void rewrite(const char *path, long at, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fseek(f, at, SEEK_SET), 0);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

Test(resume, a_flipped_byte_is_refused_as_corrupt)
{
    const char *file = make_checkpoint();
    char path[1024];
    snprintf(path, sizeof path, "%s", file);
    size_t n = 0;
    char *bytes = test_slurp_n(path, &n);
    unsigned char flipped = (unsigned char)(bytes[n / 2] ^ 0x40);
    free(bytes);
    rewrite(path, (long)(n / 2), &flipped, 1);
    expect_refused_up_front(resume_mirrored(MODEL), path, "corrupt");
}

Test(resume, a_truncated_file_is_refused)
{
    const char *file = make_checkpoint();
    char path[1024];
    snprintf(path, sizeof path, "%s", file);
    cr_assert_eq(truncate(path, 1000), 0);
    expect_refused_up_front(resume_mirrored(MODEL), path, "truncated");
}

Test(resume, a_bad_magic_is_refused)
{
    const char *file = make_checkpoint();
    char path[1024];
    snprintf(path, sizeof path, "%s", file);
    rewrite(path, 0, "NOTSTRAT", 8);
    expect_refused_up_front(resume_mirrored(MODEL), path, "not a strata checkpoint");
}

Test(resume, another_model_is_refused_naming_both)
{
    make_checkpoint();
    expect_refused_up_front(resume_mirrored("mlp:784-32-10"), "--model " MODEL, "mlp:784-32-10");
}

Test(resume, another_strategy_is_refused_naming_both)
{
    make_checkpoint();
    expect_refused_up_front(RUN("real", "--strategy", "model", "--np", "2", "--model", MODEL, SAME,
                       "--steps", "20", "--resume", test_tmp_path("ckpt")),
                   "--strategy mirrored", "this run has model");
}

Test(resume, an_empty_directory_is_refused)
{
    char *dir = test_tmp_path("empty");
    cr_assert_eq(mkdir(dir, 0755), 0);
    expect_refused(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME,
                       "--steps", "20", "--resume", dir),
                   dir, "no whole checkpoint");
}

/* --resume DIR/step-N: that checkpoint, not the newest */
Test(resume, a_step_directory_names_the_checkpoint_to_resume)
{
    char *dir = test_tmp_path("ckpt"), *json = test_tmp_path("resumed.json");
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "10", "--checkpoint-every", "5",
                  "--checkpoint-dir", dir), "the checkpointed run");
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "10", "--resume", test_tmp_path("ckpt/step-0000000005/"), "--json", json),
              "the run resumed from step 5");
    cr_expect_eq(resumed_step_of(json), 5);
    /* one update a step (docs/metrics.md): the checkpoint's 5, then 5 more */
    cJSON *doc = read_json(json);
    cr_expect_eq(num_at(doc, "final", "updates"), 10);
    cr_expect_eq(num_at(doc, "final", "updates_resumed"), 5);
    cJSON_Delete(doc);
    /* the newest, step 10, leaves nothing to run: refused before the job */
    expect_refused_up_front(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL,
                                SAME, "--steps", "10", "--resume", dir),
                            dir, "nothing is left to run");
}

/* ---- compare --mode real ---------------------------------------------------- */

Test(resume, compare_real_keeps_each_jobs_checkpoints_apart_and_resumes_each)
{
    char *dir = test_tmp_path("ckpt");
    expect_ok(RUN("compare", "--mode", "real", "--strategies", "model,pipeline-1f1b", "--np", "2",
                  "--model", MODEL, SAME, "--steps", "4", "--checkpoint-every", "4",
                  "--checkpoint-dir", dir), "the compare with checkpoints");
    const char *jobs[] = {"mirrored-np1", "model-np2", "pipeline-1f1b-np2"};
    for (int k = 0; k < 3; k++) {
        char job[1024], newest[1024];
        int64_t step = -1;
        struct err e = {0};
        snprintf(job, sizeof job, "%s/%s", dir, jobs[k]);
        cr_expect_eq(checkpoint_newest(job, newest, sizeof newest, &step, &e), 0,
                     "%s/%s: no whole checkpoint", dir, jobs[k]);
        cr_expect_eq(step, 4);
    }
    expect_ok(RUN("compare", "--mode", "real", "--strategies", "model,pipeline-1f1b", "--np", "2",
                  "--model", MODEL, SAME, "--steps", "8", "--resume", dir), "the compare resumed");
}

/* ---- asynchronous plans ----------------------------------------------------- */

/* The step this job resumed at: the run's steps less the ones it ran
 * (samples_applied counts this job's alone). Its loss curve, carried in
 * the checkpoints, starts at step 0 all the same. */
static int64_t resumed_step_of(const char *json)
{
    cJSON *doc = read_json(json);
    const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "loss_curve"), 0);
    cr_assert_not_null(first, "%s: no loss curve", json);
    cr_expect_eq(cJSON_GetArrayItem(first, 0)->valuedouble, 0,
                 "%s: the loss curve does not start at step 0", json);
    double batch = num_at(doc, "config", "batch");
    double steps = num_at(doc, "config", "steps");
    double applied = cJSON_GetObjectItem(doc, "samples_applied")->valuedouble;
    cJSON_Delete(doc);
    return (int64_t)(steps - applied / batch);
}

/* ps-async's workers are at different steps: the first server holds the
 * work of step 5 back until every worker asked for it, they checkpoint,
 * and a resume (here on fewer workers, as a shrunk job) goes on from step 5.
 * Not bit-identical: asynchronous updates depend on timing. */
Test(resume, ps_async_checkpoints_at_a_step_every_worker_reached_and_resumes_shrunk)
{
    char *dir = test_tmp_path("ckpt"), *json = test_tmp_path("resumed.json");
    expect_ok(RUN("real", "--strategy", "ps-async", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "10", "--checkpoint-every", "5",
                  "--checkpoint-dir", dir), "the checkpointed run");
    char newest[1024];
    int64_t step = -1;
    struct err e = {0};
    cr_assert_eq(checkpoint_newest(dir, newest, sizeof newest, &step, &e), 0, "%s", e.msg);
    cr_expect_eq(step, 5, "an asynchronous job checkpoints before its last step, not at its end");
    expect_ok(RUN("real", "--strategy", "ps-async", "--np", "1", "--model", MODEL, SAME, "--steps",
                  "10", "--resume", dir, "--json", json), "the resumed run on 1 worker");
    cr_expect_eq(resumed_step_of(json), 5);
    /* an update a push (docs/metrics.md): the checkpoint's servers applied
     * 2 workers x 5 steps; the resumed worker 5 more */
    cJSON *doc = read_json(json);
    cr_expect_eq(num_at(doc, "final", "updates"), 15);
    cr_expect_eq(num_at(doc, "final", "updates_resumed"), 10);
    cJSON_Delete(doc);
}

/* A --checkpoint-dir that cannot be made or written is refused before the
 * launch (real/checkpoint.h's checkpoint_check_dir): with no launcher to
 * be found, the refusal must still be the directory's, not the launcher's. */
static void expect_checkpoint_dir_refused(const char *dir, const char *why)
{
    setenv("STRATA_MPIRUN", test_tmp_path("no-launcher-here"), 1);
    struct run r = RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME,
                       "--steps", "4", "--checkpoint-every", "2", "--checkpoint-dir", dir);
    unsetenv("STRATA_MPIRUN");
    cr_expect_not(strstr(r.err, "STRATA_MPIRUN"), "it went on to the launch:\n%s", r.err);
    expect_refused(r, "--checkpoint-dir", why);
}

Test(resume, a_checkpoint_dir_under_a_file_is_refused_before_the_launch)
{
    const char *file = test_tmp_file("plain", "not a directory\n");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/ckpt", file);
    expect_checkpoint_dir_refused(dir, "is not a directory");
}

Test(resume, a_checkpoint_dir_that_is_a_file_is_refused_before_the_launch)
{
    expect_checkpoint_dir_refused(test_tmp_file("plain", "not a directory\n"), "not a directory");
}

/* --checkpoint-dir without --checkpoint-every (and no --hostfile, whose
 * commits go there) was taken and dropped: no checkpoint, no word, the
 * directory never made. So was --supervisor-address without --hostfile.
 * Both are refused before the launch, naming what they need. */
Test(resume, launch_options_that_need_another_are_refused_alone)
{
    setenv("STRATA_MPIRUN", test_tmp_path("no-launcher-here"), 1);
    expect_refused(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME,
                       "--steps", "4", "--checkpoint-dir", test_tmp_path("ck")),
                   "--checkpoint-dir", "--checkpoint-every");
    expect_refused(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME,
                       "--steps", "4", "--supervisor-address", "127.0.0.1"),
                   "--supervisor-address", "--hostfile");
    unsetenv("STRATA_MPIRUN");
}

/* ---- a resumed run under the supervisor ------------------------------------- */

/* --checkpoint-dir "" with --resume DIR writes beside the checkpoint it
 * resumed from (--help, real/checkpoint.h). The supervisor passed its own
 * temporary directory down instead: "checkpoints: 2 written", none in DIR
 * afterwards, and an interrupted resumed run lost what it had done. */
Test(resume, a_resumed_runs_checkpoints_go_where_it_resumed_from)
{
    char *dir = test_tmp_path("ckpt");
    make_checkpoint();
    struct run r = RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME,
                       "--steps", "20", "--checkpoint-every", "5", "--resume", dir);
    expect_ok(r, "the resumed run");
    char newest[1024];
    int64_t step = -1;
    struct err e = {0};
    cr_assert_eq(checkpoint_newest(dir, newest, sizeof newest, &step, &e), 0, "%s", e.msg);
    cr_expect_eq(step, 20, "%s: the resumed run's checkpoints are not there", dir);
}

/* A resumed run that fails before it writes a checkpoint of its own goes
 * back to the one it resumed from: every launch has the user's --resume.
 * The supervisor said "from scratch (no checkpoint)" and counted every step
 * since step 0 as redone (15 here, where 5 were). */
Test(resume, a_resumed_runs_restart_goes_back_to_its_resume_and_counts_from_there)
{
    char *json = test_tmp_path("failed.json");
    make_checkpoint();
    struct run r = RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME,
                       "--steps", "20", "--resume", test_tmp_path("ckpt"), "--fail", "1@15",
                       "--json", json);
    cr_expect(strstr(r.err, "relaunching 2 workers from the checkpoint of step 10"), "%s", r.err);
    expect_ok(r, "the resumed run with a failure");   /* frees r */
    cJSON *doc = read_json(json);
    cr_expect_eq(num_at(doc, "failure", "steps_redone"), 5);
    cJSON_Delete(doc);
    cr_expect_eq(resumed_step_of(json), 10);
}

/* A mistyped --resume, or a file, read "no whole checkpoint there", as an
 * empty directory does: the message now says what the path is. */
Test(resume, a_missing_path_or_a_file_is_named_as_such)
{
    char *missing = test_tmp_path("no-such-dir");
    expect_refused_up_front(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL,
                                SAME, "--steps", "20", "--resume", missing),
                            missing, "No such file or directory");
    const char *file = test_tmp_file("plain", "not a directory\n");
    expect_refused_up_front(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL,
                                SAME, "--steps", "20", "--resume", file),
                            file, "not a directory");
}

/* --resume DIR takes the newest checkpoint; when that one is damaged, the
 * one before it (two are kept) is the way on, and the refusal says how to
 * take it: before, it named the bad file only. */
Test(resume, a_damaged_newest_checkpoint_names_the_one_before_it)
{
    char *dir = test_tmp_path("ckpt");
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "10", "--checkpoint-every", "5", "--checkpoint-dir", dir),
              "the checkpointed run");
    cr_assert_eq(truncate(test_tmp_path("ckpt/step-0000000010/rank-1.ckpt"), 100), 0);
    char older[1024];
    snprintf(older, sizeof older, "--resume %s/step-0000000005", dir);
    expect_refused_up_front(resume_mirrored(MODEL), "truncated", older);
    /* and that one resumes */
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "20", "--resume", test_tmp_path("ckpt/step-0000000005")),
              "the run resumed from the older checkpoint");
}

/* --fail at a step before the one the run resumes at never comes: it was
 * taken, and the run ended with no failure and no word. */
Test(resume, a_fail_before_the_resumed_step_is_refused)
{
    make_checkpoint();
    expect_refused_up_front(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL,
                                SAME, "--steps", "20", "--resume", test_tmp_path("ckpt"),
                                "--fail", "1@5"),
                            "--fail 1@5: the run resumes at step 10", "fail at step 10 or later");
}

/* With --checkpoint-every and no --checkpoint-dir, a resumed run writes
 * beside the checkpoint it resumed from; a directory it cannot write there
 * is said before the launch, naming --checkpoint-dir as the way out, not
 * at the first checkpoint from inside the job (exit 1 after the steps).
 * Root writes through a mode of 0555, so root runs strata as nobody
 * (setpriv), as test_faults does. Under shrink the supervisor's commits
 * replace those checkpoints: the same directory is only read, and the
 * run goes (it was refused, told to give a --checkpoint-dir that shrink
 * refuses in turn). */
Test(resume, a_resume_directory_the_run_cannot_write_is_refused_before_the_launch)
{
    char *dir = test_tmp_path("ckpt");
    make_checkpoint();
    bool as_nobody = geteuid() == 0;
    if (as_nobody && access("/usr/bin/setpriv", X_OK) != 0)
        cr_skip_test("root writes at mode 0555, and there is no setpriv to run as nobody");
    cr_assert_eq(chmod(test_tmp_dir, 0755), 0);   /* nobody reads the checkpoint */
    cr_assert_eq(chmod(dir, 0555), 0);
    const char *const as[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    const char *const args[] = {STRATA_BIN, "real", "--strategy", "mirrored", "--np", "2",
                                "--model", MODEL, SAME, "--steps", "20", "--checkpoint-every",
                                "5", "--resume", dir};
    const char *argv[40];
    int n = 0;
    for (int i = 0; as_nobody && i < 4; i++) argv[n++] = as[i];
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) argv[n++] = args[i];
    argv[n] = NULL;
    expect_refused_up_front(run_argv(argv), "cannot write there", "give --checkpoint-dir DIR");
    const char *const shrink[] = {"--on-failure", "shrink", "--fail", "1@15", NULL};
    for (int i = 0; shrink[i]; i++) argv[n++] = shrink[i];
    argv[n] = NULL;
    struct run r = run_argv(argv);
    chmod(dir, 0755);
    cr_expect_eq(r.status, 0, "under shrink: exit %d; stderr:\n%s", r.status, r.err);
    cr_expect(strstr(r.err, "relaunching 1 worker from the commit of step"), "%s", r.err);
    run_free(&r);
}

/* Under shrink and continue the supervisor's commits replace
 * --checkpoint-every's checkpoints, so a read-only --resume directory is
 * only read: it was refused, and told to give a --checkpoint-dir, which
 * shrink and continue then refuse in turn. /proc/self is read-only to root
 * as well (a chmod is not, above). */
Test(resume, a_read_only_resume_directory_is_refused_only_when_written)
{
    struct config cfg;
    config_init(&cfg);
    cfg.checkpoint_every = 5;
    snprintf(cfg.resume, sizeof cfg.resume, "/proc/self");
    struct err e = {0};
    cr_expect_eq(checkpoint_check_dir(&cfg, false, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "--resume /proc/self: cannot write there") &&
                  strstr(e.msg, "give --checkpoint-dir DIR"), "%s", e.msg);
    e = (struct err){0};
    cr_expect_eq(checkpoint_check_dir(&cfg, true, &e), 0, "commits go elsewhere: %s", e.msg);
}

/* A rank killed mid-save (a death, a hang, the supervisor's SIGKILL) left
 * its temporaries and a step directory without a MANIFEST in the user's
 * --checkpoint-dir for good: 173 MB of them after a run of false hangs.
 * The supervisor sweeps them after every failed job; whole checkpoints
 * stay, less any temporary beside their files. */
Test(resume, what_killed_saves_leave_is_swept_and_whole_checkpoints_stay)
{
    char *dir = test_tmp_path("ckpt");
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "8", "--checkpoint-every", "4", "--checkpoint-dir", dir), "the checkpointed run");
    test_tmp_file("ckpt/step-0000000008/rank-1.ckpt.tmp.AbC123", "cut short");
    cr_assert_eq(mkdir(test_tmp_path("ckpt/step-0000000012"), 0755), 0);
    test_tmp_file("ckpt/step-0000000012/rank-0.ckpt", "a whole file of a save never finished");
    test_tmp_file("ckpt/step-0000000012/rank-1.ckpt.tmp.XyZ789", "cut short");
    checkpoint_remove_partial(dir);
    struct stat st;
    cr_expect_neq(stat(test_tmp_path("ckpt/step-0000000012"), &st), 0, "the partial one is left");
    cr_expect_neq(stat(test_tmp_path("ckpt/step-0000000008/rank-1.ckpt.tmp.AbC123"), &st), 0,
                  "a temporary beside a whole checkpoint is left");
    char newest[1024];
    int64_t step = -1;
    struct err e = {0};
    cr_assert_eq(checkpoint_newest(dir, newest, sizeof newest, &step, &e), 0, "%s", e.msg);
    cr_expect_eq(step, 8);
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "10", "--resume", dir), "the resume from the whole one");
}

/* --resume DIR takes the newest checkpoint; one past the run's --steps
 * was refused ("nothing is left to run") without a word of the one below
 * them kept beside it: the refusal now names it and its --resume. */
Test(resume, a_newest_checkpoint_past_the_steps_names_the_one_below_them)
{
    char *dir = test_tmp_path("ckpt");
    expect_ok(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL, SAME, "--steps",
                  "10", "--checkpoint-every", "5", "--checkpoint-dir", dir),
              "the checkpointed run");
    char older[1024];
    snprintf(older, sizeof older, "--resume %s/step-0000000005 takes the one of step 5", dir);
    expect_refused_up_front(RUN("real", "--strategy", "mirrored", "--np", "2", "--model", MODEL,
                                SAME, "--steps", "8", "--resume", dir),
                            "nothing is left to run", older);
}
