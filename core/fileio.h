/* Every file strata writes goes through here, whole or not at all: data goes
 * to a temporary file in the target's directory, which is then renamed over
 * the target.
 *
 * The discipline, for every output (reports, CSV, traces, plots, profiles,
 * parameters):
 *  - file_check_writable before the work starts, so a typo fails at once
 *    rather than after a long run;
 *  - a target that exists must be a regular file the user may write: a
 *    directory, device, FIFO or socket is refused (rename would replace it
 *    with a file: `--json /dev/null` would replace /dev/null), and so is a
 *    symbolic link (rename replaces the link, not what it points to, and in
 *    a shared directory a planted link would aim our write at another file:
 *    give the path it points to) and a read-only file (someone protected it);
 *  - the temporary is removed on every path, SIGINT and SIGTERM included
 *    (core/temp_files).
 * Errors the user can fix (a path that is wrong, refused or not writable)
 * are ERR_INPUT (exit 2); a failing disk is ERR_IO (exit 1). */
#ifndef STRATA_FILEIO_H
#define STRATA_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* Checks that file_write_atomic(path) could succeed: the name, the target
 * (absent, or a regular writable file) and its directory (exists, and a
 * temporary can be created in it: one is made and removed at once, as
 * access(2) says yes to root everywhere and knows nothing of /proc or a
 * read-only mount). Leaves nothing behind. ERR_INPUT naming the path and
 * what to do; ERR_IO when the machine is short (descriptors, space). */
int file_check_writable(const char *path, struct err *e);

/* Checks a directory that plots go into: an existing directory a file can
 * be created in, or (is_made_when_missing) one whose parent exists and
 * takes it: it is made and removed at once, so nothing is left behind. */
int file_check_dir_writable(const char *dir, bool is_made_when_missing, struct err *e);

/* Whether paths a and b name the same entry: the same last name in the
 * same directory ("x.json", "./x.json" and "$PWD/x.json" do; trailing
 * slashes do not count). Two outputs given one path would overwrite each
 * other. */
bool file_is_same_path(const char *a, const char *b);

/* Writes n bytes to path atomically, after the checks of
 * file_check_writable. ERR_IO naming the path and the reason. */
int file_write_atomic(const char *path, const void *data, size_t n, struct err *e);

/* Puts the finished file tmp (written by another program, in path's
 * directory) in place of path: fsync, the checks on the target, rename.
 * tmp is removed when anything fails. */
int file_publish(const char *tmp, const char *path, struct err *e);

/* Text built in memory and then written whole: file_stream_open gives a
 * stream writing to memory, file_stream_commit closes it and writes what it
 * holds to path atomically (ERR_NOMEM when the stream failed), freeing the
 * memory either way. */
struct file_stream {
    FILE *f;
    char *buf;
    size_t len;
};
int file_stream_open(struct file_stream *s, const char *path, struct err *e);
int file_stream_commit(struct file_stream *s, const char *path, struct err *e);

#endif
