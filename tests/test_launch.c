/* tests for real/launch.c: finding the MPI launcher, its command line, the
 * ranks' environment, and running jobs (exit codes, signals, stdout). Each
 * test runs in its own Criterion worker process, so setenv/unsetenv and
 * chdir here touch no other test. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "helpers.h"

#include "../real/launch.h"

/* A fresh test_tmp_dir per test, and PATH put back after it. */
TEST_SUITE_WITH_TMP_DIR(launch);

/* Writes a file at path with the given mode (0755: an executable script). */
static void make_file(const char *path, mode_t mode)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
    fputs("#!/bin/sh\nexit 0\n", f);
    fclose(f);
    cr_assert_eq(chmod(path, mode), 0, "chmod %s: %s", path, strerror(errno));
}

static void make_dir_in(const char *name)
{
    cr_assert_eq(mkdir(test_tmp_path(name), 0755), 0, "mkdir %s: %s", name, strerror(errno));
}

static void make_link(const char *target, const char *link_name)
{
    cr_assert_eq(symlink(target, test_tmp_path(link_name)), 0, "symlink %s: %s", link_name,
                 strerror(errno));
}

/* Compares a NULL-terminated argv with the expected strings, NULL included. */
static void expect_argv(char **argv, const char *const *want, int n_want)
{
    cr_assert_not_null(argv);
    for (int i = 0; i < n_want; i++) {
        cr_assert_not_null(argv[i], "argv[%d] is NULL, want \"%s\"", i, want[i]);
        cr_expect_str_eq(argv[i], want[i], "argv[%d]", i);
    }
    cr_expect_null(argv[n_want], "argv[%d] should end the list", n_want);
}

/* ---- launch_build_argv ---- */

Test(launch, build_argv_for_openmpi_adds_oversubscribe_and_copies_args)
{
    char arg0[] = "real", arg1[] = "--strategy", arg2[] = "mirrored";
    char *args[] = { arg0, arg1, arg2 };
    struct err e = {0};
    char **argv = launch_build_argv("/usr/bin/mpirun", true, 4, LAUNCH_BIND_NONE,
                                    "/opt/strata/bin/strata", 3, args, &e);
    cr_assert_not_null(argv, "%s", e.msg);
    /* The copies must not alias the caller's strings. */
    strcpy(arg2, "XXXXXXXX");
    const char *want[] = { "/usr/bin/mpirun", "--oversubscribe", "--bind-to", "none", "-np", "4",
                           "/opt/strata/bin/strata", "real", "--strategy", "mirrored" };
    expect_argv(argv, want, 10);
    launch_argv_free(argv);
}

Test(launch, build_argv_for_other_launchers_has_no_oversubscribe)
{
    char *args[] = { "compare", "--mode", "real" };
    struct err e = {0};
    char **argv = launch_build_argv("/usr/bin/mpiexec.hydra", false, 16, LAUNCH_BIND_NONE, "/s", 3,
                                    args, &e);
    const char *want[] = { "/usr/bin/mpiexec.hydra", "-np", "16", "/s", "compare", "--mode",
                           "real" };
    expect_argv(argv, want, 7);
    launch_argv_free(argv);
}

Test(launch, build_argv_without_args_ends_after_self)
{
    struct err e = {0};
    char **argv = launch_build_argv("mpirun", false, 1, LAUNCH_BIND_NONE, "strata", 0, NULL, &e);
    const char *want[] = { "mpirun", "-np", "1", "strata" };
    expect_argv(argv, want, 4);
    launch_argv_free(argv);
}

Test(launch, build_argv_rejects_fewer_than_one_process)
{
    struct err e = {0};
    cr_expect_null(launch_build_argv("/usr/bin/mpirun", true, 0, LAUNCH_BIND_NONE, "/s", 0, NULL, &e));
    cr_expect_eq(e.code, ERR_INPUT);
    cr_expect(strstr(e.msg, "--np: 0"), "message: %s", e.msg);
    e = (struct err){0};
    cr_expect_null(launch_build_argv("/usr/bin/mpirun", true, -3, LAUNCH_BIND_NONE, "/s", 0, NULL, &e));
    cr_expect_eq(e.code, ERR_INPUT);
}

