/* strata real with pipelined-steps: the built binary (STRATA_BIN) trains
 * on 2 MPI ranks (oversubscribed: strata passes --oversubscribe itself).
 * With one step in flight its parameters equal one device's within 1e-5
 * relative (tests/helpers expect_params_match), as mirrored's do; with two,
 * each step's nonblocking all-reduce runs during the next step's compute
 * on its own gradient block, and the run still trains: a finite, falling
 * loss, and every applied update exactly one step stale after the first. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <math.h>
#include <stdio.h>

#define MODEL "mlp:784-32-16-10"
#define SAME_RUN "--seed", "7", "--batch", "64", "--steps", "12", "--data", "synthetic", \
                 "--model", MODEL

TEST_SUITE_WITH_TMP_DIR(real_pipelined_steps, .timeout = 180);

static void run_real_ok(const char *const *args)
{
    struct run r = run_strata(args);
    int status = r.status;
    cr_expect_eq(status, 0, "strata real exited %d; stderr:\n%s", status, r.err);
    run_free(&r);
    cr_assert_eq(status, 0);
}

Test(real_pipelined_steps, one_in_flight_on_2_ranks_equals_one_device)
{
    char ref[128], path[128];
    snprintf(ref, sizeof ref, "%s/one-device.params", test_tmp_dir);
    snprintf(path, sizeof path, "%s/k1.params", test_tmp_dir);
    run_real_ok((const char *const[]){"real", "--strategy", "mirrored", "--np", "1", SAME_RUN,
                                      "--save-params", ref, NULL});
    run_real_ok((const char *const[]){"real", "--strategy", "pipelined-steps", "--inflight",
                                      "1", "--np", "2", SAME_RUN, "--save-params", path, NULL});
    expect_params_match(path, ref, -1, "pipelined-steps K=1 on 2 ranks");
}

Test(real_pipelined_steps, two_in_flight_on_2_ranks_train_with_staleness_one)
{
    const char *json = test_tmp_path("k2.json");
    run_real_ok((const char *const[]){"real", "--strategy", "pipelined-steps", "--inflight",
                                      "2", "--np", "2", SAME_RUN, "--json", json, NULL});
    cJSON *rep = read_json(json);
    const cJSON *curve = cJSON_GetObjectItem(rep, "loss_curve");
    int n = cJSON_GetArraySize(curve);
    cr_assert_eq(n, 12);
    double first = cJSON_GetArrayItem(cJSON_GetArrayItem(curve, 0), 2)->valuedouble;
    double last = cJSON_GetArrayItem(cJSON_GetArrayItem(curve, n - 1), 2)->valuedouble;
    cr_assert(isfinite(last) && last < first, "loss %g -> %g", first, last);
    /* 11 updates of 2 workers: step 0's applied at step 1 on fresh
     * parameters (staleness 0), the other 10 one step stale */
    cr_assert_eq(num_at(rep, "staleness", "max"), 1);
    const cJSON *hist = cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "staleness"), "histogram");
    cr_assert_eq(cJSON_GetArraySize(hist), 2);
    cr_assert_eq(cJSON_GetArrayItem(hist, 0)->valuedouble, 2);
    cr_assert_eq(cJSON_GetArrayItem(hist, 1)->valuedouble, 20);
    cJSON_Delete(rep);
}
