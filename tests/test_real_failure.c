/* strata real under failures, end to end: the built binary (STRATA_BIN)
 * supervises its MPI job (real/supervise.h). A rank killed by --fail, by
 * SIGKILL or stopped by SIGSTOP from outside must end in a recovery by the
 * policy (exit 0, the report's failure section filled) within the timeout
 * and a few seconds, never a hang; SIGTERM to strata must leave no process
 * and no run directory behind; a --fail rank that does not exist is bad
 * input (exit 2).
 *
 * Until the checkpoint branch lands every relaunch starts from scratch
 * (real/checkpoint.h is a stub answering "none"), so --fail R@5 redoes 5
 * steps. No timing is asserted tightly: the machine is shared; the bounds
 * are the ("within 10 s of the watchdog's timeout") plus the
 * relaunched run. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../real/checkpoint.h"
#include "../real/failure_env.h"
#include "../real/heartbeat.h"

/* 784 inputs, 4 layers: a few ms a step */
#define MODEL "mlp:784-64-32-16-10"

TEST_SUITE_WITH_TMP_DIR(real_failure, .timeout = 180);

/* ---- a run in the background ----------------------------------------------- */

/* strata real --np 2 with the small model, --json into the test directory
 * (its path makes this run's processes unique), then extra (NULL-ended). */
static struct test_bg start(const char *const *extra)
{
    const char *argv[40] = {STRATA_BIN, "real", "--data", "synthetic", "--model", MODEL,
                            "--np", "2", "--json", test_tmp_path("report.json")};
    int n = 10;
    for (; *extra; extra++) argv[n++] = *extra;
    argv[n] = NULL;
    return test_bg_start(argv, test_tmp_path("stderr.txt"));
}

/* Waits for the run's end, at most limit_s; its exit status (128 + signal). */
static int finish(const struct test_bg *b, double limit_s, double *took_s)
{
    return test_bg_finish(b, limit_s, took_s);
}

/* Whether pid's environment has an entry starting with prefix; the rest of
 * that entry into value[0..n). */
static bool env_entry(pid_t pid, const char *prefix, char *value, size_t n)
{
    return test_proc_has((long)pid, "environ", prefix, true, value, n);
}

/* Whether pid's command line holds the word `word`. */
static bool cmdline_has(pid_t pid, const char *word)
{
    return test_proc_has((long)pid, "cmdline", word, false, NULL, 0);
}

/* The live processes whose command line holds word (this run's --json path),
 * and among them the MPI rank `rank` (its pid in *rank_pid, else 0). */
static int processes_of(const char *word, int rank, pid_t *rank_pid)
{
    if (rank_pid) *rank_pid = 0;
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    int n = 0;
    char want[16];
    snprintf(want, sizeof want, "%d", rank);
    for (struct dirent *de; (de = readdir(d));) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0 || !cmdline_has((pid_t)pid, word)) continue;
        char stat_path[64], state[512] = "";
        snprintf(stat_path, sizeof stat_path, "/proc/%ld/stat", pid);
        FILE *f = fopen(stat_path, "r");
        if (f) {
            if (!fgets(state, sizeof state, f)) state[0] = '\0';
            fclose(f);
        }
        char *paren = strrchr(state, ')');
        if (paren && paren[1] == ' ' && paren[2] == 'Z') continue;   /* a zombie is gone */
        n++;
        char value[16];
        if (rank_pid && env_entry((pid_t)pid, "OMPI_COMM_WORLD_RANK=", value, sizeof value) &&
            !strcmp(value, want))
            *rank_pid = (pid_t)pid;
    }
    closedir(d);
    return n;
}

/* Waits until rank `rank` of the run is stepping (its heartbeat says step
 * >= 2); its pid, and its heartbeat directory in hb_dir. */
static pid_t wait_stepping(const struct test_bg *b, int rank, char *hb_dir, size_t n)
{
    const char *word = test_tmp_path("report.json");
    for (double t0 = test_now_s(); test_now_s() - t0 < 60; test_sleep_s(0.01)) {
        pid_t pid = 0;
        processes_of(word, rank, &pid);
        if (!pid || !env_entry(pid, HEARTBEAT_DIR_ENV "=", hb_dir, n)) continue;
        struct heartbeat_record rec;
        if (heartbeat_read(hb_dir, rank, &rec) == 0 && rec.state == HEARTBEAT_RUNNING &&
            rec.step >= 2)
            return pid;
        int ws;
        cr_assert_eq(waitpid(b->pid, &ws, WNOHANG), 0, "strata ended before rank %d stepped",
                     rank);
    }
    cr_assert_fail("rank %d never started stepping", rank);
    return 0;
}

static char *stderr_of(const struct test_bg *b)
{
    return test_slurp(b->err_path);
}

