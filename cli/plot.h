/* Plots from the command line: `strata plot REPORT...` and compare's --plot
 * (both modes), through plots/. */
#ifndef STRATA_CLI_PLOT_H
#define STRATA_CLI_PLOT_H

#include "../bench/run.h"
#include "../plots/plots.h"

/* The closing line of every command's --plot DIR: "plots in DIR/: names
 * (each NAME.png and NAME.svg, ...)", where the figures are and how to draw
 * them again; nothing when o has no directory. */
void plot_say_where(const struct plot_opts *o, const char *names);

/* Did the user ask for plots (--plot DIR or --plot-terminal)? */
bool plot_wanted(const struct config *cfg);

/* compare's --plot, simulated: convergence and staleness of the runs and a
 * timeline of each run's first steps (their kept spans). */
int plot_sim_runs(const struct config *cfg, struct sim_run *const *runs, int n, struct err *e);

/* compare's --plot, real: convergence and staleness of the reports (real
 * jobs send no spans back, so no timelines: a note says so). */
int plot_real_reports(const struct config *cfg, const struct report *const *rs, int n,
                      const char *title, struct err *e);

/* The timelines of runs' steps step_a..step_b (their kept spans; see
 * outputs_timeline_steps), one figure per run, their names appended to names. */
int plot_run_timelines(const struct plot_opts *o, struct sim_run *const *runs, int n,
                       int64_t step_a, int64_t step_b, char *names, size_t n_names,
                       struct err *e);

/* What a sweep's figures and page say of its scenario: `strata sweep`'s,
 * and `strata plot`'s of its --json. */
struct sweep_scenario {
    const char *option;           /* the varied option: "devices", "checkpoint-every" */
    bool is_real;                 /* measured on this machine, else simulated on cluster */
    bool is_weak;                 /* a weak devices sweep: the batch per device stays */
    const char *cluster, *model, *scaling, *straggler;
    long long batch;              /* the global batch (not a weak devices sweep's) */
    long long batch_per_device;   /* a weak devices sweep's */
};

/* "over OPTION, simulated on CLUSTER; MODEL, batch B (strong scaling),
 * stragglers S": the batch and the stragglers unless the sweep varied
 * them (the x axis says them then). */
void plot_sweep_title(const struct sweep_scenario *s, char *buf, size_t n);

/* Every figure `strata plot` draws from documents read back: convergence,
 * staleness, and when the documents hold them, speedup, goodput and
 * validation; their names appended to names, what was left out said on
 * notes (NULL: not said). */
int plot_documents(const struct plot_opts *o, const struct report_doc *docs, int n_docs,
                   char *names, size_t n_names, FILE *notes, struct err *e);

#endif
