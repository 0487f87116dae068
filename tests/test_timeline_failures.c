/* Failures drawn in every timeline (core/timeline_marks.c, the recording in
 * sim/failures.c, plots/timeline_text.c, plots/gantt_marks.c): the death
 * marker on the dead rank's row, the restart gap on every row, the lost and
 * redone steps; shrink's and continue's dead rows; the Gantt plot's and the
 * HTML page's markers; and a run without a failure drawn as before. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../core/timeline_marks.h"
#include "../plots/plots.h"
#include "../plots/timeline_text.h"
#include "../sim/failures.h"
#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(timeline_failures);

/* The line of out that starts with "  <label>|" (up to its end), or NULL. */
static const char *row_of(const char *out, const char *label, char *buf, size_t n)
{
    char key[40];
    snprintf(key, sizeof key, "  %-14s|", label);
    const char *p = strstr(out, key);
    if (!p) return NULL;
    p += strlen(key);
    const char *end = strchr(p, '|');
    if (!end || (size_t)(end - p) >= n) return NULL;
    memcpy(buf, p, (size_t)(end - p));
    buf[end - p] = '\0';
    return buf;
}

static char *print_to_string(const struct span *s, size_t n, int n_ranks,
                             const struct timeline_view *v, int width)
{
    struct test_capture c;
    timeline_print_view(test_capture_open(&c), s, n, n_ranks, v, 16 + 2 + width, 64, "s");
    return test_capture_close(&c);
}

/* A restart by hand, 1 s a column: step 0 at [0,2), step 1 cut by rank 1's
 * death at 3 s, recovery [3,6), step 1 redone at [6,8). */
Test(timeline_failures, restart_chart_has_death_gap_and_lost_redone_row_at_their_columns)
{
    struct timeline_marks m = {0};
    struct err e = {0};
    cr_assert_eq(timeline_marks_add_run(&m, (struct tl_step_run){0, 0, 2, 0, 1, false, false}, &e), 0);
    cr_assert_eq(timeline_marks_add_run(&m, (struct tl_step_run){1, 2, 3, 2, 1, true, false}, &e), 0);
    cr_assert_eq(timeline_marks_add_run(&m, (struct tl_step_run){1, 6, 8, 2, 1, false, true}, &e), 0);
    cr_assert_eq(timeline_marks_add_gap(&m, TL_GAP_RECOVERY, 3, 6, &e), 0);
    cr_assert_eq(timeline_marks_add_death(&m, 1, 3, false, &e), 0);
    struct span s[6];
    for (int r = 0; r < 2; r++) {
        s[3 * r] = (struct span){.rank = r, .kind = OP_FORWARD, .step = 0, .start_s = 0, .end_s = 2};
        s[3 * r + 1] = (struct span){.rank = r, .kind = OP_BACKWARD, .step = 1, .start_s = 2, .end_s = 3};
        s[3 * r + 2] = (struct span){.rank = r, .kind = OP_FORWARD, .step = 1, .start_s = 6, .end_s = 8};
    }
    const struct timeline_view v = {.begin_s = 0, .end_s = 10, .dead_rank = -1, .marks = &m};
    char *out = print_to_string(s, 6, 2, &v, 10);
    char row[64];
    /* every rank's row: the gap '#' for [3,6); rank 1's death at column 3 */
    cr_expect_str_eq(row_of(out, "rank 0 compute", row, sizeof row), "FFB###FF..", "%s", out);
    cr_expect_str_eq(row_of(out, "rank 1 compute", row, sizeof row), "FFBX##FF..", "%s", out);
    cr_expect_str_eq(row_of(out, "lost/redone", row, sizeof row), "  -   ++  ", "%s", out);
    cr_expect(strstr(out, "X rank 1 dies") && strstr(out, "# detection + relaunch + loading") &&
                  strstr(out, "a redone step is drawn twice"), "the key: %s", out);
    cr_expect(!strstr(out, "x dead"), "restart's rank comes back: %s", out);
    free(out);
    timeline_marks_release(&m);
}