/* The report's failure section, checked for what every recovered run has. */
static void expect_failure(const char *policy, int rank, int devices)
{
    cJSON *doc = read_json(test_tmp_path("report.json"));
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(doc, "failure");
    cr_assert(cJSON_IsObject(f), "the report has no failure section");
    cr_expect_str_eq(str_at(f, "policy"), policy);
    cr_expect_eq(num_at(f, "rank", NULL), rank);
    cr_expect_eq(num_at(f, "n_failures", NULL), 1);
    double lost = num_at(f, "lost_s", NULL), detect = num_at(f, "detect_s", NULL),
           relaunch = num_at(f, "relaunch_s", NULL), redone = num_at(f, "redone_s", NULL);
    cr_expect_gt(relaunch, 0, "a relaunch takes time (MPI start, data)");
    cr_expect(detect >= 0 && redone >= 0);
    cr_expect_lt(fabs(lost - (detect + relaunch + redone)), 1e-9, "lost_s is the sum of its parts");
    cr_expect_eq(num_at(doc, "devices", NULL), devices);
    cr_expect_eq(num_at(f, "workers_after", NULL), devices, "the workers the run ended with");
    /* the report's config is the user's command line, not the relaunch's */
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(doc, "config");
    cr_expect_eq(num_at(cfg, "np", NULL), 2, "--np in the config is the user's");
    cr_expect_gt(num_at(doc, "final", "test_accuracy"), 0.1, "the relaunched run trained");
    cJSON_Delete(doc);
}

/* The report's final.updates and final.updates_resumed: the optimizer
 * updates that made the final model (docs/metrics.md), the ones before the
 * relaunch's checkpoint included, and those alone. */
static void expect_updates(int64_t updates, int64_t resumed)
{
    cJSON *doc = read_json(test_tmp_path("report.json"));
    cr_expect_eq(num_at(doc, "final", "updates"), (double)updates, "final.updates %g, not %lld",
                 num_at(doc, "final", "updates"), (long long)updates);
    cr_expect_eq(num_at(doc, "final", "updates_resumed"), (double)resumed,
                 "final.updates_resumed %g, not %lld", num_at(doc, "final", "updates_resumed"),
                 (long long)resumed);
    cJSON_Delete(doc);
}

/* ---- --fail ------------------------------------------------------------------- */

Test(real_failure, fail_restart_relaunches_every_rank_and_reports_the_cost)
{
    struct test_bg b = start((const char *const[]){"--steps", "20", "--fail", "1@5", NULL});
    int status = finish(&b, 120, NULL);
    char *err = stderr_of(&b);
    cr_expect_eq(status, 0, "stderr:\n%s", err);
    cr_expect(strstr(err, "rank 1 died at step 5: killed by --fail 1@5"), "stderr:\n%s", err);
    /* strata says it; mpirun's own death notice is dropped (real/job_output.h) */
    cr_expect(!strstr(err, "mpirun noticed"), "stderr:\n%s", err);
    free(err);
    expect_failure("restart", 1, 2);
    cJSON *doc = read_json(test_tmp_path("report.json"));
    /* from scratch (no checkpoint yet): the 5 steps done before the death */
    cr_expect_eq(num_at(doc, "failure", "steps_redone"), 5);
    cJSON_Delete(doc);
}

/* The issue's own command: a restart goes back to the last checkpoint (or to
 * the start: either way the same arithmetic again), so the trained
 * parameters are bit for bit those of a run that never failed. */
Test(real_failure, fail_1_at_20_with_checkpoints_restarts_to_the_same_parameters)
{
    run_argv_ok((const char *const[]){STRATA_BIN, "real", "--data", "synthetic", "--model",
                                      MODEL, "--np", "2", "--steps", "30", "--save-params",
                                      test_tmp_path("straight.params"), NULL});
    struct test_bg b = start((const char *const[]){"--steps", "30", "--fail", "1@20",
                                              "--checkpoint-every", "10", "--save-params",
                                              test_tmp_path("failed.params"), NULL});
    int status = finish(&b, 120, NULL);
    char *err = stderr_of(&b);
    cr_expect_eq(status, 0, "stderr:\n%s", err);
    free(err);
    expect_failure("restart", 1, 2);
    cJSON *doc = read_json(test_tmp_path("report.json"));
    /* both jobs' checkpoints: the failed one wrote steps 10 and 20 */
    cr_expect_gt(num_at(doc, "failure", "checkpoint_s"), 0, "checkpoint time of the run");
    cr_expect_str_eq(str_at(cJSON_GetObjectItemCaseSensitive(doc, "config"), "fail"), "1@20");
    cJSON_Delete(doc);
    /* the relaunch ran steps 20 to 29 on the checkpoint of step 20 */
    expect_updates(30, 20);
    size_t n_straight = 0, n_failed = 0;
    char *straight = test_slurp_n(test_tmp_path("straight.params"), &n_straight);
    char *failed = test_slurp_n(test_tmp_path("failed.params"), &n_failed);
    cr_expect(n_straight == n_failed && !memcmp(straight, failed, n_straight),
              "the restarted run's parameters differ from the straight run's");
    free(straight);
    free(failed);
}

