/* strata sweep: one option (the devices, usually) varied over a list of
 * values, every strategy run at every value, simulated or for real; a block
 * of rows per strategy with step time, throughput, speedup and scaling
 * efficiency. The grid and its files are bench/sweep's; this file reads the
 * command line and prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/run_numerics.h"
#include "../bench/sweep.h"
#include "../core/goodput.h"
#include "../core/table_notes.h"
#include "../plots/plots.h"
#include "../real/job.h"
#include "../real/launch.h"
#include "../real/real.h"
#include "html.h"
#include "notes.h"
#include "outputs.h"
#include "plot.h"
#include "scenario.h"

/* --- The command line --------------------------------------------------------
 * `--devices 1,2,4` (or --devices=1,2,4) is `--vary devices=1,2,4`; a plain
 * `--devices 8` stays the option (without --vary, the sweep is then devices
 * 1, 2, 4, 8). The words are rewritten before config parsing, so every
 * message and the scenario file see one --vary. */

struct words {
    char **argv;    /* argc words, some of them owned[] */
    char **owned;   /* strings this rewrite made */
    int n_owned;
};

static void words_free(struct words *w)
{
    for (int i = 0; i < w->n_owned; i++) free(w->owned[i]);
    free(w->owned);
    free(w->argv);
}

static char *joined(struct words *w, const char *a, const char *b, struct err *e)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = XCALLOC(e, n, 1);
    if (!s) return NULL;
    snprintf(s, n, "%s%s", a, b);
    return w->owned[w->n_owned++] = s;
}

static bool is_vary(const char *word)
{
    return !strcmp(word, "--vary") || !strncmp(word, "--vary=", 7);
}

static int rewrite_devices(int argc, char **argv, struct words *w, struct err *e)
{
    w->argv = XCALLOC(e, (size_t)argc + 1, sizeof *w->argv);
    w->owned = XCALLOC(e, (size_t)argc + 1, sizeof *w->owned);
    if (!w->argv || !w->owned) return ERR_NOMEM;
    bool rewrote = false, has_vary = false, ended = false;
    for (int i = 0; i < argc; i++) {
        w->argv[i] = argv[i];
        if (ended || !strcmp(argv[i], "--")) {
            ended = true;
            continue;
        }
        has_vary |= is_vary(argv[i]);
        if (!strcmp(argv[i], "--devices") && i + 1 < argc && strchr(argv[i + 1], ',')) {
            w->argv[i] = (char *)"--vary";
            if (!(w->argv[i + 1] = joined(w, "devices=", argv[i + 1], e))) return ERR_NOMEM;
            i++;
            rewrote = true;
        } else if (!strncmp(argv[i], "--devices=", 10) && strchr(argv[i], ',')) {
            if (!(w->argv[i] = joined(w, "--vary=devices=", argv[i] + 10, e))) return ERR_NOMEM;
            rewrote = true;
        }
    }
    if (rewrote && has_vary)
        return err_set(e, ERR_INPUT, "--devices LIST is --vary devices=LIST: a sweep varies one "
                       "option, so give either, not both");
    return 0;
}

/* --- Progress ---------------------------------------------------------------- */

struct progress {
    const char *option;
    bool is_real;
};

static void show_progress(void *ctx, const char *strategy, const char *value, int done,
                          int total)
{
    const struct progress *p = ctx;
    char at[SWEEP_VALUE_BYTES + 64] = "";
    if (value) snprintf(at, sizeof at, " at %s=%.40s", p->option, value);
    if (p->is_real)
        fprintf(stderr, "running %s%s for real (%d of %d)\n",
                strategy ? strategy : "the one-device baseline", at, done + 1, total);
    else
        fprintf(stderr, "\rsimulating %-16s%-28.28s (%d of %d) ",
                strategy ? strategy : "the baseline", at, done + 1, total);
}

/* --- The table --------------------------------------------------------------- */

enum col { COL_STRATEGY, COL_VALUE, COL_DEVICES, COL_BATCH, COL_STEP, COL_THROUGHPUT,
           COL_SPEEDUP, COL_EFFICIENCY, COL_COMM, COL_LOST, COL_GOODPUT, COL_LOSS, COL_ACCURACY,
           N_COLS };