/* A chart with marks that hold nothing prints what it printed without them. */
Test(timeline_failures, empty_marks_change_no_byte)
{
    struct timeline_marks m = {0};
    const struct span s[] = {
        {.rank = 0, .kind = OP_FORWARD, .start_s = 0, .end_s = 4},
        {.rank = 1, .stream = 1, .kind = OP_ALLREDUCE, .start_s = 4, .end_s = 10},
    };
    struct timeline_view v = {.begin_s = 0, .end_s = 10, .dead_rank = -1};
    char *plain = print_to_string(s, 2, 2, &v, 10);
    v.marks = &m;
    char *marked = print_to_string(s, 2, 2, &v, 10);
    cr_expect_str_eq(marked, plain);
    free(plain);
    free(marked);
}

/* Laying the failure-free spans over the runs: moved, stretched, cut, and
 * a gone rank's left out after its death. */
Test(timeline_failures, lay_moves_stretches_cuts_and_drops_the_gone)
{
    struct timeline_marks m = {0};
    struct err e = {0};
    /* failure-free: step k is [k, k+1) on ranks 0 and 1 */
    struct span s[4];
    for (int i = 0; i < 4; i++)
        s[i] = (struct span){.rank = i % 2, .kind = OP_FORWARD, .step = i / 2,
                             .start_s = i / 2, .end_s = i / 2 + 1};
    timeline_marks_add_run(&m, (struct tl_step_run){0, 0, 1, 0, 1, false, false}, &e);
    timeline_marks_add_run(&m, (struct tl_step_run){1, 1, 1.5, 1, 1, true, false}, &e);
    timeline_marks_add_death(&m, 1, 1.5, true, &e);
    timeline_marks_add_run(&m, (struct tl_step_run){1, 3, 5, 1, 2, false, true}, &e);
    cr_assert_eq(timeline_marks_lay(&m, s, 4, &e), 0, "%s", e.msg);
    /* step 0 twice (both ranks), step 1 cut (both, rank 1 ends at its death),
     * step 1 redone on rank 0 alone, twice as long */
    cr_assert_eq(m.laid.len, 5);
    const struct span *cut0 = &m.laid.items[2], *cut1 = &m.laid.items[3];
    cr_expect(cut0->start_s == 1 && cut0->end_s == 1.5, "%g %g", cut0->start_s, cut0->end_s);
    cr_expect(cut1->rank == 1 && cut1->end_s == 1.5);
    const struct span *redo = &m.laid.items[4];
    cr_expect(redo->rank == 0 && redo->step == 1 && redo->start_s == 3 && redo->end_s == 5,
              "rank %d step %d %g %g", redo->rank, redo->step, redo->start_s, redo->end_s);
    timeline_marks_release(&m);
}

/* The replay's record: 4 steps of 1 s, a checkpoint after step 2 (k = 2),
 * rank 1 dies as step 3 starts: step 2 is lost and redone after detection
 * (0.5 s) and relaunch (1 s). The outcome is the same with or without it. */
Test(timeline_failures, replay_records_lost_and_redone_steps_without_changing_the_outcome)
{
    const double step_s[] = {1, 1, 1, 1};
    struct timeline_marks m = {0};
    struct failure_setup s = {
        .policy = FAILURE_RESTART, .failure = {.is_set = true, .rank = 1, .step = 3},
        .n_workers = 2, .steps = 4, .checkpoint_every = 2,
        .costs = {.detect_s = 0.5, .relaunch_s = 1}, .step_s = step_s};
    struct failure_outcome plain, marked;
    struct err e = {0};
    cr_assert_eq(failure_timeline(&s, &plain, &e), 0, "%s", e.msg);
    s.marks = &m;
    cr_assert_eq(failure_timeline(&s, &marked, &e), 0, "%s", e.msg);
    cr_expect(memcmp(&plain, &marked, sizeof plain) == 0, "recording changed the outcome");
    cr_assert_eq(m.runs.len, 5, "0, 1, 2 (lost), 2 (redone), 3: %zu", m.runs.len);
    const struct tl_step_run *r = m.runs.items;
    cr_expect(!r[0].is_lost && !r[1].is_lost && r[2].is_lost && !r[3].is_lost && !r[4].is_lost);
    cr_expect(r[2].step == 2 && r[3].step == 2 && r[3].is_redo && !r[4].is_redo);
    cr_expect(r[3].start_s == 4.5 && r[3].from_s == 2, "%g %g", r[3].start_s, r[3].from_s);
    cr_assert_eq(m.gaps.len, 1, "the free checkpoint leaves no gap");
    cr_expect(m.gaps.items[0].start_s == 3 && m.gaps.items[0].end_s == 4.5);
    cr_assert_eq(m.deaths.len, 1);
    cr_expect(m.deaths.items[0].rank == 1 && m.deaths.items[0].time_s == 3 &&
              !m.deaths.items[0].is_gone);
    timeline_marks_release(&m);
}

