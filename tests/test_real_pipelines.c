/* strata real with the interleaved and zero-bubble pipelines: the built
 * binary (STRATA_BIN) trains on 2 and 4 MPI ranks (oversubscribed: strata
 * passes --oversubscribe itself), and the parameters it saves must equal
 * one device's after the same steps, as every synchronous strategy's do
 * (ARCHITECTURE.md, Numerics): within 1e-5 relative, each parameter
 * compared as |a - b| <= 1e-5 max(|b|, 1e-2), the largest difference
 * logged. The zero-bubble runs execute the split backward for real
 * (mlp_backward_input, then mlp_backward_weight later in the program).
 *
 * The model has 8 layers, so that 4 devices of 2 chunks fit, and the
 * synthetic data set, so that a run takes about a second. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define MODEL "mlp:784-32-32-32-32-32-32-16-10"   /* 8 layers */
/* seed, batch, steps; 4 microbatches divide among 2 or 4 devices */
#define SAME_RUN "--seed", "7", "--batch", "64", "--microbatches", "4", "--steps", "8"

TEST_SUITE_WITH_TMP_DIR(real_pipelines, .timeout = 180);

/* Runs `strata real` with the synthetic data and MODEL, then args, which
 * must succeed. */
static void run_real_ok(const char *const *args)
{
    const char *argv[32] = {STRATA_BIN, "real", "--data", "synthetic", "--model", MODEL};
    int n = 6;
    for (; *args; args++) {
        cr_assert_lt(n, 31, "too many arguments");
        argv[n++] = *args;
    }
    argv[n] = NULL;
    struct run r = run_argv(argv);
    int status = r.status;
    cr_expect_eq(status, 0, "strata real %s ... exited %d; stderr:\n%s", argv[6], status, r.err);
    run_free(&r);
    cr_assert_eq(status, 0);
}


/* strategy on 2 and on 4 ranks against mirrored on one. */
static void expect_one_device_math(const char *strategy)
{
    char ref[128];
    snprintf(ref, sizeof ref, "%s/one-device.params", test_tmp_dir);
    run_real_ok((const char *const[]){"--strategy", "mirrored", "--np", "1", SAME_RUN,
                                      "--save-params", ref, NULL});
    const char *nps[] = {"2", "4"};
    for (int k = 0; k < 2; k++) {
        char path[128], what[64];
        snprintf(path, sizeof path, "%s/%s-%s.params", test_tmp_dir, strategy, nps[k]);
        snprintf(what, sizeof what, "%s on %s ranks", strategy, nps[k]);
        run_real_ok((const char *const[]){"--strategy", strategy, "--np", nps[k], SAME_RUN,
                                          "--save-params", path, NULL});
        expect_params_match(path, ref, -1, what);
    }
}

Test(real_pipelines, interleaved_on_2_and_4_ranks_equals_one_device)
{
    expect_one_device_math("pipeline-interleaved");
}

Test(real_pipelines, zero_bubble_on_2_and_4_ranks_equals_one_device)
{
    expect_one_device_math("pipeline-zb");
}
