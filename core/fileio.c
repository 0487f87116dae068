/* Whole-or-nothing file writes: temporary file + fsync + rename.
 *
 * rename(2) within one directory replaces the target atomically, so a reader
 * (or a crash) sees either the old file or the complete new one, never half
 * of a report. The temporary lives beside the target for that reason: a
 * rename across file systems would fail with EXDEV.
 *
 * The target is checked before the work (file_check_writable) and again
 * just before the rename; between that check and the rename another
 * process could still swap the target, which no rename-based write can
 * exclude: the checks are for mistakes, not for a hostile process that
 * already may write in the directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "faults.h"
#include "fileio.h"
#include "temp_files.h"

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
        if (fault_hit(FAULT_WRITE)) {
            errno = ENOSPC;
            return -1;
        }
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

/* The temporary tmp (path + TMP_SUFFIX, the X's at tmp + at) made and
 * tracked, as mkstemp would make it, but named here and tracked before it
 * exists: a termination signal at any moment then finds it tracked (the
 * handler removes what is tracked; one for a name not yet made removes
 * nothing). Blocking the signals around mkstemp is not enough: in a
 * process with another thread (AddressSanitizer's, a library's) the signal
 * goes to the thread that does not block it. The name holds the pid, so
 * no other live process makes it. Its fd, or -1 with errno. */
static int create_tracked(char *tmp, size_t at, int *slot)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static unsigned long long count;
    unsigned long long pid = (unsigned long long)getpid();
    for (int attempt = 0; attempt < 100; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned long long v = pid * 1000003ull ^ (++count * 0x9E3779B97F4A7C15ull) ^
                               (unsigned long long)ts.tv_nsec;
        for (int i = 0; i < 6; i++, v /= 62) tmp[at + 5 + i] = digits[v % 62];
        *slot = temp_files_track(tmp, false);   /* -1 (registry full): made untracked */
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) return fd;
        int saved = errno;
        temp_files_forget(*slot);
        *slot = -1;
        errno = saved;
        if (saved != EEXIST) return -1;
    }
    errno = EEXIST;
    return -1;
}

static int check_name(const char *path, struct err *e)
{
    if (!path || !*path)
        return err_set(e, ERR_INPUT, "cannot write a file with an empty name");
    if (path[strlen(path) - 1] == '/')
        return err_set(e, ERR_INPUT, "cannot write '%s': that names a directory; "
                       "give a file name", path);
    return 0;
}

