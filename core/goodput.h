/* Goodput planning: how often to checkpoint, in closed form, and the model
 * (checkpoint cost, restart cost, job MTBF, step time) that a set of reports
 * implies, for the goodput plot to hold the simulated points against.
 *
 * The model (Young 1974, "A first order approximation to the optimum
 * checkpoint interval", CACM 17(9); Daly 2006, "A higher order estimate of
 * the optimum checkpoint interval for restart dumps", FGCS 22(3)):
 *   - failures of the job arrive as a Poisson process of mean interval M
 *     (the job MTBF), and only one is in progress at a time;
 *   - every tau seconds of work the job stops to write a checkpoint, which
 *     takes C seconds (tau counts work only, not the writing);
 *   - a failure costs a restart R (detection, relaunch, loading) plus the
 *     work since the last checkpoint, on average tau / 2;
 *   - C, R and tau are small against M (first order: terms in C/M, tau/M
 *     beyond the first are dropped).
 * Then the share of time lost is C/tau + (tau/2 + R)/M and
 *   goodput(tau) = 1 - C/tau - tau/(2M) - R/M,
 * the 1 - C/tau - tau/(2M) plus the restart term R/M, which shifts
 * the curve down without moving its optimum tau* = sqrt(2 C M).
 * Everything here is in seconds unless a name says steps. */
#ifndef STRATA_GOODPUT_H
#define STRATA_GOODPUT_H

#include <stdbool.h>

#include "report.h"

/* The job's MTBF: n devices failing independently, each exponentially with
 * mean device_mtbf_s; the first of them fails at rate n / device_mtbf_s, so
 * M = device_mtbf_s / n. NaN when n < 1 or the MTBF is not positive. */
double goodput_job_mtbf_s(double device_mtbf_s, long long n_devices);

/* Young's optimum interval tau* = sqrt(2 C M), the maximum of the first-order
 * goodput. 0 when C is 0 (free checkpoints: as often as possible); NaN when
 * M is not positive and finite. */
double goodput_young_interval_s(double checkpoint_s, double job_mtbf_s);

/* Daly's higher-order optimum: for C < 2M,
 *   tau = sqrt(2 C M) (1 + sqrt(C / 2M) / 3 + (C / 2M) / 9) - C,
 * and M when C >= 2M (checkpointing barely pays). Close to Young's while
 * C << M; NaN where Young's is. */
double goodput_daly_interval_s(double checkpoint_s, double job_mtbf_s);

/* The first-order goodput 1 - C/tau - tau/(2M) - R/M at interval tau > 0
 * (restart_s = 0 gives the form). May be negative far from the
 * optimum, where the first order no longer holds; NaN when tau or M is not
 * positive. */
double goodput_first_order(double interval_s, double checkpoint_s, double restart_s,
                           double job_mtbf_s);

/* An interval in steps as seconds of work, and back, at step_s a step
 * (--checkpoint-every counts steps; the closed forms count seconds). */
double goodput_steps_to_s(double steps, double step_s);
double goodput_s_to_steps(double interval_s, double step_s);

/* The model a set of reports (one strategy's points, say) implies. */
struct goodput_model {
    double step_s;           /* one step without failures: the least of the reports' p50s */
    double checkpoint_s;     /* C: checkpoint time over checkpoints written; 0 = none measured */
    double restart_s;        /* R per failure: detection + relaunch */
    double job_mtbf_s;       /* M; NaN when unknown (no --mtbf and no failure seen) */
    bool is_mtbf_observed;   /* M is the run time over the failures seen, not --mtbf */
    int n_failures;          /* over the reports */
};

/* Fills m from rs[0..n). M from --mtbf (the reports' config: per device,
 * hours) when given, else observed: the runs' time (steps x batch over
 * throughput) over their failures. Checkpoints written: (steps - 1) /
 * --checkpoint-every per report (after every K steps but the last, as
 * sim/failures.h writes them). Reports without a config or a failure
 * section add what they can. Returns false when nothing usable was found
 * (no report with a step time). */
bool goodput_model_of(const struct report *const *rs, int n, struct goodput_model *m);

/* Does r inform a strategy's model (goodput_model_of)? Every run with a
 * failure section, a checkpoint interval or not: the sweep's note under
 * its table and the goodput plot take the same runs, so they state the
 * same model. */
bool goodput_informs_model(const struct report *r);

#endif
