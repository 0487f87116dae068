/* An ASCII Gantt chart of a plan's unit-cost run: one row per worker's
 * compute stream, F forward and B backward, upper case for even microbatches
 * and lower case for odd ones so that consecutive microbatches stay apart. */
#ifndef STRATA_CLI_TIMELINE_H
#define STRATA_CLI_TIMELINE_H

#include <stdio.h>

#include "../core/plan.h"
#include "../core/plan_check.h"

/* At most max_cols columns (time is scaled down beyond that) and max_ranks rows. */
void timeline_print(FILE *out, const struct plan *p, const struct plan_times *t, int max_cols,
                    int max_ranks);

#endif
