/* The supervisor of `strata real` (supervise.h): the run directory, the
 * signals, and the policy loop around real/job_watch.h's one job. */
#include "supervise.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/failure_policy.h"
#include "../core/straggler.h"
#include "../core/untracked.h"
#include "checkpoint.h"
#include "failure_env.h"
#include "heartbeat.h"
#include "heartbeat_net.h"
#include "job_watch.h"
#include "launch.h"

#define PATH_BYTES 4096

static volatile sig_atomic_t signalled;

static void on_signal(int sig)
{
    signalled = sig;
}

int supervise_check_fail(const struct config *cfg, const struct plan *p, struct err *e)
{
    const char *fail = cfg->fail;
    struct failure_spec f;
    TRY(failure_parse(fail, &f, e));
    if (!f.is_set) return 0;
    if (f.rank < 0 || f.rank >= p->n_ranks)
        return err_set(e, ERR_INPUT, "--fail %s: rank %d does not exist: %s has %d rank%s "
                       "(0 to %d%s)", fail, f.rank, p->strategy, p->n_ranks,
                       p->n_ranks == 1 ? "" : "s", p->n_ranks - 1,
                       p->n_servers ? ", servers last" : "");
    if (cfg->epochs <= 0) TRY(failure_check_steps(&f, cfg->steps, e));
    enum failure_policy policy;
    TRY(failure_policy_resolve(cfg->on_failure, p, &policy, e));
    return failure_policy_check_rank(policy, p, f.rank, e);
}

/* Removes path and everything below it; errors are ignored (best effort:
 * what cannot be removed is left, never fatal). Not through symbolic links. */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        for (struct dirent *de; d && (de = readdir(d));) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            char child[PATH_BYTES];
            if ((size_t)snprintf(child, sizeof child, "%s/%s", path, de->d_name) < sizeof child)
                remove_tree(child);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

#define RUN_DIR_PREFIX "strata-run-"
#define OWNER_FILE "supervisor.pid"

/* Removes the run directories in base whose supervisor is gone (killed by
 * SIGKILL: nothing of it could clean up). One without its owner file is
 * being made: left alone. O(entries of base). */
static void remove_orphan_run_dirs(const char *base)
{
    DIR *d = opendir(base);
    for (struct dirent *de; d && (de = readdir(d));) {
        if (strncmp(de->d_name, RUN_DIR_PREFIX, strlen(RUN_DIR_PREFIX)) != 0) continue;
        char path[PATH_BYTES], owner[PATH_BYTES + 32];
        snprintf(path, sizeof path, "%s/%s", base, de->d_name);
        snprintf(owner, sizeof owner, "%s/" OWNER_FILE, path);
        FILE *f = fopen(owner, "r");
        long pid = 0;
        bool has_pid = f && fscanf(f, "%ld", &pid) == 1 && pid > 0;
        if (f) fclose(f);
        if (has_pid && kill((pid_t)pid, 0) != 0 && errno == ESRCH) remove_tree(path);
    }
    if (d) closedir(d);
}

/* The run directory: on /dev/shm when there is one (memory: the commits are
 * "in memory" there), else $TMPDIR or /tmp; its owner's pid in it. */
static int make_run_dir(char *dir, size_t n, struct err *e)
{
    const char *tmp = getenv("TMPDIR");
    const char *base = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm"
                       : tmp && *tmp                       ? tmp
                                                           : "/tmp";
    remove_orphan_run_dirs(base);
    if ((size_t)snprintf(dir, n, "%s/" RUN_DIR_PREFIX "XXXXXX", base) >= n || !mkdtemp(dir))
        return err_set(e, ERR_IO, "%s: cannot make the run's directory there: %s", base,
                       strerror(errno));
    char owner[PATH_BYTES + 32];
    snprintf(owner, sizeof owner, "%s/" OWNER_FILE, dir);
    FILE *f = fopen(owner, "w");
    if (f) {
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }
    return 0;
}