#define CELL_BYTES 64
#define TIMES "\xc3\x97"   /* "×" in UTF-8 */

static void fmt_seconds(char *buf, double s)
{
    report_fmt_seconds(buf, CELL_BYTES, s);
}

static void fmt_number(char *buf, const char *fmt, double x)
{
    report_fmt_number(buf, CELL_BYTES, fmt, x);
}

static void fmt_cell(char *buf, const struct sweep *s, const struct sweep_point *p, enum col c)
{
    const struct report *r = p->run.report;
    switch (c) {
    case COL_STRATEGY: snprintf(buf, CELL_BYTES, "%s", p->strategy->name); return;
    case COL_VALUE:
        snprintf(buf, CELL_BYTES, "%.*s", CELL_BYTES - 1, s->axis.values[p->value]);
        return;
    case COL_DEVICES: snprintf(buf, CELL_BYTES, "%lld", p->run.devices); return;
    case COL_BATCH: snprintf(buf, CELL_BYTES, "%lld", p->run.batch); return;
    default: break;
    }
    if (!r) {
        snprintf(buf, CELL_BYTES, "-");
        return;
    }
    switch (c) {
    case COL_STEP: fmt_seconds(buf, r->step_time_s.mean); return;
    case COL_THROUGHPUT: fmt_number(buf, "%.1f", r->throughput_samples_per_s); return;
    case COL_SPEEDUP: fmt_number(buf, "%.2f" TIMES, p->speedup); return;
    case COL_EFFICIENCY: fmt_number(buf, "%.1f%%", 100 * p->efficiency); return;
    case COL_COMM: fmt_number(buf, "%.1f%%", 100 * r->breakdown.comm); return;
    case COL_LOST: fmt_seconds(buf, r->failure.happened ? r->failure.lost_s : NAN); return;
    case COL_GOODPUT:
        fmt_number(buf, "%.1f%%", r->failure.happened ? 100 * r->failure.goodput : NAN);
        return;
    case COL_LOSS: fmt_number(buf, "%.4f", r->has_final ? r->final.loss : NAN); return;
    case COL_ACCURACY:
        fmt_number(buf, "%.1f%%", r->has_final ? 100 * r->final.test_accuracy : NAN);
        return;
    default: buf[0] = '\0'; return;
    }
}

/* Terminal columns of UTF-8 text: one per code point. */
static int display_width(const char *s)
{
    int w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void put_cell(const char *text, int width, bool left, bool first)
{
    int pad = width - display_width(text);
    if (!first) fputs("  ", stdout);
    if (!left) printf("%*s", pad, "");
    fputs(text, stdout);
    if (left && pad > 0) printf("%*s", pad, "");
}

/* A block of rows per strategy, a blank line between blocks. Text columns
 * are left-aligned, numbers right-aligned. Time lost and goodput when a run
 * failed (--fail, --mtbf); loss and accuracy when numerics ran (--numerics,
 * or a real sweep). */
static void print_table(const struct sweep *s)
{
    const char *title[N_COLS] = {"strategy", s->axis.opt->name, "devices", "batch",
                                 "step time", "samples/s", "speedup", "efficiency", "comm",
                                 "time lost", "goodput", "loss", "accuracy"};
    bool shown[N_COLS], left[N_COLS] = {[COL_STRATEGY] = true}, any_final = false;
    bool any_failure = false;
    int width[N_COLS];
    left[COL_VALUE] = !sweep_is_numeric(&s->axis);
    char cell[CELL_BYTES];
    for (int i = 0; i < s->n_points; i++) {
        const struct report *r = s->points[i].run.report;
        any_final |= r && r->has_final;
        any_failure |= r && r->failure.happened;
    }
    for (int c = 0; c < N_COLS; c++) {
        bool is_failure = c == COL_LOST || c == COL_GOODPUT, is_final = c >= COL_LOSS;
        /* no axis column when the table has its own for the axis (devices,
         * batch): it would repeat that one */
        bool has_own_column = s->axis.is_devices || !strcmp(s->axis.opt->name, "batch");
        shown[c] = (c != COL_VALUE || !has_own_column) && (!is_failure || any_failure) &&
                   (!is_final || any_final);
        width[c] = display_width(title[c]);
        for (int i = 0; i < s->n_points; i++) {
            fmt_cell(cell, s, &s->points[i], (enum col)c);
            if (display_width(cell) > width[c]) width[c] = display_width(cell);
        }
    }
    int total = 0;
    for (int c = 0; c < N_COLS; c++)
        if (shown[c]) {
            put_cell(title[c], width[c], left[c], c == 0);
            total += width[c] + (c ? 2 : 0);
        }
    printf("\n%.*s\n", total, "--------------------------------------------------------------"
           "----------------------------------------------------------------------------------");
    for (int i = 0; i < s->n_points; i++) {
        if (i && s->points[i].value == 0) putchar('\n');
        for (int c = 0; c < N_COLS; c++)
            if (shown[c]) {
                fmt_cell(cell, s, &s->points[i], (enum col)c);
                put_cell(cell, width[c], left[c], c == 0);
            }
        putchar('\n');
    }
}

/* --- Around the table -------------------------------------------------------- */

/* "1, 2, 4" */
static void list_values(const struct sweep_axis *ax, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < ax->n_values && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "", ax->values[i]);
}

