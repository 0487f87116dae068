/* Appending formatted text to a fixed buffer, for one-line messages built
 * piece by piece (a deadlock's cycle, a run's host map). */
#ifndef STRATA_TEXT_APPEND_H
#define STRATA_TEXT_APPEND_H

#include <stddef.h>

/* Appends to buf[0..size) at *used (the length so far), keeping buf
 * terminated. A piece that does not fit is cut and *used stops at size - 1,
 * so later pieces add nothing: the caller who must not lose the end keeps
 * room for it by comparing *used with size before it appends. */
void text_appendf(char *buf, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
