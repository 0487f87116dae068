/* Formatted text in a fixed buffer, for one-line messages built piece by
 * piece (a deadlock's cycle, a run's host map) and the numbers they show. */
#ifndef STRATA_TEXT_APPEND_H
#define STRATA_TEXT_APPEND_H

#include <stddef.h>

/* Appends to buf[0..size) at *used (the length so far), keeping buf
 * terminated. A piece that does not fit is cut and *used stops at size - 1,
 * so later pieces add nothing: the caller who must not lose the end keeps
 * room for it by comparing *used with size before it appends. */
void text_appendf(char *buf, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* v as the shortest "%.*g" spelling that reads back as the same double:
 * "0.1", not "0.10000000000000001"; "10", not "1e+01"; every value
 * round-trips (17 digits always do), NaN as %.17g writes it. */
void text_double_shortest(char *buf, size_t n, double v);

/* The ranks 0 .. last as a message names them: "ranks 0 to 3", or "rank
 * 0" when there is one ("ranks 0 to 0" read as a slip). Returns buf. */
const char *text_ranks_upto(char *buf, size_t n, int last);

#endif
