/* One scenario, start to report: the config and workload become a plan, a
 * laid-out cluster, a simulation and its analysis. `strata sim` runs one;
 * `strata compare` runs one per strategy plus the one-device baseline. */
#ifndef STRATA_BENCH_RUN_H
#define STRATA_BENCH_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "../core/config.h"
#include "../core/report.h"
#include "../core/timeline_marks.h"
#include "../core/trace.h"
#include "../sim/cluster.h"
#include "../sim/simulate.h"
#include "../strategies/strategy.h"

/* Option groups that shape a simulated run: what its report's "config" holds. */
#define RUN_CONFIG_GROUPS (OPTG_SCENARIO | OPTG_STRATEGY | OPTG_RUN | OPTG_SIM | OPTG_DISTURB)

struct sim_run {
    struct config cfg;          /* the scenario, with cfg.strategy set to the run's strategy */
    struct plan *plan;
    struct cluster cluster;
    struct sim_result result;
    struct report report;
    struct trace trace;         /* kept spans: the first keep_steps steps */
    struct timeline_marks marks;   /* failures on the timeline, when spans are kept:
                                    * marks.laid is what the charts draw when
                                    * timeline_marks_has_runs (run_drawn_spans) */
    /* After a failure under restart or shrink, the job that finished the
     * run: its steps' durations on its workers from final_first_step on,
     * saves not included (run_failures.h); NULL, 0 otherwise. validate
     * counts a failure row's step time from it (validate_failure.h). */
    double *final_step_s;       /* [n_final_steps], owned */
    int n_final_steps;
    int final_first_step;
    int final_n_workers;
};

struct run_numerics;   /* bench/run_numerics.h: what a command's numerics runs share */

/* Simulates strategy st on cfg and wl. keep_steps: steps whose spans are
 * kept in run->trace (0 = none, -1 = all). numerics: the command's shared
 * numerics (run_numerics_create), or NULL when this run is the only one that
 * needs them; unused when cfg asks for no numerics. ERR_INPUT (naming the
 * option) when the scenario does not fit the strategy or an option's text is
 * malformed. */
int run_simulate(const struct config *cfg, const struct strategy *st, const struct workload *wl,
                 int keep_steps, struct run_numerics *numerics, struct sim_run *run,
                 struct err *e);
/* run_simulate with a watcher: on_step (may be NULL) is told each step the
 * simulation ends (struct sim_setup's on_step), for a progress line. */
struct run_watch {
    sim_step_fn *on_step;
    void *ctx;
};
int run_simulate_watched(const struct config *cfg, const struct strategy *st,
                         const struct workload *wl, int keep_steps,
                         struct run_numerics *numerics, struct run_watch watch,
                         struct sim_run *run, struct err *e);
void run_release(struct sim_run *run);

/* The spans a chart of run draws: the kept trace, or, when failures were
 * replayed over it (restart, shrink), the trace laid over the job's time
 * line (run->marks.laid). */
const struct span *run_drawn_spans(const struct sim_run *run, size_t *n);

/* The baseline's scenario (docs/metrics.md): cfg on one device (--devices
 * and --np 1) with strategy_baseline(), the same model, batch and cluster,
 * no failure (no --fail, no --mtbf, --on-failure auto), and of the slow ranks of --straggler only rank 0's. */
int run_baseline_config(const struct config *cfg, struct config *one, struct err *e);

/* The baseline every speedup is measured against: the same scenario on one
 * device, where every strategy is the same single-device training. */
int run_baseline(const struct config *cfg, const struct workload *wl,
                 struct run_numerics *numerics, struct sim_run *run, struct err *e);

/* The line under a table that says what speedup is measured against: cfg's
 * baseline (run_baseline_config), its step time, and whether it was
 * measured or simulated. */
void run_print_baseline_note(FILE *out, const struct config *cfg, double step_s,
                             bool is_measured);

/* True when the run's peak memory per device exceeds the cluster device's
 * capacity: the plan would not fit on that hardware. */
bool run_exceeds_memory(const struct sim_run *run);

/* throughput / the baseline's throughput: for synchronous strategies the
 * ratio of step times, for asynchronous ones of samples per second. */
double run_speedup(const struct sim_run *run, const struct sim_run *baseline);

#endif