/* A relaunched run's report covered its last job alone: the loss curve
 * began at the resumed step, the --eval-every points of the jobs before
 * (evaluated after the last step, off the clock) died with them, and the
 * time to accuracy was read on the last job's clock at its first point.
 * The checkpoints now carry them: every step and every point, equal to a
 * straight run's (a restart repeats its arithmetic), on one clock that
 * counts the time the failure lost. */
Test(real_failure, a_relaunched_runs_curves_cover_every_step_on_one_clock)
{
    run_argv_ok((const char *const[]){STRATA_BIN, "real", "--data", "synthetic", "--model",
                                      MODEL, "--np", "2", "--steps", "30", "--eval-every", "5",
                                      "--json", test_tmp_path("straight.json"), NULL});
    cJSON *straight = read_json(test_tmp_path("straight.json"));
    double want_loss[40][3], want_acc[10][3];
    int n_want_loss = curve_at(straight, "loss_curve", want_loss, 40);
    int n_want_acc = curve_at(straight, "accuracy_curve", want_acc, 10);
    cJSON_Delete(straight);
    cr_assert_eq(n_want_loss, 30);
    cr_assert_eq(n_want_acc, 6, "points 5 to 25 and the final one");
    char target[32];
    snprintf(target, sizeof target, "%.17g", want_acc[0][2]);   /* reached at step 5 */
    struct test_bg b = start((const char *const[]){"--steps", "30", "--fail", "1@17",
                                              "--checkpoint-every", "10", "--eval-every", "5",
                                              "--target-accuracy", target, NULL});
    int status = finish(&b, 120, NULL);
    char *err = stderr_of(&b);
    cr_expect_eq(status, 0, "stderr:\n%s", err);
    cr_expect(strstr(err, "from the checkpoint of step 10"), "stderr:\n%s", err);
    free(err);
    cJSON *doc = read_json(test_tmp_path("report.json"));
    double loss[40][3], acc[10][3];
    int n_loss = curve_at(doc, "loss_curve", loss, 40);
    int n_acc = curve_at(doc, "accuracy_curve", acc, 10);
    cr_assert_eq(n_loss, 30, "the loss curve from step 1: %d steps", n_loss);
    cr_assert_eq(n_acc, 6, "every point, those of the failed job too: %d", n_acc);
    for (int i = 0; i < n_loss; i++) {
        cr_expect(loss[i][0] == want_loss[i][0] && loss[i][2] == want_loss[i][2],
                  "step %g: loss %.17g, a straight run's %.17g", loss[i][0], loss[i][2],
                  want_loss[i][2]);
        cr_expect(i == 0 || loss[i][1] > loss[i - 1][1], "step %g's time goes back", loss[i][0]);
    }
    for (int i = 0; i < n_acc; i++) {
        cr_expect(acc[i][0] == want_acc[i][0] && acc[i][2] == want_acc[i][2],
                  "point %d: step %g accuracy %g, a straight run's step %g %g", i, acc[i][0],
                  acc[i][2], want_acc[i][0], want_acc[i][2]);
        cr_expect(i == 0 || acc[i][1] > acc[i - 1][1], "point %d's time goes back", i);
    }
    /* the failure's lost time lies between step 10 (the first job's) and
     * step 15 (the relaunch's) */
    double lost_s = num_at(doc, "failure", "lost_s");
    cr_expect_geq(acc[2][1] - acc[1][1], 0.9 * lost_s, "points 10 and 15 are %g s apart; the "
                  "failure lost %g s", acc[2][1] - acc[1][1], lost_s);
    /* crossed at step 5, in the job that failed */
    const cJSON *tta = cJSON_GetObjectItemCaseSensitive(doc, "time_to_accuracy_s");
    cr_assert(cJSON_IsNumber(tta), "no time to accuracy");
    cr_expect_eq(tta->valuedouble, acc[0][1], "time to accuracy %g s; the curve crossed at %g s",
                 tta->valuedouble, acc[0][1]);
    cJSON_Delete(doc);
}