Test(launch, build_argv_rejects_missing_strings)
{
    struct err e = {0};
    char *args[] = { "real", NULL };
    cr_expect_null(launch_build_argv("/usr/bin/mpirun", false, 2, LAUNCH_BIND_NONE, "/s", 2, args, &e));
    cr_expect_eq(e.code, ERR_INPUT);
    cr_expect(strstr(e.msg, "argument 1 of 2"), "message: %s", e.msg);
    e = (struct err){0};
    cr_expect_null(launch_build_argv("/usr/bin/mpirun", false, 2, LAUNCH_BIND_NONE, "/s", 1, NULL, &e));
    cr_expect_eq(e.code, ERR_INPUT);
    e = (struct err){0};
    cr_expect_null(launch_build_argv(NULL, false, 2, LAUNCH_BIND_NONE, "/s", 0, NULL, &e));
    cr_expect(strstr(e.msg, "launcher"), "message: %s", e.msg);
    e = (struct err){0};
    cr_expect_null(launch_build_argv("/usr/bin/mpirun", false, 2, LAUNCH_BIND_NONE, "", 0, NULL, &e));
    cr_expect(strstr(e.msg, "program"), "message: %s", e.msg);
}

/* ---- --bind ---- */

Test(launch, build_argv_binds_each_rank_to_a_core_with_openmpi)
{
    char *args[] = { "real" };
    struct err e = {0};
    char **argv = launch_build_argv("/usr/bin/mpirun", true, 2, LAUNCH_BIND_CORE, "/s", 1, args,
                                    &e);
    cr_assert_not_null(argv, "%s", e.msg);
    const char *want[] = { "/usr/bin/mpirun", "--oversubscribe", "--bind-to", "core", "--map-by",
                           "core", "-np", "2", "/s", "real" };
    expect_argv(argv, want, 10);
    launch_argv_free(argv);
}

Test(launch, build_argv_refuses_an_unresolved_or_unknown_binding)
{
    struct err e = {0};
    cr_expect_null(launch_build_argv("/usr/bin/mpirun", true, 2, LAUNCH_BIND_AUTO, "/s", 0, NULL,
                                     &e));
    cr_expect_eq(e.code, ERR_INPUT);
    cr_expect(strstr(e.msg, "launch_bind_resolve"), "message: %s", e.msg);
    e = (struct err){0};
    /* other launchers: strata knows no binding option of theirs */
    cr_expect_null(launch_build_argv("/usr/bin/mpiexec.hydra", false, 2, LAUNCH_BIND_CORE, "/s", 0,
                                     NULL, &e));
    cr_expect(strstr(e.msg, "--bind core"), "message: %s", e.msg);
}

/* The decision table of launch_bind_resolve: (choice, ranks, cores, Open
 * MPI?) -> binding, from launch.h's contract. */
Test(launch, bind_resolve_pins_ranks_that_fit_and_frees_those_that_do_not)
{
    struct { const char *choice; int n, cores; bool ompi; enum launch_bind want; } cases[] = {
        { "auto", 2, 2, true, LAUNCH_BIND_CORE },    /* fit: pinned */
        { NULL, 1, 8, true, LAUNCH_BIND_CORE },      /* NULL = auto */
        { "auto", 3, 2, true, LAUNCH_BIND_NONE },    /* time-shared: free to move */
        { "auto", 2, 0, true, LAUNCH_BIND_NONE },    /* cores unknown */
        { "auto", 2, 2, false, LAUNCH_BIND_NONE },   /* another launcher keeps its default */
        { "core", 4, 4, true, LAUNCH_BIND_CORE },
        { "none", 2, 2, true, LAUNCH_BIND_NONE },
        { "none", 9, 2, false, LAUNCH_BIND_NONE },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct err e = {0};
        enum launch_bind got = LAUNCH_BIND_AUTO;
        cr_assert_eq(launch_bind_resolve(cases[i].choice, cases[i].n, cases[i].cores,
                                         cases[i].ompi, &got, &e), 0, "case %zu: %s", i, e.msg);
        cr_expect_eq(got, cases[i].want, "case %zu (%s, %d ranks, %d cores): got %s", i,
                     cases[i].choice ? cases[i].choice : "NULL", cases[i].n, cases[i].cores,
                     launch_bind_names[got]);
    }
}