/* ---- through the command ------------------------------------------------- */

#define FAIL_ARGS "--devices", "4", "--steps", "8", "--fail", "1@3", "--cluster", \
                  STRATA_SOURCE_DIR "/labs/failures.profile", "--model", "fmnist-8", \
                  "--batch", "512", "--timeline", "--timeline-steps", "1:6"

/* The row labelled `label` of r's timeline into row (n bytes); the test
 * stops, showing the output, when there is none. */
static void run_row(const struct run *r, const char *label, char *row, size_t n)
{
    cr_assert(row_of(r->out, label, row, n), "no row '%s' in:\n%s", label, r->out);
}

/* Rank 1's compute row of r (n bytes) into dead, and the column of the
 * death marked on it ('X'); the test stops, showing the output, when there
 * is none. */
static size_t death_column(const struct run *r, char *dead, size_t n)
{
    run_row(r, "rank 1 compute", dead, n);
    const char *x = strchr(dead, 'X');
    cr_assert(x, "no death on rank 1's compute row: %s", r->out);
    return (size_t)(x - dead);
}

/* row is dead after column col: nothing but 'x' (what says which row). */
static void expect_dead_after(const char *row, size_t col, const char *what, const struct run *r)
{
    const char *after = row + col + 1;
    cr_expect(strspn(after, "x") == strlen(after), "%s: only 'x' after the death: %s", what,
              r->out);
}

static struct run sim_with(const char *strategy, const char *policy)
{
    setenv("COLUMNS", "100", 1);
    struct run r = RUN("sim", "--strategy", strategy, FAIL_ARGS, "--on-failure", policy,
                       "--checkpoint-every", "2", "--commit-every", "2");
    cr_assert_eq(r.status, 0, "%s", r.err);
    return r;
}

Test(timeline_failures, restart_run_marks_death_on_its_row_where_the_gap_starts)
{
    struct run r = sim_with("mirrored", "restart");
    char dead[128], alive[128], lost[128];
    size_t col = death_column(&r, dead, sizeof dead);
    run_row(&r, "rank 0 compute", alive, sizeof alive);
    run_row(&r, "lost/redone", lost, sizeof lost);
    cr_assert(!strchr(dead + col + 1, 'X') && !strchr(alive, 'X'), "one death, rank 1's: %s",
              r.out);
    /* the death starts the recovery: rank 0's gap begins in the next column */
    cr_expect(alive[col + 1] == '#' && alive[col] != '#', "death at %zu: %s", col, r.out);
    /* the gap is on every rank's rows */
    for (int rank = 0; rank < 4; rank++)
        for (int stream = 0; stream < 2; stream++) {
            char label[32], row[128];
            snprintf(label, sizeof label, "rank %d %s", rank, stream ? "comm" : "compute");
            run_row(&r, label, row, sizeof row);
            cr_expect(row[col + 1] == '#', "%s: %s", label, r.out);
        }
    /* lost before the death, redone after the gap */
    const char *minus = strchr(lost, '-'), *plus = strchr(lost, '+');
    cr_expect(minus && plus && (size_t)(minus - lost) < col && (size_t)(plus - lost) > col,
              "%s", r.out);
    cr_expect(strstr(r.out, "X rank 1 dies") && strstr(r.out, "= checkpoint"), "%s", r.out);
    run_free(&r);
}

