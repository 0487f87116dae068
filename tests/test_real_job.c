/* bench/real_job.c, as compare --mode real, sweep and validate use it: a
 * strategy's job is `strata real` under its supervisor; SIGTERM to the
 * command that runs it ends the job too (real/launch.h's launch_run sends
 * it on) and nothing is left running. The processes of this test's run are
 * found by a marker in their environment, which every descendant
 * inherits (mpirun's local ranks included). */
#include <criterion/criterion.h>

#include "helpers.h"
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void nap(void)
{
    nanosleep(&(struct timespec){0, 50000000}, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Whether pid's environment holds the entry `mark` exactly. */
static bool has_mark(long pid, const char *mark)
{
    return test_proc_has(pid, "environ", mark, false, NULL, 0);
}

/* Live processes (not zombies) carrying mark, other than `except`. */
static int count_marked(const char *mark, pid_t except)
{
    int n = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *de; d && (de = readdir(d));) {
        char *end = NULL;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0 || pid == (long)except || !has_mark(pid, mark)) continue;
        char stat_path[64], state = '?';
        snprintf(stat_path, sizeof stat_path, "/proc/%ld/stat", pid);
        FILE *f = fopen(stat_path, "r");
        if (f && fscanf(f, "%*d (%*[^)]) %c", &state) != 1) state = '?';
        if (f) fclose(f);
        n += state != 'Z';
    }
    if (d) closedir(d);
    return n;
}

Test(real_job, sigterm_to_compare_mode_real_ends_its_job_and_leaves_nothing, .timeout = 120)
{
    char mark[64];
    snprintf(mark, sizeof mark, "STRATA_TEST_REAL_JOB=%ld", (long)getpid());
    char *eq = strchr(mark, '=');
    *eq = '\0';
    setenv(mark, eq + 1, 1);
    *eq = '=';
    const char *argv[] = {STRATA_BIN, "compare", "--mode", "real", "--strategies", "mirrored",
                          "--np", "2", "--steps", "1000000", "--data", "synthetic", "--model",
                          "mlp:784-32-10", "--batch", "32", NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, STRATA_BIN, &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    /* the one-device baseline's job first: its supervisor, mpirun and its
     * rank; SIGTERM to compare whether or not they were seen */
    double t0 = now_s();
    while (count_marked(mark, pid) < 3 && now_s() - t0 < 60) nap();
    cr_expect(count_marked(mark, pid) >= 3, "the job never started");
    kill(pid, SIGTERM);
    int ws = 0;
    t0 = now_s();
    while (waitpid(pid, &ws, WNOHANG) == 0 && now_s() - t0 < 30) nap();
    cr_assert(now_s() - t0 < 30, "compare did not end within 30 s of SIGTERM");
    cr_expect(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGTERM, "compare ends as SIGTERM asks");
    t0 = now_s();
    while (count_marked(mark, pid) > 0 && now_s() - t0 < 10) nap();
    cr_expect_eq(count_marked(mark, pid), 0, "processes of the job are left running");
}

/* A flag among a job's options (--tf32, the one flag of their groups) was
 * read as a (--name, value) pair: it took the next option's name for its
 * value, and the job said "--np: needs a value", so compare --mode real,
 * sweep --mode real and validate refused any --tf32. No launcher is to be
 * found: the job must get as far as looking for one. */
Test(real_job, a_flag_among_the_options_reaches_the_job_intact)
{
    setenv("STRATA_MPIRUN", "/nonexistent/mpirun", 1);
    struct run r = RUN("compare", "--mode", "real", "--np", "2", "--steps", "2", "--data",
                       "synthetic", "--model", "mlp:784-4-10", "--strategies", "mirrored",
                       "--tf32");
    unsetenv("STRATA_MPIRUN");
    cr_expect_null(strstr(r.err, "needs a value"), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "STRATA_MPIRUN=/nonexistent/mpirun"), "%s", r.err);
    run_free(&r);
}

/* --tf32 is the cuda device's alone: a cpu run took it and said nothing. */
Test(real_job, tf32_on_the_cpu_device_is_noted, .timeout = 120)
{
    expect_ok_saying(RUN("real", "--np", "2", "--steps", "2", "--data", "synthetic", "--model",
                         "mlp:784-4-10", "--tf32"),
                     "\nnote: --tf32: read by --device cuda only; --device cpu computes in fp32\n",
                     true);
}