Test(launch, bind_resolve_rejects_core_where_it_cannot_hold_and_unknown_words)
{
    enum launch_bind got;
    struct err e = {0};
    cr_expect_eq(launch_bind_resolve("core", 3, 2, true, &got, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "--bind core: 3 ranks cannot each have one of 2 cores"), "%s", e.msg);
    e = (struct err){0};
    cr_expect_eq(launch_bind_resolve("core", 2, 2, false, &got, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "not Open MPI"), "%s", e.msg);
    e = (struct err){0};
    cr_expect_eq(launch_bind_resolve("core", 2, -1, true, &got, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "cannot be counted"), "%s", e.msg);
    e = (struct err){0};
    cr_expect_eq(launch_bind_resolve("socket", 2, 2, true, &got, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "--bind: 'socket' is not one of auto, core, none"), "%s", e.msg);
}

Test(launch, cpus_allowed_counts_this_process_cpus)
{
    int n = launch_cpus_allowed();
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    /* Linux reads its mask: 1 .. the machine's (a test runner may pin it) */
    cr_expect(n == -1 || (n >= 1 && (online < 1 || n <= online)), "%d of %ld", n, online);
}

Test(launch, argv_free_accepts_null)
{
    launch_argv_free(NULL);
}

/* ---- launch_is_mpi_rank ---- */

static const char *const rank_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK",
                                         "PMIX_RANK" };
#define N_RANK_VARS (int)(sizeof rank_vars / sizeof rank_vars[0])

Test(launch, is_mpi_rank_false_without_any_launcher_variable)
{
    for (int i = 0; i < N_RANK_VARS; i++) unsetenv(rank_vars[i]);
    cr_expect_not(launch_is_mpi_rank());
}

Test(launch, is_mpi_rank_true_with_each_launcher_variable_alone)
{
    for (int i = 0; i < N_RANK_VARS; i++) unsetenv(rank_vars[i]);
    for (int i = 0; i < N_RANK_VARS; i++) {
        setenv(rank_vars[i], "2", 1);
        cr_expect(launch_is_mpi_rank(), "%s=2 alone should mean an MPI rank", rank_vars[i]);
        /* Set but empty is how a script clears a variable: not a rank. */
        setenv(rank_vars[i], "", 1);
        cr_expect_not(launch_is_mpi_rank(), "%s= (empty) should not count", rank_vars[i]);
        unsetenv(rank_vars[i]);
        cr_expect_not(launch_is_mpi_rank(), "after unsetenv %s", rank_vars[i]);
    }
}

/* ---- launch_find_mpirun, launch_find_program ---- */

Test(launch, find_mpirun_rejects_strata_mpirun_that_is_not_executable)
{
    make_file(test_tmp_path("mpirun"), 0644);
    setenv("STRATA_MPIRUN", test_tmp_path("mpirun"), 1);
    char path[LAUNCH_PATH_BYTES];
    struct err e = {0};
    cr_expect_eq(launch_find_mpirun(path, sizeof path, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "STRATA_MPIRUN="), "message: %s", e.msg);
    cr_expect(strstr(e.msg, "not executable"), "message: %s", e.msg);
    cr_expect(strstr(e.msg, "unset it"), "message says what to do: %s", e.msg);
}

Test(launch, find_mpirun_rejects_strata_mpirun_that_is_missing_or_a_directory)
{
    char path[LAUNCH_PATH_BYTES];
    struct err e = {0};
    setenv("STRATA_MPIRUN", test_tmp_path("nothing-here"), 1);
    cr_expect_eq(launch_find_mpirun(path, sizeof path, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "No such file"), "message: %s", e.msg);
    e = (struct err){0};
    setenv("STRATA_MPIRUN", test_tmp_dir, 1);
    cr_expect_eq(launch_find_mpirun(path, sizeof path, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "directory"), "message: %s", e.msg);
}

Test(launch, find_mpirun_takes_strata_mpirun_when_executable)
{
    make_file(test_tmp_path("my-launcher"), 0755);
    setenv("STRATA_MPIRUN", test_tmp_path("my-launcher"), 1);
    setenv("PATH", "/nonexistent", 1); /* PATH must not matter */
    char path[LAUNCH_PATH_BYTES];
    struct err e = {0};
    cr_assert_eq(launch_find_mpirun(path, sizeof path, &e), 0, "%s", e.msg);
    cr_expect_str_eq(path, test_tmp_path("my-launcher"));
}

