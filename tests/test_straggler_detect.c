/* core/straggler_detect.c on hand-made traces: the ratios follow from the
 * durations written below (closed form), the verdict from the rule in
 * straggler_detect.h, and the JSON reads back what it wrote. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/report.h"
#include "../core/straggler_detect.h"
#include "helpers.h"

/* A FORWARD span of layers [0,2) and a BACKWARD one, of rank r in step s,
 * lasting fwd_s and bwd_s. */
static void add_step(struct span *out, size_t *n, int r, int s, double fwd_s, double bwd_s)
{
    double t0 = s * 1.0;
    out[(*n)++] = (struct span){.rank = r, .stream = STREAM_COMPUTE, .kind = OP_FORWARD,
                                .step = s, .op = 0, .mb = -1, .lo = 0, .hi = 2, .peer = -1,
                                .start_s = t0, .end_s = t0 + fwd_s, .version_read = -1,
                                .version_applied = -1};
    out[(*n)++] = (struct span){.rank = r, .stream = STREAM_COMPUTE, .kind = OP_BACKWARD,
                                .step = s, .op = 1, .mb = -1, .lo = 0, .hi = 2, .peer = -1,
                                .start_s = t0 + 0.5, .end_s = t0 + 0.5 + bwd_s,
                                .version_read = -1, .version_applied = -1};
}

/* The paces of spans[0..n), which must be n_ranks (caller frees). */
static struct rank_pace *detect(const struct span *spans, size_t n, int n_ranks)
{
    struct rank_pace *p = NULL;
    int np = 0;
    struct err e = {0};
    cr_assert_eq(straggler_detect(spans, n, &p, &np, &e), 0, "%s", e.msg);
    cr_assert_eq(np, n_ranks);
    return p;
}

Test(straggler_detect, two_ranks_one_twice_as_slow_is_named_with_exact_ratios)
{
    struct span spans[64];
    size_t n = 0;
    for (int s = 0; s < 8; s++) {
        add_step(spans, &n, 0, s, 0.010, 0.020);
        add_step(spans, &n, 1, s, 0.020, 0.040);   /* twice rank 0's */
    }
    struct rank_pace *p = detect(spans, n, 2);
    /* with two ranks "the others" is the other one: 2 and 1/2 exactly */
    cr_expect_float_eq(p[1].median_ratio, 2.0, 1e-12);
    cr_expect_float_eq(p[1].p99_ratio, 2.0, 1e-12);
    cr_expect_float_eq(p[0].median_ratio, 0.5, 1e-12);
    cr_expect_eq(p[1].steps_compared, 8);
    cr_expect_eq(p[1].steps_slow, 8);
    cr_expect(p[1].is_straggler);
    cr_expect_not(p[0].is_straggler);
    free(p);
}

Test(straggler_detect, slow_in_too_few_steps_is_not_consistent)
{
    /* rank 2 of 4 is 3x slow in 5 of 8 steps (< 3/4): its median ratio is
     * 3 (5 of 8 ratios), but it is not consistently slow */
    struct span spans[128];
    size_t n = 0;
    for (int s = 0; s < 8; s++)
        for (int r = 0; r < 4; r++) {
            double f = (r == 2 && s < 5) ? 3.0 : 1.0;
            add_step(spans, &n, r, s, 0.010 * f, 0.020 * f);
        }
    struct rank_pace *p = detect(spans, n, 4);
    cr_expect_float_eq(p[2].median_ratio, 3.0, 1e-12);
    cr_expect_eq(p[2].steps_slow, 5);
    cr_expect_not(p[2].is_straggler, "5/8 steps is under the 3/4 the rule asks");
    for (int r = 0; r < 4; r++)
        if (r != 2) cr_expect_float_eq(p[r].median_ratio, 1.0, 1e-12, "rank %d", r);
    free(p);
}

Test(straggler_detect, median_of_the_others_ignores_one_outlier_among_five)
{
    /* ranks 0-3 take 10, 11, 12, 13 ms, rank 4 takes 40 ms: rank 4's
     * reference is the median of 10..13 = 11.5 ms; rank 0's is the median
     * of 11, 12, 13, 40 = 12.5 ms */
    struct span spans[16];
    size_t n = 0;
    const double fwd_s[5] = {0.010, 0.011, 0.012, 0.013, 0.040};
    for (int r = 0; r < 5; r++) add_step(spans, &n, r, 0, fwd_s[r], fwd_s[r]);
    struct rank_pace *p = detect(spans, n, 5);
    cr_expect_float_eq(p[4].median_ratio, 0.040 / 0.0115, 1e-9);
    cr_expect_float_eq(p[0].median_ratio, 0.010 / 0.0125, 1e-9);
    cr_expect(p[4].is_straggler);
    free(p);
}

Test(straggler_detect, stages_without_a_peer_are_not_judged)
{
    /* a two-stage pipeline: rank 0 runs layers [0,1), rank 1 [1,2) */
    struct span spans[2] = {
        {.rank = 0, .kind = OP_FORWARD, .mb = 0, .lo = 0, .hi = 1, .start_s = 0, .end_s = 1},
        {.rank = 1, .kind = OP_FORWARD, .mb = 0, .lo = 1, .hi = 2, .start_s = 1, .end_s = 5},
    };
    struct rank_pace *p = detect(spans, 2, 2);
    cr_expect(isnan(p[0].median_ratio) && isnan(p[1].median_ratio));
    cr_expect_not(p[1].is_straggler);
    free(p);
}

Test(straggler_detect, communication_spans_are_left_out)
{
    struct span s = {.rank = 0, .kind = OP_ALLREDUCE, .stream = STREAM_COMM, .end_s = 1};
    struct rank_pace *p = NULL;
    int np = 5;
    struct err e = {0};
    cr_assert_eq(straggler_detect(&s, 1, &p, &np, &e), 0);
    cr_expect_null(p);
    cr_expect_eq(np, 0);
}

