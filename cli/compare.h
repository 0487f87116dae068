/* strata compare's two modes: simulated (compare.c) and real (compare_real.c). */
#ifndef STRATA_CLI_COMPARE_H
#define STRATA_CLI_COMPARE_H

#include "scenario.h"

/* --mode real: each strategy executed as its own MPI job. The exit status. */
int cmd_compare_real(const struct command *self, struct scenario *s);

#endif
