/* strata validate: the simulator's prediction held against measured runs,
 * over a matrix of cells (model x rank count x straggler model), strategy
 * by strategy.
 *
 * A row compares two reports of one strategy in one cell: the simulated one
 * (mode "sim", on a --cluster profile) and a real one (mode "real", an MPI
 * job). The step time of each is its report's median step (step_time_s.p50):
 * a real run's first step pays for first touches of memory, and a shared
 * machine adds stalls to a few others; the median is what a steady step
 * takes, in both. With --repeat R the measured step is the median of the R
 * runs' p50s, and the row keeps the report of the run at that median (the
 * lower middle one for even R). With --fail both sides count the job that
 * finished the run: its workers, and the saves between its steps
 * (validate_failure_step_s). error = predicted / measured - 1
 * (ARCHITECTURE.md, Reports): +0.1 predicts 10% too slow, -0.1 10% too fast.
 * The metrics themselves are validate_metrics.h's. */
#ifndef STRATA_BENCH_VALIDATE_H
#define STRATA_BENCH_VALIDATE_H

#include <cjson/cJSON.h>

#include "../core/config.h"
#include "../core/err.h"
#include "../core/report.h"
#include "../core/workload.h"
#include "../strategies/strategy.h"
#include "run.h"
#include "validate_failure.h"
#include "validate_metrics.h"

struct validate_row {
    char strategy[64];
    int cell;                        /* index of its validate_cell */
    double predicted_step_s;         /* predicted->step_time_s.p50; with --fail
                                      * validate_failure_step_s */
    double measured_step_s;          /* median over the measured runs of their p50 */
    double error;                    /* predicted / measured - 1 */
    double staleness_tvd;            /* of the two staleness histograms; NaN unless ps-async/ps-ssp */
    const double *measured_runs_s;   /* [n_measured_runs] each run's p50, borrowed; NULL = the one */
    int n_measured_runs;
    const struct report *predicted;  /* borrowed */
    const struct report *measured;   /* borrowed: the run at the median */
    const struct validate_failure *failure;   /* borrowed; NULL without --fail */
};

/* The row of a prediction and a measurement (one run; cell 0). ERR_INPUT
 * when they are of different strategies or device counts (a measured run
 * that shrank, or continued without its dead worker, reports the workers
 * it ended with: it is compared with the simulation of the devices it
 * started with), or a step time is
 * not a finite number > 0 (no error can be computed). The staleness TVD is
 * computed for the asynchronous strategies (POLICY_ASYNC, POLICY_SSP), whose
 * staleness the simulator must predict; synchronous ones are 0 by design. */
int validate_row(const struct report *predicted, const struct report *measured,
                 struct validate_row *row, struct err *e);

/* The median of |error| over rows[0..n); NaN when n is 0. */
double validate_median_abs_error(const struct validate_row *rows, int n);

struct validate_cell {
    char model[256];                 /* --model spec */
    int np;                          /* ranks that compute */
    char straggler[256];             /* --straggler spec */
    bool is_undisturbed;             /* the straggler model is none */
    /* With --hostfile each cell runs twice: ranks across the hostfile's
     * hosts (intra- and inter-node links; simulated on the profile's
     * devices_per_node), and ranks on this machine alone (one node: intra
     * links only; simulated with every rank on one node). */
    bool is_across_hosts;
    int first_row, n_rows;           /* its rows in the matrix */
    double kendall_tau;              /* tau-b of the strategies' predicted vs measured step
                                      * times; NaN with fewer than 2 rows */
};

/* One straggler's cost, predicted against measured, for one strategy: the
 * cell `disturbed` against the undisturbed cell of the same model and np. */
struct validate_inflation {
    int cell_undisturbed, cell_disturbed;
    char strategy[64];
    double predicted_ratio, measured_ratio;  /* disturbed / undisturbed step time */
    double error;                            /* predicted_ratio / measured_ratio - 1 */
};

struct validate_summary {
    int n_rows;
    double median_abs_error, p90_abs_error;   /* of rows' |error| */
    bool has_inflation;          /* some cell has an undisturbed partner; else n/a */
    int n_inflation;
    struct validate_inflation *inflation;     /* [n_inflation], owned */
    double inflation_median_abs_error, inflation_max_abs_error;
    int n_ranked_cells;          /* cells with a defined Kendall tau */
    double kendall_tau_mean;     /* over those; NaN when none */
    int n_staleness;             /* rows with a staleness TVD */
    double staleness_tvd_max;    /* NaN when none */
    int n_failure;               /* rows with a failure (--fail) whose error is defined */
    double failure_median_abs_error, failure_max_abs_error;   /* of their time lost; NaN when none */
};

struct validate_matrix {
    struct validate_cell *cells;      /* [n_cells], owned */
    int n_cells;
    struct validate_row *rows;        /* [n_rows], owned; rows of a cell are contiguous */
    int n_rows;
    int repeat;                       /* measured runs a row */
    bool has_hostfile;                /* --hostfile: cells in pairs, one host and across hosts */
    struct validate_load load;
    struct validate_summary summary;  /* validate_summarize fills it */
};

/* Fills every cell's kendall_tau and m->summary from the cells and rows.
 * ERR_NOMEM only. */
int validate_summarize(struct validate_matrix *m, struct err *e);

/* Frees what validate_summarize allocated. The cells and rows are the
 * caller's. */
void validate_summary_release(struct validate_summary *s);

/* { "strata_validate": 2, "load": {...}, "repeat": R, "cells": [ { "model",
 * "np", "straggler", "kendall_tau", "rows": [ { "strategy",
 * "predicted_step_s", "measured_step_s", "measured_runs_step_s": [...],
 * "error", "breakdown": { "predicted": {compute, comm, idle}, "measured":
 * {...} }, "staleness": { "predicted": [...], "measured": [...], "tvd" } |
 * null, "failure": { "policy", "predicted": { "lost_s", "detect_s",
 * "relaunch_s", "redone_s", "steps_redone" }, "measured": {...},
 * "measured_runs_lost_s": [...], "error" } | null (without --fail),
 * "predicted": report, "measured": report } ] } ], "summary": {...,
 * "failure": { "rows", "median_abs_error", "max_abs_error" } | null } }
 * (a non-finite number as null, as report.c writes them; docs in
 * docs/validation.md); NULL on out of memory. */
cJSON *validate_to_json(const struct validate_matrix *m);

/* That document to path, atomically. */
int validate_write_json(const struct validate_matrix *m, const char *path, struct err *e);

/* One strategy both ways. */
struct validate_run {
    struct sim_run sim;              /* the prediction */
    struct report_doc *real;         /* [n_real] the measurements, one report each */
    double *real_step_s;             /* [n_real] their p50s, in run order */
    int n_real;
    struct validate_row row;         /* of the two; borrows from both */
    struct validate_failure failure; /* with --fail: row.failure points here */
};

/* Simulates strategy st on cfg's scenario with np workers on cfg->cluster,
 * then runs it for real `repeat` times, each as its own MPI job
 * (bench/real_job.h; strata_bin as there), and makes the row; with --fail,
 * its failure too (cfg's --on-failure: one policy, validate_failure.h). ERR_INPUT
 * (naming the option) when the scenario does not fit the strategy, before
 * anything runs for real. Release with validate_run_release whatever it
 * returned. */
int validate_strategy(const struct config *cfg, const struct workload *wl,
                      const struct strategy *st, int np, int repeat, const char *strata_bin,
                      struct validate_run *out, struct err *e);
void validate_run_release(struct validate_run *v);

#endif