Test(timeline_failures, shrink_leaves_the_dead_rank_row_empty_after_its_death)
{
    struct run r = sim_with("mirrored", "shrink");
    char compute[128], comm[128], alive[128];
    size_t col = death_column(&r, compute, sizeof compute);
    run_row(&r, "rank 1 comm", comm, sizeof comm);
    run_row(&r, "rank 2 compute", alive, sizeof alive);
    expect_dead_after(compute, col, "rank 1 compute", &r);
    expect_dead_after(comm, col, "rank 1 comm", &r);
    /* the survivors go on: work after the gap */
    cr_expect(strpbrk(alive + col + 1, "FB"), "%s", r.out);
    cr_expect(strstr(r.out, "x dead (gone for good)") && strstr(r.out, "lost/redone"),
              "%s", r.out);
    run_free(&r);
}

Test(timeline_failures, continue_ends_the_dead_worker_row_and_the_others_go_on)
{
    setenv("COLUMNS", "100", 1);
    struct run r = RUN("sim", "--strategy", "ps-async", "--devices", "3", "--steps", "6",
                       "--cluster", "cpu-loopback", "--fail", "1@3", "--timeline",
                       "--timeline-steps", "0:5");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char dead[128], alive[128];
    size_t col = death_column(&r, dead, sizeof dead);
    run_row(&r, "rank 0 compute", alive, sizeof alive);
    expect_dead_after(dead, col, "rank 1 compute", &r);
    cr_expect(strpbrk(alive + col + 1, "FB"), "%s", r.out);
    /* each worker's own steps: the dead one stopped at step 2 */
    cr_expect(strstr(r.out, "|xxx| steps 0-2") || strstr(r.out, "x| steps 0-2"), "%s", r.out);
    cr_expect(!strstr(r.out, "lost/redone") && !strstr(r.out, "#"), "nothing redone: %s", r.out);
    run_free(&r);
}

/* A window of the job's steps counts a redone step's two runs: step 2 alone
 * shows it lost and redone, and the gap between. */
Test(timeline_failures, a_window_of_the_redone_step_shows_both_its_runs)
{
    setenv("COLUMNS", "100", 1);
    struct run r = RUN("sim", "--strategy", "mirrored", "--devices", "4", "--steps", "8",
                       "--fail", "1@3", "--checkpoint-every", "2", "--cluster",
                       STRATA_SOURCE_DIR "/labs/failures.profile", "--timeline",
                       "--timeline-steps", "2:2");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char lost[128];
    run_row(&r, "lost/redone", lost, sizeof lost);
    cr_expect(strchr(lost, '-') && strchr(lost, '+') && strchr(r.out, '#'), "%s", r.out);
    run_free(&r);
}

/* No failure, no checkpoint: the chart main drew before failures were drawn
 * (COLUMNS=60), byte for byte. */
Test(timeline_failures, a_run_without_failures_is_drawn_as_before)
{
    setenv("COLUMNS", "60", 1);
    struct run r = RUN("sim", "--strategy", "ps-async", "--devices", "2", "--cluster",
                       "cpu-loopback", "--steps", "4", "--timeline");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *want =
        "ps-async, first 2 steps: timeline, one column = 0.000268 s (F/f forward, B/b backward "
        "of even/odd microbatches,\n"
        "P push, L pull, . idle):\n"
        "  rank 0 compute|FFFFFFFBBBBBBBBB.....FFFFFFFBBBBBBBBBB....|\n"
        "  rank 0 comm   |...............PPP..LL...............PP.LL|\n"
        "  rank 1 compute|FFFFFFFBBBBBBBBB........FFFFFFFBBBBBBBBB..|\n"
        "  rank 1 comm   |...............PPP.....LL..............PP.|\n";
    const char *got = strstr(r.out, "ps-async, first 2 steps");
    cr_assert(got, "%s", r.out);
    cr_expect_str_eq(got, want);
    run_free(&r);
}

/* ---- the Gantt plot and the HTML page ------------------------------------ */

/* The number of data lines in block `index` of a gnuplot data file. */
static int block_lines(const char *dat, const char *header)
{
    const char *p = strstr(dat, header);
    if (!p) return -1;
    int n = 0;
    for (p = strchr(p, '\n'); p && p[1] && p[1] != '\n' && p[1] != '#'; p = strchr(p + 1, '\n'))
        n++;
    return n;
}