Test(launch, find_mpirun_with_empty_path_names_the_package_to_install)
{
    unsetenv("STRATA_MPIRUN");
    setenv("PATH", test_tmp_dir, 1); /* an empty directory */
    char path[LAUNCH_PATH_BYTES];
    struct err e = {0};
    cr_expect_eq(launch_find_mpirun(path, sizeof path, &e), ERR_INPUT);
    cr_expect_eq(err_exit_status(e.code), 2);
    cr_expect(strstr(e.msg, "openmpi-bin"), "message: %s", e.msg);
    cr_expect(strstr(e.msg, "tools/setup"), "message: %s", e.msg);
    cr_expect(strstr(e.msg, "mpirun -np N strata real"), "message: %s", e.msg);
    cr_expect(strstr(e.msg, test_tmp_dir), "message shows the PATH searched: %s", e.msg);
}

Test(launch, find_mpirun_prefers_mpirun_then_mpiexec_in_path_order)
{
    make_dir_in("a");
    make_dir_in("b");
    make_file(test_tmp_path("a/mpiexec"), 0755);
    make_file(test_tmp_path("a/mpirun"), 0644); /* not executable: skipped */
    make_file(test_tmp_path("b/mpirun"), 0755);
    char search[300];
    snprintf(search, sizeof search, "%s/a:%s/b", test_tmp_dir, test_tmp_dir);
    setenv("PATH", search, 1);
    unsetenv("STRATA_MPIRUN");
    setenv("STRATA_MPIRUN", "", 1); /* empty counts as unset */
    char path[LAUNCH_PATH_BYTES];
    struct err e = {0};
    cr_assert_eq(launch_find_mpirun(path, sizeof path, &e), 0, "%s", e.msg);
    cr_expect_str_eq(path, test_tmp_path("b/mpirun"), "mpirun anywhere in PATH beats mpiexec");

    cr_assert_eq(unlink(test_tmp_path("b/mpirun")), 0);
    cr_assert_eq(launch_find_mpirun(path, sizeof path, &e), 0, "%s", e.msg);
    cr_expect_str_eq(path, test_tmp_path("a/mpiexec"), "mpiexec when no mpirun");
}

Test(launch, find_mpirun_reports_a_buffer_too_small)
{
    make_file(test_tmp_path("mpirun"), 0755);
    setenv("PATH", test_tmp_dir, 1);
    unsetenv("STRATA_MPIRUN");
    char path[8];
    struct err e = {0};
    cr_expect_eq(launch_find_mpirun(path, sizeof path, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "longer than the 7 bytes"), "message: %s", e.msg);
}

Test(launch, find_program_makes_relative_paths_absolute_and_skips_empty_path_entries)
{
    make_dir_in("bin");
    make_file(test_tmp_path("bin/tool"), 0755);
    make_file(test_tmp_path("tool"), 0755);
    cr_assert_eq(chdir(test_tmp_dir), 0);
    char path[LAUNCH_PATH_BYTES], cwd[LAUNCH_PATH_BYTES];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    char want[LAUNCH_PATH_BYTES + 16];
    struct err e = {0};

    cr_assert_eq(launch_find_program("./bin/tool", path, sizeof path, &e), 0, "%s", e.msg);
    snprintf(want, sizeof want, "%s/./bin/tool", cwd);
    cr_expect_str_eq(path, want);

    /* A relative PATH entry is resolved against the working directory. */
    setenv("PATH", "bin", 1);
    cr_assert_eq(launch_find_program("tool", path, sizeof path, &e), 0, "%s", e.msg);
    snprintf(want, sizeof want, "%s/bin/tool", cwd);
    cr_expect_str_eq(path, want);

    /* "tool" sits in the working directory, which an empty entry would name
     * to a shell; we do not look there. */
    setenv("PATH", "::/nonexistent:", 1);
    cr_expect_eq(launch_find_program("tool", path, sizeof path, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "not found in PATH"), "message: %s", e.msg);
}

/* ---- launch_mpirun_is_openmpi ---- */

Test(launch, openmpi_detected_through_alternatives_links_to_orterun)
{
    /* Debian's shape: mpirun -> alternatives/mpirun -> mpirun.openmpi -> orterun */
    make_dir_in("alt");
    make_file(test_tmp_path("orterun"), 0755);
    make_link("orterun", "mpirun.openmpi");
    char target[600];
    snprintf(target, sizeof target, "%s/mpirun.openmpi", test_tmp_dir);
    make_link(target, "alt/mpirun");
    make_link("alt/mpirun", "mpirun");
    cr_expect(launch_mpirun_is_openmpi(test_tmp_path("mpirun")));
    cr_expect(launch_mpirun_is_openmpi(test_tmp_path("orterun")));
}

