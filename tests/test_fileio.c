/* tests for core/fileio.c: whole-or-nothing writes through temp + rename. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "helpers.h"

#include "../core/faults.h"
#include "../core/fileio.h"
#include "../core/temp_files.h"

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

/* The message of a refused write, which must be ERR_INPUT (exit 2: the
 * user gave the path) and leave the directory as it was. */
static void expect_refused_path(const char *path, const char *why)
{
    int n_tmp, before = count_entries(&n_tmp);
    struct err e = {0};
    cr_assert_eq(file_check_writable(path, &e), ERR_INPUT, "check of %s: %s", path, e.msg);
    cr_assert_not_null(strstr(e.msg, why), "message: %s", e.msg);
    e = (struct err){0};
    cr_assert_eq(file_write_atomic(path, "{}", 2, &e), ERR_INPUT, "write of %s: %s", path, e.msg);
    cr_assert_not_null(strstr(e.msg, why), "message: %s", e.msg);
    cr_assert_not_null(strstr(e.msg, path), "the message names the path: %s", e.msg);
    cr_assert_eq(count_entries(&n_tmp), before, "nothing may be created");
    cr_assert_eq(n_tmp, 0);
}

Test(fileio, a_directory_target_is_refused_and_kept)
{
    char target[512], inside[600];
    snprintf(target, sizeof target, "%s/target", test_tmp_dir);
    cr_assert_eq(mkdir(target, 0755), 0);
    snprintf(inside, sizeof inside, "%s/inside", target);
    FILE *f = fopen(inside, "w");
    fputs("kept", f);
    fclose(f);
    expect_refused_path(target, "is a directory");
    char *back = test_slurp(inside);
    cr_assert_str_eq(back, "kept");
    free(back);
}

Test(fileio, a_device_or_fifo_target_is_refused_not_replaced)
{
    /* issue 15, finding 4: rename would have replaced them with a file
     * (as root, --json /dev/null would replace /dev/null). */
    struct err e = {0};
    cr_assert_eq(file_check_writable("/dev/null", &e), ERR_INPUT, "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "not a regular file"), "message: %s", e.msg);
    struct stat st;
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode));

    cr_assert_eq(mkfifo(test_tmp_path("fifo"), 0644), 0);
    expect_refused_path(test_tmp_path("fifo"), "not a regular file");
    cr_assert_eq(lstat(test_tmp_path("fifo"), &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "the FIFO is still a FIFO");
}

Test(fileio, a_symbolic_link_target_is_refused_and_what_it_points_to_kept)
{
    write_ok(test_tmp_path("real.json"), "old", 3);
    cr_assert_eq(symlink("real.json", test_tmp_path("link.json")), 0);
    expect_refused_path(test_tmp_path("link.json"), "symbolic link (to 'real.json')");
    char *back = test_slurp(test_tmp_path("real.json"));
    cr_assert_str_eq(back, "old");
    free(back);
    struct stat st;
    cr_assert_eq(lstat(test_tmp_path("link.json"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode));
}

Test(fileio, a_read_only_target_is_refused_even_for_root)
{
    write_ok(test_tmp_path("ro.json"), "old", 3);
    cr_assert_eq(chmod(test_tmp_path("ro.json"), 0444), 0);
    expect_refused_path(test_tmp_path("ro.json"), "read-only");
    char *back = test_slurp(test_tmp_path("ro.json"));
    cr_assert_str_eq(back, "old");
    free(back);
}

Test(fileio, check_writable_accepts_a_new_or_writable_file_and_writes_nothing)
{
    struct err e = {0};
    cr_assert_eq(file_check_writable(test_tmp_path("new.json"), &e), 0, "%s", e.msg);
    write_ok(test_tmp_path("old.json"), "x", 1);
    cr_assert_eq(file_check_writable(test_tmp_path("old.json"), &e), 0, "%s", e.msg);
    int n_tmp;
    cr_assert_eq(count_entries(&n_tmp), 1);
}

Test(fileio, check_dir_writable_takes_a_directory_or_one_to_make)
{
    struct err e = {0};
    cr_assert_eq(file_check_dir_writable(test_tmp_dir, false, &e), 0, "%s", e.msg);
    cr_assert_eq(file_check_dir_writable(test_tmp_path("new"), true, &e), 0, "%s", e.msg);
    cr_assert_eq(file_check_dir_writable(test_tmp_path("new"), false, &e), ERR_INPUT);
    cr_assert_eq(file_check_dir_writable(test_tmp_path("a/b"), true, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "parent"), "message: %s", e.msg);
    write_ok(test_tmp_path("plain"), "x", 1);
    cr_assert_eq(file_check_dir_writable(test_tmp_path("plain"), true, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "not a directory"), "message: %s", e.msg);
    int n_tmp;
    cr_assert_eq(count_entries(&n_tmp), 1, "nothing made");
}

/* Each injected fault (core/faults) on the way of one write: the error
 * names the path and the reason, the old file stays, no temporary. */
Test(fileio, an_injected_fault_at_each_call_leaves_the_old_file_and_no_temporary)
{
    write_ok(test_tmp_path("keep.json"), "old", 3);
    static const struct {
        enum fault_kind kind;
        int code;
    } cases[] = {{FAULT_OPEN, ERR_IO}, {FAULT_WRITE, ERR_IO}, {FAULT_FSYNC, ERR_IO},
                 {FAULT_RENAME, ERR_IO}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        faults_arm(cases[i].kind, 1);
        struct err e = {0};
        int rc = file_write_atomic(test_tmp_path("keep.json"), "new", 3, &e);
        faults_disarm();
        cr_assert_eq(rc, cases[i].code, "%s: rc %d: %s", fault_kind_names[cases[i].kind], rc,
                     e.msg);
        cr_assert_not_null(strstr(e.msg, test_tmp_path("keep.json")), "message: %s", e.msg);
        int n_tmp;
        cr_assert_eq(count_entries(&n_tmp), 1);
        cr_assert_eq(n_tmp, 0, "%s: the temporary file was left behind",
                     fault_kind_names[cases[i].kind]);
        char *back = test_slurp(test_tmp_path("keep.json"));
        cr_assert_str_eq(back, "old");
        free(back);
    }
    /* and the fault fires once: the next write succeeds */
    faults_arm(FAULT_WRITE, 1);
    struct err e = {0};
    cr_assert_lt(file_write_atomic(test_tmp_path("keep.json"), "new", 3, &e), 0);
    write_ok(test_tmp_path("keep.json"), "new", 3);
}

Test(fileio, the_nth_call_fails_not_the_first)
{
    faults_arm(FAULT_RENAME, 2);
    write_ok(test_tmp_path("a"), "x", 1);
    struct err e = {0};
    cr_assert_eq(file_write_atomic(test_tmp_path("b"), "x", 1, &e), ERR_IO);
    faults_disarm();
    struct stat st;
    cr_assert_neq(stat(test_tmp_path("b"), &st), 0);
}

/* In a child: registers a temporary file and a directory holding files,
 * then dies of sig; the handler must remove them all. */
static void die_with_temporaries(int sig)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        FILE *f = fopen(test_tmp_path("x.json.tmp.123456"), "w");
        fputs("half", f);
        fclose(f);
        mkdir(test_tmp_path(".plot.tmp.abcdef"), 0755);
        f = fopen(test_tmp_path(".plot.tmp.abcdef/a.png"), "w");
        fclose(f);
        temp_files_track(test_tmp_path("x.json.tmp.123456"), false);
        temp_files_track(test_tmp_path(".plot.tmp.abcdef"), true);
        raise(sig);
        _exit(0);  /* not reached: the handler dies of sig */
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig,
              "the child must die of signal %d as it would without the handler", sig);
    int n_tmp;
    cr_assert_eq(count_entries(&n_tmp), 0, "temporaries left after signal %d", sig);
}