/* What the loop carries from one job to the next. */
struct supervisor {
    const struct supervise_job *job;
    enum failure_policy policy;
    char run_dir[PATH_BYTES - 64];   /* room for "/checkpoints", "/job-N" below it */
    char commit_dir[PATH_BYTES];     /* "" when no commits are written */
    char checkpoint_dir[PATH_BYTES]; /* restart's: the user's or ours; "" = none */
    bool is_own_checkpoint_dir;
    int n_workers;
    struct failure_note note;
    char resume[PATH_BYTES];         /* the relaunch's --resume; "" = from scratch */
    /* --hostfile: the ranks may sit on other hosts (supervise.h) */
    bool is_multi_host;
    char address[256];               /* where they reach us: --supervisor-address, numeric */
    bool is_own_commit_dir;          /* commit_dir made under --checkpoint-dir: ours to remove */
    int checkpoint_dir_fd;           /* the hold on a checkpoint_dir of the user's; -1 none */
    char straggler[1024];            /* the relaunch's --straggler; "" = the user's */
    long long backup_workers;        /* the relaunch's --backup-workers; -1 = the user's */
};

/* The options of a launch: the user's, then what overrides them (the last
 * of an option wins, core/config.h). extra[] holds the texts. */
enum { MAX_EXTRA = 10, EXTRA_BYTES = PATH_BYTES + 32 };

static int launch_args(const struct supervisor *S, int attempt, char extra[][EXTRA_BYTES],
                       char ***out, int *n_out, const char **names, int *n_names, struct err *e)
{
    const struct supervise_job *j = S->job;
    int k = 0;
    *n_names = 0;
    /* the options overridden, for the report's config (failure_env.h) */
#define OVERRIDES(name) (names[(*n_names)++] = (name))
    if (S->commit_dir[0]) {
        OVERRIDES("checkpoint-every");
        OVERRIDES("checkpoint-dir");
    } else if (S->is_own_checkpoint_dir) {
        OVERRIDES("checkpoint-dir");
    }
    if (attempt > 0) {
        OVERRIDES("fail");
        OVERRIDES("np");
        OVERRIDES("devices");
        OVERRIDES("resume");
        if (S->straggler[0]) OVERRIDES("straggler");
        if (S->backup_workers >= 0) OVERRIDES("backup-workers");
    }
#undef OVERRIDES
    if (S->commit_dir[0]) {
        snprintf(extra[k++], EXTRA_BYTES, "--checkpoint-every=%lld", j->cfg->commit_every);
        snprintf(extra[k++], EXTRA_BYTES, "--checkpoint-dir=%s", S->commit_dir);
    } else if (S->is_own_checkpoint_dir) {
        snprintf(extra[k++], EXTRA_BYTES, "--checkpoint-dir=%s", S->checkpoint_dir);
    }
    if (attempt > 0) {
        snprintf(extra[k++], EXTRA_BYTES, "--fail=");
        snprintf(extra[k++], EXTRA_BYTES, "--np=%d", S->n_workers);
        snprintf(extra[k++], EXTRA_BYTES, "--devices=%d", S->n_workers);
        if (S->resume[0]) snprintf(extra[k++], EXTRA_BYTES, "--resume=%s", S->resume);
        if (S->straggler[0]) snprintf(extra[k++], EXTRA_BYTES, "--straggler=%s", S->straggler);
        if (S->backup_workers >= 0)
            snprintf(extra[k++], EXTRA_BYTES, "--backup-workers=%lld", S->backup_workers);
    }
    char **args = XCALLOC(e, (size_t)j->argc + MAX_EXTRA + 1, sizeof *args);
    if (!args) return ERR_NOMEM;
    for (int i = 0; i < j->argc; i++) args[i] = j->argv[i];
    for (int i = 0; i < k; i++) args[j->argc + i] = extra[i];
    *out = args;
    *n_out = j->argc + k;
    return 0;
}

