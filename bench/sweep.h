/* Sweeps: one option varied over a list of values (--vary OPTION=V1,V2,...),
 * every strategy run at every value, simulated (run_simulate) or for real
 * (real_job_run, one MPI job a point), with speedup and scaling efficiency
 * per point. `strata sweep` prints the grid; sweep_write_csv and
 * sweep_write_json write it (ARCHITECTURE.md, Reports: strata_sweep).
 *
 * Speedup and efficiency (the column footers of `strata sweep` say the same):
 *   devices, strong scaling (the global batch B stays):
 *     speedup    = throughput(N) / throughput(one device, batch B)
 *     efficiency = speedup / N
 *   devices, weak scaling (b = B / first devices value samples per device;
 *   the point at N devices runs batch b N):
 *     speedup    = throughput(N) / throughput(one device, batch b)
 *     efficiency = T1 / TN, the one-device step time over the step time on N
 *                  (for synchronous strategies also speedup / N)
 *   any other option, at value v (V1 = the first value):
 *     speedup    = throughput(strategy, v) / throughput(strategy, V1)
 *     efficiency = throughput(strategy, v) / (N x throughput(one device, v))
 * The one-device baseline is mirrored on one device (run_baseline; for real
 * sweeps a real one-rank mirrored job), where every strategy is the same
 * single-device training. N counts the devices that compute: a ps-*
 * strategy's servers are extra. */
#ifndef STRATA_BENCH_SWEEP_H
#define STRATA_BENCH_SWEEP_H

#include <stdbool.h>

#include "../core/config.h"
#include "../core/report.h"
#include "../core/workload.h"
#include "../strategies/strategy.h"
#include "run.h"

#define SWEEP_MAX_VALUES 64
#define SWEEP_VALUE_BYTES 256   /* a value as typed: as long as --straggler's text */

/* What is varied, over which values, and how batch follows devices. */
struct sweep_axis {
    const struct opt_spec *opt;   /* the varied option */
    bool is_devices;              /* a devices sweep: speedup over one device */
    bool is_weak;                 /* --scaling weak: batch grows with the devices */
    bool is_real;                 /* --mode real */
    bool has_numerics;            /* simulated with numerics: --lr and the like vary too */
    long long batch_per_device;   /* weak: --batch / the first devices value */
    int n_values;
    char values[SWEEP_MAX_VALUES][SWEEP_VALUE_BYTES];   /* as given; each validated */
};

/* One run of the grid, or a baseline: its report, or why there is none. */
struct sweep_run {
    int rc;                       /* 0 ran; ERR_INPUT: does not fit; else failed */
    char note[ERR_MSG_BYTES];     /* why not, when rc != 0 */
    long long devices, batch;     /* the run's config (devices: the --np of a real run) */
    const struct report *report;  /* NULL when rc != 0; points into sim or real */
    bool exceeds_memory;          /* sim: peak memory above the device's (run_exceeds_memory) */
    char plan_note[160];          /* sim: the plan's note when it ran ("" none; compare prints it) */
    struct sim_run *sim;          /* sim mode, owned */
    struct report_doc real;       /* real mode, owned */
};

struct sweep_point {
    const struct strategy *strategy;
    int value;                    /* index into axis.values */
    struct sweep_run run;
    double speedup, efficiency;   /* NaN when unknown (not run, or no reference) */
};

struct sweep {
    struct sweep_axis axis;
    int n_strategies;
    const struct strategy **strategies;   /* [n_strategies], owned */
    int n_points;                 /* n_strategies x n_values, strategy-major */
    struct sweep_point *points;   /* owned */
    int n_baselines;              /* 1, or one per value when the option shapes the baseline */
    struct sweep_run *baselines;  /* owned; baselines[sweep_baseline_of(s, v)] */
};

/* One plotted point of a speedup figure; plots/ takes the same fields. */
struct sweep_xy {
    const char *strategy;
    double x, speedup, efficiency;
};

