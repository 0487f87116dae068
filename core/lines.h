/* Lines of a small text file (scenario files, cluster profiles), bounded:
 * a line longer than LINES_MAX_BYTES, a NUL byte (a binary file, or
 * /dev/zero), or more than LINES_MAX_FILE_BYTES in all is an error, so no
 * file can make a reader grow without end.
 *
 *   struct lines r;
 *   lines_open(&r, f);
 *   char *line;
 *   int rc;
 *   while ((rc = lines_next(&r, &line, e)) > 0) ... r.lineno ...;
 *   // rc < 0: e says why; the caller adds FILE:LINE (r.lineno)
 */
#ifndef STRATA_LINES_H
#define STRATA_LINES_H

#include <stdbool.h>
#include <stdio.h>

#include "err.h"

#define LINES_MAX_BYTES 4096            /* a line, without its '\n' */
#define LINES_MAX_FILE_BYTES (1 << 20)  /* a whole file */

struct lines {
    FILE *f;          /* borrowed */
    long lineno;      /* of the line lines_next gave last (1-based) */
    size_t n_read;    /* bytes read so far */
    char buf[LINES_MAX_BYTES + 1];
};

/* Whether f is a directory: fopen(dir, "r") succeeds on Linux and the
 * first read fails, which a caller should say as "a directory, not a
 * file" before any line is read, not as line 1's read error. */
bool lines_is_directory(FILE *f);

/* A reader of f from where it stands. */
void lines_open(struct lines *r, FILE *f);

/* The next line, without its '\n', NUL-terminated in r->buf: 1, 0 at the
 * end of the file, or ERR_INPUT (too long, a NUL byte, too big a file) or
 * ERR_IO (a read failed; errno says why) with a message that does not name
 * the file, as line errors of the callers do not. A UTF-8 byte order mark
 * at the start of the file is dropped. */
int lines_next(struct lines *r, char **line, struct err *e);

#endif
