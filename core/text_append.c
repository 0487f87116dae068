#include "text_append.h"

#include <stdarg.h>
#include <stdio.h>

void text_appendf(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (size == 0 || *used >= size - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (k > 0) *used = *used + (size_t)k < size ? *used + (size_t)k : size - 1;
}
