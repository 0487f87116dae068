/* Two MPI hosts made on this machine (tools/two-hosts: 127.0.0.2 and
 * 127.0.0.3, each daemon started locally under a host name of its own,
 * shared memory within a host and TCP between), and what strata does
 * across them: real runs with ranks on both hosts, whose reports map each
 * host to its ranks (real/host_map.h), and calibrate, which times the links
 * inside a node and between nodes apart (bench/calibrate_nodes.c).
 *
 * The synchronous strategies still owe one device's parameters within
 * 1e-5 relative (tests/helpers.h, expect_params_match); ps-async owes a
 * finite loss that falls. The links are checked by their ordering only
 * (TCP between hosts slower than shared memory within one), never by
 * their size: the machine is shared and loaded. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/cluster.h"
#include "helpers.h"

#define FIXTURE STRATA_SOURCE_DIR "/tools/two-hosts/run"
#define HOSTFILE STRATA_SOURCE_DIR "/tools/two-hosts/hostfile"
/* 784 inputs (the synthetic data's), 4 layers so that 4 stages fit */
#define MODEL "mlp:784-64-32-16-10"
#define SAME_RUN "--data", "synthetic", "--model", MODEL, "--seed", "7", "--batch", "64", \
                 "--microbatches", "4", "--steps", "8"

TEST_SUITE_WITH_TMP_DIR(two_hosts, .timeout = 240);

/* The fixture tells its hosts apart by a UTS namespace each (tools/two-hosts/
 * rsh-agent): where none can be made (a container without CAP_SYS_ADMIN and
 * no user namespaces), both "hosts" keep this machine's name and MPI sees
 * one node, so the tests that need two are skipped, saying why. */
/* Under AddressSanitizer (tools/test --sanitize) Open MPI's own
 * allocations are suppressed by library name (tools/lsan-mpi.supp), which
 * needs their stacks; the fast unwinder loses them in libraries built
 * without frame pointers, as MPI_Comm_split_type's allocations on the
 * second host showed (frames named strata+0x... past the binary's end).
 * The slow unwinder costs only these few jobs. */
static void precise_leak_stacks(void)
{
    const char *asan = getenv("ASAN_OPTIONS");
    if (!asan || strstr(asan, "fast_unwind_on_malloc")) return;
    char options[512];
    snprintf(options, sizeof options, "%s:fast_unwind_on_malloc=0", asan);
    setenv("ASAN_OPTIONS", options, 1);
}

static void two_hosts_or_skip(void)
{
    precise_leak_stacks();
    if (system("unshare --uts true 2>/dev/null || "
               "unshare --user --map-root-user --uts true 2>/dev/null") != 0)
        cr_skip_test("cannot make a UTS namespace here (unshare --uts, as root or in a user "
                     "namespace): the two-host fixture needs one host name a host");
}

/* The command, which must exit 0 (stderr shown when it does not). */
static void run_ok(const char *const *argv)
{
    struct run r = run_argv(argv);
    int status = r.status;
    cr_expect_eq(status, 0, "%s exited %d; stderr:\n%s", argv[1], status, r.err);
    run_free(&r);
    cr_assert_eq(status, 0);
}

/* One device's parameters after SAME_RUN, the reference. */
static const char *one_device_params(void)
{
    const char *path = test_tmp_path("one.params");
    run_ok((const char *const[]){STRATA_BIN, "real", "--strategy", "mirrored", "--np", "1",
                                 SAME_RUN, "--save-params", path, NULL});
    return path;
}

/* The report's "hosts" map names two hosts, ranks 0..half-1 on the first
 * and half..n-1 on the second: the hostfile's slots=2 each, filled in
 * order (mpirun's --map-by slot). */
static void expect_two_hosts(const cJSON *rep, int n_ranks)
{
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(rep, "hosts");
    cr_assert(cJSON_IsObject(hosts), "the real report has a \"hosts\" object");
    cr_assert_eq(cJSON_GetArraySize(hosts), 2, "ranks on 2 hosts, not %d",
                 cJSON_GetArraySize(hosts));
    const cJSON *first = hosts->child, *second = first->next;
    cr_expect_str_neq(first->string, second->string);
    cr_expect(strstr(first->string, "127-0-0-2") && strstr(second->string, "127-0-0-3"),
              "hosts named by the fixture's addresses: %s, %s", first->string, second->string);
    int half = n_ranks / 2;
    cr_assert_eq(cJSON_GetArraySize(first), half);
    cr_assert_eq(cJSON_GetArraySize(second), n_ranks - half);
    for (int r = 0; r < n_ranks; r++) {
        const cJSON *list = r < half ? first : second;
        int at = r < half ? r : r - half;
        cr_expect_eq(cJSON_GetArrayItem(list, at)->valueint, r, "rank %d on %s", r,
                     list->string);
    }
}

