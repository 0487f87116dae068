/* core/table_notes.c: each note appears when its condition holds, with this
 * run's numbers, and not otherwise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../core/config.h"
#include "../core/table_notes.h"
#include "helpers.h"
#include "report_fixture.h"

typedef bool (*note_fn)(FILE *, const struct report *const *, int);

/* What note printed for rs[0..n), in a malloc'd string; *said its return. */
static char *capture(note_fn note, const struct report *const *rs, int n, bool *said)
{
    struct test_capture c;
    *said = note(test_capture_open(&c), rs, n);
    return test_capture_close(&c);
}

/* What note printed for rs[0..n) (caller frees); it must have spoken. */
static char *said(note_fn note, const struct report *const *rs, int n)
{
    bool is_said;
    char *s = capture(note, rs, n, &is_said);
    cr_assert(is_said, "the note said nothing: '%s'", s ? s : "");
    return s;
}

/* note must say nothing for rs[0..n): return false and print nothing. */
static void expect_silent(note_fn note, const struct report *const *rs, int n, const char *why)
{
    bool is_said;
    char *s = capture(note, rs, n, &is_said);
    cr_assert(!is_said && (!s || !*s), "%s: '%s'", why, s ? s : "");
    free(s);
}

/* What note printed for rs[0..n) holds each of phrases (NULL-ended); the
 * test stops at the first it lacks, showing what the note said. */
static void expect_says(note_fn note, const struct report *const *rs, int n,
                        const char *const *phrases)
{
    char *s = said(note, rs, n);
    for (; *phrases; phrases++) cr_assert(strstr(s, *phrases), "no '%s' in: %s", *phrases, s);
    free(s);
}

/* Two async-like reports of 8 workers, identical figures. */
static void twins(struct report *a, struct report *b, struct config *cfg)
{
    config_init(cfg);
    test_fill_report(a);
    test_fill_report(b);
    snprintf(a->strategy, sizeof a->strategy, "ps-async");
    snprintf(b->strategy, sizeof b->strategy, "ps-ssp");
    a->config = b->config = cfg;
    a->has_step_lead = b->has_step_lead = true;
    a->max_step_lead = b->max_step_lead = 1;
    a->staleness.max = b->staleness.max = 9;
}

Test(table_notes, ssp_twin_says_lead_and_bound)
{
    struct report a, b;
    struct config cfg;
    twins(&a, &b, &cfg);
    cfg.staleness = 4;
    const struct report *rs[] = {&a, &b};
    expect_says(note_identical_rows, rs, 2,
                (const char *const[]){"ps-ssp ran exactly as ps-async", "K = 4 steps",
                                      "L = 1 step.",
                                      /* 8 workers: one step of lead is 7 versions,
                                       * (L + 1) 7 = 14 */
                                      "about 7 (L + 1) = 14", "largest here was 9", NULL});
    report_release(&a);
    report_release(&b);
}

Test(table_notes, identical_rows_silent_when_figures_differ)
{
    struct report a, b;
    struct config cfg;
    twins(&a, &b, &cfg);
    b.step_time_s.mean *= 1.5;   /* the bound bound: ssp waited */
    const struct report *rs[] = {&a, &b};
    expect_silent(note_identical_rows, rs, 2, "ssp waited: the rows differ");
    report_release(&a);
    report_release(&b);
}

Test(table_notes, identical_rows_generic_when_not_ssp)
{
    struct report a, b;
    struct config cfg;
    twins(&a, &b, &cfg);
    snprintf(b.strategy, sizeof b.strategy, "mirrored");
    const struct report *rs[] = {&a, &b};
    expect_says(note_identical_rows, rs, 2,
                (const char *const[]){"ps-async and mirrored ran exactly alike", NULL});
    report_release(&a);
    report_release(&b);
}

/* The note keeps to the other notes' width: two short names on one line,
 * two long ones (the default comparison's pipelines, 111 columns) with its
 * reason on a second. */
