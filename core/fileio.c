/* Whole-or-nothing file writes: temporary file + fsync + rename.
 *
 * rename(2) within one directory replaces the target atomically, so a reader
 * (or a crash) sees either the old file or the complete new one, never half
 * of a report. The temporary lives beside the target for that reason: a
 * rename across file systems would fail with EXDEV. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

#define TMP_SUFFIX ".tmp.XXXXXX"

/* The directory part of path, as a new string: "out/x.json" -> "out",
 * "x.json" -> ".", "/x" -> "/". NULL on out of memory. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    size_t n = (size_t)(slash - path);
    if (n == 0) n = 1;  /* "/x": the root */
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

/* The process umask. POSIX can only read it by setting it, so it is set and
 * put back at once; a file another thread creates in between would get
 * umask 0. strata writes files from its main thread only. */
static mode_t current_umask(void)
{
    mode_t m = umask(0);
    umask(m);
    return m;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        size_t chunk = n < (size_t)SSIZE_MAX ? n : (size_t)SSIZE_MAX;
        ssize_t w = write(fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (w == 0) {  /* no progress and no reason: treat as a full disk */
            errno = ENOSPC;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int fsync_retry(int fd)
{
    int rc;
    do rc = fsync(fd); while (rc < 0 && errno == EINTR);
    return rc;
}

int file_write_atomic(const char *path, const void *data, size_t n, struct err *e)
{
    if (!path || !*path)
        return err_set(e, ERR_INPUT, "cannot write a file with an empty name");
    size_t len = strlen(path);
    if (path[len - 1] == '/')
        return err_set(e, ERR_INPUT, "cannot write '%s': that names a directory; "
                       "give a file name", path);

    char *dir = dir_of(path);
    char *tmp = malloc(len + sizeof TMP_SUFFIX);
    if (!dir || !tmp) {
        free(dir);
        free(tmp);
        return err_set(e, ERR_NOMEM, "cannot write '%s': out of memory", path);
    }
    memcpy(tmp, path, len);
    memcpy(tmp + len, TMP_SUFFIX, sizeof TMP_SUFFIX);

    int rc = 0;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        /* Missing or non-directory parents are the user's typo, not a
         * failing disk: say which directory and what to do. */
        if (errno == ENOENT)
            rc = err_set(e, ERR_INPUT, "cannot write '%s': directory '%s' does not "
                         "exist (create it first)", path, dir);
        else if (errno == ENOTDIR)
            rc = err_set(e, ERR_INPUT, "cannot write '%s': '%s' is not a directory",
                         path, dir);
        else
            rc = err_set(e, ERR_IO, "cannot write '%s': cannot create a temporary "
                         "file in '%s': %s", path, dir, strerror(errno));
        goto out;
    }

    /* mkstemp makes the file 0600; a report is for sharing, so give it what
     * open(path, O_CREAT, 0644) would have: 0644 less the umask. */
    if (fchmod(fd, (mode_t)0644 & ~current_umask()) < 0
        || write_all(fd, data, n) < 0
        || fsync_retry(fd) < 0) {
        rc = err_set(e, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        goto out;
    }
    /* close reports delayed write errors on some file systems (NFS); it is
     * not retried on EINTR because Linux has closed the descriptor anyway. */
    if (close(fd) < 0) {
        rc = err_set(e, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, path) < 0) {
        rc = err_set(e, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        unlink(tmp);
        goto out;
    }

    /* Make the rename itself durable. Best effort: the new file is already
     * in place, and some file systems refuse fsync on a directory. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync_retry(dfd);
        close(dfd);
    }

out:
    free(dir);
    free(tmp);
    return rc;
}

int file_stream_open(struct file_stream *s, const char *path, struct err *e)
{
    s->buf = NULL;
    s->len = 0;
    s->f = open_memstream(&s->buf, &s->len);
    if (!s->f) return err_set(e, ERR_NOMEM, "cannot write '%s': out of memory", path);
    return 0;
}

int file_stream_commit(struct file_stream *s, const char *path, struct err *e)
{
    int rc = fclose(s->f) != 0 ? err_set(e, ERR_NOMEM, "cannot write '%s': out of memory", path)
                               : file_write_atomic(path, s->buf, s->len, e);
    free(s->buf);
    s->buf = NULL;
    s->f = NULL;
    return rc;
}
