#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

int err_set(struct err *e, int code, const char *fmt, ...)
{
    if (!e) return code;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
    if (!e) return ERR_RUN;
    char head[ERR_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    char old[ERR_MSG_BYTES];
    memcpy(old, e->msg, sizeof old);
    snprintf(e->msg, sizeof e->msg, "%s: %s", head, old);
    return e->code;
}

int err_exit_status(int code)
{
    if (code == ERR_OK) return 0;
    return code == ERR_INPUT ? 2 : 1;
}

void *err_calloc_(struct err *e, size_t n, size_t size, const char *file, int line)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        err_set(e, ERR_NOMEM, "out of memory allocating %zu x %zu bytes (%s:%d)",
                n, size, file, line);
    return p;
}
