#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "lines.h"

bool lines_is_directory(FILE *f)
{
    struct stat st;
    return fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode);
}

void lines_open(struct lines *r, FILE *f)
{
    r->f = f;
    r->lineno = 0;
    r->n_read = 0;
    r->buf[0] = '\0';
}

int lines_next(struct lines *r, char **line, struct err *e)
{
    size_t len = 0;
    int c;
    r->lineno++;   /* the line being read: what an error names */
    errno = 0;
    /* getc: files are small (at most LINES_MAX_FILE_BYTES), and a byte at
     * a time sees a NUL that fgets would hide. */
    while ((c = getc(r->f)) != EOF) {
        if (++r->n_read > LINES_MAX_FILE_BYTES)
            return err_set(e, ERR_INPUT, "the file goes on past %d bytes: not a scenario or "
                           "profile", LINES_MAX_FILE_BYTES);
        if (c == '\n') break;
        if (c == '\0')
            return err_set(e, ERR_INPUT, "a NUL byte at column %zu: this is not a text file",
                           len + 1);
        if (len == LINES_MAX_BYTES)
            return err_set(e, ERR_INPUT, "the line is longer than %d bytes: not a scenario or "
                           "profile line", LINES_MAX_BYTES);
        r->buf[len++] = (char)c;
    }
    if (c == EOF && ferror(r->f))   /* a directory opens, then fails here: the user's typo */
        return err_set(e, errno == EISDIR ? ERR_INPUT : ERR_IO, "cannot read: %s",
                       strerror(errno ? errno : EIO));
    if (c == EOF && len == 0) {
        r->lineno--;
        return 0;
    }
    r->buf[len] = '\0';
    /* A UTF-8 byte order mark, which some editors (Windows Notepad) put
     * before the first line, is not part of the text: left in, it made the
     * first key unknown, named in an error with the mark's invisible bytes
     * ("expected 'key = value', got '<BOM>'"). */
    if (r->lineno == 1 && len >= 3 && !memcmp(r->buf, "\xef\xbb\xbf", 3))
        memmove(r->buf, r->buf + 3, len - 3 + 1);
    *line = r->buf;
    return 1;
}