static void print_header(const struct scenario *sc, const struct sweep *s)
{
    const struct config *cfg = &sc->cfg;
    const struct sweep_axis *ax = &s->axis;
    char values[1024], desc[512];
    list_values(ax, values, sizeof values);
    workload_describe(sc->wl, desc, sizeof desc);
    printf("sweep of %s over %s", ax->opt->name, values);
    if (ax->is_weak)
        printf(" (weak scaling: %lld samples per device, batch = %lld x devices)",
               ax->batch_per_device, ax->batch_per_device);
    else if (ax->is_devices)
        printf(" (strong scaling: global batch %lld)", cfg->batch);
    else {   /* "; ": not read as one more value */
        printf("; %lld devices", ax->is_real && cfg->np ? cfg->np : cfg->devices);
        if (strcmp(ax->opt->name, "batch")) printf(", batch %lld", cfg->batch);
    }
    const struct sim_run *base = s->baselines[0].sim;
    /* the run's length, unless the axis varies it (its column says it) */
    bool is_length_varied = !strcmp(ax->opt->name, "steps") || !strcmp(ax->opt->name, "epochs");
    if (ax->is_real) {
        printf(", for real: MPI ranks of this machine (%s device)", cfg->device);
        if (!is_length_varied)
            printf(", %lld %s", cfg->epochs > 0 ? cfg->epochs : cfg->steps,
                   cfg->epochs > 0 ? "epochs" : "steps");
        printf(", data %s", cfg->data);
    } else {
        printf(", simulated on %s", base ? base->cluster.name : cfg->cluster);
        if (!is_length_varied) printf(", %lld steps", cfg->steps);
    }
    if (strcmp(ax->opt->name, "straggler")) printf(", stragglers %s", cfg->straggler);
    printf("\n%s\n\n", desc);
}

/* What speedup and efficiency mean here: sweep.h's definitions, said once. */
static void print_meaning(FILE *out, const struct sweep *s)
{
    const struct sweep_axis *ax = &s->axis;
    const struct report *base = s->baselines[0].report;
    char t1[CELL_BYTES] = "-";
    if (base) fmt_seconds(t1, base->step_time_s.mean);
    const char *how = ax->is_real ? "measured" : "simulated";
    if (ax->is_devices && ax->is_weak) {
        fprintf(out, "\nspeedup: samples per second over one device running its %lld samples a "
                "step (%s, %s).\nefficiency: T1 / TN, that one-device step time over the step "
                "time on N devices (100%% = perfect weak scaling).\n", ax->batch_per_device, t1, how);
    } else if (ax->is_devices) {
        fprintf(out, "\nspeedup: samples per second over one device running the same global batch "
                "(%s a step, %s).\nefficiency: speedup / devices.\n", t1, how);
    } else {
        fprintf(out, "\nspeedup: samples per second over the same strategy at %s=%s (the first "
                "value).\n", ax->opt->name, ax->values[0]);
        if (s->n_baselines > 1)
            fprintf(out, "efficiency: samples per second over devices x those of one device with "
                    "the same %s (%s).\n", ax->opt->name, how);
        else
            fprintf(out, "efficiency: samples per second over devices x those of one device (%s a "
                    "step, %s; %s does not change it).\n", t1, how, ax->opt->name);
    }
    fprintf(out, "comm: share of the workers' time spent communicating while not computing "
            "(hidden communication is not counted).\n");
    for (int i = 0; i < s->n_strategies; i++)
        if (strategy_has_servers(s->strategies[i])) {
            fprintf(out, "devices count the workers: a ps-* strategy's servers are extra.\n");
            return;
        }
}

