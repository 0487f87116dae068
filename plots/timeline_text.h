/* The text timeline: an ASCII Gantt chart of spans for the terminal, one
 * row per rank and stream, a letter per op kind (op_infos[].letters: F
 * forward, B backward, U update, S send, R recv, A all-reduce, P push, L
 * pull), '.' for idle. Forward and backward letters are upper case for even
 * microbatches and lower case for odd ones, so that consecutive microbatches
 * stay apart. Each column shows the op that covers most of it. plot_timeline
 * (plots.h) draws the same spans as a figure. */
#ifndef STRATA_PLOTS_TIMELINE_TEXT_H
#define STRATA_PLOTS_TIMELINE_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "../core/plan.h"
#include "../core/plan_check.h"
#include "../core/timeline_marks.h"
#include "../core/trace.h"

/* Columns for a chart on this terminal: $COLUMNS or the tty's width, else 100. */
int timeline_width(void);

/* Draws spans[0..n) of ranks [0, n_ranks) over [0, t_end_s), in `cols`
 * columns, at most max_rows rows. `unit` names the time unit ("s", "units"). */
void timeline_print(FILE *out, const struct span *spans, size_t n, int n_ranks, double t_end_s,
                    int cols, int max_rows, const char *unit);

/* What a window of a run shows beyond its spans. */
struct timeline_view {
    double begin_s, end_s;   /* the time drawn: [begin_s, end_s) */
    int dead_rank;           /* a rank that died (its compute row shows 'x' from
                              * dead_from_s where it ran nothing), or -1 */
    double dead_from_s;
    const struct timeline_marks *marks;   /* failures, or NULL (below) */
};

/* As timeline_print, over v's window. When the rows' step numbers differ
 * (asynchronous workers each count their own), every row ends with the
 * steps it shows.
 *
 * With v->marks (the spans then being its laid ones, or the trace for
 * continue), failures are drawn, each in the key: 'X' on a dead rank's
 * compute row where it died, then 'x' while it is gone for good (shrink,
 * continue); '#' on every row during detection, relaunch and loading, '='
 * during a checkpoint or commit (where they cover most of a column, as ops
 * do); and, when a failure threw work away, a row "lost/redone" under the
 * ranks: '-' under a step run that was lost, '+' under a step's run again.
 * A redone step is thus drawn twice, once lost and once redone. */
void timeline_print_view(FILE *out, const struct span *spans, size_t n, int n_ranks,
                         const struct timeline_view *v, int cols, int max_rows, const char *unit);

/* The spans of a unit-cost run (plan_unit_run), for the same chart. Caller
 * frees; NULL when out of memory. */
struct span *timeline_spans_of_unit_run(const struct plan *p, const struct plan_times *t,
                                        size_t *n);

#endif