/* Runs attempt `attempt` to its end. */
static int run_one(struct supervisor *S, int attempt, struct watch_result *res,
                   double *launched_s, struct err *e)
{
    const struct supervise_job *j = S->job;
    char hb_dir[PATH_BYTES];
    snprintf(hb_dir, sizeof hb_dir, "%s/job-%d", S->run_dir, attempt);
    if (mkdir(hb_dir, 0700) < 0)
        return err_set(e, ERR_IO, "%s: cannot make it: %s", hb_dir, strerror(errno));
    char extra[MAX_EXTRA][EXTRA_BYTES];
    char **args = NULL;
    int n_args = 0;
    const char *overridden[MAX_EXTRA];
    int n_overridden = 0;
    TRY(launch_args(S, attempt, extra, &args, &n_args, overridden, &n_overridden, e));
    int n_ranks = S->n_workers + j->p->n_servers;
    bool is_openmpi = false;
    char **argv = launch_self_job_argv(j->command, n_args, args, n_ranks, j->cfg->bind,
                                       j->cfg->hostfile, &is_openmpi, e);
    free(args);
    if (!argv) return e->code;
    struct hbnet_listener *net = NULL;
    int rc = launch_prepare_env(is_openmpi, j->show_progress, e);
    /* ranks of other hosts send their heartbeats to us (heartbeat_net.h) */
    if (rc == 0 && S->is_multi_host) rc = hbnet_listen(S->address, n_ranks, hb_dir, &net, e);
    if (rc == 0 && net && setenv(HEARTBEAT_NET_ENV, hbnet_endpoint(net), 1) < 0)
        rc = err_set(e, ERR_NOMEM, "out of memory for the environment");
    char note[1024] = "";
    /* the relaunch starts now: the new job's rank 0 measures to its start */
    S->note.relaunch_at_s = heartbeat_clock_s();
    if (rc == 0 && attempt > 0) rc = failure_env_format(&S->note, note, sizeof note, e);
    char users[2 * EXTRA_BYTES] = "";
    if (rc == 0)
        rc = failure_env_format_options(j->cfg, overridden, n_overridden, users, sizeof users, e);
    if (rc == 0 && users[0] && setenv(USER_OPTIONS_ENV, users, 1) < 0)
        rc = err_set(e, ERR_NOMEM, "out of memory for the environment");
    char self[32];
    snprintf(self, sizeof self, "%ld", (long)getpid());
    if (rc == 0 && (setenv(HEARTBEAT_DIR_ENV, hb_dir, 1) < 0 ||
                    setenv(HEARTBEAT_SUPERVISOR_ENV, self, 1) < 0 ||
                    (attempt > 0 && setenv(FAILURE_ENV, note, 1) < 0)))
        rc = err_set(e, ERR_NOMEM, "out of memory for the environment");
    /* a test's injected hang, like --fail, is not passed to relaunches */
    if (attempt > 0) unsetenv(HEARTBEAT_TEST_HANG_ENV);
    /* what the ranks read of our environment, copied to other hosts' ranks
     * (the rest is the job's own: its options, Open MPI's variables); the
     * heartbeat directory and our pid stay here: they mean nothing there */
    static const char *const for_ranks[] = {HEARTBEAT_NET_ENV, FAILURE_ENV, USER_OPTIONS_ENV,
                                            HEARTBEAT_TEST_HANG_ENV, "STRATA_PROGRESS",
                                            "STRATA_FAULT"};
    if (rc == 0 && S->is_multi_host &&
        !(argv = launch_forward_env(argv, is_openmpi, for_ranks,
                                    (int)(sizeof for_ranks / sizeof for_ranks[0]), e)))
        rc = e->code;
    if (rc == 0) {
        untracked_prepare_ranks_env();
        struct watch_job wj = {.argv = argv, .hb_dir = hb_dir, .net = net, .n_ranks = n_ranks,
                               .n_workers = S->n_workers, .timeout_s = j->cfg->timeout_s,
                               .signalled = &signalled};
        *launched_s = heartbeat_clock_s();
        rc = watch_run(&wj, res, e);
    }
    unsetenv(HEARTBEAT_DIR_ENV);
    unsetenv(HEARTBEAT_SUPERVISOR_ENV);
    unsetenv(HEARTBEAT_NET_ENV);
    hbnet_listener_free(net);
    unsetenv(FAILURE_ENV);
    unsetenv(USER_OPTIONS_ENV);
    launch_argv_free(argv);
    return rc;
}