/* `strata real --hostfile` under the fixture: ranks on both hosts. */
static cJSON *run_across(const char *strategy, const char *np, const char *params,
                         const char *json)
{
    run_ok((const char *const[]){FIXTURE, STRATA_BIN, "real", "--hostfile", HOSTFILE,
                                 "--strategy", strategy, "--np", np, SAME_RUN, "--save-params",
                                 params, "--json", json, NULL});
    cJSON *rep = read_json(json);
    cr_assert(rep, "%s wrote its report", strategy);
    return rep;
}

Test(two_hosts, mirrored_and_1f1b_across_two_hosts_equal_one_device_and_map_their_hosts)
{
    two_hosts_or_skip();
    const char *ref = one_device_params();
    static const char *const strategies[] = {"mirrored", "pipeline-1f1b"};
    for (int i = 0; i < 2; i++) {
        char params[64], json[64], what[96];
        snprintf(params, sizeof params, "%s.params", strategies[i]);
        snprintf(json, sizeof json, "%s.json", strategies[i]);
        snprintf(what, sizeof what, "%s on 4 ranks over 2 hosts", strategies[i]);
        cJSON *rep = run_across(strategies[i], "4", test_tmp_path(params), test_tmp_path(json));
        expect_two_hosts(rep, 4);
        cJSON_Delete(rep);
        expect_params_match(test_tmp_path(params), ref, -1, what);
    }
}

/* The mean loss of curve's points [from, from + n). */
static double mean_loss(const cJSON *curve, int from, int n)
{
    double sum = 0;
    for (int i = from; i < from + n; i++)
        sum += cJSON_GetArrayItem(cJSON_GetArrayItem(curve, i), 2)->valuedouble;
    return sum / n;
}

/* ps-async as tests/test_real.c runs it (a 2-layer model, lr 0.02,
 * momentum 0.5: asynchrony adds momentum of its own), now with 3 workers
 * and the server (rank 3) spread over the two hosts. */
Test(two_hosts, ps_async_across_two_hosts_learns_and_maps_its_server)
{
    two_hosts_or_skip();
    const char *json = test_tmp_path("async.json");
    run_ok((const char *const[]){FIXTURE, STRATA_BIN, "real", "--hostfile", HOSTFILE,
                                 "--strategy", "ps-async", "--np", "3", "--data", "synthetic",
                                 "--model", "mlp:784-64-10", "--batch", "192", "--lr", "0.02",
                                 "--momentum", "0.5", "--steps", "30", "--json", json, NULL});
    cJSON *rep = read_json(json);
    cr_assert(rep, "ps-async wrote its report");
    expect_two_hosts(rep, 4);
    const cJSON *curve = cJSON_GetObjectItemCaseSensitive(rep, "loss_curve");
    cr_assert_eq(cJSON_GetArraySize(curve), 30, "a loss curve of the 30 steps");
    double first = mean_loss(curve, 0, 5), last = mean_loss(curve, 25, 5);
    cr_expect(isfinite(first) && isfinite(last) && last < first,
              "ps-async's loss falls across hosts: first 5 steps %.4f, last 5 %.4f", first, last);
    cr_expect_lt(last, log(10.0), "the last 5 steps' mean loss %.4f is no better than chance",
                 last);
    cJSON_Delete(rep);
}

