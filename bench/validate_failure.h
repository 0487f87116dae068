/* strata validate --fail R@STEP: what a failure costs, simulated against
 * measured, for each --on-failure policy that applies (core/failure_policy.h).
 *
 * Both sides count the same things (docs/metrics.md, "Failures"): a rank
 * that dies as it starts step S, the last checkpoint (restart) or commit
 * (shrink) at step C, loses
 *
 *   detect    from the death to the job noticing it (the simulator: the
 *             profile's detect_s; real: the supervisor's poll, job_watch)
 *   relaunch  from the relaunch to the new job's aligned start, loading
 *             the checkpoint included (restart_s plus the checkpoint's
 *             size over ckpt_read_bw_bytes_per_s; real: mpirun, MPI, data
 *             and checkpoint load, measured by the supervisor)
 *   redone    steps C..S-1, run again: their step times (the simulator's
 *             from its step times, real from the ranks' heartbeats)
 *
 * and lost = detect + relaunch + redone; checkpoint writes are the run's
 * cost failure or not, and are not in it. The measured figures of R runs
 * are each part's median over the runs (so the parts need not add up to
 * the median lost, which is its own median). error = predicted lost /
 * measured lost - 1, as a step time's.
 *
 * continue: an MPI job cannot outlive a dead rank, so strata's real
 * continue relaunches the survivors from the servers' last commit
 * (real/supervise.h) and loses what shrink loses: the work since that
 * commit, detection and a relaunch of the survivors and the servers. The
 * simulator's own continue (the event loop's: the dead worker retires and
 * the others take its work, nothing lost) is what a parameter-server system
 * that outlives a worker does, and stays what `strata sim` answers; the
 * prediction held against a real continue is the timeline's shrink, under
 * continue's name (validate_failure_simulate).
 *
 * The step-time row of a failure run counts, on both sides, the median
 * step of the job that finished the run (validate_failure_step_s): a real
 * report covers only its last job, the one relaunched after the failure,
 * whose steps are on the workers it had (after shrink or continue, the
 * survivors: one worker computes what two did) and include the saves its
 * ranks wrote between steps (real/supervise.h: shrink's and continue's
 * commits are checkpoint files, written every --commit-every steps, 1 by
 * default, so every step of the job holds one). Quiet on 2 cores that
 * measured 13.2 ms a step (4.6 ms of compute, the rest the commit) against
 * the 2.56 ms that the prediction's two-worker, save-free step said; what a
 * failure costs beyond that is the failure table's. */
#ifndef STRATA_BENCH_VALIDATE_FAILURE_H
#define STRATA_BENCH_VALIDATE_FAILURE_H

#include "../core/config.h"
#include "../core/failure_policy.h"
#include "../core/report.h"
#include "../core/workload.h"
#include "../strategies/strategy.h"
#include "run.h"

struct validate_lost {
    double lost_s, detect_s, relaunch_s, redone_s;
    double steps_redone;             /* a median of R runs may fall between two counts */
};

struct validate_failure {
    enum failure_policy policy;
    struct validate_lost predicted, measured;
    double *measured_runs_lost_s;    /* [n_measured_runs] owned, in run order */
    int n_measured_runs;
    double error;                    /* predicted.lost_s / measured.lost_s - 1; NaN when 0 measured */
};

/* The policies validate runs with --fail for strategy st on np workers
 * (cfg's scenario): --on-failure's when given (ERR_INPUT when it cannot
 * apply, its message naming --on-failure), else each of restart, shrink,
 * continue that applies, in that order. out[3], *n. */
int validate_failure_policies(const struct config *cfg, const struct workload *wl,
                              const struct strategy *st, int np, enum failure_policy *out, int *n,
                              struct err *e);

/* The comparison of a simulated report and n >= 1 measured ones (each with
 * a failure section: ERR_RUN naming the run when one has none, the
 * failure never happened). */
int validate_failure_compare(const struct report *predicted, const struct report *const *measured,
                             int n, struct validate_failure *out, struct err *e);
void validate_failure_release(struct validate_failure *f);

/* The simulation of cfg (its devices the real run's) that validate holds
 * against a real run: run_simulate's, except that a failure under continue
 * is predicted as the real supervisor carries it out (above): the timeline
 * of shrink from the last commit, the report and its config still saying
 * continue. */
int validate_failure_simulate(const struct config *cfg, const struct strategy *st,
                              const struct workload *wl, struct sim_run *out, struct err *e);

/* The predicted step of a failure row, as the real report of the job that
 * finished the run counts it: the median (the report's p50: nearest rank)
 * of that job's steps as the simulator ran them (sim->final_step_s, on its
 * workers), each after a save with the save's time added, a save being
 * written as real runs write it: a checkpoint (the profile's
 * ckpt_write_bw_bytes_per_s) after every --checkpoint-every steps under
 * restart, every --commit-every steps under shrink and continue. NaN when
 * sim has no such job (no failure, or continue's event loop): the report's
 * p50 stands. */
double validate_failure_step_s(const struct sim_run *sim);

#endif
