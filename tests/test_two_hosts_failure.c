/* `strata real --hostfile` supervised across two hosts that share nothing
 * but the disks (tools/two-hosts/run --private: the second host, 127.0.0.3,
 * has its own /tmp, /dev/shm and a clean environment): its rank's
 * heartbeats reach the supervisor over TCP (real/heartbeat_net.h), its
 * death is noticed from its closed connection, and the run recovers from
 * commits and checkpoints in --checkpoint-dir, the one directory both hosts
 * see; without --checkpoint-dir a policy that needs one is refused.
 *
 * Each run puts rank 0 on the first host and rank 1 on the second (a
 * hostfile of one slot each). Before this part, the same runs failed: the
 * checkpoint of step 2 could not be made from the second host ("cannot make
 * the checkpoint directory", its /dev/shm is not the supervisor's), and
 * without checkpoints the death of rank 1 was blamed on rank 0 (rank 1's
 * heartbeat file was never seen). No timing is asserted tightly: the
 * machine is shared; the bounds are generous. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../real/heartbeat.h"
#include "../real/heartbeat_net.h"
#include "helpers.h"

#define FIXTURE STRATA_SOURCE_DIR "/tools/two-hosts/run"
#define MODEL "mlp:784-64-32-16-10"

TEST_SUITE_WITH_TMP_DIR(two_hosts_failure, .timeout = 180);

static void private_hosts_or_skip(void)
{
    if (system("unshare --uts --mount true 2>/dev/null || "
               "unshare --user --map-root-user --uts --mount true 2>/dev/null") != 0)
        cr_skip_test("cannot make a UTS and mount namespace here (unshare --uts --mount, as "
                     "root or in a user namespace): the private two-host fixture needs them");
}

/* One slot a host: rank 0 on 127.0.0.2 (this machine's /tmp), rank 1 on
 * 127.0.0.3 (its own). */
static const char *hostfile(void)
{
    return test_tmp_file("hosts", "127.0.0.2 slots=1\n127.0.0.3 slots=1\n");
}

/* A directory both hosts see: under the working directory (the build
 * directory, on disk), not /tmp, which the second host does not share. */
static void make_shared_dir(char *dir, size_t n)
{
    char cwd[2048];
    cr_assert(getcwd(cwd, sizeof cwd));
    snprintf(dir, n, "%s/two-hosts-ckpt-XXXXXX", cwd);
    cr_assert(mkdtemp(dir), "mkdtemp %s", dir);
}

/* The fixture's private hosts: strata real --hostfile, --np 2, the small
 * model, --json into the test directory (its path marks this run's
 * processes), then extra (NULL-ended); stderr to a file. */
static struct test_bg start(const char *const *extra)
{
    const char *argv[48] = {FIXTURE, "--private", STRATA_BIN, "real", "--hostfile", hostfile(),
                            "--data", "synthetic", "--model", MODEL, "--np", "2", "--json",
                            test_tmp_path("report.json")};
    int n = 14;
    for (; *extra; extra++) argv[n++] = *extra;
    argv[n] = NULL;
    return test_bg_start(argv, test_tmp_path("stderr.txt"));
}

/* The value of pid's environment entry NAME=..., into value; false when absent. */
static bool env_entry(pid_t pid, const char *prefix, char *value, size_t n)
{
    return test_proc_has((long)pid, "environ", prefix, true, value, n);
}

static bool cmdline_has(pid_t pid, const char *word)
{
    return test_proc_has((long)pid, "cmdline", word, false, NULL, 0);
}

/* The pid of this run's MPI rank `rank` (the fixture's hosts are this
 * machine's processes), 0 when there is none yet. */
static pid_t rank_pid(int rank)
{
    const char *word = test_tmp_path("report.json");
    char want[16];
    snprintf(want, sizeof want, "%d", rank);
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    pid_t found = 0;
    for (struct dirent *de; !found && (de = readdir(d));) {
        char *end, value[16];
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0 || !cmdline_has((pid_t)pid, word)) continue;
        if (env_entry((pid_t)pid, "OMPI_COMM_WORLD_RANK=", value, sizeof value) &&
            !strcmp(value, want))
            found = (pid_t)pid;
    }
    closedir(d);
    return found;
}

/* Waits until rank 1, on the second host, steps (its heartbeat, kept by
 * the supervisor in the directory rank 0's environment names, says step
 * >= 2); its pid. */
static pid_t wait_remote_stepping(const struct test_bg *b)
{
    for (double t0 = test_now_s(); test_now_s() - t0 < 90; test_sleep_s(0.02)) {
        pid_t zero = rank_pid(0), one = rank_pid(1);
        char hb_dir[4096];
        struct heartbeat_record rec;
        if (zero && one && env_entry(zero, HEARTBEAT_DIR_ENV "=", hb_dir, sizeof hb_dir) &&
            heartbeat_read(hb_dir, 1, &rec) == 0 && rec.state == HEARTBEAT_RUNNING &&
            rec.step >= 2) {
            /* the second host gave its rank nothing of ours but what -x forwards */
            cr_expect(!env_entry(one, HEARTBEAT_DIR_ENV "=", NULL, 0),
                      "rank 1's host shares no environment with the supervisor's");
            cr_expect(env_entry(one, HEARTBEAT_NET_ENV "=", NULL, 0),
                      "rank 1 was given the supervisor's address");
            return one;
        }
        int ws;
        cr_assert_eq(waitpid(b->pid, &ws, WNOHANG), 0, "strata ended before rank 1 stepped");
    }
    cr_assert_fail("rank 1 never started stepping");
    return 0;
}