/* Under a sweep of --checkpoint-every whose runs failed: each strategy's
 * model (core/goodput.h) and Young's optimum interval, the plan the sweep
 * is for. */
static void print_goodput_note(FILE *out, const struct sweep *s)
{
    const struct sweep_axis *ax = &s->axis;
    if (strcmp(ax->opt->name, "checkpoint-every")) return;
    const struct report *rs[SWEEP_MAX_VALUES];
    bool is_first = true;
    for (int k = 0; k < s->n_strategies; k++) {
        int n = 0;
        for (int v = 0; v < ax->n_values; v++) {
            const struct report *r = s->points[k * ax->n_values + v].run.report;
            if (goodput_informs_model(r)) rs[n++] = r;
        }
        struct goodput_model m;
        if (n == 0 || !goodput_model_of(rs, n, &m) || !isfinite(m.job_mtbf_s)) continue;
        if (is_first)
            fprintf(out, "goodput: the share of the time spent on work that survives; Young-Daly "
                    "optimum interval sqrt(2 C M) (C a checkpoint, M the job's MTBF):\n");
        is_first = false;
        char c[CELL_BYTES], mtbf[CELL_BYTES];
        fmt_seconds(c, m.checkpoint_s);
        fmt_seconds(mtbf, m.job_mtbf_s);
        fprintf(out, "  %s: C = %s, M = %s (%s)", s->strategies[k]->name, c, mtbf,
                m.is_mtbf_observed ? "observed" : "--mtbf / devices");
        if (m.checkpoint_s > 0) {
            double tau = goodput_young_interval_s(m.checkpoint_s, m.job_mtbf_s);
            fprintf(out, ": every %.3g steps, first-order goodput %.1f%%\n",
                    goodput_s_to_steps(tau, m.step_s),
                    100 * goodput_first_order(tau, m.checkpoint_s, m.restart_s, m.job_mtbf_s));
        } else {
            fprintf(out, ": checkpoints cost nothing, so no optimum\n");
        }
    }
}

/* Prints ", "-separated the values v of row whose run is_listed says, all of
 * them: no buffer to cut the list short. */
static void print_values(FILE *out, const struct sweep_axis *ax, const struct sweep_point *row,
                         bool (*is_listed)(const struct sweep_run *))
{
    bool is_first = true;
    for (int v = 0; v < ax->n_values; v++)
        if (is_listed(&row[v].run)) {
            fprintf(out, "%s%s", is_first ? "" : ", ", ax->values[v]);
            is_first = false;
        }
}

static bool is_unfit(const struct sweep_run *r) { return r->rc == ERR_INPUT; }
static bool is_heavy(const struct sweep_run *r) { return r->exceeds_memory; }

/* One line per strategy for the points that did not fit (the first reason,
 * the values it held at), one per failed run, one per memory warning; on
 * out (stdout, or stderr when nothing ran and the notes are the answer). */