Test(launch, openmpi_detected_by_its_own_names_without_links)
{
    const char *names[] = { "prterun", "mpirun.openmpi", "mpiexec.openmpi" };
    for (int i = 0; i < 3; i++) {
        make_file(test_tmp_path(names[i]), 0755);
        cr_expect(launch_mpirun_is_openmpi(test_tmp_path(names[i])), "%s", names[i]);
    }
}

Test(launch, mpich_is_not_openmpi_even_beside_ompi_info)
{
    /* Debian with both MPIs installed: /usr/bin has ompi_info, and mpirun
     * may resolve to MPICH's Hydra. The name decides. */
    make_file(test_tmp_path("ompi_info"), 0755);
    make_file(test_tmp_path("mpiexec.hydra"), 0755);
    make_file(test_tmp_path("mpirun.mpich"), 0755);
    make_link("mpiexec.hydra", "mpirun");
    cr_expect_not(launch_mpirun_is_openmpi(test_tmp_path("mpirun")));
    cr_expect_not(launch_mpirun_is_openmpi(test_tmp_path("mpirun.mpich")));
}

Test(launch, plain_mpirun_is_openmpi_only_beside_ompi_info)
{
    make_file(test_tmp_path("mpirun"), 0755);
    cr_expect_not(launch_mpirun_is_openmpi(test_tmp_path("mpirun")), "no ompi_info: not Open MPI");
    make_file(test_tmp_path("ompi_info"), 0755);
    cr_expect(launch_mpirun_is_openmpi(test_tmp_path("mpirun")), "Open MPI 5 / prefix install shape");
}

Test(launch, openmpi_detection_is_false_for_missing_or_dangling_paths)
{
    cr_expect_not(launch_mpirun_is_openmpi(test_tmp_path("nothing")));
    make_link("nothing", "dangling");
    cr_expect_not(launch_mpirun_is_openmpi(test_tmp_path("dangling")));
    make_link("loop-b", "loop-a");
    make_link("loop-a", "loop-b");
    cr_expect_not(launch_mpirun_is_openmpi(test_tmp_path("loop-a")));
    cr_expect_not(launch_mpirun_is_openmpi(""));
    cr_expect_not(launch_mpirun_is_openmpi(NULL));
}

Test(launch, installed_mpirun_is_recognised_as_openmpi)
{
    char path[LAUNCH_PATH_BYTES];
    if (access("/usr/bin/ompi_info", X_OK) != 0 || access("/usr/bin/mpirun", X_OK) != 0)
        cr_skip_test("Open MPI is not installed in /usr/bin");
    snprintf(path, sizeof path, "/usr/bin/mpirun");
    cr_expect(launch_mpirun_is_openmpi(path), "tools/setup installs openmpi-bin");
}

/* ---- launch_prepare_env ---- */

static const char *const root_vars[] = { "OMPI_ALLOW_RUN_AS_ROOT",
                                         "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
                                         "PRTE_ALLOW_RUN_AS_ROOT",
                                         "PRTE_ALLOW_RUN_AS_ROOT_CONFIRM" };

static void unset_launch_env(void)
{
    for (int i = 0; i < 4; i++) unsetenv(root_vars[i]);
    unsetenv("STRATA_PROGRESS");
}

Test(launch, prepare_env_as_root_allows_openmpi_to_run)
{
    if (geteuid() != 0) cr_skip_test("needs root (it sets the variables only for root)");
    unset_launch_env();
    struct err e = {0};
    cr_assert_eq(launch_prepare_env(true, false, &e), 0, "%s", e.msg);
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(root_vars[i]);
        cr_expect(v && !strcmp(v, "1"), "%s=%s", root_vars[i], v ? v : "(unset)");
    }
    cr_expect_null(getenv("STRATA_PROGRESS"));
}

Test(launch, prepare_env_keeps_what_the_user_set)
{
    unset_launch_env();
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "0", 1);
    setenv("STRATA_PROGRESS", "0", 1);
    struct err e = {0};
    cr_assert_eq(launch_prepare_env(true, false, &e), 0, "%s", e.msg);
    cr_expect_str_eq(getenv("OMPI_ALLOW_RUN_AS_ROOT"), "0");
    cr_expect_str_eq(getenv("STRATA_PROGRESS"), "0", "!show_progress leaves it alone");
}