/* The run ended 0, said that rank 1 died, and its report's failure
 * section has the policy, rank 1 and the workers it ended with; the
 * report maps its ranks to the two hosts when it ended with two. */
static void expect_recovered(const struct test_bg *b, const char *policy, const char *said,
                             int workers_after)
{
    int status = test_bg_finish(b, 150, NULL);
    char *err = test_slurp(b->err_path);
    cr_expect_eq(status, 0, "stderr:\n%s", err);
    cr_expect(strstr(err, "rank 1 died"), "rank 1 (second host) named; stderr:\n%s", err);
    cr_expect(strstr(err, said), "'%s' in stderr:\n%s", said, err);
    free(err);
    cJSON *doc = read_json(test_tmp_path("report.json"));
    cr_assert(doc, "the recovered run wrote its report");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(doc, "failure");
    cr_assert(cJSON_IsObject(f), "the report has a failure section");
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(f, "policy")->valuestring, policy);
    cr_expect_eq(cJSON_GetObjectItemCaseSensitive(f, "rank")->valueint, 1);
    cr_expect_eq(cJSON_GetObjectItemCaseSensitive(f, "workers_after")->valueint, workers_after);
    double detect_s = cJSON_GetObjectItemCaseSensitive(f, "detect_s")->valuedouble;
    /* a closed connection is seen at once; a poll of the files (100 ms)
     * is not what noticed it. Generous: the machine is loaded */
    cr_expect(detect_s >= 0 && detect_s < 5, "detected %.3f s after the death", detect_s);
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(doc, "hosts");
    cr_expect_eq(cJSON_GetArraySize(hosts), workers_after, "ranks on %d host(s)",
                 workers_after);
    cJSON_Delete(doc);
}

/* Skips without the fixture's namespaces; else makes a shared directory
 * into dir and starts mirrored for 10 steps with rank 1 (the second host)
 * killed at step 5 (--fail 1@5), option value, and that directory as
 * --checkpoint-dir. */
static struct test_bg start_killed_at_step_5(char *dir, size_t n, const char *option,
                                             const char *value)
{
    private_hosts_or_skip();
    make_shared_dir(dir, n);
    return start((const char *const[]){"--strategy", "mirrored", "--steps", "10", "--fail", "1@5",
                                       option, value, "--checkpoint-dir", dir, NULL});
}

Test(two_hosts_failure, death_on_the_other_host_is_noticed_and_restarted_from_shared_checkpoints)
{
    char dir[2200];
    struct test_bg b = start_killed_at_step_5(dir, sizeof dir, "--checkpoint-every", "2");
    expect_recovered(&b, "restart", "killed by --fail 1@5", 2);
    char *err = test_slurp(b.err_path);
    cr_expect(strstr(err, "from the checkpoint of step 4"), "stderr:\n%s", err);
    free(err);
    test_remove_dir(dir);
}

Test(two_hosts_failure, shrink_across_hosts_commits_to_the_checkpoint_dir)
{
    char dir[2200];
    struct test_bg b = start_killed_at_step_5(dir, sizeof dir, "--on-failure", "shrink");
    expect_recovered(&b, "shrink", "from the commit of step 5", 1);
    /* the commits' directory was the supervisor's: removed at the end */
    DIR *d = opendir(dir);
    cr_assert(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));) n += de->d_name[0] != '.';
    closedir(d);
    cr_expect_eq(n, 0, "%s is left as it was (empty)", dir);
    test_remove_dir(dir);
}

Test(two_hosts_failure, rank_killed_on_the_other_host_is_noticed_from_its_connection)
{
    private_hosts_or_skip();
    /* --timeout 60: a death seen sooner than that came from the connection */
    struct test_bg b = start((const char *const[]){"--strategy", "mirrored", "--steps", "3000",
                                              "--timeout", "60", NULL});
    pid_t one = wait_remote_stepping(&b);
    double killed_s = test_now_s();
    kill(one, SIGKILL);
    expect_recovered(&b, "restart", "without a word", 2);
    cr_expect_lt(test_now_s() - killed_s, 150, "recovered");
}

Test(two_hosts_failure, policies_that_need_shared_storage_are_refused_without_checkpoint_dir)
{
    const char *hosts = hostfile();
    expect_refused(RUN("real", "--hostfile", hosts, "--np", "2", "--data", "synthetic",
                       "--fail", "1@5", "--on-failure", "shrink"),
                   "--checkpoint-dir", "shrink");
    expect_refused(RUN("real", "--hostfile", hosts, "--np", "2", "--data", "synthetic",
                       "--checkpoint-every", "2"),
                   "--checkpoint-dir", "--checkpoint-every");
    expect_refused(RUN("real", "--hostfile", hosts, "--np", "2", "--data", "synthetic",
                       "--supervisor-address", "192.0.2.1"),
                   "--supervisor-address", "192.0.2.1");
}
