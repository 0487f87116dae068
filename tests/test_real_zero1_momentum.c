/* mirrored-zero1 for real keeps only its shards' momentum on each rank
 * (real/momentum_shards.h): its checkpoints hold that momentum alone, so
 * on 2 ranks they are smaller than mirrored's by about half the momentum,
 * and a run stopped at a checkpoint and resumed ends with the very bytes
 * of one never stopped (the equivalence with one device is
 * tests/test_real.c's). Small model and synthetic data: about a second a
 * run. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define MODEL "mlp:784-64-32-16-10"   /* 53018 parameters */
#define N_PARAMS 53018
#define SAME "--data", "synthetic", "--seed", "7", "--batch", "64", "--model", MODEL, "--np", "2"

TEST_SUITE_WITH_TMP_DIR(zero1_momentum, .timeout = 180);

/* Bytes of every file under dir (du -sb). */
static long long dir_bytes(const char *dir)
{
    struct run r = run_argv((const char *const[]){"du", "-sb", dir, NULL});
    cr_assert_eq(r.status, 0, "du: %s", r.err);
    long long n = atoll(r.out);
    run_free(&r);
    return n;
}

Test(zero1_momentum, checkpoints_hold_only_the_shards_momentum_and_resume_exactly)
{
    char *mirrored = test_tmp_path("mirrored"), *zero1 = test_tmp_path("zero1");
    expect_ok(RUN("real", "--strategy", "mirrored", SAME, "--steps", "4", "--checkpoint-every", "4",
                  "--checkpoint-dir", mirrored), "mirrored");
    expect_ok(RUN("real", "--strategy", "mirrored-zero1", SAME, "--steps", "4",
                  "--checkpoint-every", "4", "--checkpoint-dir", zero1), "mirrored-zero1");
    /* 2 ranks: mirrored keeps 2 whole momentum blocks, zero1 2 halves */
    long long saved = dir_bytes(mirrored) - dir_bytes(zero1);
    long long expected = (long long)N_PARAMS * 4;
    cr_assert(saved > expected * 9 / 10 && saved < expected * 11 / 10,
              "zero1's checkpoints are %lld bytes smaller, not about %lld", saved, expected);

    char *a = test_tmp_path("straight.params"), *b = test_tmp_path("resumed.params");
    expect_ok(RUN("real", "--strategy", "mirrored-zero1", SAME, "--steps", "8", "--save-params", a),
              "the straight run");
    expect_ok(RUN("real", "--strategy", "mirrored-zero1", SAME, "--steps", "8", "--resume", zero1,
                  "--save-params", b), "the resumed run");
    size_t na = 0, nb = 0;
    char *x = test_slurp_n(a, &na), *y = test_slurp_n(b, &nb);
    cr_expect(na == nb && memcmp(x, y, na) == 0, "resumed parameters differ from the straight run's");
    free(x);
    free(y);
}
