/* tests for core/fileio.c: whole-or-nothing writes through temp + rename. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "helpers.h"

#include "../core/fileio.h"

/* Each test gets a fresh test_tmp_dir. */
TEST_SUITE_WITH_TMP_DIR(fileio);

/* Entries of test_tmp_dir other than . and .., and how many have ".tmp."
 * in them. */
static int count_entries(int *n_tmp)
{
    DIR *d = opendir(test_tmp_dir);
    cr_assert_not_null(d);
    int n = 0;
    *n_tmp = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        n++;
        if (strstr(de->d_name, ".tmp.")) (*n_tmp)++;
    }
    closedir(d);
    return n;
}

static void write_ok(const char *path, const void *data, size_t n)
{
    struct err e = {0};
    int rc = file_write_atomic(path, data, n, &e);
    cr_assert_eq(rc, 0, "file_write_atomic(%s): %d %s", path, rc, e.msg);
}

Test(fileio, writes_every_byte_exactly)
{
    /* 200 KiB with NUL bytes in it: more than one write on most systems,
     * and text functions would stop at the first NUL. */
    size_t n = 200 * 1024;
    unsigned char *data = malloc(n);
    for (size_t i = 0; i < n; i++) data[i] = (unsigned char)(i * 131 + 7);
    write_ok(test_tmp_path("a.bin"), data, n);

    size_t got;
    char *back = test_slurp_n(test_tmp_path("a.bin"), &got);
    cr_assert_eq(got, n);
    cr_assert(memcmp(back, data, n) == 0);
    int n_tmp;
    cr_assert_eq(count_entries(&n_tmp), 1);
    cr_assert_eq(n_tmp, 0);
    free(back);
    free(data);
}

Test(fileio, zero_bytes_make_an_empty_file)
{
    write_ok(test_tmp_path("empty"), "", 0);
    struct stat st;
    cr_assert_eq(stat(test_tmp_path("empty"), &st), 0);
    cr_assert_eq(st.st_size, 0);
}

Test(fileio, replaces_an_existing_file_whole)
{
    const char *old = "old content that is longer than the new one\n";
    write_ok(test_tmp_path("r.json"), old, strlen(old));
    write_ok(test_tmp_path("r.json"), "new\n", 4);

    size_t got;
    char *back = test_slurp_n(test_tmp_path("r.json"), &got);
    cr_assert_eq(got, 4, "no tail of the old file may remain: %zu bytes", got);
    cr_assert(memcmp(back, "new\n", 4) == 0);
    free(back);
}

Test(fileio, a_bare_file_name_goes_to_the_current_directory)
{
    cr_assert_eq(chdir(test_tmp_dir), 0);
    write_ok("here.txt", "x", 1);
    struct stat st;
    cr_assert_eq(stat(test_tmp_path("here.txt"), &st), 0);
    cr_assert_eq(st.st_size, 1);
}

Test(fileio, a_missing_directory_is_input_error_and_creates_nothing)
{
    char path[512];
    snprintf(path, sizeof path, "%s/out/x.json", test_tmp_dir);
    struct err e = {0};
    int rc = file_write_atomic(path, "{}", 2, &e);
    cr_assert_eq(rc, ERR_INPUT);
    cr_assert_eq(e.code, ERR_INPUT);

    char want[512];
    snprintf(want, sizeof want, "directory '%s/out' does not exist", test_tmp_dir);
    cr_assert_not_null(strstr(e.msg, want), "message: %s", e.msg);
    cr_assert_not_null(strstr(e.msg, path), "the message names the path: %s", e.msg);
    cr_assert_not_null(strstr(e.msg, "create it first"), "message: %s", e.msg);
    int n_tmp;
    cr_assert_eq(count_entries(&n_tmp), 0, "nothing may be created");
}