Test(table_notes, identical_rows_note_breaks_its_line_when_long)
{
    struct report a, b;
    struct config cfg;
    twins(&a, &b, &cfg);
    snprintf(a.strategy, sizeof a.strategy, "ps-sync");
    snprintf(b.strategy, sizeof b.strategy, "ps-async");
    const struct report *rs[] = {&a, &b};
    char *out = said(note_identical_rows, rs, 2);
    cr_expect_str_eq(out, "  note: ps-sync and ps-async ran exactly alike here (the same step "
                          "time, breakdown and staleness).\n");
    free(out);
    snprintf(a.strategy, sizeof a.strategy, "pipeline-1f1b");
    snprintf(b.strategy, sizeof b.strategy, "pipeline-interleaved");
    out = said(note_identical_rows, rs, 2);
    cr_expect_str_eq(out, "  note: pipeline-1f1b and pipeline-interleaved ran exactly alike "
                          "here\n  (the same step time, breakdown and staleness).\n");
    free(out);
    report_release(&a);
    report_release(&b);
}

/* Equal rows are one note a group: on one device eight strategies ran the
 * same step and made 28 pairwise notes. A group with ps-ssp whose bound
 * never held is one note too, naming the group and then ps-ssp's bound (it
 * was two: "ps-ssp ran exactly as ps-async" and "ps-async, mirrored and
 * model ran exactly alike", one group seemingly two). */
Test(table_notes, identical_rows_are_one_note_a_group)
{
    struct report r[4];
    struct config cfg;
    twins(&r[0], &r[1], &cfg);   /* ps-async, ps-ssp */
    twins(&r[2], &r[3], &cfg);
    snprintf(r[2].strategy, sizeof r[2].strategy, "mirrored");
    snprintf(r[3].strategy, sizeof r[3].strategy, "model");
    const struct report *rs[] = {&r[0], &r[1], &r[2], &r[3]};
    char *out = said(note_identical_rows, rs, 4);
    cr_expect_not_null(strstr(out, "  note: ps-async, ps-ssp, mirrored and model ran exactly alike "
                                   "here (the same step time, breakdown and staleness):\n  ps-ssp's "
                                   "bound K = 4 steps (--staleness: "), "%s", out);
    cr_expect_not_null(strstr(out, "the largest lead was L = 1 step.\n"), "%s", out);
    int notes = 0;
    for (const char *p = out; (p = strstr(p, "note:")); p++) notes++;
    cr_expect_eq(notes, 1, "one note a group, not one a pair:\n%s", out);
    free(out);
    for (int i = 0; i < 4; i++) report_release(&r[i]);
}

/* The case seen: on one device ps-sync, ps-async and ps-ssp are one step. */
Test(table_notes, one_device_parameter_servers_are_one_note)
{
    struct run r = RUN("compare", "--devices", "1", "--steps", "3", "--strategies",
                       "ps-sync,ps-async,ps-ssp");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "note: ps-sync, ps-async and ps-ssp ran exactly alike"), "%s",
                       r.out);
    cr_expect_null(strstr(r.out, "ran exactly as"), "%s", r.out);
    run_free(&r);
}

/* pipelined-steps whose lag outlasts its steps applies nothing: its 0
 * samples/s said why, not left to read as a broken run. */
Test(table_notes, nothing_applied_says_why)
{
    struct report a, b;
    struct config cfg;
    twins(&a, &b, &cfg);
    snprintf(a.strategy, sizeof a.strategy, "pipelined-steps");
    cfg.steps = 3;
    cfg.inflight = 64;
    a.samples_applied = 0;
    a.throughput_samples_per_s = 0;
    const struct report *rs[] = {&a, &b};
    expect_says(note_nothing_applied, rs, 2,
                (const char *const[]){"pipelined-steps applied no gradient in its 3 steps",
                                      "--inflight - 1 = 63 steps later", NULL});
    const struct report *only_b[] = {&b};
    expect_silent(note_nothing_applied, only_b, 1, "b applied its samples");
    report_release(&a);
    report_release(&b);
}

/* A --fail R@Ts after the run's end failed no rank, and nothing said so:
 * the table looked like a run without --fail. The note names the runs it
 * missed and when the longest ended (T = mean step x steps). */
