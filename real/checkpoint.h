/* Checkpoints of real runs: --checkpoint-every STEPS writes, at the end of
 * every STEPS-th step, each rank's state to --checkpoint-dir DIR ("" =
 * --resume's DIR when given, else a temporary directory a successful run
 * removes); --resume DIR continues from the newest whole checkpoint there.
 *
 * Layout:   DIR/step-0000000010/rank-0.ckpt ... rank-(N-1).ckpt   (core/ckpt_file.h)
 *           DIR/step-0000000010/MANIFEST   "strata-checkpoint 1\nstep 10\nranks N\n"
 *
 * Every file goes through a temporary beside it, fsync, rename and an fsync
 * of the directory (core/fileio). Each rank writes its own file; after all
 * of them agree that theirs is whole, rank 0 writes the MANIFEST: a step
 * directory with one is a whole checkpoint, and only then are older ones
 * deleted (the newest two whole ones are kept). No rank returns from a
 * checkpoint before its MANIFEST is written: a rank that goes on past one
 * knows it is committed.
 *
 * A rank's file holds its whole parameter and momentum blocks, its
 * straggler stream, the sampler's position (checked: the sampler is a pure
 * function of the step, nn/data.h), a worker's shard versions read from
 * each server, and a server's policy state (version, round, each worker's
 * last applied version), and what the report needs of the steps before a
 * resume: the run's clock, the worker's training losses and rank 0's
 * --eval-every points not yet evaluated (their parameters), so that a
 * resumed or relaunched run's curves start at step 1 on one clock
 * (checkpoint_clock_offset_s). Checkpoints are taken at job step boundaries,
 * where nothing is in flight: a synchronous plan's every K-th step; an
 * asynchronous plan's workers are at different steps, so its first server
 * holds the work of step c (a multiple of K) back until every worker asked
 * for it (real/ps_wire.h), and the job checkpoints there. Its last step
 * has no such boundary: an asynchronous job writes none at its end. A
 * resumed asynchronous job starts every worker at the checkpoint's step
 * (their lags before it are not kept), so it is not bit-identical to one
 * never stopped; nor is the straight run to itself, whose updates depend
 * on timing.
 *
 * A data-parallel plan (plan->data_parallel) may resume on fewer workers
 * (--on-failure shrink): its replicas are identical, so every worker of the
 * smaller job takes worker 0's parameters, momentum and shard versions, and
 * its own old rank's random stream; server k loads old server k. */
#ifndef STRATA_REAL_CHECKPOINT_H
#define STRATA_REAL_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "../core/err.h"
#include "real_ctx.h"

/* The newest whole checkpoint in dir: 0 with its directory in path
 * (capacity n; it may be dir's own buffer) and its step (the next step to
 * run) in *step; 1 when dir holds none or does not exist; ERR_IO when dir
 * cannot be read, ERR_INPUT when path does not fit. No MPI: the supervisor
 * calls it. */
int checkpoint_newest(const char *dir, char *path, size_t n, int64_t *step, struct err *e);
/* The same among the checkpoints of steps below `before`. dir may also
 * name one step directory (DIR/step-N): then that checkpoint, when whole
 * (and below `before`), is the one; --resume takes either form. */
int checkpoint_newest_before(const char *dir, int64_t before, char *path, size_t n,
                             int64_t *step, struct err *e);

/* Where checkpoints go when --checkpoint-dir is "" and --resume is given:
 * --resume's DIR, or the directory above it when it names one step
 * directory (DIR/step-N), so that a resumed run's checkpoints go on beside
 * the one it resumed from; "" without --resume. No MPI: the supervisor
 * passes the same directory to a restart. */
void checkpoint_resume_dir(const struct config *cfg, char *out, size_t n);

/* After a job's ranks are gone (no MPI): what their saves left in dir, a
 * step directory without its MANIFEST and the temporaries of writes cut
 * short (a rank killed for a death or a hang is killed mid-write, and no
 * handler of its runs), removed. Whole checkpoints stay. */
void checkpoint_remove_partial(const char *dir);

/* What can be checked before the MPI job (no MPI): that every server has
 * workers to call it to a checkpoint, and a whole checkpoint in --resume's
 * directory. ERR_INPUT naming the option. */
int checkpoint_check(const struct config *cfg, const struct plan *p, struct err *e);
/* --checkpoint-dir, before the job starts (no MPI): a directory this
 * process can write in, or one it can make (its nearest existing parent a
 * directory it can write in), so that a bad one is said at once and not
 * after a launch, from inside the job; with --checkpoint-every and
 * --resume but no --checkpoint-dir, the directory beside the resumed
 * checkpoint (checkpoint_resume_dir), where they go, unless are_commits
 * (the supervisor's commits replace them: supervise_writes_commits).
 * ERR_INPUT naming the option, the path and what is wrong; 0 when nothing
 * is written. */