Test(fileio, a_file_where_a_directory_should_be_is_input_error)
{
    write_ok(test_tmp_path("plain"), "x", 1);
    char path[512];
    snprintf(path, sizeof path, "%s/plain/x.json", test_tmp_dir);
    struct err e = {0};
    cr_assert_eq(file_write_atomic(path, "{}", 2, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "is not a directory"), "message: %s", e.msg);
}

Test(fileio, a_path_ending_in_slash_is_input_error)
{
    struct err e = {0};
    cr_assert_eq(file_write_atomic(test_tmp_path("sub/"), "{}", 2, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "give a file name"), "message: %s", e.msg);
    cr_assert_eq(file_write_atomic("", "{}", 2, &e), ERR_INPUT);
}

Test(fileio, a_failed_rename_leaves_no_temporary_and_the_target_intact)
{
    /* The target is a directory: everything up to rename succeeds, rename
     * fails (EISDIR), and the temporary must go. */
    char target[512], inside[600];
    snprintf(target, sizeof target, "%s/target", test_tmp_dir);
    cr_assert_eq(mkdir(target, 0755), 0);
    snprintf(inside, sizeof inside, "%s/inside", target);
    FILE *f = fopen(inside, "w");
    fputs("kept", f);
    fclose(f);

    struct err e = {0};
    int rc = file_write_atomic(target, "{}", 2, &e);
    cr_assert_eq(rc, ERR_IO);
    cr_assert_not_null(strstr(e.msg, target), "the message names the path: %s", e.msg);
    cr_assert_not_null(strstr(e.msg, strerror(EISDIR)), "message: %s", e.msg);

    int n_tmp;
    cr_assert_eq(count_entries(&n_tmp), 1);
    cr_assert_eq(n_tmp, 0, "the temporary file was left behind");
    size_t got;
    char *back = test_slurp_n(inside, &got);
    cr_assert_eq(got, 4);
    cr_assert(memcmp(back, "kept", 4) == 0);
    free(back);
}

Test(fileio, a_failed_write_leaves_no_temporary_and_the_old_file_intact)
{
    /* A file-size limit makes write() stop short and then fail with EFBIG
     * (works as root too, unlike a read-only directory). This also drives
     * the short-write loop. */
    write_ok(test_tmp_path("keep.json"), "old", 3);

    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {.rlim_cur = 100, .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char big[1000];
    memset(big, 'n', sizeof big);
    struct err e = {0};
    int rc = file_write_atomic(test_tmp_path("keep.json"), big, sizeof big, &e);
    lim.rlim_cur = RLIM_INFINITY;
    setrlimit(RLIMIT_FSIZE, &lim);

    cr_assert_eq(rc, ERR_IO, "rc %d: %s", rc, e.msg);
    cr_assert_not_null(strstr(e.msg, test_tmp_path("keep.json")), "message: %s", e.msg);
    cr_assert_not_null(strstr(e.msg, strerror(EFBIG)), "message: %s", e.msg);
    int n_tmp;
    cr_assert_eq(count_entries(&n_tmp), 1);
    cr_assert_eq(n_tmp, 0, "the temporary file was left behind");
    size_t got;
    char *back = test_slurp_n(test_tmp_path("keep.json"), &got);
    cr_assert_eq(got, 3);
    cr_assert(memcmp(back, "old", 3) == 0);
    free(back);
}

static mode_t mode_after_write(mode_t mask, const char *name)
{
    umask(mask);
    write_ok(test_tmp_path(name), "x", 1);
    struct stat st;
    cr_assert_eq(stat(test_tmp_path(name), &st), 0);
    return st.st_mode & 07777;
}

Test(fileio, mode_is_0644_less_the_umask)
{
    /* mkstemp alone would give 0600 whatever the umask. */
    mode_t m = mode_after_write(022, "a");
    cr_assert_eq(m, 0644, "mode %04o under umask 022", (unsigned)m);
    m = mode_after_write(027, "b");
    cr_assert_eq(m, 0640, "mode %04o under umask 027", (unsigned)m);
    /* and the umask itself is left as it was */
    mode_t now = umask(0);
    cr_assert_eq(now, 027);
}
