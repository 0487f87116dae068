/* Straggler detection in real runs (issue 18, item 3): `strata real` with
 * --straggler slow:1=2 names rank 1 in its report and under its table; the
 * same run without a straggler names none. Real runs on a loaded 2-core
 * machine: the verdict needs a 1.3x median over 3/4 of the steps, and a
 * 2x slowdown clears it by a wide margin while noise stays far below it
 * (about 0.9-1.1x seen here under load). The ops are made long enough (a
 * wider model, 512 samples a rank) that a millisecond of scheduling noise
 * cannot halve a step's ratio, as it did once under the sanitizers with
 * ops of a fraction of a millisecond; and the test runs alone
 * (CMakeLists.txt: RUN_SERIAL). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(real_stragglers, .timeout = 120);

/* Runs mirrored on 2 ranks for 20 steps with straggler; whether its stdout
 * holds said (the line under the table) into *has_said; returns its report
 * (caller deletes). */
static cJSON *run_real_said(const char *straggler, const char *said, bool *has_said)
{
    char name[64];   /* slow:1=2 -> slow-1-2.json */
    snprintf(name, sizeof name, "%s.json", straggler);
    for (char *c = name; *c; c++)
        if (*c == ':' || *c == '=') *c = '-';
    const char *json = test_tmp_path(name);
    struct run r = RUN("real", "--data", "synthetic", "--model", "mlp:784-256-256-10",
                       "--batch", "1024", "--strategy", "mirrored", "--np", "2", "--steps",
                       "20", "--seed", "3",
                       "--straggler", straggler, "--json", json);
    int status = r.status;
    cr_expect_eq(status, 0, "exited %d; stderr:\n%s", status, r.err);
    *has_said = r.out && strstr(r.out, said);
    if (!*has_said) cr_log_info("'%s' not in stdout:\n%s", said, r.out ? r.out : "");
    run_free(&r);
    cr_assert_eq(status, 0);
    return read_json(json);
}

/* The "straggler" flag of rank r in the report's stragglers section. */
static bool is_named(const cJSON *doc, int r)
{
    const cJSON *ranks = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "stragglers"), "ranks");
    cr_assert(cJSON_IsArray(ranks), "the real report has no stragglers.ranks");
    const cJSON *item;
    cJSON_ArrayForEach(item, ranks)
        if (num_at(item, "rank", NULL) == r) return cJSON_IsTrue(cJSON_GetObjectItem(item, "straggler"));
    cr_assert_fail("rank %d missing from stragglers.ranks", r);
    return false;
}

Test(real_stragglers, a_rank_slowed_twofold_is_named)
{
    /* Under the sanitizers on a shared 2-core machine a 2x slowdown has
     * measured as little as 1.4x over a run (the other rank slowed too),
     * so, as for the run without one, the verdict is the majority of three
     * runs: rank 1 named and rank 0 not, under the table and in the report,
     * and rank 1's median compute ratio at least 1.5. */
    int named = 0;
    for (int i = 0; i < 3 && named < 2; i++) {
        bool says_rank_1;
        cJSON *doc = run_real_said("slow:1=2", "stragglers: rank 1 (", &says_rank_1);
        const cJSON *r1 = cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "stragglers"), "ranks"), 1);
        double ratio = num_at(r1, "median_ratio", NULL);
        cr_log_info("run %d: rank 1's median compute ratio %.2f (2 asked)", i, ratio);
        bool is_right = is_named(doc, 1) && !is_named(doc, 0);
        cr_expect_eq(says_rank_1, is_named(doc, 1), "the table's line and the report disagree");
        named += is_right && ratio >= 1.5;
        cJSON_Delete(doc);
    }
    cr_expect_geq(named, 2, "rank 1, slowed 2x, named (ratio >= 1.5) in fewer than two of "
                  "three runs");
}

Test(real_stragglers, no_straggler_names_none)
{
    /* Without a straggler a rank can still run slow for the whole of a
     * short run when the machine is shared: once, under the sanitizers,
     * rank 0 computed at 1.42x rank 1 in 20 of 20 steps (and was rightly
     * named). Such a run says nothing of the detector, so the verdict is
     * the majority of three runs, each of which must name none or name the
     * same rank in its report as under its table. */
    int clean = 0;
    for (int i = 0; i < 3 && clean < 2; i++) {
        bool says_none;
        cJSON *doc = run_real_said("none", "stragglers: none", &says_none);
        bool names_any = is_named(doc, 0) || is_named(doc, 1);
        cr_expect_eq(says_none, !names_any, "the table's line and the report disagree");
        clean += !names_any;
        cJSON_Delete(doc);
    }
    cr_expect_geq(clean, 2, "a straggler named in two of three runs without one");
}