static void print_notes(FILE *out, const struct sweep *s)
{
    const struct sweep_axis *ax = &s->axis;
    for (int b = 0; b < s->n_baselines; b++)
        if (s->baselines[b].rc)
            fprintf(out, "  no baseline at %s=%s: %s\n", ax->opt->name, ax->values[b],
                    s->baselines[b].note);
    for (int k = 0; k < s->n_strategies; k++) {
        const struct sweep_point *row = &s->points[k * ax->n_values];
        const char *first = NULL, *name = s->strategies[k]->name;
        bool has_heavy = false;
        for (int v = 0; v < ax->n_values; v++) {
            const struct sweep_run *r = &row[v].run;
            if (r->rc && r->rc != ERR_INPUT)
                fprintf(out, "  failed: %s at %s=%s: %s\n", name, ax->opt->name, ax->values[v], r->note);
            if (is_unfit(r) && !first) first = r->note;
            has_heavy |= is_heavy(r);
        }
        if (first) {
            fprintf(out, "  not run: %s at %s=", name, ax->opt->name);
            print_values(out, ax, row, is_unfit);
            fprintf(out, ": %s\n", first);
        }
        if (has_heavy) {
            fprintf(out, "  warning: %s at %s=", name, ax->opt->name);
            print_values(out, ax, row, is_heavy);
            fprintf(out, " needs more memory per device than the simulated device has\n");
        }
    }
}

/* What a point's plan builder chose that the options did not say (a
 * default it lowered), as compare prints it: one line a point. */
static void print_plan_notes(FILE *out, const struct sweep *s)
{
    const struct sweep_axis *ax = &s->axis;
    for (int k = 0; k < s->n_strategies; k++)
        for (int v = 0; v < ax->n_values; v++) {
            const struct sweep_run *r = &s->points[k * ax->n_values + v].run;
            if (r->report && r->plan_note[0])
                fprintf(out, "  note: %s at %s=%s: %s\n", s->strategies[k]->name, ax->opt->name,
                        ax->values[v], r->plan_note);
        }
}

/* The options, the varied one too, that other strategies read and none of
 * those swept does: their values change no run, so every point of an axis
 * no one reads runs alike. */
static void print_unread_notes(FILE *out, const struct sweep *s, const struct config *cfg)
{
    const struct sweep_axis *ax = &s->axis;
    scenario_note_unread_by_all(out, s->strategies, (size_t)s->n_strategies, cfg, "swept");
    char readers[256];
    strategy_names_reading(ax->opt->name, readers, sizeof readers);
    if (readers[0] &&
        !strategy_any_reads(s->strategies, (size_t)s->n_strategies, ax->opt->name))
        fprintf(out, "  note: --vary %s: no strategy swept reads --%s (only %s read%s it), so its "
                "values run alike\n", cfg->vary, ax->opt->name, readers,
                strchr(readers, ',') ? "" : "s");
}

/* A --fail R@Ts whose T came after the end of the points' runs failed no
 * rank: said as compare says it (it said nothing). */
static void print_fail_unmet(FILE *out, const struct sweep *s)
{
    const int n_points = s->n_strategies * s->axis.n_values;
    const struct report **rs = calloc((size_t)(n_points > 0 ? n_points : 1), sizeof *rs);
    if (!rs) return;   /* out of memory: a note left out */
    int n = 0, n_unmet = 0;
    for (int i = 0; i < n_points; i++) {
        const struct report *r = s->points[i].run.report;
        if (!r) continue;
        rs[n++] = r;
        n_unmet += note_is_fail_unmet(r);
    }
    if (n_unmet == n) note_fail_unmet(out, rs, n);
    else if (n_unmet > 0)
        fprintf(out, "  note: --fail %s: no rank failed at %d of the %d points that ran: %s "
                "before it came\n", rs[0]->config->fail, n_unmet, n,
                n_unmet == 1 ? "its run ended" : "their runs ended");
    free(rs);
}

/* A real devices sweep measures its baseline (mirrored on one device) in a
 * job of its own; mirrored's point at 1 device runs the same plan in
 * another, so its speedup, 1 by definition, shows how far two measurements
 * of one job differ on this machine. Said, so that it reads as noise. */
static void print_noise_note(FILE *out, const struct sweep *s)
{
    const struct sweep_axis *ax = &s->axis;
    if (!ax->is_real || !ax->is_devices) return;
    for (int k = 0; k < s->n_strategies; k++) {
        if (s->strategies[k] != strategy_baseline()) continue;
        for (int v = 0; v < ax->n_values; v++) {
            const struct sweep_point *p = &s->points[k * ax->n_values + v];
            if (!p->run.report || p->run.report->devices != 1 || !isfinite(p->speedup)) continue;
            fprintf(out, "  note: %s at 1 device runs the baseline's plan, in a job of its own: "
                    "its speedup %.2fx\n  (1 by definition) is how far two runs of one job "
                    "differ here; the other speedups carry that spread too.\n",
                    s->strategies[k]->name, p->speedup);
        }
    }
}