Test(launch, prepare_env_sets_nothing_for_other_launchers)
{
    unset_launch_env();
    struct err e = {0};
    cr_assert_eq(launch_prepare_env(false, false, &e), 0, "%s", e.msg);
    for (int i = 0; i < 4; i++) cr_expect_null(getenv(root_vars[i]), "%s", root_vars[i]);
    cr_expect_null(getenv("STRATA_PROGRESS"));
}

Test(launch, prepare_env_passes_progress_to_the_ranks)
{
    unset_launch_env();
    setenv("STRATA_PROGRESS", "0", 1);
    struct err e = {0};
    cr_assert_eq(launch_prepare_env(false, true, &e), 0, "%s", e.msg);
    cr_expect_str_eq(getenv("STRATA_PROGRESS"), "1");
}

/* ---- launch_run, launch_exec ---- */

/* Runs /bin/sh -c script through launch_run; returns its exit code. */
static int run_sh(const char *script, const char *stdout_path)
{
    char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
    int code = -2;
    struct err e = {0};
    cr_assert_eq(launch_run(argv, stdout_path, &code, &e), 0, "%s: %s", script, e.msg);
    return code;
}

Test(launch, run_returns_the_exit_status)
{
    cr_expect_eq(run_sh("exit 3", NULL), 3);
    cr_expect_eq(run_sh("exit 0", NULL), 0);
    cr_expect_eq(run_sh("exit 255", NULL), 255);
}

Test(launch, run_reports_a_signal_death_as_128_plus_signo)
{
    cr_expect_eq(run_sh("kill -9 $$", NULL), 128 + SIGKILL);
    cr_expect_eq(run_sh("kill -TERM $$", NULL), 128 + SIGTERM);
}

Test(launch, run_gives_the_job_sigint_back_and_restores_ours)
{
    /* launch_run ignores SIGINT while it waits; the job must not inherit
     * that (it would survive Ctrl-C), and our handler comes back after. */
    cr_assert_eq(signal(SIGINT, SIG_DFL) != SIG_ERR, true);
    cr_expect_eq(run_sh("kill -INT $$", NULL), 128 + SIGINT);
    struct sigaction now;
    sigaction(SIGINT, NULL, &now);
    cr_expect_eq(now.sa_handler, SIG_DFL);
    /* A caller that ignores SIGINT keeps that for its job, as with system(). */
    signal(SIGINT, SIG_IGN);
    cr_expect_eq(run_sh("kill -INT $$; exit 4", NULL), 4);
    sigaction(SIGINT, NULL, &now);
    cr_expect_eq(now.sa_handler, SIG_IGN);
}

static volatile sig_atomic_t interrupts_seen;

static void count_interrupt(int sig)
{
    (void)sig;
    interrupts_seen++;
}

/* Ctrl-C reaches the caller and its job alike. The job that ended of it
 * (strata real exits 130) was taken for a failed run: compare --mode real
 * and calibrate exited 1 with "exited with status 130" and went on. Now
 * the caller's own SIGINT handling runs once the job is reaped; a SIGINT
 * the job alone got, or one the job outlived, leaves the caller be. */
Test(launch, run_raises_a_ctrl_c_that_ended_the_job_again_in_the_caller)
{
    struct sigaction count = {0}, old;
    count.sa_handler = count_interrupt;
    sigemptyset(&count.sa_mask);
    sigaction(SIGINT, &count, &old);
    interrupts_seen = 0;
    cr_expect_eq(run_sh("kill -INT $PPID; exit 130", NULL), 130);
    cr_expect_eq(interrupts_seen, 1, "the caller's handler ran %d times, not once",
                 (int)interrupts_seen);
    interrupts_seen = 0;
    cr_expect_eq(run_sh("kill -INT $PPID; exit 0", NULL), 0);
    cr_expect_eq(interrupts_seen, 0, "a job that went on after Ctrl-C ended its caller");
    cr_expect_eq(run_sh("exit 130", NULL), 130);
    cr_expect_eq(interrupts_seen, 0, "a job's own 130, no Ctrl-C here, ended its caller");
    sigaction(SIGINT, &old, NULL);
}