/* dir exists, is a directory, and we may create files in it. */
static int check_dir(const char *dir, const char *path, struct err *e)
{
    struct stat st;
    if (stat(dir, &st) < 0) {
        if (errno == ENOENT)
            return err_set(e, ERR_INPUT, "cannot write '%s': directory '%s' does not "
                           "exist (create it first)", path, dir);
        if (errno == ENOTDIR)
            return err_set(e, ERR_INPUT, "cannot write '%s': '%s' is not a directory",
                           path, dir);
        return err_set(e, ERR_INPUT, "cannot write '%s': cannot reach directory '%s': %s",
                       path, dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return err_set(e, ERR_INPUT, "cannot write '%s': '%s' is not a directory", path, dir);
    if (access(dir, W_OK | X_OK) < 0)
        return err_set(e, ERR_INPUT, "cannot write '%s': cannot create files in '%s': %s "
                       "(give a directory you can write to)", path, dir, strerror(errno));
    return 0;
}

/* The target is absent, or a regular file we may write (see fileio.h). */
static int check_target(const char *path, struct err *e)
{
    struct stat st;
    if (lstat(path, &st) < 0) {
        if (errno == ENOENT) return 0;
        if (errno == ENOTDIR)
            return err_set(e, ERR_INPUT, "cannot write '%s': a part of its path is not a "
                           "directory", path);
        return err_set(e, ERR_INPUT, "cannot write '%s': %s", path, strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
        char to[512];
        ssize_t n = readlink(path, to, sizeof to - 1);
        to[n < 0 ? 0 : n] = '\0';
        return err_set(e, ERR_INPUT, "cannot write '%s': it is a symbolic link (to '%s'), which "
                       "strata would replace rather than write through; give the path it "
                       "points to", path, to);
    }
    if (S_ISDIR(st.st_mode))
        return err_set(e, ERR_INPUT, "cannot write '%s': it is a directory; give a file name",
                       path);
    if (!S_ISREG(st.st_mode))
        return err_set(e, ERR_INPUT, "cannot write '%s': it exists and is not a regular file "
                       "(a device, FIFO or socket), which strata would replace with a file; "
                       "give the path of a file", path);
    if ((st.st_mode & 0222) == 0 || access(path, W_OK) < 0)
        return err_set(e, ERR_INPUT, "cannot write '%s': it is read-only, and strata does not "
                       "replace a protected file (make it writable or remove it first)", path);
    return 0;
}

/* Why creating a file failed, as an error code: what the user can change
 * (the place: permissions, a read-only or pseudo file system such as /proc)
 * is ERR_INPUT; the machine running short (descriptors, memory, space) or
 * failing is ERR_IO. */
static int create_error_code(int err)
{
    switch (err) {
    case EIO: case EMFILE: case ENFILE: case ENOMEM: case ENOSPC: case EDQUOT:
        return ERR_IO;
    default:
        return ERR_INPUT;
    }
}

/* Why creating in an existing directory failed, for a message: ENOENT
 * there ("No such file or directory") is /proc's or /sys's way of saying
 * that it takes no new files. */
static const char *create_reason(int err)
{
    return err == ENOENT ? "its file system takes no new files" : strerror(err);
}

/* Creates, as file_write_atomic would, a temporary base + TMP_SUFFIX and
 * removes it at once. access(2) cannot say the same: for root it grants
 * W_OK everywhere, and it knows nothing of /proc, which refuses to create
 * any file, or of a file system mounted read-only. errno when it fails. */
static int probe_create(const char *base)
{
    size_t len = strlen(base);
    char *tmp = malloc(len + sizeof TMP_SUFFIX);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(tmp, base, len);
    memcpy(tmp + len, TMP_SUFFIX, sizeof TMP_SUFFIX);
    int slot = -1;
    int fd = create_tracked(tmp, len, &slot);
    int saved = errno;
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    temp_files_forget(slot);
    free(tmp);
    errno = saved;
    return fd >= 0 ? 0 : -1;
}

/* The checks of file_check_writable but the trial: the writer's own
 * temporary is the trial there. */
static int check_path(const char *path, bool is_tried, struct err *e)
{
    TRY(check_name(path, e));
    char *dir = dir_of(path);
    if (!dir) return err_set(e, ERR_NOMEM, "cannot write '%s': out of memory", path);
    int rc = check_dir(dir, path, e);
    if (rc == 0) rc = check_target(path, e);
    if (rc == 0 && is_tried && probe_create(path) < 0)
        rc = err_set(e, create_error_code(errno), "cannot write '%s': cannot create a file in "
                     "'%s': %s (give a directory you can write to)", path, dir,
                     create_reason(errno));
    free(dir);
    return rc;
}

int file_check_writable(const char *path, struct err *e)
{
    return check_path(path, true, e);
}

/* A file can be created in the existing directory dir. */
static int probe_dir(const char *dir, struct err *e)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    char *base = malloc(len + sizeof "/strata");
    if (!base) return err_set(e, ERR_NOMEM, "out of memory");
    snprintf(base, len + sizeof "/strata", "%.*s/strata", (int)len, dir);
    int rc = probe_create(base);
    free(base);
    if (rc < 0)
        return err_set(e, create_error_code(errno), "cannot write in directory '%s': %s (give "
                       "a directory you can write to)", dir, create_reason(errno));
    return 0;
}

int file_check_dir_writable(const char *dir, bool is_made_when_missing, struct err *e)
{
    if (!dir || !*dir) return err_set(e, ERR_INPUT, "a directory with an empty name");
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return err_set(e, ERR_INPUT, "'%s' exists and is not a directory: give a directory",
                           dir);
        if (access(dir, W_OK | X_OK) < 0)
            return err_set(e, ERR_INPUT, "cannot write in directory '%s': %s (give a directory "
                           "you can write to)", dir, strerror(errno));
        return probe_dir(dir, e);
    }
    if (errno != ENOENT || !is_made_when_missing)
        return err_set(e, ERR_INPUT, "cannot use directory '%s': %s", dir, strerror(errno));
    /* It will be made: its parent must allow that ("a/b/" -> "a"). */
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    char *trimmed = strndup(dir, len);
    char *parent = trimmed ? dir_of(trimmed) : NULL;
    free(trimmed);
    if (!parent) return err_set(e, ERR_NOMEM, "out of memory");
    int rc = 0;
    if (stat(parent, &st) < 0 || !S_ISDIR(st.st_mode))
        rc = err_set(e, ERR_INPUT, "cannot create directory '%s': its parent '%s' does not "
                     "exist (strata makes one level; create the parent first)", dir, parent);
    else if (access(parent, W_OK | X_OK) < 0)
        rc = err_set(e, ERR_INPUT, "cannot create directory '%s': %s (give a directory you can "
                     "write to)", dir, strerror(errno));
    free(parent);
    TRY(rc);
    /* Made and removed at once, as the plots would make it: only mkdir
     * says whether the parent takes a new directory (root, /proc, a
     * read-only mount). It is tracked once made, not before, so that a
     * signal can never remove a directory that someone else made in the
     * meantime; one between mkdir and the tracking leaves it empty, as
     * the command would have made it anyway. */
    if (mkdir(dir, 0777) < 0) {
        if (errno == EEXIST) return file_check_dir_writable(dir, false, e);
        return err_set(e, create_error_code(errno), "cannot create directory '%s': %s (give a "
                       "directory you can write to)", dir, create_reason(errno));
    }
    int slot = temp_files_track(dir, true);
    rc = probe_dir(dir, e);
    rmdir(dir);
    temp_files_forget(slot);
    return rc;
}

/* path without trailing slashes split into its directory (dir_of) and
 * its last name; false on out of memory. */
static bool split_path(const char *path, char **dir, const char **base, char **trimmed)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    *trimmed = strndup(path, len);
    *dir = *trimmed ? dir_of(*trimmed) : NULL;
    if (!*dir) return false;
    const char *slash = strrchr(*trimmed, '/');
    *base = slash && slash[1] ? slash + 1 : *trimmed;
    return true;
}

