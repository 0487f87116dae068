/* Runs a lab (core/lab_file.h): each [run NAME] scenario is compared as
 * `strata compare` would (compare_run_sim, or compare_run_real for
 * --mode real), and the lab's expressions read the resulting reports.
 *
 * A name in a lab expression is RUN.WHO.FIELD:
 *   RUN    a [run NAME] of the lab
 *   WHO    a strategy of that run, or "baseline" (the one-device run)
 *   FIELD  a path into the report's JSON (docs/metrics.md):
 *          step_time_s.mean, throughput_samples_per_s, final.test_accuracy,
 *          staleness.max, memory_bytes_per_device.peak, failure.goodput,
 *          per_rank.0.idle_s (array index; -1 is the last element) ...
 *          or one of the figures a report has not: speedup (over the
 *          baseline), exceeds_memory (1 when the peak memory per device is
 *          more than the cluster's device holds, else 0), pushes (the
 *          staleness histogram's total: updates a parameter server applied).
 * A JSON null reads as NaN. */
#ifndef STRATA_BENCH_LAB_RUN_H
#define STRATA_BENCH_LAB_RUN_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "../core/config.h"
#include "../core/err.h"
#include "../core/lab_file.h"
#include "../core/workload.h"
#include "compare.h"

struct lab_run_result {
    const struct lab_run *run;   /* borrowed from the lab */
    struct config cfg;
    struct workload *wl;
    struct compare c;
    bool is_real;
    cJSON **reports;             /* [c.n]: each report as JSON, for lookups */
    cJSON *baseline;
};

struct lab_result {
    const struct lab *lab;       /* borrowed */
    int n;
    struct lab_run_result *runs; /* [n], owned */
};

/* Called before each scenario of the lab: run's name, its index of n. */
typedef void (*lab_progress_fn)(void *ctx, const char *run, int i, int n);

/* ERR_INPUT when is_real and lab has no real version (its file says
 * 'real = yes' when it has): what lab_run checks first, for a caller that
 * prints before it runs. */
int lab_check_mode(const struct lab *lab, bool is_real, struct err *e);

/* What can be checked of lab's expressions before anything runs, so a typo
 * is refused at once and not after every run: each [explain] and [check]
 * line's syntax and formats, its RUN names and the strategies it names (a
 * run's strategy or strategies option, or 'baseline'); each run's options
 * are read on the way. ERR_INPUT names the lab file and line. FIELD paths
 * need the reports: lab_result_lookup checks them after the runs. */
int lab_check_exprs(const struct lab *lab, struct err *e);

/* Runs every scenario of lab, simulated, or for real when is_real (the lab
 * must have real = yes), after lab_check_exprs. ERR_INPUT names the lab
 * file and line of an option that is unknown or malformed; a strategy that
 * did not run is an error too (a lab's figures would be missing). *out
 * is the caller's to release. */
int lab_run(const struct lab *lab, bool is_real, lab_progress_fn progress, void *ctx,
            struct lab_result *out, struct err *e);
void lab_result_release(struct lab_result *r);

/* The value of option o of lab as a run uses it: a cluster profile named
 * without a directory ("cluster = wan.profile") lies beside the lab file,
 * wherever strata is run from, so it becomes that path (in buf, n bytes). */
const char *lab_option_value(const struct lab *lab, const struct lab_option *o, char *buf,
                             size_t n);

/* The lab_lookup_fn (core/lab_expr.h) over a result: ctx is the result. */
int lab_result_lookup(void *ctx, const char *name, double *value, struct err *e);

#endif