/* A sweep of --checkpoint-every: goodput against the interval, with the
 * model's optimum, when its runs failed (--fail, --mtbf). */
/* Does the sweep draw goodput: a sweep of --checkpoint-every whose runs
 * failed (without a failure every interval is as good)? */
static bool draws_goodput(const struct sweep *s)
{
    if (strcmp(s->axis.opt->name, "checkpoint-every")) return false;
    for (int i = 0; i < s->n_points; i++)
        if (s->points[i].run.report && s->points[i].run.report->failure.happened) return true;
    return false;
}

static int plot_goodput_of(const struct sweep *s, const struct plot_opts *o, struct err *e)
{
    if (!draws_goodput(s)) {
        printf("  note: no goodput plot: no run failed (give --fail R@T or --mtbf HOURS)\n");
        return 0;
    }
    const struct report **rs = XCALLOC(e, (size_t)s->n_points + 1, sizeof *rs);
    if (!rs) return ERR_NOMEM;
    int n = 0;
    for (int i = 0; i < s->n_points; i++)
        if (s->points[i].run.report) rs[n++] = s->points[i].run.report;
    int rc = plot_goodput(rs, n, o, e);
    free(rs);
    return rc;
}

/* The scenario, as a reader of a figure or the page alone needs it. */
static void title_of(const struct config *cfg, const struct sweep *s, char *buf, size_t n)
{
    const struct sweep_scenario sc = {
        .option = s->axis.opt->name, .is_real = s->axis.is_real,
        .is_weak = s->axis.is_devices && s->axis.is_weak, .cluster = cfg->cluster,
        .model = cfg->model, .scaling = cfg->scaling, .straggler = cfg->straggler,
        .batch = cfg->batch, .batch_per_device = s->axis.batch_per_device};
    plot_sweep_title(&sc, buf, n);
}

/* The speedup figure: one line per strategy over the varied option, the
 * ideal line (speedup = devices) on devices sweeps; goodput too on a sweep
 * of --checkpoint-every. */
static int draw(const void *sweep, const struct plot_opts *o, struct err *e)
{
    const struct sweep *s = sweep;
    struct sweep_xy *xy = XCALLOC(e, (size_t)s->n_points + 1, sizeof *xy);
    struct speedup_point *pts = XCALLOC(e, (size_t)s->n_points + 1, sizeof *pts);
    int rc = xy && pts ? 0 : ERR_NOMEM;
    int n = rc ? 0 : sweep_xy(s, xy);
    for (int i = 0; i < n; i++)
        pts[i] = (struct speedup_point){xy[i].strategy, xy[i].x, xy[i].speedup, xy[i].efficiency};
    /* the axes say what print_meaning says: speedup over one device on
     * devices sweeps, else over the first value, and efficiency against
     * one device at each value */
    const struct sweep_axis *ax = &s->axis;
    const char *names[SWEEP_MAX_VALUES];
    for (int i = 0; i < ax->n_values; i++) names[i] = ax->values[i];
    char over[SWEEP_VALUE_BYTES + 128];
    snprintf(over, sizeof over, "%s=%s, the first value", ax->opt->name, ax->values[0]);
    const struct speedup_axes axes = {
        .x_label = ax->opt->name,
        .x_names = sweep_is_numeric(ax) ? NULL : names,
        .n_x_names = ax->n_values,
        .speedup_over = ax->is_devices ? "one device" : over,
        .efficiency_label = ax->is_devices ? NULL
                                           : "efficiency (samples/s over devices x one device's)",
        .ideal_line = ax->is_devices};
    if (rc == 0) rc = plot_speedup(pts, n, &axes, o, e);
    free(xy);
    free(pts);
    if (rc == 0 && !strcmp(s->axis.opt->name, "checkpoint-every")) rc = plot_goodput_of(s, o, e);
    return rc;
}