/* A worker gone (shrink, continue): --straggler slow:R=X names ranks of
 * the job before, and the survivors move down one past the dead rank (a
 * shrunk job's ranks are renumbered, real/checkpoint.h), so the relaunch
 * would refuse a rank that is now a server or gone ("rank 1 does not
 * exist") and the run fail with exit 2 after its work. The slow device
 * stays slow under its new rank; the dead one's entry goes with it. */
static void straggler_without(struct supervisor *S, int dead)
{
    const char *now = S->straggler[0] ? S->straggler : S->job->cfg->straggler;
    struct straggler_spec spec;
    if (straggler_parse(now, &spec, &(struct err){0}) < 0 || spec.kind != STRAG_SLOW) return;
    int kept = 0;
    for (int i = 0; i < spec.n_slow; i++) {
        if (spec.slow_rank[i] == dead) continue;
        spec.slow_rank[kept] = spec.slow_rank[i] - (spec.slow_rank[i] > dead);
        spec.slow_factor[kept++] = spec.slow_factor[i];
    }
    spec.n_slow = kept;
    if (kept == 0) spec.kind = STRAG_NONE;
    straggler_format(&spec, S->straggler, sizeof S->straggler);
}

/* After a failure: what it cost, and the next job's shape. false when no
 * policy can go on (the message is printed). */
static bool recover(struct supervisor *S, const struct watch_result *res, double launched_s,
                    int attempt, struct err *e)
{
    const struct plan *p = S->job->p;
    struct failure_note *n = &S->note;
    const char *policy = failure_policy_names[S->policy];
    if (n->n_failures == 0) {
        n->rank = res->rank;
        n->time_s = res->start_s > 0 && res->died_s > res->start_s ? res->died_s - res->start_s : 0;
        n->policy = S->policy;
    }
    /* a relaunched job that failed: its relaunch was measured here */
    if (attempt > 0 && res->start_s > launched_s) n->relaunch_s += res->start_s - launched_s;
    n->n_failures++;
    n->checkpoint_s += res->checkpoint_s;
    n->detect_s += res->noticed_s > res->died_s ? res->noticed_s - res->died_s : 0;
    bool is_worker = res->rank < S->n_workers;
    if (S->policy != FAILURE_RESTART && is_worker) {
        S->n_workers--;
        straggler_without(S, res->rank);
        /* ps-sync drops the last B pushes of a step, so B stays below the
         * workers: a shrunk job of B workers refused its own options
         * ("--backup-workers 1 must be less than --np 1") and the run
         * failed with exit 2 after its work */
        long long backups = S->backup_workers >= 0 ? S->backup_workers
                                                   : S->job->cfg->backup_workers;
        if (backups > 0 && backups >= S->n_workers && S->n_workers >= 1) {
            S->backup_workers = S->n_workers - 1;
            fprintf(stderr, "strata real: --on-failure %s: --backup-workers %lld lowered to "
                    "%lld for %d worker%s\n", policy, backups, S->backup_workers, S->n_workers,
                    S->n_workers == 1 ? "" : "s");
        }
    }
    if (S->n_workers < 1 || n->n_failures > SUPERVISE_MAX_FAILURES) {
        fprintf(stderr, "strata real: --on-failure %s: %s; the run failed\n", policy,
                S->n_workers < 1 ? "no worker is left" : "too many failures");
        return false;
    }
    const char *from = S->commit_dir[0] ? S->commit_dir : S->checkpoint_dir;
    int64_t step = 0;
    /* below the run's steps: a checkpoint of the last step (the job died
     * while gathering its report) leaves no step to run and measure; the
     * one before it is kept (real/checkpoint.h keeps two) */
    int64_t before = S->job->steps > 0 ? S->job->steps : INT64_MAX;
    int found = from[0] ? checkpoint_newest_before(from, before, S->resume, sizeof S->resume,
                                                   &step, e)
                        : 1;
    /* none written yet: a run that was itself resumed goes back to what
     * its --resume named (every launch has the user's --resume), not to
     * scratch as the message and the steps redone said */
    const char *resumed = S->job->cfg->resume;
    bool is_commit = S->commit_dir[0] && found == 0;
    if (found == 1 && resumed[0])
        found = checkpoint_newest_before(resumed, before, S->resume, sizeof S->resume, &step, e);
    if (found < 0) {
        fprintf(stderr, "strata real: %s; the run failed\n", e->msg);
        return false;
    }
    if (found != 0) {
        S->resume[0] = '\0';
        step = 0;
    }   /* else S->resume is the step directory itself: --resume takes that one */
    if (res->step > step) n->steps_redone += res->step - step;
    double since_s = res->start_s > 0 ? watch_time_at_step(res, step) : res->died_s;
    if (res->died_s > since_s) n->redone_s += res->died_s - since_s;
    char whence[64];
    if (found == 0) snprintf(whence, sizeof whence, "the %s of step %lld",
                             is_commit ? "commit" : "checkpoint", (long long)step);
    else snprintf(whence, sizeof whence, "scratch (no %s)",
                  S->commit_dir[0] ? "commit" : "checkpoint");
    fprintf(stderr, "strata real: --on-failure %s: relaunching %d worker%s%s from %s\n", policy,
            S->n_workers, S->n_workers == 1 ? "" : "s",
            p->n_servers ? " and the servers" : "", whence);
    return true;
}