Test(fileio, sigterm_and_sigint_remove_live_temporaries)
{
    /* issue 15, finding 9: SIGTERM during a large trace write left a
     * 40 MB temporary file. */
    die_with_temporaries(SIGTERM);
    die_with_temporaries(SIGINT);
}

Test(fileio, a_forgotten_temporary_is_not_removed)
{
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = fopen(test_tmp_path("done.json"), "w");
        fclose(f);
        temp_files_forget(temp_files_track(test_tmp_path("done.json"), false));
        raise(SIGTERM);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    struct stat st;
    cr_assert_eq(stat(test_tmp_path("done.json"), &st), 0, "a renamed file must stay");
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

/* The user tour's bug: access(W_OK) says yes to root in /proc, which then
 * refuses the temporary, so `sim --json /proc/x.json` ran the whole
 * simulation and failed at the end (exit 1). The check now creates a
 * temporary and removes it; /proc refuses it, whoever runs the test. */
Test(fileio, check_writable_refuses_a_directory_that_takes_no_new_files)
{
    struct err e = {0};
    cr_assert_eq(file_check_writable("/proc/strata-test.json", &e), ERR_INPUT, "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "/proc/strata-test.json"), "message: %s", e.msg);
    cr_assert_not_null(strstr(e.msg, "cannot create"), "message: %s", e.msg);
    e = (struct err){0};
    cr_assert_eq(file_check_dir_writable("/proc/strata-test", true, &e), ERR_INPUT, "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "/proc/strata-test"), "message: %s", e.msg);
    /* not "its parent does not exist": /proc does */
    cr_assert_null(strstr(e.msg, "parent"), "message: %s", e.msg);
    e = (struct err){0};
    cr_assert_eq(file_check_dir_writable("/proc", false, &e), ERR_INPUT, "%s", e.msg);
}

/* The trial temporary and the trial directory are gone after the check,
 * and a file already there is left as it was. */
Test(fileio, checks_leave_nothing_behind)
{
    struct err e = {0};
    write_ok(test_tmp_path("old.json"), "kept", 4);
    cr_assert_eq(file_check_writable(test_tmp_path("old.json"), &e), 0, "%s", e.msg);
    cr_assert_eq(file_check_writable(test_tmp_path("new.json"), &e), 0, "%s", e.msg);
    cr_assert_eq(file_check_dir_writable(test_tmp_dir, false, &e), 0, "%s", e.msg);
    cr_assert_eq(file_check_dir_writable(test_tmp_path("plots"), true, &e), 0, "%s", e.msg);
    int n_tmp;
    cr_assert_eq(count_entries(&n_tmp), 1, "only old.json");
    cr_assert_eq(n_tmp, 0);
    char *back = test_slurp(test_tmp_path("old.json"));
    cr_assert_str_eq(back, "kept");
    free(back);
}