Test(real_failure, fail_shrink_finishes_on_the_survivor)
{
    struct test_bg b = start((const char *const[]){"--steps", "20", "--fail", "1@5", "--on-failure",
                                              "shrink", NULL});
    int status = finish(&b, 120, NULL);
    char *err = stderr_of(&b);
    cr_expect_eq(status, 0, "stderr:\n%s", err);
    cr_expect(strstr(err, "relaunching 1 worker"), "stderr:\n%s", err);
    free(err);
    expect_failure("shrink", 1, 1);
    cJSON *doc = read_json(test_tmp_path("report.json"));
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(doc, "config");
    cr_expect_str_eq(str_at(cfg, "fail"), "1@5", "the user's --fail, not the relaunch's");
    cr_expect_str_eq(str_at(cfg, "checkpoint-dir"), "", "not the supervisor's commit directory");
    cJSON_Delete(doc);
    /* one update a step: the commit of step 5, then 15 steps on the survivor */
    expect_updates(20, 5);
}

/* Under shrink the job's checkpoints are its commits, in memory: the run
 * said "checkpoints: 20 written" though the user asked for none and none
 * is left to --resume. It says what they were. */
Test(real_failure, shrinks_commits_are_not_called_checkpoints)
{
    struct run r = RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--steps",
                       "20", "--fail", "1@5", "--on-failure", "shrink");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "\ncommits (in memory): "), "%s", r.out);
    cr_expect_null(strstr(r.out, "\ncheckpoints: "), "%s", r.out);
    run_free(&r);
    /* what the job reads to tell: the supervisor's overrides, by name */
    setenv(USER_OPTIONS_ENV, "fail=1@5\x1f" "checkpoint-every=0\x1f" "np=2", 1);
    cr_expect(failure_env_overrides("checkpoint-every"));
    cr_expect(failure_env_overrides("np"));
    cr_expect(!failure_env_overrides("checkpoint"));
    cr_expect(!failure_env_overrides("checkpoint-dir"));
    unsetenv(USER_OPTIONS_ENV);
    cr_expect(!failure_env_overrides("checkpoint-every"));
}

Test(real_failure, ps_async_continues_with_the_surviving_worker)
{
    struct test_bg b = start((const char *const[]){"--strategy", "ps-async", "--steps", "20",
                                              "--fail", "1@5", NULL});
    int status = finish(&b, 120, NULL);
    char *err = stderr_of(&b);
    cr_expect_eq(status, 0, "stderr:\n%s", err);
    /* from the servers' last commit (--commit-every 1: step 5), not scratch */
    cr_expect(strstr(err, "from the commit of step 5"), "stderr:\n%s", err);
    free(err);
    expect_failure("continue", 1, 1);   /* auto is continue for ps-async */
    cJSON *doc = read_json(test_tmp_path("report.json"));
    cr_expect_eq(num_at(doc, "failure", "steps_redone"), 0, "nothing after the commit was lost");
    cJSON_Delete(doc);
    /* an update a push: the 2 workers' 5 steps each before the commit,
     * then the survivor's 15 */
    expect_updates(25, 10);
}

Test(real_failure, fail_of_a_rank_that_does_not_exist_is_refused)
{
    expect_refused(RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--fail",
                       "9@1"),
                   "--fail", "rank 9 does not exist");
    /* before any process starts, as the simulator refuses it */
    expect_refused(RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--fail",
                       "1@30", "--steps", "5"),
                   "--fail 1@30", "never starts step 30");
}

/* shrink and continue go on without a dead worker; a server has no
 * stand-in, so its death under them is refused before any process starts
 * (as a slow server is: it would change nothing) */
Test(real_failure, a_servers_death_under_shrink_and_a_slow_server_are_refused)
{
    expect_refused(RUN("real", "--data", "synthetic", "--model", MODEL, "--strategy", "ps-sync",
                       "--np", "2", "--on-failure", "shrink", "--fail", "2@1"),
                   "--fail", "rank 2 is a parameter server");
    expect_refused(RUN("real", "--data", "synthetic", "--model", MODEL, "--strategy", "ps-sync",
                       "--np", "2", "--straggler", "slow:2=3"),
                   "--straggler", "rank 2 is a parameter server");
}

/* ---- from outside ------------------------------------------------------------- */

Test(real_failure, rank_killed_from_outside_is_named_and_recovered)
{
    struct test_bg b = start((const char *const[]){"--steps", "400", NULL});
    char hb_dir[4096];
    pid_t rank1 = wait_stepping(&b, 1, hb_dir, sizeof hb_dir);
    kill(rank1, SIGKILL);
    int status = finish(&b, 120, NULL);
    char *err = stderr_of(&b);
    cr_expect_eq(status, 0, "stderr:\n%s", err);
    cr_expect(strstr(err, "rank 1 died"), "stderr:\n%s", err);
    cr_expect(strstr(err, "without a word"), "stderr:\n%s", err);
    free(err);
    expect_failure("restart", 1, 2);
}

/* Two runs writing checkpoints into one directory at once pruned and
 * swept each other's (each keeps its newest two and removes what a killed
 * save left), and a relaunch could go back to the other run's. While one
 * runs, a second is refused naming it; once it has ended, a run goes. */
