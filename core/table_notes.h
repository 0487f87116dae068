/* What a student needs under a table of reports (issue 17): one legend of
 * the columns shown, and notes on what would otherwise look like a bug,
 * each computed from the reports themselves, never canned. Each note is its
 * own function, so a test can show it appears when its condition holds and
 * not otherwise; table_notes_print runs them all. Every function returns
 * whether it printed anything. */
#ifndef STRATA_TABLE_NOTES_H
#define STRATA_TABLE_NOTES_H

#include <stdbool.h>
#include <stdio.h>

#include "report.h"

/* One or two lines for the columns report_print_table shows for rs[0..n). */
bool table_legend_print(FILE *out, const struct report *const *rs, int n);

/* Two rows with the same figures: why (ps-ssp whose bound K was never
 * reached: the largest step lead L and K, and how steps relate to the
 * versions staleness counts). */
bool note_identical_rows(FILE *out, const struct report *const *rs, int n);

/* Numerics ran and some strategy made at least twice the updates of
 * another (asynchronous servers apply each worker's push). */
bool note_more_updates(FILE *out, const struct report *const *rs, int n);

/* A run's training loss became NaN or infinite: at which step, why the
 * table shows `-`, and what to lower. */
bool note_diverged(FILE *out, const struct report *const *rs, int n);

/* A run that applied no gradient at all (pipelined-steps whose --inflight
 * lag outlasts --steps): its samples/s and speedup are 0 by definition,
 * which the note says why. */
bool note_nothing_applied(FILE *out, const struct report *const *rs, int n);

/* A speedup above the device count: the one-device baseline spends more
 * compute per sample than the strategy does, and by how much. baseline may
 * be NULL (then nothing is said). speedup may be NULL. */
bool note_superlinear(FILE *out, const struct report *const *rs, int n, const double *speedup,
                      const struct report *baseline);

/* Runs with --fail in which no rank failed (a --fail R@Ts after the run's
 * end): which, and when the longest of them ended. */
bool note_fail_unmet(FILE *out, const struct report *const *rs, int n);
/* Whether r ran with --fail and no rank failed (what note_fail_unmet says). */
bool note_is_fail_unmet(const struct report *r);

/* Every note above, in that order. */
bool table_notes_print(FILE *out, const struct report *const *rs, int n, const double *speedup,
                       const struct report *baseline);

#endif