Test(table_notes, fail_unmet_names_the_runs_and_their_end)
{
    struct report a, b;
    struct config cfg;
    twins(&a, &b, &cfg);
    cfg.steps = 4;
    snprintf(cfg.fail, sizeof cfg.fail, "1@2s");
    b.failure.happened = true;
    b.failure.n_failures = 1;
    const struct report *rs[] = {&a, &b};
    expect_says(note_fail_unmet, rs, 2,
                (const char *const[]){"--fail 1@2s: no rank failed in ps-async:",
                                      "the run ended before it came (at 0.5 s)", NULL});
    b.failure.n_failures = 0;   /* --mtbf's section, no failure drawn */
    expect_says(note_fail_unmet, rs, 2,
                (const char *const[]){"--fail 1@2s: no rank failed: the runs ended",
                                      "the longest at 0.5 s", NULL});
    const struct report *only_b[] = {&b};
    b.failure.n_failures = 1;
    expect_silent(note_fail_unmet, only_b, 1, "b's rank failed");
    cfg.fail[0] = '\0';
    expect_silent(note_fail_unmet, rs, 2, "no --fail");
    report_release(&a);
    report_release(&b);
}

Test(table_notes, sim_says_when_fail_came_after_the_run)
{
    expect_ok_saying(RUN("sim", "--devices", "2", "--steps", "3", "--fail", "1@0.5s"),
                     "note: --fail 1@0.5s: no rank failed", true);
    expect_ok_saying(RUN("sim", "--devices", "2", "--steps", "3", "--fail", "1@1"),
                     "no rank failed", false);
}

Test(table_notes, more_updates_names_ratio_and_batch)
{
    struct report a, b;
    struct config cfg;
    twins(&a, &b, &cfg);
    a.updates = 240;
    a.samples_applied = 240 * 32;
    b.updates = 15;
    b.samples_applied = 15 * 512;
    snprintf(b.strategy, sizeof b.strategy, "mirrored");
    const struct report *rs[] = {&a, &b};
    expect_says(note_more_updates, rs, 2,
                (const char *const[]){"ps-async made 16.0× the updates of mirrored (240 of 32 "
                                      "samples against 15 of 512)", NULL});
    /* mirrored resumed from a checkpoint of step 10: 15 updates, of which
     * its job ran 5 on 5 x 512 samples, still 512 an update */
    b.updates_resumed = 10;
    b.has_updates_resumed = true;
    b.samples_applied = 5 * 512;
    expect_says(note_more_updates, rs, 2,
                (const char *const[]){"(240 of 32 samples against 15 of 512)", NULL});
    b.updates = 240;
    expect_silent(note_more_updates, rs, 2, "equal updates (the controlled experiment)");
    b.updates = 15;
    a.has_final = b.has_final = false;
    expect_silent(note_more_updates, rs, 2, "no numerics: no updates column");
    report_release(&a);
    report_release(&b);
}

Test(table_notes, diverged_names_first_bad_step_and_knobs)
{
    struct report a;
    struct config cfg;
    config_init(&cfg);
    cfg.lr = 0.04;
    cfg.momentum = 0.9;
    cfg.steps = 15;
    test_fill_report(&a);
    a.config = &cfg;
    const struct report *rs[] = {&a};
    expect_silent(note_diverged, rs, 1, "a finite loss curve is not a divergence");
    a.loss_curve[1].loss = NAN;   /* step 100 */
    a.final.loss = NAN;
    a.final.test_accuracy = 0.1;
    expect_says(note_diverged, rs, 1,
                (const char *const[]){"pipeline-1f1b diverged", "at step 100 of 15",
                                      "accuracy 10.0%", "--lr (0.04) or --momentum (0.9)", NULL});
    report_release(&a);
}

static bool superlinear_with_base(FILE *f, const struct report *const *rs, int n)
{
    static const double speedup[] = {9.5};
    return note_superlinear(f, rs, n, speedup, rs[n]);
}

Test(table_notes, superlinear_only_above_device_count)
{
    struct report a, base;
    test_fill_report(&a);
    test_fill_report(&base);
    a.devices = 8;
    base.devices = 1;
    base.n_per_rank = 1;
    base.per_rank[0].compute_s = 2.0;   /* 2 s / 2560 samples = 781 us */
    /* a: (1.5 + 1.25) s / 2560 = 1074 us: more, yet faster than 8 x */
    const struct report *rs[] = {&a, &base};
    char *s = said(superlinear_with_base, rs, 1);
    cr_assert(strstr(s, "speedup 9.50× is more than its 8 devices"), "%s", s);
    cr_assert(strstr(s, "baseline's 781 us"), "%s", s);
    cr_assert(strstr(s, "idle 12.5%"), "the baseline's idle share: %s", s);
    free(s);
    a.devices = 16;
    expect_silent(superlinear_with_base, rs, 1, "9.5 on 16 devices: nothing surprising");
    report_release(&a);
    report_release(&base);
}