Test(real_failure, a_checkpoint_dir_another_run_writes_in_is_refused)
{
    char *dir = test_tmp_path("shared-ck");
    struct test_bg b = start((const char *const[]){"--steps", "400", "--checkpoint-every", "50",
                                              "--checkpoint-dir", dir, NULL});
    char hb_dir[4096];
    wait_stepping(&b, 1, hb_dir, sizeof hb_dir);   /* held before the launch */
    struct run r = RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--steps",
                       "20", "--checkpoint-every", "10", "--checkpoint-dir", dir);
    char want[96];
    snprintf(want, sizeof want, "another strata run (pid %ld) is writing its checkpoints there",
             (long)b.pid);
    cr_expect_eq(r.status, 2, "stderr:\n%s", r.err);
    cr_expect(strstr(r.err, want) && strstr(r.err, "its own --checkpoint-dir"), "stderr:\n%s",
              r.err);
    run_free(&r);
    kill(b.pid, SIGTERM);
    finish(&b, 60, NULL);
    run_argv_ok((const char *const[]){STRATA_BIN, "real", "--data", "synthetic", "--model", MODEL,
                                      "--np", "2", "--steps", "20", "--checkpoint-every", "10",
                                      "--checkpoint-dir", dir, NULL});
}

Test(real_failure, stopped_rank_is_ended_within_the_timeout)
{
    const double timeout_s = 2;
    struct test_bg b = start((const char *const[]){"--steps", "400", "--timeout", "2", NULL});
    char hb_dir[4096];
    pid_t rank1 = wait_stepping(&b, 1, hb_dir, sizeof hb_dir);
    kill(rank1, SIGSTOP);
    double t0 = test_now_s(), noticed_s = -1;
    /* the message comes while the relaunched job runs */
    while (test_now_s() - t0 < timeout_s + 10 + 20) {
        char *err = stderr_of(&b);
        bool is_said = strstr(err, "stopped (SIGSTOP)") != NULL;
        free(err);
        if (is_said) {
            noticed_s = test_now_s() - t0;
            break;
        }
        test_sleep_s(0.05);
    }
    int status = finish(&b, 120, NULL);
    char *err = stderr_of(&b);
    cr_expect_eq(status, 0, "stderr:\n%s", err);
    cr_expect(noticed_s >= 0, "the stopped rank was never named; stderr:\n%s", err);
    /* the bound: a clean end or recovery within 10 s of the timeout */
    cr_expect_lt(noticed_s, timeout_s + 10, "noticed after %.1f s", noticed_s);
    free(err);
    expect_failure("restart", 1, 2);
}

Test(real_failure, sigterm_to_strata_leaves_nothing_behind)
{
    struct test_bg b = start((const char *const[]){"--steps", "100000", NULL});
    char hb_dir[4096];
    wait_stepping(&b, 1, hb_dir, sizeof hb_dir);
    kill(b.pid, SIGTERM);
    int status = finish(&b, 30, NULL);
    cr_expect_eq(status, 143, "strata ended with %d", status);
    /* the ranks and mpirun are gone (zombies aside: init reaps them) */
    const char *word = test_tmp_path("report.json");
    int left = 0;
    for (double t0 = test_now_s(); (left = processes_of(word, 0, NULL)) > 0 && test_now_s() - t0 < 5;)
        test_sleep_s(0.1);
    cr_expect_eq(left, 0, "%d processes of the run are left", left);
    struct stat st;
    cr_expect_neq(stat(hb_dir, &st), 0, "the run directory %s is left", hb_dir);
}

/* SIGINT mid-run said "Interrupt: the job was ended" and no more, though
 * the run's --checkpoint-dir holds the way on: the message now names the
 * checkpoint and the --resume that takes it, and that --resume works. */
Test(real_failure, sigint_says_which_checkpoint_stays_and_how_to_resume)
{
    char *dir = test_tmp_path("ckpt");
    struct test_bg b = start((const char *const[]){"--steps", "100000", "--checkpoint-every",
                                                   "5", "--checkpoint-dir", dir, NULL});
    char hb_dir[4096], newest[4096];
    wait_stepping(&b, 1, hb_dir, sizeof hb_dir);
    int64_t step = -1;
    struct err e = {0};
    for (double t0 = test_now_s();
         checkpoint_newest(dir, newest, sizeof newest, &step, &e) != 0 && test_now_s() - t0 < 30;)
        test_sleep_s(0.05);
    kill(b.pid, SIGINT);
    int status = finish(&b, 30, NULL);
    cr_expect_eq(status, 130, "strata ended with %d", status);
    char *err = stderr_of(&b);
    char want[4200];
    snprintf(want, sizeof want, "stays: --resume %s goes on from there", dir);
    cr_expect(strstr(err, "Interrupt: the job was ended") && strstr(err, want), "%s", err);
    free(err);
    cr_assert_eq(checkpoint_newest(dir, newest, sizeof newest, &step, &e), 0, "%s", e.msg);
    char steps[32];
    snprintf(steps, sizeof steps, "%lld", (long long)step + 5);
    expect_ok(RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--steps", steps,
                  "--resume", dir), "the resumed run");
}