int checkpoint_check_dir(const struct config *cfg, bool are_commits, struct err *e);

/* The supervisor's check of --resume before the job starts (no MPI), so
 * that a checkpoint of another run, or a corrupt or truncated one, is a
 * message of strata's and exit 2, not an abort inside the ranks: the
 * newest whole checkpoint's MANIFEST, then every rank's file (CRC, and
 * ckpt_ident_match against this run of n_params parameters), and its step
 * below `steps` (0: not known). ERR_INPUT naming the file and the mismatch;
 * 0 without --resume. */
int checkpoint_check_resume(const struct config *cfg, const struct plan *p, int64_t n_params,
                            int64_t steps, struct err *e);

/* Collective, after set-up: the directory checkpoints go to (made, or a
 * temporary one), and with --resume this rank's state read back, checked
 * against this run and restored (ctx->first_step, the model's blocks, the
 * straggler stream; a worker's links and a server's state wait in ctx->ckpt
 * for worker_create and ps_serve). ERR_INPUT naming the file and what is
 * wrong. Follow with mpi_check_agree. */
int checkpoint_open(struct real_ctx *ctx, struct err *e);
/* The end of the run (on every rank): frees ctx->ckpt; rank 0 removes a
 * temporary directory after a success (or when nothing was written), and
 * after a failure says where it stays. */
void checkpoint_close(struct real_ctx *ctx, bool is_success);

/* Is a checkpoint due once `steps_done` job steps are done? */
bool checkpoint_is_due(const struct real_ctx *ctx, int64_t steps_done);

/* What a worker or a server adds to its file. */
struct checkpoint_link {
    int64_t server;          /* the server's index (rank - workers): a shrunk job's ranks move */
    int64_t version_read;    /* the shard version of the worker's last pull */
};
struct checkpoint_server {
    int64_t version, round;  /* core/ps_policy's, at the step boundary */
    int64_t n_workers;
    const int64_t *last_applied;   /* [n_workers] */
};
struct checkpoint_extra {
    const struct checkpoint_link *links;
    int n_links;
    const struct checkpoint_server *server;   /* NULL on workers */
};

/* Collective over every rank: writes this rank's file for `next_step` (the
 * steps before it done), then rank 0 the MANIFEST, then prunes. Timed into
 * ctx->ckpt. */
int checkpoint_save(struct real_ctx *ctx, int64_t next_step, const struct checkpoint_extra *x,
                    struct err *e);

/* Resumed state, for worker_create: the version last read from server (the
 * file's), or `otherwise` when not resuming. */
int64_t checkpoint_resumed_link(const struct real_ctx *ctx, int server, int64_t otherwise);
/* For ps_serve: the server state to rewind to, NULL when not resuming. */
const struct checkpoint_server *checkpoint_resumed_server(const struct real_ctx *ctx);

/* Collective over every rank: the optimizer updates the model resumed from
 * had taken (docs/metrics.md's "updates"), into *updates on rank 0 (0 on
 * the others, and 0 without a resume): a synchronous plan's one a step, so
 * the checkpoint's step; an asynchronous plan's applied pushes, its
 * servers' shard versions (the CKPT_SERVER records) summed. */
int checkpoint_updates_resumed(const struct real_ctx *ctx, int64_t *updates, struct err *e);

/* Time spent writing checkpoints on this rank, and how many were written. */
void checkpoint_stats(const struct real_ctx *ctx, double *seconds, int *count);

/* The run's clock at this job's aligned start: 0 for a run from step 0;
 * for a resumed one, the training time before it (and, relaunched after a
 * failure, the time lost since): what the report adds to this job's times
 * so that its curves, from step 1, keep one clock. */
double checkpoint_clock_offset_s(const struct real_ctx *ctx);

/* Whether this resumed job starts at an --eval-every point its checkpoint
 * carries no evaluation for (a run that ended there evaluated it as its
 * final model): then every worker gathers the parameters once before its
 * first step, and rank 0 keeps them as the point at *at_s, this job's
 * clock (a time before its start). */
bool checkpoint_point_due(const struct real_ctx *ctx, double *at_s);

/* Holds dir for the run that writes its checkpoints there (no MPI: the
 * supervisor, through the run and its relaunches). Two runs at once in
 * one directory pruned and swept each other's checkpoints, and a relaunch
 * could go back to the other run's. An flock on DIR/.strata-lock (made,
 * with dir, when missing), which the kernel releases when the process
 * ends, however it ends. 0 with *fd to give to checkpoint_dir_release;
 * ERR_INPUT naming the run that holds dir (its pid); ERR_IO when the lock
 * cannot be made. */
int checkpoint_dir_hold(const char *dir, int *fd, struct err *e);
void checkpoint_dir_release(int fd);   /* accepts -1 */

#endif
