/* strata compare's work: several strategies on one scenario, each with its
 * speedup over the same scenario on one device, simulated (compare_run_sim:
 * run_simulate against run_baseline) or executed (compare_run_real: one MPI
 * job a strategy, real_job_run, against a real one-rank baseline). `strata
 * compare` prints the table; the caller writes the files.
 *
 * A strategy the scenario does not fit (more stages than layers, say) is a
 * note of the comparison, not its failure; so is a strategy whose run
 * fails, counted apart. */
#ifndef STRATA_BENCH_COMPARE_H
#define STRATA_BENCH_COMPARE_H

#include <stdbool.h>

#include "../core/config.h"
#include "../core/err.h"
#include "../core/report.h"
#include "../core/workload.h"
#include "../strategies/strategy.h"
#include "run.h"

/* "name: why it did not run" */
#define COMPARE_NOTE_BYTES (ERR_MSG_BYTES + 64)

struct compare {
    int n;                          /* strategies that ran, in the order of the list */
    const struct report **reports;  /* [n]: into sim_runs or real_docs */
    double *speedup;                /* [n]: throughput over the baseline's */
    const struct report *base;      /* the one-device baseline's report */
    struct sim_run **sim_runs;      /* simulated here: [n], owned; NULL when real or when the
                                     * strategies ran in workers (compare_run_spread) */
    struct sim_run sim_base;        /* simulated: the baseline run (always here) */
    struct report_doc *real_docs;   /* real, or simulated in workers: [n], owned, each the
                                     * report as it came back; NULL otherwise */
    char (*plan_notes)[160];        /* simulated: [n], the plan's note ("" none) */
    bool *exceeds_memory;           /* simulated: [n], run_exceeds_memory */
    struct report_doc real_base;    /* real: the baseline job's report */
    int n_notes;                    /* strategies that did not run */
    char (*notes)[COMPARE_NOTE_BYTES];
    int n_unfit;                    /* of those, the scenario did not fit (ERR_INPUT) */
    int n_failed;                   /* of those, the run failed */
};

/* Called before each run: strategy NULL for the baseline; done counts the
 * strategies run before this one, of total. */
typedef void (*compare_progress_fn)(void *ctx, const char *strategy, int done, int total);

/* Simulates the baseline, then each of list[0..n) on cfg and wl, keeping
 * keep_steps steps of spans in each run (run_simulate). numerics: what the
 * runs share (bench/run_numerics.h), or NULL: each computes its own. Fails
 * (the message in e) only when the baseline cannot run, or out of memory.
 * *out is the caller's to compare_release either way. */
int compare_run_sim(const struct config *cfg, const struct workload *wl,
                    const struct strategy *const *list, int n, int keep_steps,
                    struct run_numerics *numerics, compare_progress_fn progress, void *ctx,
                    struct compare *out, struct err *e);

/* --jobs when not given: one per online core (as sweep's). */
int compare_default_jobs(void);

/* As compare_run_sim, with the same result byte for byte, the strategies
 * run in n_jobs forked worker processes (compare_jobs.c) while this process
 * simulates the baseline: each strategy's report comes back as JSON
 * (sim_runs stays NULL, real_docs holds them). Only when n_jobs > 1, no
 * spans are kept (keep_steps 0: --trace, --timeline, --plot and --html
 * need the runs themselves) and there are two strategies or more;
 * otherwise compare_run_sim. With workers, progress is called as each
 * strategy's run ends rather than before it, and not for the baseline. */
int compare_run_spread(const struct config *cfg, const struct workload *wl,
                       const struct strategy *const *list, int n, int keep_steps, int n_jobs,
                       struct run_numerics *numerics, compare_progress_fn progress, void *ctx,
                       struct compare *out, struct err *e);

/* Runs the baseline for real on one rank, then each of list[0..n) on np
 * ranks, each as its own MPI job (real_job_run). Fails as compare_run_sim. */
int compare_run_real(const struct config *cfg, const struct workload *wl,
                     const struct strategy *const *list, int n, int np,
                     compare_progress_fn progress, void *ctx, struct compare *out, struct err *e);

void compare_release(struct compare *c);

#endif