Test(launch, run_sends_stdout_to_the_file_and_leaves_stderr)
{
    const char *out = test_tmp_path("out.txt");
    FILE *f = fopen(out, "w");
    cr_assert_not_null(f);
    fputs("old contents, longer than the new ones\n", f);
    fclose(f);
    cr_expect_eq(run_sh("echo hello; echo to-stderr >&2; exit 5", out), 5);
    char *got = test_slurp(out);
    cr_expect_str_eq(got, "hello\n", "truncated, then only stdout");
    free(got);
}

Test(launch, run_stdout_file_works_with_our_stdout_closed)
{
    /* With fd 1 closed, open() returns 1 itself; the job must still get the
     * file as its stdout. (glibc 2.36 clears close-on-exec on dup2(1, 1)
     * itself, as POSIX 2017 asks; launch_run does not rely on it.) */
    int keep = dup(STDOUT_FILENO);
    close(STDOUT_FILENO);
    int code = run_sh("echo via-closed-stdout", test_tmp_path("out.txt"));
    dup2(keep, STDOUT_FILENO);
    close(keep);
    cr_expect_eq(code, 0);
    char *got = test_slurp(test_tmp_path("out.txt"));
    cr_expect_str_eq(got, "via-closed-stdout\n");
    free(got);
}

Test(launch, run_of_a_missing_program_is_an_error_not_127)
{
    char *argv[] = { test_tmp_path("no-such-program"), NULL };
    int code = 0;
    struct err e = {0};
    cr_expect_eq(launch_run(argv, NULL, &code, &e), ERR_RUN);
    cr_expect_eq(code, -1);
    cr_expect(strstr(e.msg, "no-such-program"), "message names it: %s", e.msg);
    cr_expect(strstr(e.msg, "No such file"), "message: %s", e.msg);

    make_file(test_tmp_path("not-exec"), 0644);
    argv[0] = test_tmp_path("not-exec");
    e = (struct err){0};
    cr_expect_eq(launch_run(argv, NULL, &code, &e), ERR_RUN);
    cr_expect(strstr(e.msg, "not executable"), "message: %s", e.msg);
}

Test(launch, run_reports_an_unwritable_stdout_file)
{
    char *argv[] = { "/bin/true", NULL };
    int code = 0;
    struct err e = {0};
    cr_expect_eq(launch_run(argv, test_tmp_path("no-dir/out.txt"), &code, &e), ERR_IO);
    cr_expect_eq(code, -1);
    cr_expect(strstr(e.msg, "no-dir/out.txt"), "message: %s", e.msg);
}

Test(launch, exec_replaces_the_process_and_reports_failure)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char *argv[] = { "/bin/sh", "-c", "exit 7", NULL };
        launch_exec(argv, NULL);
        _exit(99);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status %d", status);

    char *argv[] = { test_tmp_path("no-launcher"), "-np", "2", NULL };
    struct err e = {0};
    cr_expect_eq(launch_exec(argv, &e), ERR_RUN);
    cr_expect(strstr(e.msg, "no-launcher"), "message: %s", e.msg);
    cr_expect(strstr(e.msg, "STRATA_MPIRUN"), "message says what to do: %s", e.msg);
}

/* ---- launch_self_path ---- */

Test(launch, self_path_is_this_executable)
{
    char path[LAUNCH_PATH_BYTES];
    struct err e = {0};
    cr_assert_eq(launch_self_path("test_launch", path, sizeof path, &e), 0, "%s", e.msg);
    cr_expect_eq(path[0], '/', "absolute: %s", path);
    cr_expect_eq(access(path, X_OK), 0, "%s: %s", path, strerror(errno));
    cr_expect(strstr(path, "test_launch"), "%s", path);

    char tiny[4];
    e = (struct err){0};
    cr_expect_lt(launch_self_path("test_launch", tiny, sizeof tiny, &e), 0);
}

/* ---- a real MPI job ---- */

/* The installed launcher, with the environment launch_prepare_env makes;
 * skips the test when there is none. */
static bool find_real_mpirun(char *path, size_t n)
{
    unsetenv("STRATA_MPIRUN");
    setenv("PATH", "/usr/bin:/bin", 1);
    struct err e = {0};
    if (launch_find_mpirun(path, n, &e) < 0) return false;
    e = (struct err){0};
    cr_assert_eq(launch_prepare_env(launch_mpirun_is_openmpi(path), false, &e), 0, "%s",
                 e.msg);
    return true;
}

