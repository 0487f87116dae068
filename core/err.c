#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "faults.h"

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
    /* Build "head: old" in place: the head first, then the old message
     * after it, cut to fit (a long message loses its tail, not its start). */
    char old[ERR_MSG_BYTES];
    memcpy(old, e->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : (size_t)n < sizeof e->msg ? (size_t)n : sizeof e->msg - 1;
    size_t left = sizeof e->msg - used;
    if (left > 2) {
        memcpy(e->msg + used, ": ", 2);
        size_t copy = strnlen(old, left - 3);
        memcpy(e->msg + used + 2, old, copy);
        e->msg[used + 2 + copy] = '\0';
    }
    return e->code;
}

int err_exit_status(int code)
{
    if (code == ERR_OK) return 0;
    return code == ERR_INPUT ? 2 : 1;
}

void *err_calloc_(struct err *e, size_t n, size_t size, const char *file, int line)
{
    void *p = fault_hit(FAULT_ALLOC) ? NULL : calloc(n ? n : 1, size ? size : 1);
    if (!p)
        err_set(e, ERR_NOMEM, "out of memory allocating %zu x %zu bytes (%s:%d)",
                n, size, file, line);
    return p;
}
