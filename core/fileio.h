/* Files are written whole or not at all: data goes to a temporary file in
 * the target's directory, which is then renamed over the target. */
#ifndef STRATA_FILEIO_H
#define STRATA_FILEIO_H

#include <stddef.h>

#include "err.h"

/* Writes n bytes to path atomically. ERR_IO naming the path and the reason
 * (and ERR_INPUT when the directory does not exist: a user's typo). */
int file_write_atomic(const char *path, const void *data, size_t n, struct err *e);

#endif