Test(launch, mpirun_np_2_of_true_exits_0_and_of_false_exits_nonzero, .timeout = 60)
{
    char mpirun[LAUNCH_PATH_BYTES];
    if (!find_real_mpirun(mpirun, sizeof mpirun)) cr_skip_test("no mpirun in /usr/bin:/bin");
    bool is_ompi = launch_mpirun_is_openmpi(mpirun);
    struct err e = {0};
    char **argv = launch_build_argv(mpirun, is_ompi, 2, LAUNCH_BIND_NONE, "/bin/true", 0, NULL, &e);
    cr_assert_not_null(argv, "%s", e.msg);
    int code = -2;
    cr_assert_eq(launch_run(argv, NULL, &code, &e), 0, "%s", e.msg);
    cr_expect_eq(code, 0, "mpirun -np 2 /bin/true");
    launch_argv_free(argv);

    argv = launch_build_argv(mpirun, is_ompi, 2, LAUNCH_BIND_NONE, "/bin/false", 0, NULL, &e);
    cr_assert_not_null(argv, "%s", e.msg);
    cr_assert_eq(launch_run(argv, test_tmp_path("out.txt"), &code, &e), 0, "%s", e.msg);
    cr_expect_neq(code, 0, "a failing rank fails the job");
    launch_argv_free(argv);
}

/* ---- launch_self_as_job ---- */

/* A stand-in launcher at path: writes its arguments and the STRATA_PROGRESS
 * it was given to args.txt beside it, and exits 3. Not Open MPI's (no
 * ompi_info beside it), so it gets no Open MPI options. */
static void make_recording_launcher(const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
    fprintf(f, "#!/bin/sh\necho \"$*\" > '%s/args.txt'\necho \"progress=$STRATA_PROGRESS\" "
            ">> '%s/args.txt'\nexit 3\n", test_tmp_dir, test_tmp_dir);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0, "chmod %s: %s", path, strerror(errno));
}

Test(launch, self_as_job_runs_this_program_under_the_launcher_and_returns_its_status)
{
    make_recording_launcher(test_tmp_path("fake-mpirun"));
    setenv("STRATA_MPIRUN", test_tmp_path("fake-mpirun"), 1);
    unsetenv("STRATA_PROGRESS");
    char self[LAUNCH_PATH_BYTES];
    struct err e = {0};
    cr_assert_eq(launch_self_path("test_launch", self, sizeof self, &e), 0, "%s", e.msg);
    char *args[] = {"--np", "3", "--strategy", "mirrored"};
    int code = -2;
    cr_assert_eq(launch_self_as_job("real", 4, args, 3, "none", NULL, true, &code, &e), 0, "%s", e.msg);
    cr_expect_eq(code, 3, "the job's own exit status");
    char want[2 * LAUNCH_PATH_BYTES];
    snprintf(want, sizeof want, "-np 3 %s real --np 3 --strategy mirrored\nprogress=1\n", self);
    char *got = test_slurp(test_tmp_path("args.txt"));
    cr_expect_str_eq(got, want);
    free(got);
}

/* Each step that can fail before the job starts fails cleanly: the error
 * names what to fix, the status is -1, and nothing stays allocated (the
 * sanitizer build checks the last). */
Test(launch, self_as_job_reports_a_missing_launcher_and_a_binding_it_cannot_give)
{
    char *args[] = {"--devices", "2"};
    int code = 0;
    struct err e = {0};
    setenv("STRATA_MPIRUN", test_tmp_path("no-such-mpirun"), 1);
    cr_expect_eq(launch_self_as_job("calibrate", 2, args, 2, NULL, NULL, false, &code, &e), ERR_INPUT);
    cr_expect_eq(code, -1);
    cr_expect(strstr(e.msg, "STRATA_MPIRUN="), "message: %s", e.msg);

    make_recording_launcher(test_tmp_path("fake-mpirun"));
    setenv("STRATA_MPIRUN", test_tmp_path("fake-mpirun"), 1);
    e = (struct err){0};
    cr_expect_eq(launch_self_as_job("calibrate", 2, args, 2, "core", NULL, false, &code, &e),
                 ERR_INPUT);
    cr_expect_eq(code, -1);
    cr_expect(strstr(e.msg, "--bind core"), "message: %s", e.msg);
    cr_expect_eq(access(test_tmp_path("args.txt"), F_OK), -1, "the launcher never ran");
}