Test(timeline_failures, gantt_draws_each_mark_with_its_key_entry)
{
    struct timeline_marks m = {0};
    struct err e = {0};
    timeline_marks_add_run(&m, (struct tl_step_run){0, 0, 1, 0, 1, true, false}, &e);
    timeline_marks_add_death(&m, 1, 1, false, &e);
    timeline_marks_add_death(&m, 0, 2.5, true, &e);
    timeline_marks_add_gap(&m, TL_GAP_RECOVERY, 1, 2, &e);
    timeline_marks_add_gap(&m, TL_GAP_SAVE, 3, 3.5, &e);
    timeline_marks_add_run(&m, (struct tl_step_run){0, 2, 3, 0, 1, false, true}, &e);
    const struct span s[] = {
        {.rank = 0, .kind = OP_FORWARD, .start_s = 0, .end_s = 1},
        {.rank = 1, .kind = OP_FORWARD, .start_s = 2, .end_s = 3},
    };
    struct plot_opts o = {test_tmp_dir, false, "2 devices", false};
    cr_assert_eq(plot_timeline_marked(s, 2, 2, "mirrored", 0, 4, &m, &o, &e), 0, "%s", e.msg);
    char *gp = test_slurp(test_tmp_path("timeline-mirrored.gp"));
    char *dat = test_slurp(test_tmp_path("timeline-mirrored.dat"));
    const char *titles[] = {"'rank dies'", "'detection, relaunch, loading'",
                            "'checkpoint or commit'", "'rank gone'", "'work lost (hatched)'",
                            "'steps redone'", "'lost/redone' 2"};
    for (size_t i = 0; i < sizeof titles / sizeof *titles; i++)
        cr_expect(strstr(gp, titles[i]), "%s missing: %s", titles[i], gp);
    cr_expect_eq(block_lines(dat, "deaths: time_s row"), 2, "%s", dat);
    timeline_marks_release(&m);
    free(gp);
    free(dat);
}

Test(timeline_failures, html_page_timeline_has_the_failure_legend)
{
    setenv("COLUMNS", "100", 1);
    const char *html = test_tmp_path("page.html");
    struct run r = RUN("compare", "--strategies", "mirrored", FAIL_ARGS, "--checkpoint-every",
                       "2", "--html", html);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *page = test_slurp(html);
    if (strstr(page, "No plots: they need gnuplot")) {
        free(page);
        run_free(&r);
        cr_skip_test("no gnuplot: the page has no figures");
    }
    /* the figure's key (gnuplot's SVG, inlined), once per entry */
    cr_expect(strstr(page, "rank dies") && strstr(page, "detection, relaunch, loading") &&
                  strstr(page, "steps redone"), "no failure legend in the page");
    free(page);
    run_free(&r);
}

/* Asynchronous workers on the Gantt chart: each row's label says its own
 * steps when they differ, as the text timeline's rows do; in lockstep, none. */
Test(timeline_failures, gantt_rows_name_their_own_steps_when_they_differ)
{
    struct span s[] = {
        {.rank = 0, .kind = OP_FORWARD, .step = 0, .start_s = 0, .end_s = 1},
        {.rank = 0, .kind = OP_FORWARD, .step = 1, .start_s = 1, .end_s = 2},
        {.rank = 1, .kind = OP_FORWARD, .step = 0, .start_s = 0, .end_s = 2},
    };
    struct plot_opts o = {test_tmp_dir, false, "", false};
    struct err e = {0};
    cr_assert_eq(plot_timeline(s, 3, 2, "ps-async", 2, &o, &e), 0, "%s", e.msg);
    char *gp = test_slurp(test_tmp_path("timeline-ps-async.gp"));
    cr_expect(strstr(gp, "ytics ('rank 0 compute, steps 0-1' 0, 'rank 1 compute, step 0' 1)"),
              "%s", gp);
    free(gp);
    s[1].step = 0;
    cr_assert_eq(plot_timeline(s, 3, 2, "mirrored", 2, &o, &e), 0, "%s", e.msg);
    gp = test_slurp(test_tmp_path("timeline-mirrored.gp"));
    cr_expect(strstr(gp, "ytics ('rank 0 compute' 0, 'rank 1 compute' 1)"), "%s", gp);
    free(gp);
}