/* --fail R@STEP against what is known once the data and --resume are:
 * a step past those --epochs makes, or one before the step the run
 * resumes at, was taken, and the run ended without a failure and without
 * a word. */
static int check_fail_steps(const struct supervise_job *job, struct err *e)
{
    const struct config *cfg = job->cfg;
    struct failure_spec f;
    TRY(failure_parse(cfg->fail, &f, e));
    if (!f.is_set || f.step < 0) return 0;
    if (cfg->epochs > 0 && job->steps > 0 && f.step >= job->steps)
        return err_set(e, ERR_INPUT, "--fail %s: the run never starts step %lld (--epochs %lld "
                       "makes %lld steps, 0 to %lld); fail at an earlier step", cfg->fail,
                       (long long)f.step, (long long)cfg->epochs, (long long)job->steps,
                       (long long)job->steps - 1);
    char at[PATH_BYTES];
    int64_t first = 0;
    if (cfg->resume[0] &&
        checkpoint_newest(cfg->resume, at, sizeof at, &first, &(struct err){0}) == 0 &&
        f.step < first)
        return err_set(e, ERR_INPUT, "--fail %s: the run resumes at step %lld (--resume %s), "
                       "after step %lld; fail at step %lld or later", cfg->fail,
                       (long long)first, cfg->resume, (long long)f.step, (long long)first);
    return 0;
}

/* --straggler pause:P:D stalls a rank D seconds without progress: as long
 * as the watch's timeout, each stall was taken for a hang, and as the
 * draws follow the seed, every relaunch met the same one, up to "too many
 * failures" (pause:0.05:1 --timeout 0.5). The default timeout is at least
 * WATCH_MIN_TIMEOUT_S (job_watch.h). ERR_INPUT naming both. */
static int check_pause_below_timeout(const struct config *cfg, struct err *e)
{
    struct straggler_spec spec;
    if (straggler_parse(cfg->straggler, &spec, &(struct err){0}) < 0 ||
        spec.kind != STRAG_PAUSE || !(spec.pause_p > 0))
        return 0;
    double timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : WATCH_MIN_TIMEOUT_S;
    if (spec.pause_s < timeout_s) return 0;
    return err_set(e, ERR_INPUT, "--straggler %s: a pause of %g s is no shorter than %s (%g "
                   "s): the supervisor would take it for a hung rank, and meet it again in "
                   "every relaunch; give --timeout above %g", cfg->straggler, spec.pause_s,
                   cfg->timeout_s > 0 ? "--timeout" : "the default timeout's least", timeout_s,
                   spec.pause_s);
}

