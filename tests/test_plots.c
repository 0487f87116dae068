/* plots/: each plot writes its data and script, gnuplot turns them into PNG
 * and SVG files; without gnuplot the data is still written. Built from a
 * small hand-made report set whose counts the data files must reproduce.
 * Tests that look at pictures skip that part when gnuplot is absent. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/config.h"
#include "../core/report.h"
#include "../plots/gnuplot.h"
#include "../plots/plots.h"
#include "../plots/script.h"
#include "../plots/text.h"
#include "../plots/timeline_text.h"

/* --- A report set: two strategies, one with accuracy, one with pushes ---- */

/* Draws fn(args..., &opts, &e) into the test's directory, titled title;
 * the test stops, naming fn and the error, when it fails. */
#define PLOT_OK(title, fn, ...)                                                           \
    do {                                                                                  \
        struct plot_opts opts_ = {test_tmp_dir, false, (title), false};                          \
        struct err e_ = {0};                                                              \
        cr_assert_eq(fn(__VA_ARGS__, &opts_, &e_), 0, "%s: %s", #fn, e_.msg);             \
    } while (0)

#define N_LOSS_A 5
#define N_LOSS_B 4
#define N_ACC_A 2

static void make_reports(struct report r[3])
{
    for (int i = 0; i < 3; i++) {
        report_init(&r[i]);
        r[i].mode = "sim";
        r[i].devices = 4;
    }
    snprintf(r[0].strategy, sizeof r[0].strategy, "mirrored");
    r[0].n_loss_curve = N_LOSS_A;
    r[0].loss_curve = calloc(N_LOSS_A, sizeof *r[0].loss_curve);
    for (int k = 0; k < N_LOSS_A; k++)
        r[0].loss_curve[k] = (struct loss_point){k, 0.01 * k, 2.3 - 0.3 * k};
    r[0].n_accuracy_curve = N_ACC_A;
    r[0].accuracy_curve = calloc(N_ACC_A, sizeof *r[0].accuracy_curve);
    r[0].accuracy_curve[0] = (struct accuracy_point){2, 0.02, 0.5};
    r[0].accuracy_curve[1] = (struct accuracy_point){4, 0.04, 0.7};

    snprintf(r[1].strategy, sizeof r[1].strategy, "ps-async");
    r[1].n_loss_curve = N_LOSS_B;
    r[1].loss_curve = calloc(N_LOSS_B, sizeof *r[1].loss_curve);
    for (int k = 0; k < N_LOSS_B; k++)
        r[1].loss_curve[k] = (struct loss_point){k, 0.008 * k, 2.3 - 0.2 * k};
    r[1].staleness.n_histogram = 3;
    r[1].staleness.histogram = calloc(3, sizeof *r[1].staleness.histogram);
    r[1].staleness.histogram[0] = 5;
    r[1].staleness.histogram[1] = 3;
    r[1].staleness.histogram[2] = 2;

    /* Sync PS: every push fresh, but a histogram all the same. */
    snprintf(r[2].strategy, sizeof r[2].strategy, "ps-sync");
    r[2].staleness.n_histogram = 1;
    r[2].staleness.histogram = calloc(1, sizeof *r[2].staleness.histogram);
    r[2].staleness.histogram[0] = 8;
}

static void free_reports(struct report r[3])
{
    for (int i = 0; i < 3; i++) report_release(&r[i]);
}

/* --- Files ---------------------------------------------------------------- */

static bool have_gnuplot(void)
{
    char path[4096];
    return gnuplot_find(path, sizeof path);
}

static char *file_in(const char *dir, const char *name)
{
    static char path[2][512];
    static int k;
    k ^= 1;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Counts the lines of a data file: data lines, and '#' header lines. */
static void count_lines(const char *path, int *data, int *headers)
{
    char *text = test_slurp(path);
    *data = *headers = 0;
    for (char *line = text; *line;) {
        char *eol = strchr(line, '\n');
        if (*line == '#') (*headers)++;
        else if (*line != '\n') (*data)++;
        if (!eol) break;
        line = eol + 1;
    }
    free(text);
}

/* A PNG starts with its 8-byte signature (PNG spec, 5.2). */
static void expect_png(const char *path)
{
    size_t n;
    char *b = test_slurp_n(path, &n);
    cr_expect(n > 8 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8), "%s is not a PNG", path);
    free(b);
}

static void expect_svg(const char *path)
{
    char *b = test_slurp(path);
    cr_expect(!strncmp(b, "<?xml", 5) || strstr(b, "<svg"), "%s is not an SVG", path);
    free(b);
}

/* The files of figure fig: always data and script (named name), and with
 * gnuplot its PNG and SVG. */
static void expect_figure(const char *dir, const char *name, const char *fig)
{
    char f[128];
    snprintf(f, sizeof f, "%s.dat", name);
    cr_expect(exists(file_in(dir, f)), "no %s", f);
    snprintf(f, sizeof f, "%s.gp", name);
    cr_expect(exists(file_in(dir, f)), "no %s", f);
    if (!have_gnuplot()) return;
    snprintf(f, sizeof f, "%s.png", fig);
    expect_png(file_in(dir, f));
    snprintf(f, sizeof f, "%s.svg", fig);
    expect_svg(file_in(dir, f));
}

/* Each test writes its figures in a fresh test_tmp_dir. */
TEST_SUITE_WITH_TMP_DIR(plots);

/* plot (plot_convergence, plot_staleness) of make_reports' three reports
 * into test_tmp_dir under title, which must succeed; the data and header
 * lines of its data file dat. */
static void plot_the_three(int (*plot)(const struct report *const *, int,
                                       const struct plot_opts *, struct err *),
                           const char *title, const char *dat, int *data, int *headers)
{
    struct report r[3];
    make_reports(r);
    const struct report *rs[] = {&r[0], &r[1], &r[2]};
    PLOT_OK(title, plot, rs, 3);
    count_lines(test_tmp_path(dat), data, headers);
    free_reports(r);
}

/* Runs f with fd (1 or 2) going to a file; returns what was written there. */
static char *capture(int fd, int (*f)(void *), void *arg, int *rc)
{
    char path[] = "/tmp/strata-plots-capture-XXXXXX";
    int tmp = mkstemp(path);
    cr_assert(tmp >= 0);
    fflush(fd == 1 ? stdout : stderr);
    int saved = dup(fd);
    dup2(tmp, fd);
    *rc = f(arg);
    fflush(fd == 1 ? stdout : stderr);
    dup2(saved, fd);
    close(saved);
    close(tmp);
    char *text = test_slurp(path);
    unlink(path);
    return text;
}

/* --- The plot functions --------------------------------------------------- */

Test(plots, convergence_data_has_a_line_per_point_and_a_header_per_curve)
{
    /* A quote and an underscore in the title: the script must keep both. */
    int data, headers;
    plot_the_three(plot_convergence, "4 devices of h100's_ib, batch 64", "convergence.dat", &data,
                   &headers);
    /* Points: 5 + 4 loss, 2 accuracy; ps-sync has no curve and no block.
     * Headers: the file's line and one per block (2 loss, 1 accuracy). */
    cr_expect_eq(data, N_LOSS_A + N_LOSS_B + N_ACC_A);
    cr_expect_eq(headers, 1 + 3);
    char *gp = test_slurp(test_tmp_path("convergence.gp"));
    cr_expect_not_null(strstr(gp, "'mirrored'"), "the legend does not name the strategy");
    cr_expect_not_null(strstr(gp, "'test accuracy'"), "no accuracy panel");
    cr_expect_not_null(strstr(gp, "'time (ms)'"), "0.04 s of training should be in ms");
    cr_expect_not_null(strstr(gp, "h100''s_ib"), "the title's quote is not doubled");
    cr_expect_null(strstr(gp, "(sim)"), "one mode: no mode in the legend");
    free(gp);
    expect_figure(test_tmp_dir, "convergence", "convergence");
}

Test(plots, convergence_names_the_mode_when_real_and_sim_mix)
{
    struct report r[3];
    make_reports(r);
    r[1].mode = "real";
    snprintf(r[1].strategy, sizeof r[1].strategy, "mirrored");
    const struct report *rs[] = {&r[0], &r[1]};
    PLOT_OK("validation", plot_convergence, rs, 2);
    char *gp = test_slurp(test_tmp_path("convergence.gp"));
    cr_expect_not_null(strstr(gp, "'mirrored (sim)'"));
    cr_expect_not_null(strstr(gp, "'mirrored (real)'"));
    free(gp);
    free_reports(r);
}

/* `strata plot a.json b.json` of ps-async on 4 devices twice, once with
 * stragglers exp:0.3 for 40 steps, once exp:0.5 for 30: both lines and
 * both staleness bars were "ps-async, 4 devices". Each now names the
 * options that differ, the same ones for both; identical configs get
 * their order. */
Test(plots, reports_alike_but_for_their_options_have_legends_that_tell_them_apart)
{
    struct report r[3];
    make_reports(r);
    struct config c[2];
    const unsigned groups = OPTG_SCENARIO | OPTG_RUN | OPTG_SIM | OPTG_DISTURB;
    for (int i = 0; i < 2; i++) {
        config_init(&c[i]);
        snprintf(r[i].strategy, sizeof r[i].strategy, "ps-async");
        r[i].config = &c[i];
        r[i].config_groups = groups;
    }
    struct err e = {0};
    cr_assert_eq(config_set(&c[0], "straggler", "exp:0.3", groups, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(&c[0], "steps", "40", groups, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(&c[1], "straggler", "exp:0.5", groups, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(&c[1], "steps", "30", groups, &e), 0, "%s", e.msg);
    const struct report *rs[] = {&r[0], &r[1]};
    PLOT_OK("two stragglers", plot_convergence, rs, 2);
    char *gp = test_slurp(test_tmp_path("convergence.gp"));
    cr_expect_not_null(strstr(gp, "'ps-async, 4 devices, steps 40, straggler exp:0.3'"), "%s", gp);
    cr_expect_not_null(strstr(gp, "'ps-async, 4 devices, steps 30, straggler exp:0.5'"), "%s", gp);
    free(gp);
    cr_assert_eq(config_set(&c[1], "straggler", "exp:0.3", groups, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(&c[1], "steps", "40", groups, &e), 0, "%s", e.msg);
    r[0].staleness.n_histogram = 1;   /* r[1], ps-async already, has one */
    r[0].staleness.histogram = calloc(1, sizeof *r[0].staleness.histogram);
    r[0].staleness.histogram[0] = 4;
    PLOT_OK("twice the same", plot_staleness, rs, 2);
    gp = test_slurp(test_tmp_path("staleness.gp"));
    cr_expect_not_null(strstr(gp, "'ps-async, 4 devices, #2'"), "%s", gp);
    free(gp);
    free_reports(r);
    for (int i = 0; i < 2; i++) config_release(&c[i]);
}

Test(plots, convergence_without_curves_says_why_in_the_figure)
{
    struct report r[3];
    make_reports(r);
    const struct report *rs[] = {&r[2]};
    PLOT_OK("no numerics", plot_convergence, rs, 1);
    char *gp = test_slurp(test_tmp_path("convergence.gp"));
    cr_expect_not_null(strstr(gp, "--numerics"), "the empty figure does not say what to do");
    free(gp);
    expect_figure(test_tmp_dir, "convergence", "convergence");
    free_reports(r);
}

Test(plots, timeline_draws_a_box_per_span_before_the_end)
{
    /* Two ranks; the last span starts after t_end and is left out. */
    struct span s[] = {
        {.rank = 0, .stream = 0, .kind = OP_FORWARD, .mb = 0, .start_s = 0, .end_s = 1},
        {.rank = 0, .stream = 0, .kind = OP_BACKWARD, .mb = 0, .start_s = 1, .end_s = 3},
        {.rank = 1, .stream = 0, .kind = OP_FORWARD, .mb = 0, .start_s = 1, .end_s = 2},
        {.rank = 1, .stream = 1, .kind = OP_ALLREDUCE, .mb = -1, .start_s = 3, .end_s = 4},
        {.rank = 1, .stream = 0, .kind = OP_UPDATE, .mb = -1, .start_s = 4.5, .end_s = 5},
    };
    PLOT_OK("2 devices", plot_timeline, s, 5, 2, "mirrored", 4.2);
    int data, headers;
    count_lines(test_tmp_path("timeline-mirrored.dat"), &data, &headers);
    cr_expect_eq(data, 4, "4 spans start before 4.2 s");
    cr_expect_eq(headers, 1 + 3, "a block per kind drawn: forward, backward, all-reduce");
    char *gp = test_slurp(test_tmp_path("timeline-mirrored.gp"));
    /* Rows that have spans only: rank 0's comm stream has none. */
    cr_expect_not_null(strstr(gp, "ytics ('rank 0 compute' 0, 'rank 1 compute' 1, "
                                  "'rank 1 comm' 2)"), "%s", gp);
    cr_expect_not_null(strstr(gp, "title 'allreduce'"), "the key does not name the kinds");
    cr_expect_null(strstr(gp, "'update'"), "a kind with no span drawn is in the key");
    cr_expect_not_null(strstr(gp, "'time (s)'"));
    free(gp);
    expect_figure(test_tmp_dir, "timeline-mirrored", "timeline-mirrored");
}

Test(plots, timeline_colours_each_kind_from_the_op_table)
{
    struct span s[] = {
        {.rank = 0, .stream = 0, .kind = OP_FORWARD, .mb = 0, .start_s = 0, .end_s = 1},
        {.rank = 0, .stream = 1, .kind = OP_PUSH, .mb = -1, .start_s = 1, .end_s = 2},
    };
    PLOT_OK("", plot_timeline, s, 2, 1, "ps-async", 2);
    char *gp = test_slurp(test_tmp_path("timeline-ps-async.gp"));
    char want[64];
    for (int k = 0; k < 2; k++) {
        snprintf(want, sizeof want, "lc rgb '%s'", op_infos[s[k].kind].colour);
        cr_expect_not_null(strstr(gp, want), "%s is not drawn in %s", op_infos[s[k].kind].name,
                           want);
    }
    free(gp);
}

/* The text timeline of a 2-stage pipeline, half a unit a column, drawn into a
 * memory stream: letters from op_infos[].letters, the odd microbatch's in
 * lower case, a send's the same for either. */
Test(plots, text_timeline_letters_follow_the_op_table_and_the_microbatch)
{
    struct span s[] = {
        {.rank = 0, .stream = 0, .kind = OP_FORWARD, .mb = 0, .start_s = 0, .end_s = 1},
        {.rank = 0, .stream = 0, .kind = OP_FORWARD, .mb = 1, .start_s = 1, .end_s = 2},
        {.rank = 0, .stream = 1, .kind = OP_SEND, .mb = 0, .start_s = 1, .end_s = 2},
        {.rank = 0, .stream = 1, .kind = OP_SEND, .mb = 1, .start_s = 2, .end_s = 3},
        {.rank = 1, .stream = 0, .kind = OP_BACKWARD, .mb = 1, .start_s = 3, .end_s = 4},
        {.rank = 1, .stream = 0, .kind = OP_UPDATE, .mb = -1, .start_s = 4, .end_s = 5},
    };
    struct test_capture c;
    /* 16 label columns and 2 bars around the narrowest grid, 10 columns */
    timeline_print(test_capture_open(&c), s, 6, 2, 5.0, 16 + 2 + 10, 64, "units");
    char *buf = test_capture_close(&c);
    /* the key names only the kinds drawn: no all-reduce, push or pull here */
    cr_expect_not_null(strstr(buf, "one column = 0.5 units (F/f forward, B/b backward of even/odd "
                                   "microbatches,\nU update, S send, . idle):\n"),
                  "%s", buf);
    cr_expect_not_null(strstr(buf, "rank 0 compute|FFff......|"), "%s", buf);
    cr_expect_not_null(strstr(buf, "rank 0 comm   |..SSSS....|"), "%s", buf);
    cr_expect_not_null(strstr(buf, "rank 1 compute|......bbUU|"), "%s", buf);
    cr_expect_null(strstr(buf, "rank 1 comm"), "a row with no span is drawn: %s", buf);
    free(buf);
}

Test(plots, timeline_with_nothing_to_draw_is_an_input_error)
{
    struct span s = {.rank = 0, .kind = OP_FORWARD, .start_s = 5, .end_s = 6};
    struct plot_opts o = {"/nonexistent-strata-dir", false, "", false};
    struct err e = {0};
    cr_expect_eq(plot_timeline(&s, 1, 1, "mirrored", 1.0, &o, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "mirrored"), "%s", e.msg);
}

Test(plots, staleness_has_a_block_per_report_that_pushed)
{
    int data, headers;
    plot_the_three(plot_staleness, "4 devices", "staleness.dat", &data, &headers);
    cr_expect_eq(data, 3 + 1, "ps-async's 3 bins and ps-sync's 1");
    cr_expect_eq(headers, 1 + 2);
    char *dat = test_slurp(test_tmp_path("staleness.dat"));
    /* 3 of ps-async's 10 pushes were one version behind: 30%. */
    cr_expect_not_null(strstr(dat, "\n1 3 30\n"), "%s", dat);
    free(dat);
    expect_figure(test_tmp_dir, "staleness", "staleness");
}

/* pipelined-steps pushes nothing: its staleness is of its own updates
 * (docs/metrics.md), as sim's terminal says; the figure called its 76
 * updates "pushes". And a push is no update: ps-sync's 240 pushes (60
 * steps, 4 workers) are 60 updates, and the figure's "240 updates" read
 * against the table's 60. What both apply is a gradient. */
Test(plots, staleness_counts_applied_gradients)
{
    struct report r[3];
    make_reports(r);
    snprintf(r[1].strategy, sizeof r[1].strategy, "pipelined-steps");
    const struct report *rs[] = {&r[1], &r[2]};
    PLOT_OK("in flight", plot_staleness, rs, 2);
    char *gp = test_slurp(test_tmp_path("staleness.gp"));
    cr_expect_not_null(strstr(gp, "'Staleness of applied gradients (pushes to a server, "
                                  "pipelined-steps'' own;"), "%s", gp);
    cr_expect_not_null(strstr(gp, "set ylabel 'gradients (% of a run''s applied gradients)'"),
                       "%s", gp);
    cr_expect_null(strstr(gp, "updates"), "%s", gp);
    free(gp);
    char *dat = test_slurp(test_tmp_path("staleness.dat"));
    cr_expect_not_null(strstr(dat, "pipelined-steps (10 applied gradients, "), "%s", dat);
    cr_expect_not_null(strstr(dat, "ps-sync (8 applied gradients, "), "%s", dat);
    cr_expect_null(strstr(dat, "updates"), "%s", dat);
    free(dat);
    free_reports(r);
}

/* Colour alone did not tell bars apart: gnuplot's colours repeat after 8
 * (a compare of every strategy drew ps-async and pipelined-steps in one),
 * and in grey, as a paper may be printed, ps-async's sky blue and ps-ssp's
 * orange (reports 3 and 4 of the default compare) are one grey. Each series
 * drawn has a fill as well, by its place in the figure: solid, then six
 * hatchings, so the first 7 series differ in grey whatever their colours
 * (a fill by report index gave ps-ssp, the 4th report, and pipelined-steps,
 * the 11th, one crosshatch in one grey). */
Test(plots, staleness_bars_differ_in_fill_as_well_as_colour)
{
    struct report r[3];
    make_reports(r);   /* r[0] has no histogram: left out, but counted */
    const struct report *rs[] = {&r[1], &r[0], &r[1], &r[1], &r[0],
                                 &r[0], &r[0], &r[0], &r[0], &r[0], &r[2]};
    PLOT_OK("eleven", plot_staleness, rs, 11);
    char *gp = test_slurp(test_tmp_path("staleness.gp"));
    cr_expect_not_null(strstr(gp, "with boxes lt 1 title 'ps-async"), "solid first:\n%s", gp);
    cr_expect_not_null(strstr(gp, "with boxes lt 3 fs pattern 4 border lc rgb '#303030' "
                                  "title 'ps-async"), "%s", gp);
    cr_expect_not_null(strstr(gp, "with boxes lt 4 fs pattern 5 border lc rgb '#303030' "
                                  "title 'ps-async"), "%s", gp);
    /* the 11th report, the 4th series: its colour lt 3's, its fill its own */
    cr_expect_not_null(strstr(gp, "with boxes lt 11 fs pattern 1 border lc rgb '#303030' "
                                  "title 'ps-sync'"), "%s", gp);
    free(gp);
    free_reports(r);
    expect_figure(test_tmp_dir, "staleness", "staleness");
}

/* The key stood inside, at the top right, over whatever bars stand there:
 * a run's bars can stand anywhere (ps-async on 32 devices: 95% at 31), and
 * `strata plot` of a sweep's --json, a series a point, had 23 key rows over
 * the right third of the bars. It stands beside them. */
Test(plots, staleness_key_stands_beside_the_bars)
{
    struct report r[3];
    make_reports(r);
    const struct report *rs[] = {&r[1], &r[2]};
    PLOT_OK("key", plot_staleness, rs, 2);
    char *gp = test_slurp(test_tmp_path("staleness.gp"));
    cr_expect_not_null(strstr(gp, "set key outside right top\n"), "%s", gp);
    cr_expect_null(strstr(gp, "set key top right"), "%s", gp);
    free(gp);
    free_reports(r);
}

Test(plots, staleness_without_pushes_is_an_input_error)
{
    struct report r[3];
    make_reports(r);
    const struct report *rs[] = {&r[0]};
    struct plot_opts o = {"/nonexistent-strata-dir", false, "", false};
    struct err e = {0};
    cr_expect_eq(plot_staleness(rs, 1, &o, &e), ERR_INPUT);
    free_reports(r);
}

Test(plots, speedup_sorts_by_x_and_uses_log2_axes_for_powers_of_two)
{
    struct speedup_point p[] = {
        {"mirrored", 4, 3.6, 0.9}, {"mirrored", 1, 1, 1},     {"ps-async", 1, 1, 1},
        {"mirrored", 2, 1.9, 0.95}, {"ps-async", 4, 2.8, 0.7}, {"mirrored", 8, 6.4, 0.8},
    };
    const struct speedup_axes ax = {.x_label = "devices", .speedup_over = "one device",
                                    .ideal_line = true};
    PLOT_OK("strong scaling", plot_speedup, p, 6, &ax);
    char *dat = test_slurp(test_tmp_path("speedup.dat"));
    cr_expect_not_null(strstr(dat, "1 1 1\n2 1.9 0.95\n4 3.6 0.9\n8 6.4 0.8\n"),
                       "mirrored's points not in x order:\n%s", dat);
    free(dat);
    char *gp = test_slurp(test_tmp_path("speedup.gp"));
    cr_expect_not_null(strstr(gp, "set logscale x 2"));
    cr_expect_not_null(strstr(gp, "'speedup (x one device)'"));
    cr_expect_not_null(strstr(gp, "title 'ideal'"), "no ideal line");
    free(gp);
    /* `strata plot --help`: each figure beside its NAME.dat and NAME.gp
     * (efficiency.* came from speedup.gp, with no efficiency.gp to find) */
    expect_figure(test_tmp_dir, "speedup", "speedup");
    expect_figure(test_tmp_dir, "efficiency", "efficiency");
    gp = test_slurp(test_tmp_path("efficiency.gp"));
    cr_expect_not_null(strstr(gp, "plot 'efficiency.dat' index 0 using 1:3 "), "%s", gp);
    cr_expect_null(strstr(gp, "speedup.dat"), "%s", gp);
    free(gp);
    gp = test_slurp(test_tmp_path("speedup.gp"));
    cr_expect_null(strstr(gp, "efficiency.png"), "speedup.gp draws speedup only: %s", gp);
    free(gp);
    dat = test_slurp(test_tmp_path("efficiency.dat"));
    cr_expect_not_null(strstr(dat, "1 1 1\n2 1.9 0.95\n4 3.6 0.9\n8 6.4 0.8\n"), "%s", dat);
    free(dat);
}

/* A sweep of microbatches 1 to 8: speedups 1 to 1.96 on a log2 axis had
 * two labels, 1 and 2, and nothing between to read a value by. Over few
 * octaves the axis is labelled between its powers too; over many, the
 * powers suffice. */
Test(plots, speedup_log2_axis_over_few_octaves_is_labelled_between_powers)
{
    struct speedup_point p[] = {{"gpipe", 1, 1, 1},      {"gpipe", 2, 1.33, 0.66},
                                {"gpipe", 4, 1.59, 0.4}, {"gpipe", 8, 1.75, 0.22},
                                {"1f1b", 1, 1, 1},       {"1f1b", 8, 1.96, 0.25}};
    const struct speedup_axes ax = {.x_label = "microbatches",
                                    .speedup_over = "microbatches=1, the first value"};
    PLOT_OK("microbatches", plot_speedup, p, 6, &ax);
    char *gp = test_slurp(test_tmp_path("speedup.gp"));
    cr_expect_not_null(strstr(gp, "set logscale y 2\n    set ytics add (1.25, 1.5, 1.75)\n"),
                       "%s", gp);
    free(gp);
    gp = test_slurp(test_tmp_path("efficiency.gp"));
    cr_expect_null(strstr(gp, "ytics"), "efficiency is linear:\n%s", gp);
    free(gp);
    expect_figure(test_tmp_dir, "speedup", "speedup");
    /* 1 to 32 devices, and the ideal line to 32: the powers are enough */
    struct speedup_point wide[] = {{"mirrored", 1, 1, 1}, {"mirrored", 32, 14.5, 0.45}};
    const struct speedup_axes devices = {.x_label = "devices", .speedup_over = "one device",
                                         .ideal_line = true};
    PLOT_OK("devices", plot_speedup, wide, 2, &devices);
    gp = test_slurp(test_tmp_path("speedup.gp"));
    cr_expect_null(strstr(gp, "ytics"), "%s", gp);
    free(gp);
    /* one device alone: gnuplot widens 1 to 0.5 .. 2, two octaves */
    PLOT_OK("devices", plot_speedup, wide, 1, &devices);
    gp = test_slurp(test_tmp_path("speedup.gp"));
    cr_expect_not_null(strstr(gp, "set ytics add (0.75, 1.5)\n"), "%s", gp);
    free(gp);
}

Test(plots, speedup_over_other_values_keeps_a_linear_axis)
{
    struct speedup_point p[] = {{"mirrored", 3, 2.5, 0.83}, {"mirrored", 6, 4.5, 0.75}};
    const struct speedup_axes ax = {.x_label = "devices"};
    PLOT_OK("lr sweep", plot_speedup, p, 2, &ax);
    char *gp = test_slurp(test_tmp_path("speedup.gp"));
    cr_expect_null(strstr(gp, "logscale"));
    cr_expect_null(strstr(gp, "'ideal'"));
    free(gp);
}

/* A strategy that has no point at an x the sweep ran (pipeline-interleaved
 * at 3 devices: --microbatches 4 is no multiple of 3) had its line drawn
 * straight from 2 to 4, as if it ran at 3. A blank line in its block breaks
 * gnuplot's line there: at its own left-out point, and at an x only another
 * strategy has (a sweep document lists no point that did not run). */
Test(plots, speedup_line_breaks_where_a_strategy_has_no_point)
{
    struct speedup_point p[] = {
        {"interleaved", 1, 1, 1},      {"interleaved", 2, 1.7, 0.85}, {"interleaved", 3, NAN, NAN},
        {"interleaved", 4, 2.2, 0.55}, {"gpipe", 1, 1, 1},            {"gpipe", 2, 1.5, 0.75},
        {"gpipe", 3, 1.9, 0.63},       {"gpipe", 4, 2.1, 0.53},       {"gpipe", 6, 2.1, 0.35},
        {"gpipe", 8, 2.2, 0.28},       {"interleaved", 8, 2.4, 0.3},  {"never", 2, NAN, NAN},
    };
    const struct speedup_axes ax = {.x_label = "devices", .speedup_over = "one device",
                                    .ideal_line = true};
    PLOT_OK("gaps", plot_speedup, p, 12, &ax);
    char *dat = test_slurp(test_tmp_path("speedup.dat"));
    cr_expect_not_null(strstr(dat, "2 1.7 0.85\n# left out: x = 3, no speedup\n\n4 2.2 0.55\n\n"
                                   "8 2.4 0.3\n"),
                       "interleaved's line not broken at 3 (its own) and 6 (gpipe's):\n%s", dat);
    cr_expect_not_null(strstr(dat, "1 1 1\n2 1.5 0.75\n3 1.9 0.63\n4 2.1 0.53\n6 2.1 0.35\n"
                                   "8 2.2 0.28\n"),
                       "gpipe ran at every x: no break:\n%s", dat);
    cr_expect_null(strstr(dat, "never"), "a strategy with no point has no block:\n%s", dat);
    free(dat);
    char *gp = test_slurp(test_tmp_path("speedup.gp"));
    cr_expect_null(strstr(gp, "'never'"), "a key entry with no line:\n%s", gp);
    cr_expect_null(strstr(gp, "index 2"), "%s", gp);
    free(gp);
    expect_figure(test_tmp_dir, "speedup", "speedup");
}

/* The same through `strata sweep --plot` (which left out the point, and
 * so the gap) and `strata plot` of its --json (which never lists it). */
Test(plots, strata_sweep_plot_breaks_the_line_of_a_point_that_did_not_run)
{
    char *json = strdup(test_tmp_path("mid.json")), *out = strdup(test_tmp_path("figs"));
    char *again = strdup(test_tmp_path("again"));
    expect_ok(RUN("sweep", "--devices", "2,3,4", "--model", "fmnist-8", "--microbatches", "4",
                  "--strategies", "pipeline-interleaved,pipeline-gpipe", "--cluster",
                  "cpu-loopback", "--steps", "2", "-j", "1", "--json", json, "--plot", out),
              "sweep");
    expect_ok(RUN("plot", json, "--plot", again), "plot");
    const char *dirs[] = {out, again};
    /* sweep --plot says where its figures are, as compare and plot do (it
     * said nothing) */
    struct run r = RUN("sweep", "--devices", "1,2", "--strategies", "mirrored", "--cluster",
                       "cpu-loopback", "--steps", "2", "-j", "1", "--plot", test_tmp_dir);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char where[300];
    snprintf(where, sizeof where, "\nplots in %s/: speedup, efficiency (each NAME.png",
             test_tmp_dir);
    cr_expect_not_null(strstr(r.out, where), "%s", r.out);
    run_free(&r);
    for (int i = 0; i < 2; i++) {
        char *dat = test_slurp(file_in(dirs[i], "speedup.dat"));
        char *head = strstr(dat, "# index 0: pipeline-interleaved\n2 ");
        char *tail = head ? strstr(head, "\n\n4 ") : NULL;
        cr_expect(tail && tail < strstr(dat, "# index 1"),
                  "%s: pipeline-interleaved's line not broken at 3 devices:\n%s", dirs[i], dat);
        free(dat);
    }
    free(json);
    free(out);
    free(again);
}

/* Near-equal predictions (ps-sync, ps-async and ps-ssp, as a validation
 * run of every strategy gave: 11.9 ms predicted, 7.7 to 8.0 measured) wrote
 * their labels over each other into one unreadable smear, and every point
 * was the same filled circle, told apart by colour alone (one grey in
 * print). Each strategy has its shape; a label that would cover another is
 * left out (the last column of the data says which are drawn). */
Test(plots, validation_points_differ_in_shape_and_labels_do_not_overlap)
{
    struct validation_point p[] = {
        {"mirrored", 0.0082, 0.0150}, {"ps-sync", 0.0119, 0.0077}, {"ps-async", 0.0119, 0.0079},
        {"ps-ssp", 0.0119, 0.0080},   {"model", 0.0149, 0.0121},
    };
    PLOT_OK("overlap", plot_validation, p, 5);
    char *dat = test_slurp(test_tmp_path("validation.dat"));
    cr_expect_not_null(strstr(dat, "\"ps-sync\" 0.0077 0.0119 54.55 1\n"), "%s", dat);
    cr_expect_not_null(strstr(dat, "\"ps-async\" 0.0079 0.0119 50.63 0\n"), "%s", dat);
    cr_expect_not_null(strstr(dat, "\"ps-ssp\" 0.008 0.0119 48.75 0\n"), "%s", dat);
    cr_expect_not_null(strstr(dat, "\"model\" 0.0121 0.0149 23.14 1\n"), "%s", dat);
    free(dat);
    char *gp = test_slurp(test_tmp_path("validation.gp"));
    cr_expect_not_null(strstr(gp, "index 0 using ($2*1000):($3*1000) with points pt 7 ps 1.5 lc 1 "
                                  "title 'mirrored'"), "%s", gp);
    cr_expect_not_null(strstr(gp, "index 2 using ($2*1000):($3*1000) with points pt 9 ps 1.5 lc 3 "
                                  "title 'ps-async'"), "%s", gp);
    cr_expect_not_null(strstr(gp, "($5 != 0 ? sprintf("), "%s", gp);
    free(gp);
    expect_figure(test_tmp_dir, "validation", "validation");
}

Test(plots, validation_has_a_labelled_point_per_run_and_the_diagonal)
{
    struct validation_point p[] = {
        {"mirrored", 0.011, 0.010}, {"ps-async", 0.018, 0.020}, {"pipeline-1f1b", 0.03, 0.025}};
    PLOT_OK("cpu-loopback", plot_validation, p, 3);
    int data, headers;
    count_lines(test_tmp_path("validation.dat"), &data, &headers);
    cr_expect_eq(data, 3);
    char *dat = test_slurp(test_tmp_path("validation.dat"));
    /* 0.011 / 0.010 - 1 = +10% */
    cr_expect_not_null(strstr(dat, "\"mirrored\" 0.01 0.011 10 1\n"), "%s", dat);
    free(dat);
    char *gp = test_slurp(test_tmp_path("validation.gp"));
    cr_expect_not_null(strstr(gp, "y = x"));
    cr_expect_not_null(strstr(gp, "with labels"));
    free(gp);
    expect_figure(test_tmp_dir, "validation", "validation");
}

/* --- Goodput --------------------------------------------------------------- */

/* Three points of a checkpoint sweep of mirrored, built so that the model
 * is round: each run 200 steps of 64 samples at 640 samples/s (20 s), one
 * failure each (M = 60 s / 3 = 20 s), 0.1 s a checkpoint (after every K
 * steps but the last: 199/5 + 199/20 + 199/50 = 39 + 9 + 3 = 51
 * checkpoints, 5.1 s), 0.1 s a step. Young's optimum is then
 * sqrt(2 x 0.1 x 20) = 2 s = 20 steps, where the first-order goodput is
 * 1 - 0.1/2 - 2/40 = 0.9. A ps-async point with no checkpoint cost has a
 * curve but no optimum, and a report that did not fail is left out. */
#define N_GOODPUT 5
static const long long goodput_every[N_GOODPUT] = {50, 5, 20, 10, 10};

static void make_goodput_reports(struct report r[N_GOODPUT], struct config c[N_GOODPUT])
{
    for (int i = 0; i < N_GOODPUT; i++) {
        config_init(&c[i]);
        c[i].steps = 200;
        c[i].batch = 64;
        c[i].checkpoint_every = goodput_every[i];
        report_init(&r[i]);
        r[i].mode = "sim";
        r[i].devices = 4;
        r[i].config = &c[i];
        r[i].throughput_samples_per_s = 640;
        r[i].step_time_s.p50 = 0.1;
        snprintf(r[i].strategy, sizeof r[i].strategy, i < 3 ? "mirrored" : "ps-async");
        r[i].failure.happened = i < 4;
        r[i].failure.n_failures = 1;
        r[i].failure.checkpoint_s = i < 3 ? 0.1 * (double)(199 / goodput_every[i]) : 0;
    }
    r[0].failure.goodput = 0.75;   /* out of order: the plot sorts by interval */
    r[1].failure.goodput = 0.85;
    r[2].failure.goodput = 0.875;
    r[3].failure.goodput = 0.5;
    r[4].failure.goodput = 0.25;
}

static void free_goodput_reports(struct report r[N_GOODPUT], struct config c[N_GOODPUT])
{
    for (int i = 0; i < N_GOODPUT; i++) {
        report_release(&r[i]);
        config_release(&c[i]);
    }
}

Test(plots, goodput_marks_young_daly_optimum_beside_the_points_and_the_curve)
{
    struct report r[N_GOODPUT];
    struct config c[N_GOODPUT];
    make_goodput_reports(r, c);
    const struct report *rs[N_GOODPUT];
    for (int i = 0; i < N_GOODPUT; i++) rs[i] = &r[i];
    PLOT_OK("4 devices", plot_goodput, rs, N_GOODPUT);
    int data, headers;
    count_lines(test_tmp_path("goodput.dat"), &data, &headers);
    /* mirrored's 3 points and ps-async's 1 (the report that did not fail is
     * left out), and a 121-point curve each: ps-async's M is observed too. */
    cr_expect_eq(data, 3 + 1 + 2 * 121);
    char *dat = test_slurp(test_tmp_path("goodput.dat"));
    cr_expect_not_null(strstr(dat, "5 0.5 0.85\n20 2 0.875\n50 5 0.75\n"),
                       "mirrored's points, by interval, in steps and seconds: %s", dat);
    cr_expect_not_null(strstr(dat, "C = 0.1 s a checkpoint, R = 0 s a failure, M = 20 s"), "%s",
                       dat);
    cr_expect_not_null(strstr(dat, "tau* = sqrt(2 C M) = 2 s = 20 steps, first-order goodput "
                                   "0.9 there"), "%s", dat);
    cr_expect_not_null(strstr(dat, "optimum ps-async: none marked"), "%s", dat);
    /* Intervals over a decade: the curve's samples are log-spaced from
     * 5/1.5 to 50 x 1.5 steps, the first at 1/3 s: 1 - 0.1/(1/3) -
     * (1/3)/40 = 0.691666... */
    cr_expect_not_null(strstr(dat, "3.333333333 0.3333333333 0.6916666667\n"), "%s", dat);
    free(dat);
    char *gp = test_slurp(test_tmp_path("goodput.gp"));
    cr_expect_not_null(strstr(gp, "set arrow from 20, graph 0 to 20, graph 1 nohead"), "%s", gp);
    cr_expect_not_null(strstr(gp, "mirrored: Young-Daly sqrt(2CM) = 20 steps (2 s), 90.0%"),
                       "%s", gp);
    cr_expect_null(strstr(gp, "ps-async: sqrt"), "no cost, no optimum: %s", gp);
    cr_expect_not_null(strstr(gp, "set logscale x\n    set xtics (50, 5, 20, 10)"), "%s", gp);
    cr_expect_not_null(strstr(gp, "'goodput.dat' index 2 using 1:3 with lines"), "%s", gp);
    free(gp);
    expect_figure(test_tmp_dir, "goodput", "goodput");
    free_goodput_reports(r, c);
}

/* A relaunch as long as the time between failures (short real runs: 0.9
 * s of relaunch, a failure every 0.1 s of run) puts the first order below
 * 0 at every interval: the optimum's label read "-817.3%" as a goodput.
 * Here R = 40 s against M = 20 s. The optimum, at 20 steps in the axis'
 * right half, is labelled to the left of its line: to the right it ran
 * off the figure. */
Test(plots, goodput_whose_first_order_is_below_0_says_so)
{
    struct report r[N_GOODPUT];
    struct config c[N_GOODPUT];
    make_goodput_reports(r, c);
    for (int i = 0; i < 3; i++) r[i].failure.relaunch_s = 40;
    const struct report *rs[N_GOODPUT];
    for (int i = 0; i < N_GOODPUT; i++) rs[i] = &r[i];
    PLOT_OK("4 devices", plot_goodput, rs, N_GOODPUT);
    char *gp = test_slurp(test_tmp_path("goodput.gp"));
    cr_expect_not_null(strstr(gp, "mirrored: Young-Daly sqrt(2CM) = 20 steps (2 s), first order "
                                  "below 0 ' at 20, graph 0.95 right"), "%s", gp);
    cr_expect_null(strstr(gp, "%'"), "a percent is given: %s", gp);
    free(gp);
    free_goodput_reports(r, c);
}

Test(plots, goodput_without_failures_is_an_input_error)
{
    struct report r[N_GOODPUT];
    struct config c[N_GOODPUT];
    make_goodput_reports(r, c);
    const struct report *rs[] = {&r[4]};   /* the one that did not fail */
    struct plot_opts o = {test_tmp_dir, false, NULL, false};
    struct err e = {0};
    cr_expect_eq(plot_goodput(rs, 1, &o, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "failure section"), "%s", e.msg);
    free_goodput_reports(r, c);
}

/* --- Terminal, missing gnuplot, directories -------------------------------- */

struct call {
    const struct report *const *rs;
    const struct plot_opts *o;
    struct err e;
};

static int call_convergence(void *arg)
{
    struct call *c = arg;
    return plot_convergence(c->rs, 2, c->o, &c->e);
}

Test(plots, terminal_drawing_carries_the_title_and_leaves_no_files)
{
    if (!have_gnuplot()) cr_skip_test("gnuplot is not installed");
    struct report r[3];
    make_reports(r);
    const struct report *rs[] = {&r[0], &r[1]};
    struct plot_opts o = {NULL, true, "a title to find", false};
    struct call c = {rs, &o, {0}};
    int rc;
    char *out = capture(1, call_convergence, &c, &rc);
    cr_assert_eq(rc, 0, "%s", c.e.msg);
    cr_expect_not_null(strstr(out, "a title to find"), "stdout:\n%s", out);
    cr_expect_not_null(strstr(out, "mirrored"), "no legend in the drawing");
    free(out);
    cr_expect(!exists("convergence.dat"), "a terminal-only plot wrote into the working directory");
    free_reports(r);
}

Test(plots, without_gnuplot_the_data_is_written_and_stderr_says_what_to_install)
{
    setenv("STRATA_GNUPLOT", "/nonexistent/gnuplot", 1);
    struct report r[3];
    make_reports(r);
    const struct report *rs[] = {&r[0], &r[1]};
    struct plot_opts o = {test_tmp_dir, false, "x", false};
    struct call c = {rs, &o, {0}};
    int rc;
    char *err = capture(2, call_convergence, &c, &rc);
    cr_expect_eq(rc, 0, "%s", c.e.msg);
    cr_expect_not_null(strstr(err, "gnuplot-nox"), "stderr: %s", err);
    cr_expect_not_null(strstr(err, "convergence.gp"), "stderr does not name the script: %s", err);
    free(err);
    cr_expect(exists(test_tmp_path("convergence.dat")));
    cr_expect(exists(test_tmp_path("convergence.gp")));
    cr_expect(!exists(test_tmp_path("convergence.png")));
    free_reports(r);
}

Test(plots, a_failing_gnuplot_is_a_run_error_naming_the_script)
{
    setenv("STRATA_GNUPLOT", "/bin/false", 1);
    struct report r[3];
    make_reports(r);
    const struct report *rs[] = {&r[0]};
    struct plot_opts o = {test_tmp_dir, false, "x", false};
    struct err e = {0};
    cr_expect_eq(plot_convergence(rs, 1, &o, &e), ERR_RUN);
    cr_expect_not_null(strstr(e.msg, "convergence.gp"), "%s", e.msg);
    free_reports(r);
}

Test(plots, a_missing_directory_is_made_one_level_deep_and_no_deeper)
{
    setenv("STRATA_GNUPLOT", "/nonexistent/gnuplot", 1);  /* files only: faster */
    struct report r[3];
    make_reports(r);
    const struct report *rs[] = {&r[0]};
    struct err e = {0};
    char *one = strdup(test_tmp_path("new"));
    struct plot_opts o = {one, false, "x", false};
    freopen("/dev/null", "w", stderr);
    cr_expect_eq(plot_convergence(rs, 1, &o, &e), 0, "%s", e.msg);
    cr_expect(exists(file_in(one, "convergence.dat")));
    char *two = strdup(test_tmp_path("a/b"));
    o.dir = two;
    cr_expect_eq(plot_convergence(rs, 1, &o, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, two), "the message does not name the directory: %s", e.msg);
    cr_expect_not_null(strstr(e.msg, "parent"), "%s", e.msg);
    o.dir = file_in(one, "convergence.dat");   /* a file, not a directory */
    cr_expect_eq(plot_convergence(rs, 1, &o, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "not a directory"), "%s", e.msg);
    free(one);
    free(two);
    free_reports(r);
}

/* --- strata plot, the command ---------------------------------------------- */

Test(plots, strata_plot_of_a_sim_report_draws_convergence_and_staleness)
{
    char *json = strdup(test_tmp_path("r.json")), *out = strdup(test_tmp_path("figs"));
    struct run r = RUN("sim", "--strategy", "ps-async", "--devices", "4", "--steps", "4",
                       "--json", json);
    cr_assert_eq(r.status, 0, "strata sim: %s", r.err);
    run_free(&r);
    r = RUN("plot", json, "--plot", out);
    cr_assert_eq(r.status, 0, "strata plot: %s", r.err);
    expect_figure(out, "convergence", "convergence");
    expect_figure(out, "staleness", "staleness");
    cr_expect_not_null(strstr(r.out, out), "stdout does not say where the plots are: %s", r.out);
    run_free(&r);
    free(json);
    free(out);
}

/* Reports of different scenarios: the title says what they share and that
 * they differ, not the first one's cluster and model as if all had them. */
Test(plots, strata_plot_title_of_reports_that_differ_says_so)
{
    char *a = strdup(test_tmp_path("a.json")), *b = strdup(test_tmp_path("b.json"));
    char *out = strdup(test_tmp_path("mixed"));
    expect_ok(RUN("sim", "--steps", "2", "--json", a), "sim a");
    expect_ok(RUN("sim", "--steps", "2", "--cluster", "ideal", "--model", "mlp:784-64-10",
                  "--json", b),
              "sim b");
    expect_ok(RUN("plot", a, b, "--plot", out), "plot");
    char path[512];
    snprintf(path, sizeof path, "%s/convergence.gp", out);
    char *gp = test_slurp(path);
    cr_expect_not_null(strstr(gp, "'4 devices, batch 256 (reports of different scenarios)'"),
                       "%s", gp);
    cr_expect_null(strstr(gp, "h100-nvlink-ib"), "the first report's cluster: %s", gp);
    free(gp);
    free(a);
    free(b);
    free(out);
}

Test(plots, strata_plot_of_a_file_that_is_not_json_exits_2_naming_it)
{
    char *bad = strdup(test_tmp_path("notes.txt"));
    FILE *f = fopen(bad, "w");
    fputs("not a report\n", f);
    fclose(f);
    struct run r = RUN("plot", bad, "--plot", test_tmp_dir);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, bad), "stderr does not name the file: %s", r.err);
    run_free(&r);
    r = RUN("plot");
    cr_expect_eq(r.status, 2, "no files at all is bad input");
    run_free(&r);
    free(bad);
}

Test(plots, strata_compare_plot_draws_a_timeline_per_strategy)
{
    char *out = strdup(test_tmp_path("figs"));
    struct run r = RUN("compare", "--devices", "2", "--steps", "3", "--strategies",
                       "mirrored,ps-async,pipeline-1f1b", "--plot", out);
    cr_assert_eq(r.status, 0, "strata compare: %s", r.err);
    expect_figure(out, "timeline-mirrored", "timeline-mirrored");
    expect_figure(out, "timeline-ps-async", "timeline-ps-async");
    expect_figure(out, "timeline-pipeline-1f1b", "timeline-pipeline-1f1b");
    expect_figure(out, "staleness", "staleness");
    expect_figure(out, "convergence", "convergence");
    run_free(&r);
    free(out);
}

/* One device: the figures said "1 devices of h100-nvlink-ib" where the
 * terminal says "1 device of"; and so did `strata plot` of its report. */
Test(plots, one_device_is_one_device_in_the_figures_title)
{
    char *out = strdup(test_tmp_path("figs")), *json = strdup(test_tmp_path("one.json"));
    char *again = strdup(test_tmp_path("again"));
    expect_ok(RUN("compare", "--devices", "1", "--strategies", "mirrored", "--steps", "2", "-j",
                  "1", "--plot", out, "--json", json), "compare");
    expect_ok(RUN("plot", json, "--plot", again), "plot");
    char *gp = test_slurp(file_in(out, "timeline-mirrored.gp"));
    cr_expect_not_null(strstr(gp, "first 2 steps; 1 device of h100-nvlink-ib,"), "%s", gp);
    free(gp);
    gp = test_slurp(file_in(again, "convergence.gp"));
    cr_expect_not_null(strstr(gp, "'1 device, h100-nvlink-ib,"), "%s", gp);
    free(gp);
    free(out);
    free(json);
    free(again);
}

/* A sweep document as `strata sweep --json` writes it (ARCHITECTURE.md,
 * Reports), wrapped around reports of `strata sim`. */
Test(plots, strata_plot_of_a_sweep_draws_speedup_and_of_a_validation_its_points)
{
    char *r1 = strdup(test_tmp_path("r1.json")), *r2 = strdup(test_tmp_path("r2.json"));
    struct run r = RUN("sim", "--strategy", "mirrored", "--devices", "1", "--json", r1);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN("sim", "--strategy", "mirrored", "--devices", "2", "--json", r2);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *t1 = test_slurp(r1), *t2 = test_slurp(r2);
    char *sweep = strdup(test_tmp_path("sweep.json")), *val = strdup(test_tmp_path("val.json"));
    FILE *f = fopen(sweep, "w");
    fprintf(f, "{\"strata_sweep\": 1, \"points\": ["
               "{\"strategy\": \"mirrored\", \"devices\": 1, \"speedup\": 1, \"efficiency\": 1, "
               "\"report\": %s}, {\"strategy\": \"mirrored\", \"devices\": 2, \"speedup\": 1.8, "
               "\"efficiency\": 0.9, \"report\": %s}]}\n", t1, t2);
    fclose(f);
    f = fopen(val, "w");
    fprintf(f, "{\"strata_validate\": 1, \"rows\": [{\"strategy\": \"mirrored\", "
               "\"predicted_step_s\": 0.01, \"measured_step_s\": 0.0125, \"error\": -0.2, "
               "\"predicted\": %s, \"measured\": %s}]}\n", t2, t2);
    fclose(f);
    char *out = strdup(test_tmp_path("figs"));
    r = RUN("plot", sweep, val, "--plot", out);
    cr_assert_eq(r.status, 0, "strata plot: %s", r.err);
    expect_figure(out, "speedup", "speedup");
    expect_figure(out, "efficiency", "efficiency");
    expect_figure(out, "validation", "validation");
    int data, headers;
    count_lines(file_in(out, "speedup.dat"), &data, &headers);
    cr_expect_eq(data, 2, "the sweep's two points");
    count_lines(file_in(out, "validation.dat"), &data, &headers);
    cr_expect_eq(data, 1, "the validation's one row");
    run_free(&r);
    /* the validation alone: titled as validate titles it */
    char *alone = strdup(test_tmp_path("alone"));
    expect_ok(RUN("plot", val, "--plot", alone), "plot of the validation");
    char *gp = test_slurp(file_in(alone, "validation.gp"));
    cr_expect_not_null(strstr(gp, "'predicted on h100-nvlink-ib, 1 cell'"), "%s", gp);
    free(gp);
    free(alone);
    free(t1);
    free(t2);
    free(r1);
    free(r2);
    free(sweep);
    free(val);
    free(out);
}

/* A checkpoint sweep with a failure: `sweep --plot` draws goodput, and so
 * does `strata plot` of its --json, a point per interval. */
Test(plots, strata_sweep_of_checkpoint_every_draws_goodput_and_plot_draws_it_again)
{
    char *json = strdup(test_tmp_path("sweep.json")), *out = strdup(test_tmp_path("figs"));
    char *again = strdup(test_tmp_path("again"));
    struct run r = RUN("sweep", "--strategies", "mirrored", "--devices", "4", "--cluster",
                       "cpu-loopback", "--fail", "1@0.05s", "--steps", "40", "--vary",
                       "checkpoint-every=2,5,10,20", "--json", json, "--plot", out);
    cr_assert_eq(r.status, 0, "strata sweep: %s", r.err);
    expect_figure(out, "goodput", "goodput");
    /* The table's failure columns, and the model under it: the old
     * simulator's checkpoints cost nothing, so no optimum is named. */
    cr_expect_not_null(strstr(r.out, "time lost  goodput"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "Young-Daly optimum interval"), "%s", r.out);
    run_free(&r);
    r = RUN("plot", json, "--plot", again);
    cr_assert_eq(r.status, 0, "strata plot: %s", r.err);
    expect_figure(again, "goodput", "goodput");
    cr_expect_not_null(strstr(r.out, "goodput"), "stdout does not name the goodput plot: %s",
                       r.out);
    int data, headers;
    count_lines(file_in(again, "goodput.dat"), &data, &headers);
    cr_expect_geq(data, 4, "the sweep's four points, and the curve");
    run_free(&r);
    free(json);
    free(out);
    free(again);
}

/* The lines of gp that set a title (the figure's scenario), in order. */
static char *title_lines(const char *gp)
{
    struct text t = {0};
    for (const char *l = gp; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *eol = strchr(l, '\n');
        int len = eol ? (int)(eol - l) : (int)strlen(l);
        if (strstr(l, "set title") && strstr(l, "set title") < l + len)
            text_printf(&t, "%.*s\n", len, l);
    }
    return t.s ? t.s : strdup("");
}

/* `strata plot` of a weak sweep's --json titled its speedup "cpu-loopback,
 * mlp:... (reports of different scenarios)": not a word of weak scaling or
 * of the stragglers, and its own points called different scenarios. It
 * titles them as `strata sweep --plot` did; and a validation's as validate
 * did, predicted on its cluster, its cells counted. */
Test(plots, strata_plot_of_a_sweep_titles_its_figures_as_the_sweep_did)
{
    char *json = strdup(test_tmp_path("weak.json")), *out = strdup(test_tmp_path("figs"));
    char *again = strdup(test_tmp_path("again"));
    expect_ok(RUN("sweep", "--strategies", "mirrored,ps-async", "--devices", "1,2", "--scaling",
                  "weak", "--straggler", "exp:0.1", "--cluster", "cpu-loopback", "--steps", "2",
                  "-j", "1", "--json", json, "--plot", out), "sweep");
    expect_ok(RUN("plot", json, "--plot", again), "plot");
    const char *figs[] = {"speedup.gp", "efficiency.gp"};
    for (int i = 0; i < 2; i++) {
        char *a = test_slurp(file_in(out, figs[i])), *b = test_slurp(file_in(again, figs[i]));
        char *ta = title_lines(a), *tb = title_lines(b);
        cr_expect_str_eq(tb, ta, "%s", figs[i]);
        cr_expect_not_null(strstr(tb, "samples per device (weak scaling), stragglers exp:0.1"),
                           "%s", tb);
        free(ta);
        free(tb);
        free(a);
        free(b);
    }
    char *gp = test_slurp(file_in(again, "staleness.gp"));
    cr_expect_null(strstr(gp, "different scenarios"), "%s", gp);
    free(gp);
    free(json);
    free(out);
    free(again);
}

/* The model under a checkpoint sweep's table and in its goodput plot is
 * one model. The note took every run that failed, the plot only those it
 * plots (an interval above 0), so the same sweep stated two (labs'
 * failures.profile, mirrored, checkpoint-every=0,2,5, --fail 1@10: M =
 * 158.606 ms against 153.225 ms, tau* 8.38 against 8.23 steps); and both
 * counted steps / K checkpoints where a run writes one after every K steps
 * but the last, so C was 2.298 ms where a checkpoint (parameters and
 * momentum, 2 x 1,340,456 bytes at 1 GB/s) costs 2.681 ms. */
Test(plots, checkpoint_sweep_states_one_goodput_model_in_its_note_and_its_plot)
{
    char *json = strdup(test_tmp_path("ck.json")), *out = strdup(test_tmp_path("ck"));
    char *again = strdup(test_tmp_path("ck-again"));
    struct run r = RUN("sweep", "--strategies", "mirrored", "--devices", "4", "--cluster",
                       STRATA_SOURCE_DIR "/labs/failures.profile", "--fail", "1@10",
                       "--vary", "checkpoint-every=0,2,5", "--json", json, "--plot", out);
    cr_assert_eq(r.status, 0, "strata sweep: %s", r.err);
    double c_ms, m_ms, tau_steps;
    const char *note = strstr(r.out, "  mirrored: C = ");
    cr_assert_not_null(note, "%s", r.out);
    cr_assert_eq(sscanf(note, "  mirrored: C = %lf ms, M = %lf ms (observed): every %lf steps",
                        &c_ms, &m_ms, &tau_steps), 3, "%s", note);
    cr_expect_float_eq(c_ms, 2 * 1340456 / 1e9 * 1e3, 5e-4, "C %g ms", c_ms);
    run_free(&r);
    r = RUN("plot", json, "--plot", again);
    cr_assert_eq(r.status, 0, "strata plot: %s", r.err);
    run_free(&r);
    const char *dirs[] = {out, again};
    for (int i = 0; i < 2; i++) {
        char *dat = test_slurp(file_in(dirs[i], "goodput.dat"));
        double c_s, m_s, tau_s, dat_steps;
        const char *model = strstr(dat, "# model mirrored: step ");
        const char *optimum = strstr(dat, "# optimum mirrored: tau* = sqrt(2 C M) = ");
        cr_assert(model && optimum, "%s", dat);
        cr_assert_eq(sscanf(strstr(model, "C = "), "C = %lf s a checkpoint", &c_s), 1);
        cr_assert_eq(sscanf(strstr(model, "M = "), "M = %lf s", &m_s), 1);
        cr_assert_eq(sscanf(optimum, "# optimum mirrored: tau* = sqrt(2 C M) = %lf s = %lf steps",
                            &tau_s, &dat_steps), 2, "%s", optimum);
        cr_expect_float_eq(c_s * 1e3, c_ms, 5e-4, "%s: C %g s, the note's %g ms", dirs[i], c_s,
                           c_ms);
        cr_expect_float_eq(m_s * 1e3, m_ms, 5e-4, "%s: M %g s, the note's %g ms", dirs[i], m_s,
                           m_ms);
        cr_expect_float_eq(dat_steps, tau_steps, 5e-3, "%s: tau* %g steps, the note's %g",
                           dirs[i], dat_steps, tau_steps);
        free(dat);
    }
    free(json);
    free(out);
    free(again);
}

/* `strata plot` of a devices sweep and a --vary straggler sweep: the
 * second's speedups are over straggler=none, all at 4 devices, and joined
 * the devices figure as two more mirrored points at x = 4 (speedups 1 and
 * 0.6 beside 2.9 over one device). They stay out, and a note says why and
 * what draws them; alone, the straggler sweep drew nothing and said nothing. */
Test(plots, strata_plot_keeps_another_options_sweep_out_of_the_devices_speedup)
{
    char *devs = strdup(test_tmp_path("devs.json")), *strag = strdup(test_tmp_path("strag.json"));
    char *out = strdup(test_tmp_path("figs"));
    expect_ok(RUN("sweep", "--strategies", "mirrored", "--devices", "1,2", "--steps", "2",
                  "--json", devs), "devices sweep");
    expect_ok(RUN("sweep", "--strategies", "mirrored", "--vary", "straggler=none,exp:0.5",
                  "--steps", "2", "--json", strag), "straggler sweep");
    struct run r = RUN("plot", devs, strag, "--plot", out);
    cr_assert_eq(r.status, 0, "strata plot: %s", r.err);
    char *dat = test_slurp(file_in(out, "speedup.dat"));
    int n_points = 0;
    for (const char *l = strchr(dat, '\n'); l; l = strchr(l + 1, '\n'))
        if (l[1] && l[1] != '#' && l[1] != '\n') n_points++;
    cr_expect_eq(n_points, 2, "the devices sweep's 1 and 2 devices only:\n%s", dat);
    free(dat);
    cr_expect_not_null(strstr(r.out, "no speedup plot of the sweep of another option than the "
                                     "devices"), "%s", r.out);
    run_free(&r);
    free(devs);
    free(strag);
    free(out);
}

/* Item 5 of issue 17: plots that never mislead. */
Test(plots, convergence_curves_differ_in_dash_and_point_type)
{
    struct report r[3];
    make_reports(r);
    const struct report *rs[] = {&r[0], &r[1]};
    PLOT_OK("two", plot_convergence, rs, 2);
    char *gp = test_slurp(test_tmp_path("convergence.gp"));
    /* equal curves would hide each other in one style */
    cr_expect_not_null(strstr(gp, "lt 1 dt 1 pt 4"), "%s", gp);
    cr_expect_not_null(strstr(gp, "lt 2 dt 2 pt 5"), "%s", gp);
    free(gp);
    free_reports(r);
}

Test(plots, convergence_clips_a_diverged_run_and_says_so)
{
    struct report r[3];
    make_reports(r);
    r[1].loss_curve[2].loss = 1e35;   /* diverged at step 2 */
    r[1].loss_curve[3].loss = NAN;
    const struct report *rs[] = {&r[0], &r[1]};
    PLOT_OK("diverged", plot_convergence, rs, 2);
    char *gp = test_slurp(test_tmp_path("convergence.gp"));
    /* 4 x the largest starting loss, 2.3 */
    cr_expect_not_null(strstr(gp, "set yrange [0:9.2]"), "%s", gp);
    cr_expect_not_null(strstr(gp, "loss above 9.2 from step 2 (clipped)"), "%s", gp);
    free(gp);
    free_reports(r);
    /* nothing diverged: gnuplot's own range, no label */
    make_reports(r);
    PLOT_OK("diverged", plot_convergence, rs, 2);
    gp = test_slurp(test_tmp_path("convergence.gp"));
    cr_expect_null(strstr(gp, "clipped"), "%s", gp);
    free(gp);
    free_reports(r);
}

Test(plots, convergence_says_why_one_accuracy_point_is_no_curve)
{
    struct report r[3];
    make_reports(r);
    r[0].n_accuracy_curve = 1;   /* only the final evaluation */
    const struct report *rs[] = {&r[0]};
    PLOT_OK("one point", plot_convergence, rs, 1);
    char *gp = test_slurp(test_tmp_path("convergence.gp"));
    cr_expect_not_null(strstr(gp, "one evaluation per run, at the end: --eval-every K"), "%s", gp);
    free(gp);
    r[0].n_accuracy_curve = 2;
    PLOT_OK("one point", plot_convergence, rs, 1);
    gp = test_slurp(test_tmp_path("convergence.gp"));
    cr_expect_null(strstr(gp, "one evaluation per run"), "%s", gp);
    free(gp);
    free_reports(r);
}

/* The loss curve is each step's training batch's mean loss; the table's
 * loss column is the test set's after the last step (0.8149 against a
 * curve ending near 0.75 in a compare of 60 steps). The axis said "loss",
 * as the table does: it says whose. */
Test(plots, convergence_loss_axis_says_it_is_the_training_loss)
{
    struct report r[3];
    make_reports(r);
    const struct report *rs[] = {&r[0], &r[1]};
    PLOT_OK("loss", plot_convergence, rs, 2);
    char *gp = test_slurp(test_tmp_path("convergence.gp"));
    cr_expect_not_null(strstr(gp, "set ylabel 'training loss (batch mean)'"), "%s", gp);
    cr_expect_null(strstr(gp, "set ylabel 'loss'"), "%s", gp);
    free(gp);
    const struct report *none[] = {&r[2]};   /* no curve: the empty figure's axis */
    PLOT_OK("loss", plot_convergence, none, 1);
    gp = test_slurp(test_tmp_path("convergence.gp"));
    cr_expect_not_null(strstr(gp, "set ylabel 'training loss (batch mean)'"), "%s", gp);
    free(gp);
    free_reports(r);
}

/* The part of gp from its first "set ylabel 'test accuracy'" to the plot
 * command after it: the settings of the accuracy-against-time panel. */
static char *accuracy_panel_settings(const char *gp)
{
    const char *a = strstr(gp, "set ylabel 'test accuracy'");
    cr_assert_not_null(a, "no accuracy panel:\n%s", gp);
    const char *b = strstr(a, "plot ");
    cr_assert_not_null(b);
    return strndup(a, (size_t)(b - a));
}

/* A compare of 5 strategies, one evaluation each at the end: the accuracy
 * row's key, opaque at the bottom right, hid ps-sync's and pipeline-1f1b's
 * points (the latest times, and the lowest accuracy), and points at a
 * range's end sat on the frame, half drawn. The loss row's key names every
 * run in the same styles, so the accuracy row has none; it has room around
 * its points; the one-evaluation note is its title, above the points. */
Test(plots, convergence_accuracy_points_are_not_under_a_key_or_on_the_frame)
{
    struct report r[3];
    make_reports(r);
    r[0].n_accuracy_curve = 1;   /* one evaluation, at the end */
    const struct report *rs[] = {&r[0], &r[1]};
    PLOT_OK("accuracy", plot_convergence, rs, 2);
    char *gp = test_slurp(test_tmp_path("convergence.gp"));
    cr_expect_not_null(strstr(gp, "set key top right opaque"), "the loss row's key:\n%s", gp);
    char *acc = accuracy_panel_settings(gp);
    cr_expect_not_null(strstr(acc, "unset key"), "%s", acc);
    cr_expect_null(strstr(acc, " set key"), "%s", acc);
    cr_expect_not_null(strstr(acc, "set offsets 0, 0, graph 0.08, graph 0.08\n"
                                   "    set yrange [0<*:*<1]\n"), "%s", acc);
    cr_expect_not_null(strstr(acc, "set title 'one evaluation per run"), "%s", acc);
    cr_expect_null(strstr(acc, "set label"), "a label inside the panel:\n%s", acc);
    cr_expect_not_null(strstr(gp, "set offsets 0, 0, 0, 0\n    set autoscale y\n"),
                       "offsets and range kept past the panel");
    free(acc);
    free(gp);
    /* a run with accuracy and no loss curve is in no loss key: the
     * accuracy row keeps its own */
    r[0].n_loss_curve = 0;
    PLOT_OK("accuracy", plot_convergence, rs, 2);
    gp = test_slurp(test_tmp_path("convergence.gp"));
    acc = accuracy_panel_settings(gp);
    cr_expect_not_null(strstr(acc, "set key bottom right opaque"), "%s", acc);
    free(acc);
    free(gp);
    free_reports(r);
    expect_figure(test_tmp_dir, "convergence", "convergence");
}

Test(plots, timeline_draws_messages_in_their_own_colour)
{
    const struct span s[] = {
        {.rank = 0, .stream = 0, .kind = OP_FORWARD, .start_s = 0, .end_s = 1},
        {.rank = 0, .stream = 1, .kind = OP_SEND, .start_s = 1, .end_s = 1.01},
    };
    PLOT_OK("ticks", plot_timeline, s, 2, 1, "pipeline-1f1b", 2);
    char *gp = test_slurp(test_tmp_path("timeline-pipeline-1f1b.gp"));
    char want[96];
    snprintf(want, sizeof want, "lc rgb '%s' fs solid 1.0 border lc rgb '%s'",
             op_infos[OP_SEND].colour, op_infos[OP_SEND].colour);
    cr_expect_not_null(strstr(gp, want), "a send's border is its colour: %s", gp);
    free(gp);
}

/* gnuplot centres a title line and cuts it at both ends where the figure
 * is too narrow: the checkpoint sweep's 190-character scenario lost its
 * first and last words on a 1000-pixel figure. A long scenario is broken
 * after "; " (else ", ", else a space) into lines of at most 110
 * characters, every word kept; a short one stays one line. */
Test(plots, a_long_scenario_title_is_broken_into_lines_that_fit)
{
    const char *scenario = "over checkpoint-every, simulated on labs/h100-checkpoints.profile; "
                           "transformer:layers=4,hidden=8192,seq=2048,vocab=32000, batch 294912 "
                           "(strong scaling), stragglers none";
    struct text gp = {0};
    script_title(&gp, "title", "Goodput", scenario);
    cr_assert(!gp.is_failed);
    cr_expect_str_eq(gp.s, "    set title 'Goodput' . \"\\n\" . 'over checkpoint-every, simulated on "
                           "labs/h100-checkpoints.profile;' . \"\\n\" . 'transformer:layers=4,"
                           "hidden=8192,seq=2048,vocab=32000, batch 294912 (strong scaling), "
                           "stragglers none'\n");
    text_free(&gp);
    script_title(&gp, "title", "Speedup", "8 devices of h100-nvlink-ib, batch 1024");
    cr_expect_str_eq(gp.s, "    set title 'Speedup' . \"\\n\" . '8 devices of h100-nvlink-ib, "
                           "batch 1024'\n");
    text_free(&gp);
    /* no separator at all: cut at 110, and nothing lost */
    char word[251];
    memset(word, 'x', 250);
    word[250] = '\0';
    script_title(&gp, "title", "T", word);
    size_t xs = 0;
    for (const char *p = gp.s; *p; p++) xs += *p == 'x';
    cr_expect_eq(xs, 250);
    cr_expect_not_null(strstr(gp.s, "' . \"\\n\" . 'xxx"), "%s", gp.s);
    text_free(&gp);
}