Test(table_notes, legend_lists_only_shown_columns)
{
    struct report a;
    test_fill_report(&a);
    a.updates = 10;
    const struct report *rs[] = {&a};
    char *s = said(table_legend_print, rs, 1);
    cr_assert(strstr(s, "staleness: mean/max updates by others between a worker's pull and its "
                        "push"), "%s", s);
    cr_assert(strstr(s, "updates: optimizer steps"), "%s", s);
    /* the bubble is 1 - compute / T (strata help metrics): the stages'
     * communication counts as much as their idle time, so "idle share"
     * misread it (gpipe on 4 devices: idle 29.9%, bubble 51.1%) */
    cr_assert(strstr(s, "bubble: stages' time not computing"), "%s", s);
    cr_assert(!strstr(s, "idle share"), "%s", s);
    cr_assert(!strstr(s, "goodput"), "no failure, no goodput: %s", s);
    cr_assert(strstr(s, "down: share of the workers' time after their death"), "%s", s);
    free(s);
    a.breakdown.down = 0;
    s = said(table_legend_print, rs, 1);
    cr_assert(!strstr(s, "down"), "no worker down, no down: %s", s);
    free(s);
    a.has_final = false;
    a.failure.happened = true;
    s = said(table_legend_print, rs, 1);
    cr_assert(strstr(s, "goodput"), "%s", s);
    cr_assert(!strstr(s, "accuracy"), "%s", s);
    free(s);
    report_release(&a);
}

/* pipelined-steps pulls and pushes nothing: its staleness, 0.95/1 in the
 * default comparison, is its own steps in flight, which the legend's "by
 * others between a worker's pull and its push" did not describe. The
 * legend says so when such a row has any, and only then. */
Test(table_notes, legend_says_what_pipelined_steps_staleness_counts)
{
    struct report a, b;
    test_fill_report(&a);
    test_fill_report(&b);
    snprintf(b.strategy, sizeof b.strategy, "pipelined-steps");
    b.staleness.max = 1;
    const struct report *rs[] = {&a, &b};
    char *s = said(table_legend_print, rs, 2);
    cr_expect(strstr(s, "push; peak mem: per device;\n  pipelined-steps' staleness: updates "
                        "between a gradient's parameters and its own (--inflight K: up to K - 1)"),
              "%s", s);
    free(s);
    b.staleness.max = 0;   /* --inflight 1: nothing late, nothing to say */
    s = said(table_legend_print, rs, 2);
    cr_expect(!strstr(s, "pipelined-steps"), "%s", s);
    free(s);
    s = said(table_legend_print, rs, 1);
    cr_expect(!strstr(s, "pipelined-steps"), "%s", s);
    free(s);
    report_release(&a);
    report_release(&b);
}

/* The notes reach the terminal: the default-like scenario, where ps-ssp's
 * bound never binds, says so with L and K; a slow worker makes it bind and
 * the note goes. */
Test(table_notes, compare_prints_ssp_note_only_when_rows_match)
{
    const char *twin[] = {"compare", "--strategies", "ps-async,ps-ssp", "--devices", "4",
                          "--steps", "10", NULL};
    struct run r = run_strata(twin);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "note: ps-ssp ran exactly as ps-async"), "%s", r.out);
    cr_assert(strstr(r.out, "K = 4 steps"), "%s", r.out);
    cr_assert(strstr(r.out, "staleness: mean/max updates by others"), "legend: %s", r.out);
    run_free(&r);
    const char *bound[] = {"compare", "--strategies", "ps-async,ps-ssp", "--devices", "4",
                           "--steps", "10", "--straggler", "slow:1=3", "--staleness", "1", NULL};
    r = run_strata(bound);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(!strstr(r.out, "ran exactly as"), "%s", r.out);
    run_free(&r);
}

/* "K = 1 steps": the bound's unit agrees with its number, as the lead's did. */
Test(table_notes, a_bound_of_one_step_is_one_step)
{
    struct run r = RUN("compare", "--strategies", "ps-async,ps-ssp", "--staleness", "1",
                       "--devices", "4", "--steps", "5");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "its bound K = 1 step (--staleness"), "%s", r.out);
    run_free(&r);
}