/* The job ended well, and --fail named a failure that never came: a rank
 * that never reached its step (an asynchronous plan shares its steps out
 * as workers become free), or a time past the run's end. Said, so that a
 * report without a failure section is not read as a recovered one. */
static void say_if_fail_never_came(const struct supervise_job *job)
{
    struct failure_spec f;
    if (failure_parse(job->cfg->fail, &f, &(struct err){0}) < 0 || !f.is_set) return;
    if (f.step >= 0)
        fprintf(stderr, "strata real: --fail %s: rank %d never started step %lld (the run "
                "ended first): nothing failed\n", job->cfg->fail, f.rank, (long long)f.step);
    else
        fprintf(stderr, "strata real: --fail %s: the run ended before it: nothing failed\n",
                job->cfg->fail);
}

/* After SIGINT or SIGTERM, or a failure no policy recovers from: where
 * the run can go on from. The user's --checkpoint-dir (or the one beside
 * --resume) stays, and its newest whole checkpoint is the way back; ours
 * is removed with the run directory, so say what would have kept it. */
static void say_how_to_go_on(const struct supervisor *S)
{
    char newest[PATH_BYTES];
    int64_t step = 0;
    struct err ignored = {0};
    if (!S->checkpoint_dir[0] ||
        checkpoint_newest(S->checkpoint_dir, newest, sizeof newest, &step, &ignored) != 0)
        return;
    if (S->is_own_checkpoint_dir)
        fprintf(stderr, "strata real: its checkpoints (the newest of step %lld) were in a "
                "temporary directory, now removed; --checkpoint-dir DIR keeps them for a "
                "--resume\n", (long long)step);
    else
        fprintf(stderr, "strata real: the checkpoint of step %lld stays: --resume %s goes on "
                "from there\n", (long long)step, S->checkpoint_dir);
}

static int supervise(struct supervisor *S, int *exit_code, struct err *e)
{
    for (int attempt = 0;; attempt++) {
        /* zeroed: released below even when run_one fails before watch_run
         * fills it (a bad --hostfile freed stack garbage: double free) */
        struct watch_result res = {0};
        double launched_s = 0;
        int rc = run_one(S, attempt, &res, &launched_s, e);
        if (rc < 0) {
            watch_result_release(&res);
            return rc;
        }
        if (attempt == 0) S->note.first_start_s = res.start_s > 0 ? res.start_s : launched_s;
        bool again = false;
        switch (res.end) {
        case WATCH_EXITED:
            *exit_code = res.exit_code;
            if (attempt == 0 && res.exit_code == 0) say_if_fail_never_came(S->job);
            break;
        case WATCH_SIGNALLED:
            fprintf(stderr, "strata real: %s: the job was ended\n", strsignal(signalled));
            if (S->checkpoint_dir[0]) checkpoint_remove_partial(S->checkpoint_dir);
            say_how_to_go_on(S);
            *exit_code = 128 + signalled;
            break;
        case WATCH_FAILED:
            fprintf(stderr, "strata real: rank %d %s\n", res.rank, res.cause);
            /* the ranks were killed, some maybe mid-save: what they left
             * goes before a relaunch or the end (the run directory's
             * commits go with it) */
            if (S->checkpoint_dir[0]) checkpoint_remove_partial(S->checkpoint_dir);
            again = recover(S, &res, launched_s, attempt, e);
            if (!again) say_how_to_go_on(S);   /* the run failed: what is left of it */
            *exit_code = 1;
            break;
        }
        watch_result_release(&res);
        if (again && signalled) {   /* asked to stop while it recovered */
            *exit_code = 128 + signalled;
            again = false;
        }
        if (!again) return 0;
    }
}

static bool policy_writes_commits(enum failure_policy policy, const struct config *cfg)
{
    return policy != FAILURE_RESTART &&
           (config_is_set(cfg, "fail") || config_is_set(cfg, "on-failure") ||
            config_is_set(cfg, "commit-every"));
}