static int plot(const struct config *cfg, const struct sweep *s, struct err *e)
{
    if (!cfg->plot_dir[0] && !cfg->plot_terminal) return 0;
    char title[CONFIG_PATH_BYTES + 1024];
    title_of(cfg, s, title, sizeof title);
    struct plot_opts o = {cfg->plot_dir[0] ? cfg->plot_dir : NULL, cfg->plot_terminal, title,
                          false};
    int rc = draw(s, &o, e);
    if (rc < 0) return err_prefix(e, cfg->plot_dir[0] ? "--plot" : "--plot-terminal");
    plot_say_where(&o, draws_goodput(s) ? "speedup, efficiency, goodput" : "speedup, efficiency");
    return 0;
}

static int write_json(const void *s, const char *path, struct err *e)
{
    return sweep_write_json(s, path, e);
}

/* --csv, --json and --html; notes: those under the table, for the page. */
static int write_files(const struct config *cfg, const struct sweep *s, const char *notes,
                       struct err *e)
{
    if (cfg->csv_path[0]) TRY_CTX(e, sweep_write_csv(s, cfg->csv_path, e), "--csv");
    if (cfg->json_path[0]) TRY_CTX(e, sweep_write_json(s, cfg->json_path, e), "--json");
    char scenario[CONFIG_PATH_BYTES + 1024];
    title_of(cfg, s, scenario, sizeof scenario);
    struct html_run page = {.command = "sweep", .scenario = scenario, .notes_text = notes,
                            .write_json = write_json, .json_ctx = s, .draw = draw,
                            .draw_ctx = s};
    return html_write(cfg, &page, e);
}

/* 1 when a run failed; 2 when nothing ran because nothing fit; else 0. */
static int grid_status(const struct sweep *s)
{
    int n_ran = 0, n_unfit = 0;
    for (int i = 0; i < s->n_points; i++) {
        int rc = s->points[i].run.rc;
        if (rc == 0) n_ran++;
        else if (rc == ERR_INPUT) n_unfit++;
        else return 1;
    }
    return n_ran == 0 && n_unfit > 0 ? 2 : 0;
}

/* Under mpirun every rank runs this command; only rank 0 speaks. */
static int fail(const struct command *self, int rank, const struct err *e)
{
    return rank == 0 ? scenario_fail(self, e) : err_exit_status(e->code);
}

/* Where the points run: -j workers here (one per core when not given), or
 * the ranks of the MPI job this process is one of, one point at a time
 * each. A real sweep starts an MPI job a point, so it is neither. */
static int spread_of(const struct config *cfg, const struct sweep_axis *ax, int rank, int n_ranks,
                     struct sweep_spread *sp, struct err *e)
{
    if (ax->is_real && n_ranks > 1)
        return err_set(e, ERR_INPUT, "--mode real: a real sweep starts an MPI job for each "
                       "point; run it without mpirun (strata sweep --mode real ...)");
    sp->rank = rank;
    sp->n_ranks = n_ranks;
    sp->n_jobs = config_is_set(cfg, "jobs") ? (int)cfg->jobs : sweep_default_jobs();
    if (ax->is_real || n_ranks > 1) sp->n_jobs = 1;
    return 0;
}