Test(two_hosts, calibrate_across_two_hosts_tells_the_links_apart_and_the_simulator_loads_it)
{
    two_hosts_or_skip();
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);   /* the user's own mpirun, as CI runs it */
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    const char *profile = test_tmp_path("two-hosts.profile");
    /* 3 ranks: 0 and 1 on the first host (intra), 2 on the second (inter) */
    run_ok((const char *const[]){FIXTURE, "mpirun", "--hostfile", HOSTFILE, "-np", "3",
                                 STRATA_BIN, "calibrate", "--data", "synthetic", "--model",
                                 "mlp:784-32-10", "--batch", "32", "-o", profile, NULL});
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(profile, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(c.measured_nodes, 2);
    cr_expect_eq(c.devices_per_node, 2);
    /* The latency orders the two links: a TCP round trip through the
     * kernel's loopback takes several times shared memory's (about 6 us
     * against 1.2 us measured here, under load). Their bandwidths differ
     * less (about 2x), and a loaded machine's fit can put them level, so
     * the 64 KiB time by each fit is logged, not checked. */
    cr_expect_lt(c.intra.latency_s, c.inter.latency_s, "intra alpha %.3g s < inter %.3g s",
                 c.intra.latency_s, c.inter.latency_s);
    double bytes = 65536;
    cr_log_info("64 KiB by the fits: intra %.2f us, inter %.2f us",
                (c.intra.latency_s + bytes / c.intra.bw_bytes_per_s) * 1e6,
                (c.inter.latency_s + bytes / c.inter.bw_bytes_per_s) * 1e6);
    /* and the simulator takes it, hierarchical all-reduce and all */
    run_ok((const char *const[]){STRATA_BIN, "sim", "--strategy", "mirrored", "--cluster",
                                 profile, "--allreduce", "hierarchical", "--devices", "4",
                                 "--steps", "2", NULL});
}

/* validate --hostfile: each cell twice, on this machine and across the
 * hosts, each with its row (the errors themselves are the load's: not
 * checked). */
Test(two_hosts, validate_with_a_hostfile_runs_each_cell_on_one_host_and_across)
{
    two_hosts_or_skip();
    const char *json = test_tmp_path("validate.json");
    run_ok((const char *const[]){FIXTURE, STRATA_BIN, "validate", "--hostfile", HOSTFILE,
                                 "--cluster", "cpu-loopback", "--np", "4", "--strategies",
                                 "mirrored", "--data", "synthetic", "--model", MODEL, "--steps",
                                 "5", "--json", json, NULL});
    cJSON *doc = read_json(json);
    cr_assert(doc);
    const cJSON *cells = cJSON_GetObjectItemCaseSensitive(doc, "cells");
    cr_assert_eq(cJSON_GetArraySize(cells), 2, "a cell on one host and one across");
    for (int i = 0; i < 2; i++) {
        const cJSON *c = cJSON_GetArrayItem(cells, i);
        const cJSON *across = cJSON_GetObjectItemCaseSensitive(c, "across_hosts");
        cr_assert(cJSON_IsBool(across));
        cr_expect_eq(cJSON_IsTrue(across), i == 1, "cell %d across_hosts", i);
        const cJSON *rows = cJSON_GetObjectItemCaseSensitive(c, "rows");
        cr_assert_eq(cJSON_GetArraySize(rows), 1);
        const cJSON *measured = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0),
                                                                  "measured");
        const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(measured, "hosts");
        cr_expect_eq(cJSON_GetArraySize(hosts), i == 1 ? 2 : 1,
                     "the measured run of cell %d on %d host(s)", i, cJSON_GetArraySize(hosts));
    }
    cJSON_Delete(doc);
}

Test(two_hosts, a_bad_hostfile_exits_2_naming_it_before_any_job)
{
    expect_refused(RUN("real", "--hostfile", "/nonexistent/hosts", "--np", "2", "--data",
                       "synthetic"),
                   "--hostfile", "/nonexistent/hosts");
    const char *bad = test_tmp_file("bad-hosts", "127.0.0.2 slots=two\n");
    expect_refused(RUN("real", "--hostfile", bad, "--np", "2", "--data", "synthetic"),
                   "--hostfile", "slots=two");
    const char *odd = test_tmp_file("odd-hosts", "127.0.0.2 cpus=2\n");
    expect_refused(RUN("real", "--hostfile", odd, "--np", "2", "--data", "synthetic"),
                   "--hostfile", "cpus");
    const char *empty = test_tmp_file("empty-hosts", "# nothing\n\n");
    expect_refused(RUN("real", "--hostfile", empty, "--np", "2", "--data", "synthetic"),
                   "--hostfile", "no host");
}