bool supervise_writes_commits(const struct config *cfg, const struct plan *p)
{
    enum failure_policy policy;
    return failure_policy_resolve(cfg->on_failure, p, &policy, &(struct err){0}) == 0 &&
           policy_writes_commits(policy, cfg);
}

/* Whether the run writes commits (shrink, continue) and checkpoints
 * without a directory of the user's (restart with --checkpoint-every). */
static bool wants_commits(const struct supervisor *S)
{
    return policy_writes_commits(S->policy, S->job->cfg);
}

/* --hostfile: a relaunch may put a rank on another host, so commits and
 * checkpoints must lie where every host sees them; our run directory is
 * this host's alone. ERR_INPUT naming --checkpoint-dir when it is needed
 * and not given. */
static int check_shared_dirs(const struct supervisor *S, struct err *e)
{
    const struct config *cfg = S->job->cfg;
    if (!S->is_multi_host || cfg->checkpoint_dir[0]) return 0;
    bool commits = wants_commits(S);
    if (!commits && cfg->checkpoint_every <= 0) return 0;
    return err_set(e, ERR_INPUT, "--hostfile %s: %s --checkpoint-dir DIR on storage every "
                   "host sees (a shared file system): ranks on other hosts write their part "
                   "there and a relaunch may read it on any host, while the supervisor's own "
                   "directory is on this host only", cfg->hostfile,
                   commits ? (S->policy == FAILURE_SHRINK ? "--on-failure shrink's commits need"
                                                          : "--on-failure continue's commits need")
                           : "--checkpoint-every needs");
}

/* Shrink's and continue's commits are the job's checkpoints (the job
 * writes one series, every --commit-every steps, into the run directory):
 * --checkpoint-every with a --checkpoint-dir of the user's was taken and
 * dropped, nothing written there (the directory not even made) while the
 * report said "checkpoints: 40 written", and a later --resume found none.
 * ERR_INPUT naming both. Not with --hostfile, whose commits go there. */
static int check_commits_replace_checkpoints(const struct supervisor *S, struct err *e)
{
    const struct config *cfg = S->job->cfg;
    if (S->is_multi_host || !wants_commits(S) || !cfg->checkpoint_dir[0] ||
        cfg->checkpoint_every <= 0)
        return 0;
    return err_set(e, ERR_INPUT, "--checkpoint-dir %s: under --on-failure %s the job writes its "
                   "commits (--commit-every %lld, in memory) in place of "
                   "--checkpoint-every's checkpoints, so nothing would be written there; give "
                   "--on-failure restart to keep checkpoints there, or leave --checkpoint-dir "
                   "out", cfg->checkpoint_dir, failure_policy_names[S->policy],
                   cfg->commit_every);
}

/* Where the commits and restart's checkpoints go, as supervise.h says;
 * with --hostfile, commits go to a directory of ours in --checkpoint-dir
 * (check_shared_dirs). */
static int choose_dirs(struct supervisor *S, struct err *e)
{
    const struct config *cfg = S->job->cfg;
    /* shrink's commits, and continue's: an asynchronous plan's servers
     * commit at the step boundary the first server calls (real/checkpoint.h) */
    if (wants_commits(S) && S->is_multi_host) {
        if ((size_t)snprintf(S->commit_dir, sizeof S->commit_dir, "%s/strata-commits-XXXXXX",
                             cfg->checkpoint_dir) >= sizeof S->commit_dir ||
            !mkdtemp(S->commit_dir))
            return err_set(e, ERR_IO, "--checkpoint-dir %s: cannot make the commits' directory "
                           "there: %s", cfg->checkpoint_dir, strerror(errno));
        S->is_own_commit_dir = true;
    } else if (wants_commits(S)) {
        snprintf(S->commit_dir, sizeof S->commit_dir, "%s/commit", S->run_dir);
    } else if (cfg->checkpoint_every > 0 && !cfg->checkpoint_dir[0] && cfg->resume[0]) {
        /* the ranks write beside the checkpoint they resumed from
         * (real/checkpoint.h), as --help says: not into ours, removed at
         * the end, where an interrupted run's would have been lost */
        checkpoint_resume_dir(cfg, S->checkpoint_dir, sizeof S->checkpoint_dir);
    } else if (cfg->checkpoint_every > 0 && !cfg->checkpoint_dir[0]) {
        snprintf(S->checkpoint_dir, sizeof S->checkpoint_dir, "%s/checkpoints", S->run_dir);
        S->is_own_checkpoint_dir = true;
    } else if (cfg->checkpoint_every > 0) {
        snprintf(S->checkpoint_dir, sizeof S->checkpoint_dir, "%s", cfg->checkpoint_dir);
    }
    return 0;
}

