/* Failures at the scale of a job's steps: the timeline of a run whose ranks
 * die and come back (--on-failure restart) or go on without the dead one
 * (shrink), with the time checkpoints and commits cost, failure or not.
 *
 * The event loop (simulate.h) runs the plan's steps without a failure; this
 * module replays their durations through the failures, as a discrete-event
 * simulation at step granularity. That is exact for what restart and shrink
 * do: every rank stops, goes back to a saved step and runs the same steps
 * again (taking, the second time, the time they took the first), so what
 * happens inside a step does not change what a failure costs. And it is what
 * lets a run of 10^4 devices over days with hundreds of failures take
 * seconds (docs/failures.md, "Failures at scale"). The event loop keeps the failures
 * that change what happens inside steps: continue's (an asynchronous worker
 * retires, the others take its work).
 *
 * The timeline, in virtual seconds from 0:
 *   step k      takes step_s[k] on the job's current workers (shrink: the
 *               durations on n workers, from the caller's step_times)
 *   checkpoint  after steps K, 2K, ... below S (K = checkpoint_every): every
 *               rank stops for checkpoint_s (synchronous checkpointing);
 *               restart goes back to the newest whole one (step 0 if none)
 *   commit      shrink only: after every commit_every steps below S, commit_s
 *               (an in-memory copy of the state); shrink goes back to it
 *   failure     at a --fail time, as step STEP starts (--fail R@STEP), or,
 *               with --mtbf, each device after an exponential time: the job's
 *               failures are then a Poisson process of rate n / mtbf_s (n
 *               devices, each replaced device starting afresh: memoryless),
 *               the failed device uniform among the n, drawn from the seed's
 *               own stream. A failure interrupts whatever runs (a step, a
 *               checkpoint or commit being written, a recovery); the work
 *               since the rollback point is redone, then detection and
 *               relaunch (restart adds loading the checkpoint) take their
 *               time, and a failure during them starts them over. The
 *               relaunch costs failure_relaunch_s of the ranks started:
 *               the job's workers then (n; n - 1 after a shrink) and its
 *               servers.
 *   restart     keeps n (the failed device is replaced); shrink goes on with
 *               n - 1 workers, and a job down to no worker fails (ERR_RUN).
 *
 * What it leaves out: storage is per device (a shared file system's total
 * bandwidth is not a bottleneck), a redone step takes exactly the time it
 * took the first time, and a failure of a parameter server is one more
 * device failing (restart replaces it like any other). */
#ifndef STRATA_FAILURES_H
#define STRATA_FAILURES_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/err.h"
#include "../core/failure_policy.h"
#include "../core/straggler.h"
#include "../core/timeline_marks.h"

/* Relaunch times measured at a few rank counts (strata calibrate): the
 * relaunch of ranks[i] ranks took s[i] seconds, ranks strictly increasing
 * from 1. Measured, not a line: on a machine of C cores, up to C ranks
 * start side by side and the next ones queue behind them, so a line fitted
 * at two counts misprices the others (2 cores: 1 rank 0.650 s, 2 ranks
 * 0.684 s, 3 ranks 0.910 s; docs/failures.md). */
#define FAILURE_MAX_RELAUNCH_POINTS 16
struct relaunch_points {
    int n;                                       /* 0 = none */
    int ranks[FAILURE_MAX_RELAUNCH_POINTS];
    double s[FAILURE_MAX_RELAUNCH_POINTS];
};

/* What each part of recovering costs, in seconds (cluster_failure_costs). */
struct failure_costs {
    double checkpoint_s;   /* writing one checkpoint: every rank its state */
    double load_s;         /* reading it back on a restart */
    double commit_s;       /* one in-memory commit (shrink) */
    double detect_s;       /* from a death to the job noticing it */
    double relaunch_s;     /* starting the processes again / re-forming the group */
    double relaunch_per_rank_s;   /* and for each rank started (workers and servers) */
    struct relaunch_points relaunch_at;   /* n > 0: these price a relaunch, not the line */
};

/* A relaunch of n_ranks ranks (workers and servers): with measured points,
 * piecewise-linear through them, the first point's time below it (fewer
 * ranks than measured cost no less: the job's start is most of it), and
 * beyond the last point the last segment's slope, taken as 0 when noise
 * tilted it down (more ranks never start sooner); one point prices every
 * count. Without points, relaunch_s + relaunch_per_rank_s x n_ranks. */
double failure_relaunch_s(const struct failure_costs *c, int n_ranks);

/* Text of points, "1:0.65,2:0.684,3:0.91" (RANKS:SECONDS, commas), to p:
 * 1 to FAILURE_MAX_RELAUNCH_POINTS entries, ranks integers from 1 to
 * 1048576 strictly increasing, seconds plain decimals from 0 to 1e6.
 * ERR_INPUT naming `what` (a key or variable), the text and what is
 * allowed; p is unchanged then. */
int failure_relaunch_points_parse(const char *text, const char *what, struct relaunch_points *p,
                                  struct err *e);

