/* TEMP stub: the checkpoint module is written in another branch; this is
 * only the one function the supervisor needs, answering "none", so that
 * restart and shrink from scratch work and can be tested here. The lead
 * replaces it at merge. */
#ifndef STRATA_CHECKPOINT_H
#define STRATA_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "../core/err.h"

/* The newest whole checkpoint in dir: its path into path[0..n) and its step.
 * 0 = found, 1 = none, < 0 an error. */
int checkpoint_newest(const char *dir, char *path, size_t n, int64_t *step, struct err *e);

#endif