int supervise_run(const struct supervise_job *job, int *exit_code, struct err *e)
{
    *exit_code = -1;
    struct supervisor *S = XCALLOC(e, 1, sizeof *S);
    if (!S) return ERR_NOMEM;
    S->job = job;
    S->n_workers = job->p->n_workers;
    S->backup_workers = -1;
    S->is_multi_host = job->cfg->hostfile[0] != '\0';
    int rc = failure_policy_resolve(job->cfg->on_failure, job->p, &S->policy, e);
    if (rc == 0) rc = supervise_check_fail(job->cfg, job->p, e);
    if (rc == 0) rc = check_fail_steps(job, e);
    if (rc == 0) rc = check_pause_below_timeout(job->cfg, e);
    if (rc == 0 && S->is_multi_host)
        rc = hbnet_resolve_address(job->cfg->supervisor_address, S->address, sizeof S->address,
                                   e);
    if (rc == 0) rc = check_shared_dirs(S, e);
    if (rc == 0) rc = check_commits_replace_checkpoints(S, e);
    if (rc == 0) rc = make_run_dir(S->run_dir, sizeof S->run_dir, e);
    S->checkpoint_dir_fd = -1;
    if (rc == 0 && (rc = choose_dirs(S, e)) < 0) remove_tree(S->run_dir);
    /* a directory of the user's is this run's alone while it runs */
    if (rc == 0 && S->checkpoint_dir[0] && !S->is_own_checkpoint_dir &&
        (rc = checkpoint_dir_hold(S->checkpoint_dir, &S->checkpoint_dir_fd, e)) < 0) {
        remove_tree(S->run_dir);
        if (S->is_own_commit_dir) remove_tree(S->commit_dir);
    }
    if (rc < 0) {
        free(S);
        return rc;
    }
    /* Open MPI's session files and its shared-memory segments (vader, in
     * /dev/shm by default) in the run directory: removed with it even when
     * the ranks were killed, and two jobs at once never race on a shared
     * session directory (real/launch.h) */
    static const char *const ompi_dirs[] = {"OMPI_MCA_orte_tmpdir_base",
                                            "OMPI_MCA_btl_vader_backing_directory"};
    bool is_own[2];
    /* not across hosts: Open MPI passes its variables to every host's
     * daemon, where our run directory does not exist; they keep their
     * defaults there and here */
    for (int i = 0; i < 2; i++)
        if ((is_own[i] = !S->is_multi_host && !getenv(ompi_dirs[i])))
            setenv(ompi_dirs[i], S->run_dir, 1);
    struct sigaction on, old_int, old_term;
    memset(&on, 0, sizeof on);
    on.sa_handler = on_signal;   /* no SA_RESTART: the poll's sleep ends at once */
    sigemptyset(&on.sa_mask);
    signalled = 0;
    sigaction(SIGINT, &on, &old_int);
    sigaction(SIGTERM, &on, &old_term);

    rc = supervise(S, exit_code, e);

    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    for (int i = 0; i < 2; i++)
        if (is_own[i]) unsetenv(ompi_dirs[i]);
    remove_tree(S->run_dir);
    if (S->is_own_commit_dir) remove_tree(S->commit_dir);
    checkpoint_dir_release(S->checkpoint_dir_fd);
    free(S);
    return rc;
}
