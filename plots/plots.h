/* Plots: PNG and SVG figures (and a drawing in the terminal) of reports,
 * traces, sweeps and validations, made by gnuplot.
 *
 * Each plot writes a data file <name>.dat and a gnuplot script <name>.gp
 * into o->dir, both kept, then runs gnuplot on the script, which writes
 * <name>.png and <name>.svg beside them. `gnuplot <name>.gp` in that
 * directory draws them again; `gnuplot -e "term='dumb'" <name>.gp` draws
 * them in the terminal. gnuplot is found in PATH, or is $STRATA_GNUPLOT.
 * Without gnuplot, the data and the script are still written, one line on
 * stderr says what to install, and the call returns 0.
 *
 * Every function returns 0, ERR_INPUT (o->dir cannot be made, or there is
 * nothing to plot from), ERR_IO (a file cannot be written), ERR_RUN (gnuplot
 * failed: the message names the script and quotes gnuplot) or ERR_NOMEM. */
#ifndef STRATA_PLOTS_H
#define STRATA_PLOTS_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/err.h"
#include "../core/report.h"
#include "../core/timeline_marks.h"
#include "../core/trace.h"

struct plot_opts {
    const char *dir;        /* write <name>.dat, <name>.gp, <name>.png, <name>.svg here; NULL/"" = no files */
    bool terminal;          /* also draw it on stdout with gnuplot's dumb terminal */
    const char *title;      /* the scenario, e.g. "8 devices of h100-nvlink-ib, batch 1024, mlp:784-256-10" */
    bool is_sparing;        /* leave out a figure that would show nothing (the page does;
                             * --plot draws it, empty, and says why) */
};

/* convergence.*: loss against time and against step, and test accuracy the
 * same two ways when any report has an accuracy curve; a line per report,
 * named by its strategy (and its mode when modes mix, its devices when one
 * strategy comes several times). Reports without a loss curve are left out;
 * when none has one the figure says so (the simulator needs --numerics). */
int plot_convergence(const struct report *const *rs, int n, const struct plot_opts *o,
                     struct err *e);

/* timeline-<strategy>.*: a Gantt chart of spans[0..n) over [0, t_end_s), a
 * row per rank and stream, a box per op coloured by its kind (the key names
 * the kinds); idle time (bubbles) stays white. */
int plot_timeline(const struct span *spans, size_t n, int n_ranks, const char *strategy,
                  double t_end_s, const struct plot_opts *o, struct err *e);

/* As plot_timeline, over [t_begin_s, t_end_s) (--timeline-steps). */
int plot_timeline_window(const struct span *spans, size_t n, int n_ranks, const char *strategy,
                         double t_begin_s, double t_end_s, const struct plot_opts *o,
                         struct err *e);

/* As plot_timeline_window, with a run's failures drawn over its ops
 * (plots/gantt_marks.h: recovery and checkpoint bands, a cross per death,
 * a gone rank shaded, lost work hatched, a row "lost/redone"), each with
 * its key entry; spans are then marks' laid ones (core/timeline_marks.h).
 * marks NULL: plot_timeline_window. */
int plot_timeline_marked(const struct span *spans, size_t n, int n_ranks, const char *strategy,
                         double t_begin_s, double t_end_s, const struct timeline_marks *marks,
                         const struct plot_opts *o, struct err *e);

/* staleness.*: for each report with a staleness histogram, the share of its
 * pushes that were 0, 1, 2 ... versions behind, as bars side by side. */
int plot_staleness(const struct report *const *rs, int n, const struct plot_opts *o,
                   struct err *e);

/* goodput.*: goodput against the checkpoint interval (--checkpoint-every,
 * in steps), a line per strategy of the reports that have a failure section
 * and a --checkpoint-every (others are left out; ERR_INPUT when none has
 * both); beside each, dashed, the first-order goodput 1 - C/tau - tau/2M -
 * R/M of the model its reports imply (core/goodput.h: C and R measured, M
 * from --mtbf or the failures seen), and, when a checkpoint cost was
 * measured, Young's optimum sqrt(2 C M) as a vertical line with a label.
 * The data file's comments state each model and optimum. */
int plot_goodput(const struct report *const *rs, int n, const struct plot_opts *o,
                 struct err *e);

struct speedup_point {
    const char *strategy;
    double x;               /* the varied value: devices, say; a position 1, 2, ... when not a number */
    double speedup;         /* over the axis's reference (speedup_axes.speedup_over) */
    double efficiency;      /* speedup / ideal speedup */
};

/* What a speedup figure's axes say: a sweep's speedup is over one device
 * only when it varies the devices (bench/sweep.h), else over its first
 * value, and its efficiency is then against one device at each value. */
struct speedup_axes {
    const char *x_label;            /* "devices", "batch", "straggler" */
    const char *const *x_names;     /* [n_x_names]: the tic of x = 1, 2, ...; NULL: x is the value */
    int n_x_names;
    const char *speedup_over;       /* "one device", "straggler=none (the first value)" */
    const char *efficiency_label;   /* NULL: "efficiency (speedup / ideal)" */
    bool ideal_line;                /* speedup = x and efficiency = 1 (devices sweeps) */
};

/* speedup.* (speedup against x, with the ideal y = x when ax->ideal_line)
 * and efficiency.*, each from its own NAME.dat and NAME.gp (the same
 * points); a line per strategy; log2 x (and log2 speedup) axes when every x
 * is a power of two and x is the value; ax's labels on both. A point whose
 * speedup is not finite (a run that failed or did not fit) is left out, and
 * a strategy's line breaks at every x where it has no point but the sweep
 * has one (another strategy's, or its own left out). */
int plot_speedup(const struct speedup_point *pts, int n, const struct speedup_axes *ax,
                 const struct plot_opts *o, struct err *e);

struct validation_point {
    const char *strategy;
    double predicted_s, measured_s;   /* step time: simulated, measured */
};

/* validation.*: predicted against measured step time, a point per run (a
 * validation matrix gives one per cell and strategy), a colour and key entry
 * per strategy, labels (strategy, error) up to 12 points, and the line
 * y = x where a perfect prediction lies. */
int plot_validation(const struct validation_point *pts, int n, const struct plot_opts *o,
                    struct err *e);

/* replay.*: step times as bars, bars[0] the measured one, each labelled
 * with its time and its change against bars[0] (strata replay: measured,
 * replayed, the what-if). */
struct replay_bar {
    const char *label;      /* "measured", "replayed", "without stragglers" */
    double step_s;
};
int plot_replay(const struct replay_bar *bars, int n, const struct plot_opts *o, struct err *e);

/* replay-timelines.*: two Gantt panels on one time axis, [0, t_end_s): the
 * measured spans above, the replayed ones below, a row per rank and stream
 * of n_ranks, boxes coloured by op kind. */
int plot_replay_timelines(const struct span *measured, size_t n_measured,
                          const struct span *replayed, size_t n_replayed, int n_ranks,
                          double t_end_s, const struct plot_opts *o, struct err *e);

#endif