Test(straggler_detect, json_round_trip_and_a_verdict_the_ratios_deny_is_refused)
{
    struct rank_pace in[2] = {
        {.rank = 0, .median_ratio = 0.5, .p99_ratio = 0.6, .steps_compared = 20},
        {.rank = 1, .median_ratio = 2.0, .p99_ratio = 2.5, .steps_compared = 20,
         .steps_slow = 19, .is_straggler = true},
    };
    cJSON *j = straggler_to_json(in, 2);
    cr_assert_not_null(j);
    struct err e = {0};
    struct json_at at = {.file = "r.json", .e = &e, .key = "stragglers"};
    struct rank_pace *out = NULL;
    int n = 0;
    cr_assert_eq(straggler_from_json(j, &at, &out, &n), 0, "%s", e.msg);
    cr_assert_eq(n, 2);
    cr_expect_float_eq(out[1].median_ratio, 2.0, 1e-15);
    cr_expect_eq(out[1].steps_slow, 19);
    cr_expect(out[1].is_straggler);
    free(out);

    /* rank 0 claimed a straggler at ratio 0.5: refused, naming the field */
    cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "ranks"), 0);
    cJSON_ReplaceItemInObject(r0, "straggler", cJSON_CreateTrue());
    cr_expect_eq(straggler_from_json(j, &at, &out, &n), ERR_INPUT);
    cr_expect(strstr(e.msg, "ranks[0]") && strstr(e.msg, "straggler true"), "%s", e.msg);
    cr_expect_null(out);
    cJSON_Delete(j);
}

/* A report with the section reads back with it, and one without (every
 * simulated report, every report written before) reads with none. */
Test(straggler_detect, report_reader_accepts_reports_with_and_without_the_section)
{
    static const char without[] =
        "{\"strata_report\":1,\"mode\":\"real\",\"strategy\":\"mirrored\",\"devices\":2,"
        "\"config\":{},\"step_time_s\":{\"mean\":1,\"p50\":1,\"p99\":1},"
        "\"throughput_samples_per_s\":1,\"breakdown\":{\"compute\":1,\"comm\":0,\"idle\":0},"
        "\"bubble_fraction\":0,\"staleness\":{\"mean\":0,\"max\":0,\"histogram\":[]},"
        "\"memory_bytes_per_device\":{\"params\":0,\"grads\":0,\"optimizer\":0,"
        "\"activations\":0,\"peak\":0},\"loss_curve\":[],\"final\":null,"
        "\"time_to_accuracy_s\":null,\"per_rank\":[],\"failure\":null";
    char text[4096];
    struct report_doc d = {0};
    struct err e = {0};
    snprintf(text, sizeof text, "%s}", without);
    cr_assert_eq(report_doc_parse(text, strlen(text), "a.json", &d, &e), 0, "%s", e.msg);
    cr_expect_eq(d.reports[0].n_paces, 0);
    report_doc_release(&d);

    snprintf(text, sizeof text,
             "%s,\"stragglers\":{\"slow_ratio\":1.3,\"share_of_steps\":0.75,\"ranks\":["
             "{\"rank\":0,\"median_ratio\":0.5,\"p99_ratio\":0.5,\"steps_compared\":4,"
             "\"steps_slow\":0,\"straggler\":false},"
             "{\"rank\":1,\"median_ratio\":2,\"p99_ratio\":2,\"steps_compared\":4,"
             "\"steps_slow\":4,\"straggler\":true}]}}", without);
    cr_assert_eq(report_doc_parse(text, strlen(text), "b.json", &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d.reports[0].n_paces, 2);
    cr_expect(d.reports[0].paces[1].is_straggler);
    /* written back, the section is there again */
    cJSON *j = report_to_json(&d.reports[0]);
    cr_assert_not_null(j);
    cr_expect_not_null(cJSON_GetObjectItem(j, "stragglers"));
    cJSON_Delete(j);
    report_doc_release(&d);
}

/* What straggler_print says of paces[0..n), unlabelled (caller frees). */
static char *printed(const struct rank_pace *paces, int n)
{
    struct test_capture c;
    straggler_print(test_capture_open(&c), NULL, paces, n);
    return test_capture_close(&c);
}

/* Not judged for want of a peer: one rank alone (one device, or a job that
 * went on with one worker after --on-failure continue) is said to be
 * alone, not blamed on pipeline stages, which it need not be (a ps-async
 * run after a death said so); two stages keep the stages' reason. */
Test(straggler_detect, not_judged_says_why_one_rank_alone_or_stages)
{
    struct span spans[4];
    size_t n = 0;
    add_step(spans, &n, 0, 0, 1.0, 2.0);
    add_step(spans, &n, 0, 1, 1.0, 2.0);
    struct rank_pace *p = detect(spans, n, 1);
    char *text = printed(p, 1);
    cr_expect_str_eq(text, "stragglers: not judged (rank 0 was the only rank that computed: "
                           "there is no other to compare it with)\n");
    free(text);
    free(p);
    struct span stages[2] = {
        {.rank = 0, .kind = OP_FORWARD, .mb = 0, .lo = 0, .hi = 1, .start_s = 0, .end_s = 1},
        {.rank = 1, .kind = OP_FORWARD, .mb = 0, .lo = 1, .hi = 2, .start_s = 1, .end_s = 5},
    };
    p = detect(stages, 2, 2);
    text = printed(p, 2);
    cr_expect_not_null(strstr(text, "pipeline and model stages"), "%s", text);
    free(text);
    free(p);
}
