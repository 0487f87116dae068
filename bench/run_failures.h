/* The failure side of a simulated run (docs/metrics.md, "Failures"): the
 * --on-failure policy made concrete, what the event loop carries out
 * (continue: simulate.h) and what the step timeline replays (restart and
 * shrink, with the checkpoints' and commits' cost: sim/failures.h). */
#ifndef STRATA_BENCH_RUN_FAILURES_H
#define STRATA_BENCH_RUN_FAILURES_H

#include <stdbool.h>

#include "../core/analysis.h"
#include "../core/config.h"
#include "../core/failure_policy.h"
#include "../sim/failures.h"
#include "../sim/simulate.h"
#include "../strategies/strategy.h"

struct run_failures {
    enum failure_policy policy;
    bool has_failures;        /* --fail or --mtbf */
    bool is_timeline;         /* restart or shrink, with failures or checkpoints */
    struct failure_spec spec; /* --fail */
    double *step_end_s;       /* [steps + 1] (what numerics wants), owned: the step ends */
    struct failure_outcome outcome;   /* the timeline's, when is_timeline */
    struct timeline_marks *marks;     /* the caller's, where the replay records the
                                       * timeline for the charts; NULL = not wanted */
    /* The job that finished the run, after a failure (restart, shrink):
     * the durations of its steps final_first_step .. steps - 1 on its
     * workers, saves not included (a copy, owned; NULL without failure). */
    double *final_step_s;
    int n_final_steps;
    /* shrink: who did the surviving work (sim/failures.h), arrays owned */
    struct failure_busy busy;
    bool has_busy;
};

/* Resolves --on-failure for the plan in setup and sets the setup's
 * failures: continue's go to the event loop, the others to the timeline
 * (setup then has none, and step_end_s to fill). ERR_INPUT from
 * failure_policy_resolve, and for --fail or --mtbf with --numerics. */
int run_failures_prepare(const struct config *cfg, struct sim_setup *setup,
                         struct run_failures *rf, struct err *e);

/* After the event loop, whose spans analysis a holds (all in): the
 * timeline (when is_timeline) over its step times, recorded in rf->marks
 * when set; shrink simulates the plan of st again on fewer workers, and
 * records who did the surviving work. */
int run_failures_replay(struct run_failures *rf, const struct config *cfg,
                        const struct strategy *st, const struct workload *wl,
                        const struct sim_setup *setup, const struct sim_result *res,
                        struct analysis *a, struct err *e);

/* The run's end: the timeline's, else the event loop's makespan. */
double run_failures_end_s(const struct run_failures *rf, const struct sim_result *res);

/* Moves the final job's step durations out of rf (NULL, 0 when none):
 * the caller frees *step_s. */
void run_failures_take_final_steps(struct run_failures *rf, double **step_s, int *n);

/* r's failure section (null unless a failure happened or --mtbf is set);
 * after a shrink, r's per-worker times, breakdown and step percentiles as
 * the timeline ran the steps (r filled by analysis_finish at the timeline's
 * end). */
void run_failures_report(const struct run_failures *rf, const struct sim_result *res,
                         const struct config *cfg, struct report *r);

void run_failures_release(struct run_failures *rf);

#endif