/* p as that text (%.17g: read back bit for bit) into buf (NUL-terminated
 * when n > 0); the length it needs, as snprintf. */
size_t failure_relaunch_points_format(const struct relaunch_points *p, char *buf, size_t n);

/* The job's failure-free run on n workers: its step durations, and what
 * each of its workers was busy over all its steps (the callee's arrays,
 * alive until the timeline calls again or returns). */
struct failure_run {
    const double *step_s;      /* [steps] seconds */
    const double *compute_s;   /* [n] each worker's compute; NULL = not known (not recorded) */
    const double *comm_s;      /* [n] its communication not hidden under compute; NULL: unknown */
    const int64_t *steps;      /* [n] its complete steps (asynchronous: its share of the job's
                                * steps x n); NULL = every worker ran every step */
};

/* The job's run on n_workers (shrink's fewer): fills *run. 0 or a negative code. */
typedef int (*failure_step_times_fn)(void *ctx, int n_workers, struct failure_run *run,
                                     struct err *e);

/* Who did the work that survived, the plan's worker by worker (the caller's
 * arrays, filled by the timeline). Shrink changes the job's workers, so its
 * time shares cannot be the failure-free run's: each surviving step counts
 * the busy time of the run it ran on (a worker's busy time over that run's
 * steps, divided by them: its mean step, as the timeline's steps are whole),
 * and a dead worker's time from its death is down. */
struct failure_busy {
    double *compute_s;   /* [n_workers] compute in steps whose work survived */
    double *comm_s;      /* [n_workers] communication in them, not hidden under compute */
    double *down_from_s; /* [n_workers] when it died and left the job; INFINITY = never */
    int64_t *steps;      /* [n_workers] surviving steps it ran (an asynchronous worker: its
                          * run's steps in the share of the job's steps that survived) */
    double *step_s;      /* [steps] each step's surviving run's duration */
};

struct failure_setup {
    enum failure_policy policy;      /* restart or shrink */
    struct failure_spec failure;     /* --fail; is_set false = none */
    double mtbf_s;                   /* per device; 0 = none */
    uint64_t seed;
    int n_workers;
    int n_servers;                   /* ranks relaunched beside the workers (ps-*) */
    int steps;
    int checkpoint_every;            /* 0 = never */
    int commit_every;                /* shrink; 0 = never (back to the start) */
    struct failure_costs costs;
    const double *step_s;            /* [steps] on n_workers */
    const double *compute_s, *comm_s;   /* [n_workers] their busy time over those steps
                                         * (struct failure_run); NULL = not known */
    const int64_t *worker_steps;        /* [n_workers] their steps (struct failure_run) */
    failure_step_times_fn step_times;   /* shrink: the run on fewer workers */
    void *ctx;
    struct failure_busy *busy;       /* shrink: where the surviving work is recorded (above);
                                      * NULL = not recorded */
    struct timeline_marks *marks;    /* where the timeline is recorded for the charts
                                      * (core/timeline_marks.h); NULL = not recorded */
};

struct failure_outcome {
    double total_s;        /* the run's end, failures and checkpoints included */
    double work_s;         /* steps whose work survived: sum of their last durations */
    int n_failures;
    int first_rank;        /* -1 when none happened */
    double first_time_s;
    double detect_s, relaunch_s, redone_s;   /* lost = their sum; relaunch includes loading */
    int steps_redone;
    double checkpoint_s;   /* writing checkpoints and commits, interrupted ones too */
    int n_workers_end;     /* shrink: the workers left */
    int final_first_step;  /* the step the job that finished the run started at: 0, or
                            * the rollback point of the last failure */
};

/* Replays the run's steps through its failures (above). ERR_INPUT for a
 * setup that cannot be (a policy other than restart or shrink, no steps'
 * durations); ERR_RUN when shrink has no worker left, or after 10^7
 * failures (failures so frequent that the job would not finish). The
 * caller checks --fail's rank against its plan. Deterministic: the same
 * setup gives the same outcome, bit for bit, marks recorded or not. With
 * s->marks, every step run, gap and death is appended there (a shrink's
 * drawn failure names the k-th surviving worker, so the charts' rows stay
 * the plan's ranks). */
int failure_timeline(const struct failure_setup *s, struct failure_outcome *out, struct err *e);

/* The time lost, detect + relaunch + redone. */
double failure_lost_s(const struct failure_outcome *o);

/* Share of the run's time on work that survives: work_s / total_s (1 for an
 * empty run). */
double failure_goodput(const struct failure_outcome *o);

/* The exponential draws of --mtbf: one stream from the run's seed (salted:
 * not the stragglers' nor the jitter's), next_gap_s the time to the next
 * failure of n devices each of mean mtbf_s, pick the failed one. */
struct failure_draws;
struct failure_draws *failure_draws_create(uint64_t seed, struct err *e);
void failure_draws_free(struct failure_draws *d);
double failure_draws_gap_s(struct failure_draws *d, double mtbf_s, int n_devices);
int failure_draws_pick(struct failure_draws *d, int n_devices);

#endif
