/* Text built up piece by piece: the data files and gnuplot scripts the plots
 * write. Out of memory is sticky (the way a FILE's error flag is), so a
 * writer appends freely and checks once, at the end. */
#ifndef STRATA_PLOTS_TEXT_H
#define STRATA_PLOTS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

struct text {
    char *s;          /* NUL-terminated; NULL until the first append */
    size_t len, cap;
    bool is_failed;   /* an append ran out of memory; s is then incomplete */
};

/* Appends printf-style text. */
void text_printf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends s as a gnuplot string literal: single-quoted, where nothing is an
 * escape and a quote is written twice, so any title or name reads back as
 * given. */
void text_quoted(struct text *t, const char *s);

/* Frees the text; the struct is zeroed and may be reused. */
void text_free(struct text *t);

#endif
