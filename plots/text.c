#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* Room for need more bytes and the NUL; capacity doubles, so n appends cost
 * O(n) copies in all. */
static bool reserve(struct text *t, size_t need)
{
    if (t->is_failed) return false;
    if (t->len + need + 1 <= t->cap) return true;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + need + 1) cap *= 2;
    char *s = realloc(t->s, cap);
    if (!s) {
        t->is_failed = true;
        return false;
    }
    t->s = s;
    t->cap = cap;
    return true;
}

void text_printf(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(t, (size_t)n)) {
        t->is_failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

void text_quoted(struct text *t, const char *s)
{
    text_printf(t, "'");
    for (const char *p = s ? s : ""; *p; p++) {
        /* A line break would end the command; strata's names have none, a
         * hand-edited report might. */
        if (*p == '\n' || *p == '\r') text_printf(t, " ");
        else text_printf(t, *p == '\'' ? "''" : "%c", *p);
    }
    text_printf(t, "'");
}

void text_free(struct text *t)
{
    free(t->s);
    *t = (struct text){0};
}