/* Reads the axis from cfg: --vary (or, when not given, devices 1, 2, 4, ...
 * up to --devices), --scaling and --mode. Every value is checked as the
 * option itself checks it (config_set; straggler_parse for --straggler), and
 * so are the batches of a weak sweep, before anything runs. ERR_INPUT
 * naming --vary, the value and what is allowed. */
int sweep_axis_parse(const struct config *cfg, struct sweep_axis *ax, struct err *e);

/* The config of value i: base with the option set to it (and, weak, the
 * batch). */
int sweep_point_config(const struct sweep_axis *ax, const struct config *base, int i,
                       struct config *out, struct err *e);

/* Called before each run: strategy NULL for a baseline, value NULL for the
 * baseline all values share; done counts the runs before this one. */
typedef void (*sweep_progress_fn)(void *ctx, const char *strategy, const char *value, int done,
                                  int total);

/* Where a sweep's runs go. */
#define SWEEP_MAX_JOBS 1024   /* --jobs's bound */
struct sweep_spread {
    int n_jobs;         /* processes of this machine: 1 runs every point here, N > 1 forks
                         * N workers (simulated sweeps only: a real one runs a job at a time) */
    int rank, n_ranks;  /* this process's rank in the MPI job it belongs to, and the job's
                         * size; n_ranks 1: no job. The ranks share the points out and rank 0
                         * gathers them: only rank 0's sweep is whole. */
};

/* --jobs when not given: one worker per online core. */
int sweep_default_jobs(void);

/* Runs the baselines, then every strategy of list[0..n) at every value.
 * A point that does not fit its strategy, or whose run fails, is recorded in
 * its run (rc, note) and the sweep goes on. Fails (the message in e) only
 * when a devices sweep's baseline cannot run, or out of memory. *out is the
 * caller's to sweep_release either way. numerics: the command's shared
 * numerics (bench/run_numerics.h), or NULL: each point computes its own. */
int sweep_run(const struct config *cfg, const struct workload *wl, const struct sweep_axis *ax,
              const struct strategy *const *list, int n, struct run_numerics *numerics,
              sweep_progress_fn progress, void *ctx, struct sweep *out, struct err *e);

/* As sweep_run, the runs spread as sp says, with the same result byte for
 * byte (every output of a sweep comes from *out). With workers, progress is
 * called as each run ends rather than before it. On an MPI rank other than
 * 0, *out holds only that rank's runs: print nothing from it. */
int sweep_run_spread(const struct config *cfg, const struct workload *wl,
                     const struct sweep_axis *ax, const struct strategy *const *list, int n,
                     struct run_numerics *numerics, const struct sweep_spread *sp,
                     sweep_progress_fn progress, void *ctx, struct sweep *out, struct err *e);
void sweep_release(struct sweep *s);

/* The baseline point's value v is measured against. */
int sweep_baseline_of(const struct sweep *s, int v);

/* Value i as a number for a plot's x axis: the value, or its position 1, 2,
 * ... for a text option (--straggler). */
double sweep_x(const struct sweep_axis *ax, int i);
bool sweep_is_numeric(const struct sweep_axis *ax);

/* Every point, for plots: out has room for s->n_points; returns how many
 * were written (all). A point that did not run, or has no speedup, has a
 * NaN speedup and efficiency. */
int sweep_xy(const struct sweep *s, struct sweep_xy *out);

/* One row per point, unfit ones included with empty numbers and the reason:
 * strategy,option,value,devices,batch,step_time_s,throughput_samples_per_s,
 * speedup,efficiency,note; lost_s,goodput before the note when any run
 * failed (empty for one that did not). Atomic. */
int sweep_write_csv(const struct sweep *s, const char *path, struct err *e);

/* { "strata_sweep": 1, "mode", "option", "scaling", "values", "points": [ {
 * "strategy", "option", "value", "devices", "batch", "speedup", "efficiency",
 * "report" } ], "not_run": [ { ..., "reason" } ], "baselines": [ { "value",
 * "devices", "batch", "report" } ] }. Atomic. */
int sweep_write_json(const struct sweep *s, const char *path, struct err *e);

#endif