Test(real_failure, sigkill_to_strata_takes_the_job_with_it)
{
    struct test_bg b = start((const char *const[]){"--steps", "100000", NULL});
    char hb_dir[4096];
    wait_stepping(&b, 1, hb_dir, sizeof hb_dir);
    kill(b.pid, SIGKILL);
    cr_expect_eq(finish(&b, 30, NULL), 128 + SIGKILL);
    /* no handler runs: mpirun dies by its death signal, the ranks by theirs */
    const char *word = test_tmp_path("report.json");
    int left = 0;
    for (double t0 = test_now_s(); (left = processes_of(word, 0, NULL)) > 0 && test_now_s() - t0 < 5;)
        test_sleep_s(0.1);
    cr_expect_eq(left, 0, "%d processes of the run are left 5 s after strata's SIGKILL", left);
    /* its run directory stays (nothing of strata ran), until the next
     * supervisor finds its owner gone */
    char *slash = strrchr(hb_dir, '/');
    cr_assert_not_null(slash);
    *slash = '\0';
    run_argv_ok((const char *const[]){STRATA_BIN, "real", "--data", "synthetic", "--model", MODEL,
                                      "--np", "1", "--steps", "2", NULL});
    struct stat st;
    cr_expect_neq(stat(hb_dir, &st), 0, "the dead supervisor's %s is left", hb_dir);
}

/* STRATA_TEST_HANG (real/heartbeat.h): rank 1 asleep for ever, neither
 * stopped nor dead, its peer waiting on it in MPI (and so using CPU). */
static void expect_hang_blamed_on_rank_1(const char *hang, const char *said)
{
    setenv(HEARTBEAT_TEST_HANG_ENV, hang, 1);
    struct test_bg b = start((const char *const[]){"--steps", "20", "--timeout", "2", NULL});
    unsetenv(HEARTBEAT_TEST_HANG_ENV);
    double took_s = 0;
    int status = finish(&b, 120, &took_s);
    char *err = stderr_of(&b);
    cr_expect_eq(status, 0, "stderr:\n%s", err);
    cr_expect(strstr(err, said), "no '%s' in stderr:\n%s", said, err);
    /* the timeout as given: %.1f made --timeout 0.15 read "0.1 s" */
    cr_expect(strstr(err, "(--timeout 2 s)"), "the timeout is not as given:\n%s", err);
    free(err);
    expect_failure("restart", 1, 2);
}

Test(real_failure, rank_asleep_at_a_step_is_blamed_not_its_waiting_peer)
{
    expect_hang_blamed_on_rank_1("1@5", "rank 1 hung at step 5");
}

Test(real_failure, rank_asleep_after_its_waiting_peer_fell_silent_is_blamed)
{
    /* rank 1 says it started step 5 0.4 s after rank 0 did, then sleeps:
     * rank 0, waiting on it, is past the timeout a look before rank 1 is,
     * and must not be blamed for it (CI's sanitizer stage once did) */
    expect_hang_blamed_on_rank_1("1@5+0.4", "rank 1 hung at step 5");
}

Test(real_failure, hang_while_the_report_is_gathered_is_caught)
{
    expect_hang_blamed_on_rank_1("1@finish", "rank 1 hung while the report was gathered");
}

/* The hang comes after the last step's checkpoint: resuming there leaves
 * no step to run, so the relaunch goes back to the checkpoint before it. */
Test(real_failure, failure_after_the_final_checkpoint_relaunches_from_the_one_before)
{
    setenv(HEARTBEAT_TEST_HANG_ENV, "1@finish", 1);
    struct test_bg b = start((const char *const[]){"--steps", "20", "--timeout", "2",
                                              "--checkpoint-every", "10", NULL});
    unsetenv(HEARTBEAT_TEST_HANG_ENV);
    int status = finish(&b, 120, NULL);
    char *err = stderr_of(&b);
    cr_expect_eq(status, 0, "stderr:\n%s", err);
    cr_expect(strstr(err, "relaunching 2 workers from the checkpoint of step 10"), "stderr:\n%s",
              err);
    free(err);
    expect_failure("restart", 1, 2);
}

/* ---- STRATA_FAILURE ---------------------------------------------------------- */

