/* strata validate: the simulator's prediction held against a measured run
 * of the same scenario, strategy by strategy.
 *
 * A row compares two reports of one strategy: the simulated one (mode
 * "sim", on a --cluster profile) and the real one (mode "real", an MPI job).
 * The step time of each is its report's median step (step_time_s.p50): a
 * real run's first step pays for first touches of memory, and a shared
 * machine adds stalls to a few others; the median is what a steady step
 * takes, in both. error = predicted / measured - 1 (ARCHITECTURE.md,
 * Reports): +0.1 predicts 10% too slow, -0.1 10% too fast. */
#ifndef STRATA_BENCH_VALIDATE_H
#define STRATA_BENCH_VALIDATE_H

#include <cjson/cJSON.h>

#include "../core/config.h"
#include "../core/err.h"
#include "../core/report.h"
#include "../core/workload.h"
#include "../strategies/strategy.h"
#include "run.h"

struct validate_row {
    char strategy[64];
    double predicted_step_s;         /* predicted->step_time_s.p50 */
    double measured_step_s;          /* measured->step_time_s.p50 */
    double error;                    /* predicted / measured - 1 */
    const struct report *predicted;  /* borrowed */
    const struct report *measured;   /* borrowed */
};

/* The row of a prediction and a measurement. ERR_INPUT when they are of
 * different strategies or device counts, or a step time is not a finite
 * number > 0 (no error can be computed). */
int validate_row(const struct report *predicted, const struct report *measured,
                 struct validate_row *row, struct err *e);

/* The median of |error| over rows[0..n); NaN when n is 0. */
double validate_median_abs_error(const struct validate_row *rows, int n);

/* { "strata_validate": 1, "rows": [ { "strategy", "predicted_step_s",
 * "measured_step_s", "error", "predicted": report, "measured": report } ] }
 * (a non-finite number as null, as report.c writes them); NULL on out of
 * memory. */
cJSON *validate_to_json(const struct validate_row *rows, int n);

/* That document to path, atomically. */
int validate_write_json(const struct validate_row *rows, int n, const char *path,
                        struct err *e);

/* One strategy both ways. */
struct validate_run {
    struct sim_run sim;              /* the prediction */
    struct report_doc real;          /* the measurement: one report */
    struct validate_row row;         /* of the two; borrows from both */
};

/* Simulates strategy st on cfg's scenario with np workers on cfg->cluster,
 * then runs it for real as its own MPI job (bench/real_job.h; strata_bin as
 * there), and makes the row. ERR_INPUT (naming the option) when the scenario
 * does not fit the strategy, before anything runs for real. Release with
 * validate_run_release whatever it returned. */
int validate_strategy(const struct config *cfg, const struct workload *wl,
                      const struct strategy *st, int np, const char *strata_bin,
                      struct validate_run *out, struct err *e);
void validate_run_release(struct validate_run *v);

#endif
