/* Files are written whole or not at all: data goes to a temporary file in
 * the target's directory, which is then renamed over the target. */
#ifndef STRATA_FILEIO_H
#define STRATA_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* Writes n bytes to path atomically. ERR_IO naming the path and the reason
 * (and ERR_INPUT when the directory does not exist: a user's typo). */
int file_write_atomic(const char *path, const void *data, size_t n, struct err *e);

/* Text built in memory and then written whole: file_stream_open gives a
 * stream writing to memory, file_stream_commit closes it and writes what it
 * holds to path atomically (ERR_NOMEM when the stream failed), freeing the
 * memory either way. */
struct file_stream {
    FILE *f;
    char *buf;
    size_t len;
};
int file_stream_open(struct file_stream *s, const char *path, struct err *e);
int file_stream_commit(struct file_stream *s, const char *path, struct err *e);

#endif