int cmd_sweep(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct scenario sc = {0};
    struct words w = {0};
    struct sweep s = {0};
    struct sweep_axis ax;
    struct sweep_spread spread;
    const struct strategy **list = NULL;     /* room for every strategy */
    struct run_numerics *numerics = NULL;    /* what the points share */
    struct notes notes = {0};                /* those under the table, for --html too */
    size_t n = 0;
    int status = 0, rank = 0, n_ranks = 1;

    const bool is_rank = launch_is_mpi_rank();
    if (is_rank && job_init(&rank, &n_ranks, &e) < 0) return scenario_fail(self, &e);
    int rc = rewrite_devices(argc, argv, &w, &e);
    if (rc == 0) rc = scenario_load(&sc, self, argc, w.argv, &e);
    if (rc == CONFIG_HELP) goto out;
    if (rc == 0) rc = sweep_axis_parse(&sc.cfg, &ax, &e);
    if (rc == 0) rc = spread_of(&sc.cfg, &ax, rank, n_ranks, &spread, &e);
    if (rc == 0 && !(list = XCALLOC(&e, strategy_count, sizeof *list))) rc = ERR_NOMEM;
    if (rc == 0) rc = strategy_parse_list(sc.cfg.strategies, list, &n, &e);
    if (rc == 0 && !(numerics = run_numerics_create(&e))) rc = ERR_NOMEM;
    /* a --data or --model that the data set refuses, once, not at each point */
    if (rc == 0 && ax.has_numerics) rc = run_numerics_load(numerics, &sc.cfg, sc.wl, &e);
    /* what every real job would refuse alike, once, not a point at a time */
    if (rc == 0 && ax.is_real) rc = real_check_launch_pairs(&sc.cfg, &e);
    if (rc == 0) {
        struct progress p = {ax.opt->name, ax.is_real};
        bool show = rank == 0 && isatty(STDERR_FILENO);
        rc = sweep_run_spread(&sc.cfg, sc.wl, &ax, list, (int)n, numerics, &spread,
                              show ? show_progress : NULL, &p, &s, &e);
        if (show && !ax.is_real) fprintf(stderr, "\r%80s\r", "");
    }
    if (rc < 0) {
        config_err_locate(&sc.cfg, &e);
        status = fail(self, rank, &e);
        goto out;
    }
    if (rank != 0) goto out;   /* rank 0 holds the whole sweep and prints it */
    status = grid_status(&s);
    /* Nothing ran because nothing fit: the reasons are the answer, on
     * stderr, and no file is written (a refused run writes nothing). */
    if (status == 2) {
        fprintf(stderr, "strata %s: no point ran; nothing written:\n", self->name);
        print_notes(stderr, &s);
        goto out;
    }
    print_header(&sc, &s);
    print_table(&s);
    notes_begin(&notes);
    print_meaning(notes.f, &s);
    print_goodput_note(notes.f, &s);
    print_notes(notes.f, &s);
    print_plan_notes(notes.f, &s);
    print_noise_note(notes.f, &s);
    print_unread_notes(notes.f, &s, &sc.cfg);
    print_fail_unmet(notes.f, &s);
    if (!ax.is_real)
        scenario_note_unread(notes.f, &sc.cfg, OPTG_EXEC | OPTG_LAUNCH,
                             "read by real runs only (--mode real); this sweep is simulated");
    if (!ax.is_real) scenario_note_training_unread(notes.f, &sc.cfg, "  note:", "");
    if (ax.is_real) scenario_note_tf32_unread(notes.f, &sc.cfg, "  note:", "");
    if (!ax.is_real) scenario_note_no_failure(notes.f, &sc.cfg, "  note:", "");
    if (!ax.is_real && s.baselines[0].sim) {
        char given[SWEEP_VALUE_BYTES + 64] = "";
        if (!strcmp(ax.opt->name, "checkpoint-every"))
            snprintf(given, sizeof given, "--vary %.*s", SWEEP_VALUE_BYTES, sc.cfg.vary);
        else if (sc.cfg.checkpoint_every > 0)
            snprintf(given, sizeof given, "--checkpoint-every %lld", sc.cfg.checkpoint_every);
        if (given[0])
            scenario_note_free_checkpoints(notes.f, &sc.cfg, &s.baselines[0].sim->cluster, given,
                                           "  note:", "");
    }
    if (!ax.is_real && s.baselines[0].sim) outputs_note_ideal(notes.f, s.baselines[0].sim);
    notes_end(&notes);
    /* A failed point fails the sweep, which then writes no file (as
     * compare): the failures again on stderr, where scripts look. */
    if (status != 0) {
        fprintf(stderr, "strata %s: a point failed; no file written:\n", self->name);
        print_notes(stderr, &s);
    } else if (write_files(&sc.cfg, &s, notes.text, &e) < 0 || plot(&sc.cfg, &s, &e) < 0) {
        status = scenario_fail(self, &e);
    }
out:
    notes_release(&notes);
    sweep_release(&s);
    run_numerics_free(numerics);
    free(list);
    scenario_release(&sc);
    words_free(&w);
    if (is_rank) job_finalize();
    return status;
}
