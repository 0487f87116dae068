/* Numerics for simulated runs (sim/numerics.h), as run_simulate uses them:
 * when they are wanted, the data set they train on, and the synchronous
 * step sequence, computed once and shared by every synchronous strategy of
 * a comparison (they all compute it: the real-run tests prove it).
 *
 * What runs share lives in a struct run_numerics that the command creates,
 * passes to each run and frees: no state outlives it. Each shared thing is
 * kept with the inputs it was computed from (the data set with data_load's
 * arguments, the sequence with its struct numerics_setup), so a run whose
 * inputs differ computes its own, whatever option made them differ. */
#ifndef STRATA_BENCH_RUN_NUMERICS_H
#define STRATA_BENCH_RUN_NUMERICS_H

#include <stdbool.h>

#include "../core/config.h"
#include "../core/report.h"
#include "../sim/numerics.h"
#include "../sim/simulate.h"

/* --numerics, or a question only numerics answer (--target-accuracy). */
bool run_wants_numerics(const struct config *cfg);

/* What one command's runs share; create once, pass to every run, free. */
struct run_numerics;
struct run_numerics *run_numerics_create(struct err *e);
void run_numerics_free(struct run_numerics *n);   /* accepts NULL */

/* Loads cfg's data set into n (kept for the runs that follow) and checks
 * that wl takes its samples: what a command whose runs would each refuse
 * a wrong --data or --model calls once, first. */
int run_numerics_load(struct run_numerics *n, const struct config *cfg,
                      const struct workload *wl, struct err *e);

/* Simulates setup with numerics for cfg and wl, filling res and r's
 * loss_curve, accuracy_curve, final and time_to_accuracy_s. shared: the
 * command's run_numerics, or NULL for a run on its own (what it needs is
 * computed for it and freed). */
int run_simulate_numerics(struct run_numerics *shared, const struct config *cfg,
                          const struct workload *wl, struct sim_setup *setup,
                          struct analysis *a, struct trace *t, struct sim_result *res,
                          struct report *r, struct err *e);

/* Seconds the numerics of comparing every strategy on cfg would add, on
 * one core, roughly (a conservative 30 GFLOP/s, the data set's loading, the
 * evaluations): what bare `strata` weighs against its time budget. */
double run_numerics_estimate_s(const struct config *cfg, const struct workload *wl);

#endif