Test(real_failure, failure_env_goes_through_text_and_back)
{
    struct failure_note n = {.rank = 3, .time_s = 1.25, .policy = FAILURE_SHRINK,
                             .n_failures = 2, .detect_s = 0.1, .relaunch_s = 2.5,
                             .redone_s = 0.75, .steps_redone = 17, .relaunch_at_s = 12345.678,
                             .first_start_s = 12000.5};
    char text[1024];
    struct err e = {0};
    cr_assert_eq(failure_env_format(&n, text, sizeof text, &e), 0, "%s", e.msg);
    struct failure_note back;
    cr_assert_eq(failure_env_parse(text, &back, &e), 0, "%s", e.msg);
    char again[1024];
    cr_assert_eq(failure_env_format(&back, again, sizeof again, &e), 0, "%s", e.msg);
    /* %.17g round-trips every double: the same text means the same values */
    cr_expect_str_eq(again, text);
    cr_expect_eq(back.steps_redone, 17);
    cr_expect_eq(back.policy, FAILURE_SHRINK);
}

Test(real_failure, failure_env_refuses_malformed_text)
{
    struct failure_note n;
    const char *bad[] = {"rank", "rank=x;n_failures=1", "policy=retry;n_failures=1",
                         "rank=1", "n_failures=0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct err e = {0};
        cr_expect_lt(failure_env_parse(bad[i], &n, &e), 0, "'%s' was taken", bad[i]);
        cr_expect(strstr(e.msg, "STRATA_FAILURE"), "'%s': %s", bad[i], e.msg);
    }
}

/* Goodput is (T - lost_s - checkpoint_s) / T (docs/metrics.md), as the
 * simulator's is; a real run's left the checkpoint writes in: with 1 s
 * lost and 1 s of checkpoints in 10 s it said 90%, not 80%. T runs from
 * the first job's start (100) to this job's end (108 + 2). */
Test(real_failure, goodput_leaves_out_the_checkpoint_writes_as_the_definition_says)
{
    struct failure_note n = {.rank = 1, .time_s = 3, .policy = FAILURE_RESTART, .n_failures = 1,
                             .detect_s = 0.25, .relaunch_s = 0, .redone_s = 0.5,
                             .relaunch_at_s = 107.75, .first_start_s = 100,
                             .checkpoint_s = 0.6};
    char text[1024];
    struct err e = {0};
    cr_assert_eq(failure_env_format(&n, text, sizeof text, &e), 0, "%s", e.msg);
    cr_assert_eq(setenv(FAILURE_ENV, text, 1), 0);
    struct report r = {.devices = 2};
    /* this job started at 108 (0.25 s of relaunch), ran 2 s, wrote 0.4 s of checkpoints */
    int rc = failure_env_report(&r, 108, 2, 0.4, &e);
    unsetenv(FAILURE_ENV);
    cr_assert_eq(rc, 0, "%s", e.msg);
    cr_expect_float_eq(r.failure.lost_s, 1.0, 1e-12, "lost %g", r.failure.lost_s);
    cr_expect_float_eq(r.failure.checkpoint_s, 1.0, 1e-12, "checkpoints %g", r.failure.checkpoint_s);
    cr_expect_float_eq(r.failure.goodput, 0.8, 1e-12, "goodput %g, not (10 - 1 - 1) / 10",
                       r.failure.goodput);
}

/* --straggler slow:R=X names ranks of the first job; after shrink or
 * continue the survivors are renumbered, and the relaunch refused its own
 * options ("rank 1 does not exist", "rank 1 is a parameter server"): the
 * run exited 2 after its work. The slow device now keeps its slowness
 * under its new rank (here old rank 2, new rank 1, after rank 0's death),
 * and the dead rank's entry goes with it (ps-async). */
Test(real_failure, a_slow_rank_moves_with_the_survivors_of_shrink_and_continue)
{
    char *json = test_tmp_path("shrunk.json");
    struct run r = RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "3", "--steps",
                       "30", "--fail", "0@10", "--on-failure", "shrink", "--straggler",
                       "slow:2=4", "--json", json);
    expect_ok(r, "shrink with a slow rank");
    cJSON *doc = read_json(json);
    const cJSON *ranks = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "stragglers"), "ranks");
    cr_assert_eq(cJSON_GetArraySize(ranks), 2);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(ranks, 1), "straggler")),
              "old rank 2, now rank 1, is not slow in the relaunch");
    cJSON_Delete(doc);
    expect_ok(RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--strategy",
                  "ps-async", "--steps", "30", "--fail", "1@10", "--straggler", "slow:1=4"),
              "continue without the slow rank");
}

/* A --fail that never comes was silent: a time past the run's end, or a
 * step past what --epochs makes (the steps are known once the data is),
 * ended with a report that has no failure section, exit 0, no word. The
 * first now says nothing failed; the second is refused before the job. */
