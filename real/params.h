/* Trained parameters in a file (--save-params), so that runs can be compared
 * number by number: the equivalence tests compare a strategy's file with
 * one device's.
 *
 * Format, host byte order (little-endian on every machine strata targets):
 *   8 bytes   "STRATAP1"
 *   int64     n: parameters
 *   n float32 the parameter block of nn/mlp.h: W0 b0 W1 b1 ... */
#ifndef STRATA_REAL_PARAMS_H
#define STRATA_REAL_PARAMS_H

#include <stdint.h>

#include "../core/err.h"

/* Writes n floats atomically. */
int params_save(const char *path, const float *params, int64_t n, struct err *e);
/* Reads a file params_save wrote: *out (malloc'd) and *n (1 or more).
 * ERR_INPUT naming the path and what is wrong for anything else: another
 * magic, a count below 1 or above 2^34, a size other than the count's. */
int params_load(const char *path, float **out, int64_t *n, struct err *e);

#endif
