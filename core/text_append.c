#include "text_append.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void text_appendf(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (size == 0 || *used >= size - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (k > 0) *used = *used + (size_t)k < size ? *used + (size_t)k : size - 1;
}

void text_double_shortest(char *buf, size_t n, double v)
{
    char best[32] = "", try[32];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(try, sizeof try, "%.*g", digits, v);
        if (strtod(try, NULL) == v && (!best[0] || strlen(try) < strlen(best)))
            memcpy(best, try, sizeof best);
    }
    if (!best[0]) snprintf(best, sizeof best, "%.17g", v);   /* nan */
    snprintf(buf, n, "%s", best);
}

const char *text_ranks_upto(char *buf, size_t n, int last)
{
    if (last == 0) snprintf(buf, n, "rank 0");
    else snprintf(buf, n, "ranks 0 to %d", last);
    return buf;
}
