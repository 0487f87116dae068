/* Failures on the Gantt chart (gantt.c): the layers drawn over a run's ops
 * from its timeline marks (core/timeline_marks.h), each with its key entry:
 * a shaded band over every rank's rows during detection, relaunch and
 * loading, another during checkpoints and commits, a cross where a rank
 * died, a rank gone for good shaded from its death, step runs a failure
 * threw away hatched, and a row "lost/redone" under the ranks (hatched:
 * lost, outlined: the same steps redone). The same marks as the text
 * timeline's (timeline_text.h), from the same data. */
#ifndef STRATA_PLOTS_GANTT_MARKS_H
#define STRATA_PLOTS_GANTT_MARKS_H

#include <stdbool.h>

#include "../core/timeline_marks.h"
#include "text.h"

/* The layers' blocks in the data file (gnuplot's index), -1 when absent. */
enum gantt_layer {
    GANTT_RECOVERY, GANTT_SAVE, GANTT_GONE, GANTT_LOST_BAND, GANTT_LOST, GANTT_REDONE,
    GANTT_DEATH, GANTT_N_LAYERS
};

struct gantt_marks {
    int block[GANTT_N_LAYERS];
    int n_deaths;         /* crosses drawn */
    int lost_row;         /* the row "lost/redone", or -1 (no lost run in the window) */
};

/* Marks the compute rows of ranks that die in [begin_s, end_s) as drawn
 * (y[2r] = 0, as gantt.c's number_rows does for rows with spans), so a
 * dead rank's row shows even where it ran nothing. m may be NULL. */
void gantt_marks_rows(const struct timeline_marks *m, int n_ranks, double begin_s, double end_s,
                      int *y);

/* Appends the layers' blocks to dat, numbered from first_block, times cut
 * to [begin_s, end_s); rows (the ranks' rows drawn) places the lost/redone
 * row under them. Fills g; m may be NULL (nothing then). */
void gantt_marks_data(struct text *dat, const struct timeline_marks *m, int n_ranks,
                      double begin_s, double end_s, const int *y, int rows, int first_block,
                      struct gantt_marks *g);

/* The plot clauses of g's layers (", 'name.dat' index N ..." each), times
 * scaled by per_s; rows = the ranks' rows drawn. */
void gantt_marks_plot(struct text *gp, const char *name, const struct gantt_marks *g, int rows,
                      double per_s);

#endif