bool file_is_same_path(const char *a, const char *b)
{
    if (!strcmp(a, b)) return true;
    char *dir_a = NULL, *dir_b = NULL, *trim_a = NULL, *trim_b = NULL;
    const char *base_a, *base_b;
    bool is_same = false;
    /* the same name in the same directory, the directory known by its
     * device and inode rather than its spelling (realpath is XSI) */
    if (split_path(a, &dir_a, &base_a, &trim_a) && split_path(b, &dir_b, &base_b, &trim_b) &&
        !strcmp(base_a, base_b)) {
        struct stat sa, sb;
        is_same = !strcmp(dir_a, dir_b) || (stat(dir_a, &sa) == 0 && stat(dir_b, &sb) == 0 &&
                                            sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
    }
    free(dir_a);
    free(dir_b);
    free(trim_a);
    free(trim_b);
    return is_same;
}

/* The last step of both writers: the target checked again (it may have
 * changed during the work), then the rename, then the directory's fsync. */
static int put_in_place(const char *tmp, const char *path, struct err *e)
{
    TRY(check_target(path, e));
    if (fault_hit(FAULT_RENAME)) errno = EIO;
    else if (rename(tmp, path) == 0) {
        /* Make the rename itself durable. Best effort: the new file is
         * already in place, and some file systems refuse fsync on a
         * directory. */
        char *dir = dir_of(path);
        int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (dfd >= 0) {
            fsync_retry(dfd);
            close(dfd);
        }
        free(dir);
        return 0;
    }
    return err_set(e, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
}

int file_write_atomic(const char *path, const void *data, size_t n, struct err *e)
{
    TRY(check_path(path, false, e));
    size_t len = strlen(path);
    char *tmp = malloc(len + sizeof TMP_SUFFIX);
    if (!tmp) return err_set(e, ERR_NOMEM, "cannot write '%s': out of memory", path);
    memcpy(tmp, path, len);
    memcpy(tmp + len, TMP_SUFFIX, sizeof TMP_SUFFIX);

    int rc = 0, slot = -1;
    int fd = fault_hit(FAULT_OPEN) ? (errno = EIO, -1) : create_tracked(tmp, len, &slot);
    if (fd < 0) {
        rc = err_set(e, errno == EACCES || errno == EROFS ? ERR_INPUT : ERR_IO,
                     "cannot write '%s': cannot create a temporary file beside it: %s", path,
                     strerror(errno));
        free(tmp);
        return rc;
    }

    /* mkstemp makes the file 0600; a report is for sharing, so give it what
     * open(path, O_CREAT, 0644) would have: 0644 less the umask. */
    if (fchmod(fd, (mode_t)0644 & ~current_umask()) < 0
        || write_all(fd, data, n) < 0
        || (fault_hit(FAULT_FSYNC) ? (errno = EIO, -1) : fsync_retry(fd)) < 0) {
        rc = err_set(e, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        close(fd);
    } else if (close(fd) < 0) {
        /* close reports delayed write errors on some file systems (NFS);
         * it is not retried on EINTR because Linux has closed it anyway. */
        rc = err_set(e, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    } else {
        rc = put_in_place(tmp, path, e);
    }
    if (rc < 0) unlink(tmp);
    temp_files_forget(slot);
    free(tmp);
    return rc;
}

int file_publish(const char *tmp, const char *path, struct err *e)
{
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    int rc = 0;
    if (fd < 0 || (fault_hit(FAULT_FSYNC) ? (errno = EIO, -1) : fsync_retry(fd)) < 0)
        rc = err_set(e, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    if (rc == 0) rc = put_in_place(tmp, path, e);
    if (rc < 0) unlink(tmp);
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
