/* real/hostfile.c (--hostfile checked) and its place in the relaunch's
 * command line (real/launch.c, launch_self_job_argv). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../real/hostfile.h"
#include "../real/launch.h"
#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(hostfile);

Test(hostfile, counts_hosts_and_slots_in_open_mpi_and_mpich_forms)
{
    const char *path = test_tmp_file("hosts", "# a comment\n"
                                              "\n"
                                              "node1 slots=4 max_slots=8   # trailing comment\n"
                                              "node2:2\n"
                                              "10.0.0.3\n"
                                              "[fe80::1] slots=1\n");
    struct hostfile_summary h;
    struct err e = {0};
    cr_assert_eq(hostfile_check(path, &h, &e), 0, "%s", e.msg);
    cr_expect_eq(h.n_lines, 4);
    cr_expect_eq(h.n_slots, 7, "4 + 2 + 1 slots given");
    cr_expect_eq(h.n_without_slots, 1, "10.0.0.3 gives none");
    /* the fixture's own file is valid: 2 hosts of 2 slots */
    cr_assert_eq(hostfile_check(STRATA_SOURCE_DIR "/tools/two-hosts/hostfile", &h, &e), 0, "%s",
                 e.msg);
    cr_expect_eq(h.n_lines, 2);
    cr_expect_eq(h.n_slots, 4);
}

Test(hostfile, refuses_what_mpirun_would_not_take_naming_file_and_line)
{
    static const struct { const char *text, *must_say; } bad[] = {
        {"node1 slots=0\n", "slots=0"},
        {"node1 slots=x\n", "slots=x"},
        {"node1 slots\n", "KEY=N"},
        {"node1 cpus=2\n", "cpus"},
        {"node1:0\n", "after ':'"},
        {"no/de slots=1\n", "not a host name"},
        {"-1 slots=1\n", "not starting with '-'"},   /* mpirun would read an option */
        {"# only a comment\n\n", "no host"},
        {"node1 slots=99999999999999999999\n", "KEY=N"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = test_tmp_file("bad-hosts", bad[i].text);
        struct hostfile_summary h;
        struct err e = {0};
        cr_expect_eq(hostfile_check(path, &h, &e), ERR_INPUT, "'%s' is refused", bad[i].text);
        cr_expect(strstr(e.msg, "--hostfile") && strstr(e.msg, bad[i].must_say),
                  "'%s': message '%s' names --hostfile and %s", bad[i].text, e.msg,
                  bad[i].must_say);
    }
    struct hostfile_summary h;
    struct err e = {0};
    cr_expect_eq(hostfile_check(test_tmp_path("missing"), &h, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "cannot read"), "%s", e.msg);
    cr_expect_eq(hostfile_check("", &h, &e), ERR_INPUT);
    const char *nul = test_tmp_file("nul-hosts", "node1\n");
    FILE *f = fopen(nul, "ab");
    cr_assert(f);
    fputc('\0', f);
    fclose(f);
    cr_expect_eq(hostfile_check(nul, &h, &e), ERR_INPUT, "a NUL byte is refused, not a crash");
}

/* argv[i] == want, for messages. */
static int find_word(char **argv, const char *want)
{
    for (int i = 0; argv[i]; i++)
        if (!strcmp(argv[i], want)) return i;
    return -1;
}

Test(hostfile, the_relaunch_passes_it_before_np_and_binds_to_none)
{
    const char *path = STRATA_SOURCE_DIR "/tools/two-hosts/hostfile";
    char *args[] = {(char *)"--np", (char *)"4"};
    bool is_openmpi = false;
    struct err e = {0};
    char **job = launch_self_job_argv("real", 2, args, 4, NULL, path, &is_openmpi, &e);
    cr_assert(job, "%s", e.msg);
    int at = find_word(job, "--hostfile"), np = find_word(job, "-np");
    cr_expect_geq(at, 1);
    cr_expect_str_eq(job[at + 1], path);
    cr_expect_lt(at, np, "--hostfile FILE is mpirun's, before -np and the program");
    if (is_openmpi) {
        int bind = find_word(job, "--bind-to");
        cr_expect(bind >= 0 && !strcmp(job[bind + 1], "none"),
                  "--bind auto with hosts listed is none: this machine's cores say nothing of "
                  "theirs");
    }
    launch_argv_free(job);
    /* a bad file stops the relaunch before any launcher is looked for */
    job = launch_self_job_argv("real", 2, args, 4, NULL, test_tmp_path("missing"), &is_openmpi,
                               &e);
    cr_expect_null(job);
    cr_expect_eq(e.code, ERR_INPUT);
    cr_expect(strstr(e.msg, "--hostfile"), "%s", e.msg);
    /* none given: no --hostfile in the job */
    job = launch_self_job_argv("real", 2, args, 2, "none", "", &is_openmpi, &e);
    cr_assert(job, "%s", e.msg);
    cr_expect_eq(find_word(job, "--hostfile"), -1);
    launch_argv_free(job);
}
