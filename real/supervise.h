/* `strata real --np N` as the supervisor of its MPI job: it starts the job
 * (mpirun -np N strata real ...) and watches it (real/job_watch.h) through
 * the ranks' heartbeats (real/heartbeat.h), so that a rank that dies, is
 * killed, or stops making progress is noticed within the poll or the
 * timeout, named in a message, and answered by the --on-failure policy:
 *
 *   restart   the job again with the same ranks, from the newest whole
 *             checkpoint in --checkpoint-dir (or beside --resume's, or in
 *             the temporary one the supervisor passes down when the user
 *             gave neither), else from the one --resume named, from
 *             scratch when there is none
 *   shrink    the job again with one worker fewer, the same global batch,
 *             from the last commit
 *   continue  (asynchronous parameter servers) the job again with the
 *             surviving workers, from the servers' last commit. An MPI job
 *             cannot outlive a dead rank, so "carry on" is a relaunch of
 *             the survivors here; its cost is measured like the others'.
 *             An asynchronous plan's commit is taken where the first server
 *             calls every worker to one step boundary (real/checkpoint.h),
 *             so a short --commit-every makes its workers meet often.
 *
 * A checkpoint of the run's last step (the job failed while its report was
 * gathered) leaves nothing to run: the relaunch goes back to the one before
 * it (supervise_job.steps), or to scratch when there is none.
 *
 * Commits (shrink and continue) are checkpoints
 * (--checkpoint-every = --commit-every) written in
 * the run directory, which lives on /dev/shm when the machine has one: that
 * is how a commit "in memory" outlives the processes that made it. They are
 * written only when the user asked for failure handling (--fail,
 * --on-failure or --commit-every given), so that a plain run costs what it
 * did. Relaunches never pass --fail again.
 *
 * After a job that failed or was interrupted, its checkpoint directory is
 * swept of what killed saves left (real/checkpoint.h,
 * checkpoint_remove_partial), and the newest whole checkpoint that stays
 * is named with the --resume that takes it.
 *
 * The run directory (heartbeats, commits, the temporary checkpoints, Open
 * MPI's session files) is removed at the end, whatever happened; one left
 * by a supervisor killed with SIGKILL (whose job dies with it, real/
 * job_watch.h) is removed by the next supervisor, which finds its owner's
 * pid gone. SIGINT and
 * SIGTERM end the whole job (SIGTERM forwarded, then SIGKILL after a second)
 * and the exit status is 130 or 143. A failure no policy recovers from
 * exits 1; a recovered run exits with the last job's status, and that job's
 * rank 0 reports the failures (STRATA_FAILURE, real/failure_env.h). */
#ifndef STRATA_SUPERVISE_H
#define STRATA_SUPERVISE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/config.h"
#include "../core/err.h"
#include "../core/plan.h"

/* Relaunches at most: a job that keeps failing is not worth more. */
#define SUPERVISE_MAX_FAILURES 8

struct supervise_job {
    const char *command;        /* the subcommand the ranks run: "real" */
    int argc;
    char **argv;                /* the user's options, given to every launch */
    const struct config *cfg;   /* --fail, --on-failure, --checkpoint-*, --commit-every, --timeout, --bind */
    const struct plan *p;       /* the checked plan: its ranks, workers, servers */
    bool show_progress;         /* a terminal watches (launch_prepare_env) */
    int64_t steps;              /* the run's steps (real_steps), 0 = not known: a
                                   checkpoint of the last step (a failure while the
                                   report was gathered) leaves nothing to run, so a
                                   relaunch goes back to the one before it */
};

/* cfg's --fail: a rank of p's, one whose death --on-failure can follow (a
 * server's only restart can), at a step the run starts (with --steps; an
 * --epochs run's steps are known later); ERR_INPUT naming the option. No
 * --fail passes. */
int supervise_check_fail(const struct config *cfg, const struct plan *p, struct err *e);

/* Runs the job under supervision to its end (above); *exit_code is what
 * strata exits with. < 0 when it could not start: ERR_INPUT for a policy
 * that cannot apply (core/failure_policy.h) or a bad --fail, ERR_RUN or
 * ERR_IO when the launcher or the run directory cannot be had. */
/* Whether a run writes the supervisor's commits (in its run directory) in
 * place of --checkpoint-every's checkpoints: --on-failure shrink or
 * continue, as p resolves it, when failure handling was asked for (--fail,
 * --on-failure or --commit-every given). */
bool supervise_writes_commits(const struct config *cfg, const struct plan *p);

int supervise_run(const struct supervise_job *job, int *exit_code, struct err *e);

#endif