Test(real_failure, a_fail_that_never_comes_is_said_or_refused)
{
    struct run r = RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--steps",
                       "10", "--fail", "1@1000s");
    cr_expect(strstr(r.err, "--fail 1@1000s: the run ended before it: nothing failed"), "%s",
              r.err);
    expect_ok(r, "a run that ends before its --fail");   /* frees r */
    expect_refused(RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--epochs",
                       "1", "--fail", "1@1000000"),
                   "--fail 1@1000000", "--epochs 1 makes");
}

/* Under shrink and continue the job's checkpoints are its commits, in the
 * run directory: --checkpoint-every with a --checkpoint-dir of the user's
 * wrote nothing there (the directory not even made) while the report said
 * "checkpoints: 40 written". Refused before the launch, naming both. */
Test(real_failure, a_checkpoint_dir_that_commits_would_replace_is_refused)
{
    char *dir = test_tmp_path("ckpt");
    setenv("STRATA_MPIRUN", test_tmp_path("no-launcher-here"), 1);
    struct run r = RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--steps",
                       "20", "--fail", "1@10", "--on-failure", "shrink", "--checkpoint-every",
                       "5", "--checkpoint-dir", dir);
    struct run c = RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--steps",
                       "20", "--strategy", "ps-async", "--fail", "1@10", "--checkpoint-every",
                       "5", "--checkpoint-dir", dir);
    unsetenv("STRATA_MPIRUN");
    expect_refused(r, "--checkpoint-dir", "under --on-failure shrink");
    expect_refused(c, "--checkpoint-dir", "under --on-failure continue");
}

/* A checkpoint's write is not a step: one that outlasted --timeout (a
 * large model's file on a slow disk: 15 MB a rank took 0.3 s here) was
 * taken for a hang, the job relaunched from scratch, and every relaunch
 * met the same write, up to "too many failures". While it saves, a rank
 * is allowed the start-up's 60 s; here rank 1 sleeps 1.5 s in its first
 * write under --timeout 0.5. */
Test(real_failure, a_checkpoint_write_longer_than_the_timeout_is_no_hang)
{
    setenv(HEARTBEAT_TEST_HANG_ENV, "1@save+1.5", 1);
    struct run r = RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--steps",
                       "12", "--checkpoint-every", "4", "--timeout", "0.5", "--json",
                       test_tmp_path("report.json"));
    unsetenv(HEARTBEAT_TEST_HANG_ENV);
    cr_expect_not(strstr(r.err, "hung"), "a slow save was taken for a hang:\n%s", r.err);
    expect_ok(r, "a run with a slow checkpoint write");
    cJSON *doc = read_json(test_tmp_path("report.json"));
    cr_expect(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(doc, "failure")),
              "the report has a failure");
    cJSON_Delete(doc);
}

/* --straggler pause:P:D no shorter than the timeout: each stall was taken
 * for a hang, and the seed's draws put the same stall in every relaunch,
 * nine times, then "too many failures". Refused before the launch, naming
 * both and the --timeout that would do; the default timeout's least
 * (10 s) counts when none is given. */
Test(real_failure, a_pause_no_shorter_than_the_timeout_is_refused)
{
    setenv("STRATA_MPIRUN", test_tmp_path("no-launcher-here"), 1);
    struct run r = RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--steps",
                       "30", "--straggler", "pause:0.05:1", "--timeout", "0.5");
    struct run d = RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--steps",
                       "30", "--straggler", "pause:0.05:12");
    unsetenv("STRATA_MPIRUN");
    expect_refused(r, "--straggler pause:0.05:1", "give --timeout above 1");
    expect_refused(d, "the default timeout's least (10 s)", "give --timeout above 12");
}

/* ps-sync's --backup-workers B must stay below the workers: shrink to B
 * workers relaunched a job that refused its own options ("--backup-workers
 * 1 must be less than --np 1", from each rank) and the run exited 2 after
 * its work. The relaunch now drops fewer pushes, said, and the report's
 * config keeps the user's B. */
Test(real_failure, shrink_below_the_backup_workers_lowers_them_and_finishes)
{
    char *json = test_tmp_path("shrunk.json");
    struct run r = RUN("real", "--data", "synthetic", "--model", MODEL, "--np", "2", "--steps",
                       "20", "--strategy", "ps-sync", "--backup-workers", "1", "--fail", "1@10",
                       "--on-failure", "shrink", "--json", json);
    cr_expect(strstr(r.err, "--backup-workers 1 lowered to 0 for 1 worker"), "%s", r.err);
    expect_ok(r, "shrink below the backup workers");
    cJSON *doc = read_json(json);
    cr_expect_eq(num_at(doc, "config", "backup-workers"), 1, "the user's --backup-workers");
    cr_expect_eq(num_at(doc, "failure", "workers_after"), 1);
    cJSON_Delete(doc);
}
