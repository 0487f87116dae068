#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "faults.h"

/* Copies text into out[0..n) with every control character spelled as C
 * would ("\n", "\t", "\r", else "\x1b"), cut at a whole escape so the
 * result stays terminated: messages quote what users typed and what files
 * hold, and an escape sequence echoed raw would be run by the terminal.
 * Returns the bytes written. */
static size_t copy_escaped(char *out, size_t n, const char *text)
{
    size_t used = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        char esc[5] = {(char)*p, '\0'};
        if (*p < 0x20 || *p == 0x7f) {
            char c = *p == '\n' ? 'n' : *p == '\t' ? 't' : *p == '\r' ? 'r' : 0;
            if (c) snprintf(esc, sizeof esc, "\\%c", c);
            else snprintf(esc, sizeof esc, "\\x%02x", *p);
        }
        size_t len = strlen(esc);
        if (used + len >= n) break;
        memcpy(out + used, esc, len);
        used += len;
    }
    if (n) out[used] = '\0';
    return used;
}

size_t err_escape(char *out, size_t n, const char *text)
{
    return copy_escaped(out, n, text);
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
    if (!e) return code;
    e->code = code;
    char raw[ERR_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    copy_escaped(e->msg, sizeof e->msg, raw);
    return code;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
    if (!e) return ERR_RUN;
    /* Build "head: old" in place: the head first, then the old message
     * after it, cut to fit (a long message loses its tail, not its start). */
    char old[ERR_MSG_BYTES], head[ERR_MSG_BYTES];
    memcpy(old, e->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    size_t used = copy_escaped(e->msg, sizeof e->msg, head);
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
