/* goodput.*: what checkpointing more or less often buys, measured or
 * simulated, held against the first-order model of core/goodput.h and its
 * optimum, Young's sqrt(2 C M). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/goodput.h"
#include "render.h"
#include "script.h"

/* Samples of the first-order curve: smooth at 1000 pixels. */
#define CURVE_SAMPLES 121

/* A point of the plot: a report with a failure section, its goodput and
 * the checkpoint interval it ran with. */
static bool is_plotted(const struct report *r)
{
    return r->failure.happened && r->config && r->config->checkpoint_every > 0 &&
           isfinite(r->failure.goodput);
}

static long long interval_of(const struct report *r)
{
    return r->config->checkpoint_every;
}

/* The plotted reports of rs[i]'s strategy, by ascending interval, into idx;
 * how many. Insertion sort: a sweep has tens of points. */
static int points_of(const struct report *const *rs, int n, int i, int *idx)
{
    int m = 0;
    for (int k = 0; k < n; k++) {
        if (!is_plotted(rs[k]) || strcmp(rs[k]->strategy, rs[i]->strategy)) continue;
        int j = m++;
        while (j > 0 && interval_of(rs[idx[j - 1]]) > interval_of(rs[k])) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = k;
    }
    return m;
}

/* Is rs[i] the first plotted report of its strategy? Strategies keep their
 * first order, and each has a colour. */
static bool is_first_of_strategy(const struct report *const *rs, int i)
{
    if (!is_plotted(rs[i])) return false;
    for (int j = 0; j < i; j++)
        if (is_plotted(rs[j]) && !strcmp(rs[j]->strategy, rs[i]->strategy)) return false;
    return true;
}

/* What one strategy's series holds, for the script. */
struct series {
    const char *strategy, *mode;
    struct goodput_model model;
    bool has_curve;          /* M known: the first-order curve is drawn */
    int curve_index;         /* its block in the data file; -1 when none */
    double optimum_steps;    /* Young's tau* in steps; NaN when not marked */
    double optimum_s, optimum_goodput;
};

/* s for the strategy of report r, a point of the plot: its model, from
 * every report of rs[0..n) of that strategy that informs one (the plotted
 * points and the runs without checkpoints alike, as the sweep's note takes
 * them), gathered in buf[n], and Young's optimum when a checkpoint cost
 * something. */
static void series_of(struct series *s, const struct report *r, const struct report *const *rs,
                      int n, const struct report **buf)
{
    s->strategy = r->strategy;
    s->mode = r->mode ? r->mode : "sim";
    int m = 0;
    for (int k = 0; k < n; k++)
        if (goodput_informs_model(rs[k]) && !strcmp(rs[k]->strategy, r->strategy))
            buf[m++] = rs[k];
    goodput_model_of(buf, m, &s->model);
    s->has_curve = isfinite(s->model.job_mtbf_s) && isfinite(s->model.step_s);
    s->optimum_steps = NAN;
    if (!s->has_curve || !(s->model.checkpoint_s > 0)) return;
    const struct goodput_model *g = &s->model;
    s->optimum_s = goodput_young_interval_s(g->checkpoint_s, g->job_mtbf_s);
    s->optimum_steps = goodput_s_to_steps(s->optimum_s, g->step_s);
    s->optimum_goodput = goodput_first_order(s->optimum_s, g->checkpoint_s, g->restart_s,
                                             g->job_mtbf_s);
}

/* The model's line in the data file: where every number of the curve and
 * the optimum comes from. */
static void describe_model(struct text *dat, const struct series *s)
{
    const struct goodput_model *m = &s->model;
    text_printf(dat, "# model %s: step %.6g s, C = %.6g s a checkpoint, R = %.6g s a failure, "
                     "M = %.6g s (%s), %d failures\n", s->strategy, m->step_s, m->checkpoint_s,
                m->restart_s, m->job_mtbf_s,
                m->is_mtbf_observed ? "observed: the runs' time over their failures"
                                    : isfinite(m->job_mtbf_s) ? "--mtbf over the devices"
                                                              : "unknown: no curve",
                m->n_failures);
    if (isfinite(s->optimum_steps))
        text_printf(dat, "# optimum %s: tau* = sqrt(2 C M) = %.6g s = %.6g steps, first-order "
                         "goodput %.6g there (Daly's higher-order tau: %.6g s)\n",
                    s->strategy, s->optimum_s, s->optimum_steps, s->optimum_goodput,
                    goodput_daly_interval_s(m->checkpoint_s, m->job_mtbf_s));
    else if (s->has_curve)
        text_printf(dat, "# optimum %s: none marked: no checkpoint cost was measured (C = 0), "
                         "so the model checkpoints as often as it can\n", s->strategy);
}

/* The first-order curve over [lo, hi] steps, log-spaced on a log axis. */
static void write_curve(struct text *dat, const struct series *s, double lo, double hi,
                        bool is_log)
{
    const struct goodput_model *m = &s->model;
    for (int k = 0; k < CURVE_SAMPLES; k++) {
        double f = (double)k / (CURVE_SAMPLES - 1);
        double steps = is_log ? lo * pow(hi / lo, f) : lo + (hi - lo) * f;
        double tau = goodput_steps_to_s(steps, m->step_s);
        text_printf(dat, "%.10g %.10g %.10g\n", steps, tau,
                    goodput_first_order(tau, m->checkpoint_s, m->restart_s, m->job_mtbf_s));
    }
}

/* The script: a line per strategy's points, its curve dashed in the same
 * colour, its optimum a dotted vertical line with a label. */
static void write_script(struct text *gp, const struct series *ss, int n_series, double x_lo,
                         double x_hi, double y_lo, bool is_log, const char *tics,
                         const struct plot_opts *o)
{
    script_begin(gp, "goodput", "goodput against the checkpoint interval, a line per strategy, "
                 "with the first-order model and Young's optimum");
    script_figure_titled(gp, "goodput", 1000, 700, 30, "Goodput against the checkpoint interval",
                         o->title);
    text_printf(gp, "    set xlabel 'checkpoint interval (--checkpoint-every, steps)'\n"
                    "    set ylabel 'goodput (share of the time on work that survives)'\n"
                    "    set key bottom right\n    set grid\n"
                    "    set xrange [%.10g:%.10g]\n    set yrange [%.10g:1]\n",
                x_lo, x_hi, y_lo);
    /* A log axis has few tics of its own: the intervals that ran are tics. */
    if (is_log) text_printf(gp, "    set logscale x\n    set xtics (%s)\n", tics);
    for (int b = 0; b < n_series; b++) {
        const struct series *s = &ss[b];
        if (!isfinite(s->optimum_steps)) continue;
        text_printf(gp, "    set arrow from %.10g, graph 0 to %.10g, graph 1 nohead dt 3 lw 1.5 "
                        "lc %d\n", s->optimum_steps, s->optimum_steps, b + 1);
        char label[256];
        struct time_unit u = time_unit_for(s->optimum_s);
        int len = snprintf(label, sizeof label, " %s: Young-Daly sqrt(2CM) = %.3g steps (%.3g %s)",
                           s->strategy, s->optimum_steps, s->optimum_s * u.per_s, u.name);
        /* below 0 the first order says no interval leaves any work (a
         * relaunch as long as the time between failures, as in short real
         * runs): "-817.3%" read as a goodput */
        if (len > 0 && (size_t)len < sizeof label && s->optimum_goodput >= 0)
            snprintf(label + len, sizeof label - (size_t)len, ", %.1f%%",
                     100 * s->optimum_goodput);
        else if (len > 0 && (size_t)len < sizeof label)
            snprintf(label + len, sizeof label - (size_t)len, ", first order below 0");
        /* in the axis' right half the label runs left of its line: to the
         * right it ran off the figure ("... = 23" of "= 236 steps") */
        double at = is_log ? log(s->optimum_steps / x_lo) / log(x_hi / x_lo)
                           : (s->optimum_steps - x_lo) / (x_hi - x_lo);
        bool is_right_half = at > 0.5;
        if (is_right_half) {
            size_t n = strlen(label);
            memmove(label, label + 1, n);   /* its lead space goes to the end */
            if (n < sizeof label - 1) strcat(label, " ");
        }
        text_printf(gp, "    set label %d ", b + 1);
        text_quoted(gp, label);
        text_printf(gp, " at %.10g, graph %.3g %s tc lt %d\n", s->optimum_steps,
                    0.95 - 0.06 * b, is_right_half ? "right" : "left", b + 1);
    }
    const char *sep = "    plot ";
    for (int b = 0; b < n_series; b++) {
        const struct series *s = &ss[b];
        char title[160];
        snprintf(title, sizeof title, "%s (%s)", s->strategy, s->mode);
        text_printf(gp, "%s'goodput.dat' index %d using 1:3 with linespoints lt %d lw 1.5 pt 7 "
                        "title ", sep, b, b + 1);
        text_quoted(gp, title);
        sep = ", \\\n         ";
        if (!s->has_curve) continue;
        snprintf(title, sizeof title, "%s, first order: 1 - C/tau - tau/2M - R/M", s->strategy);
        text_printf(gp, "%s'goodput.dat' index %d using 1:3 with lines dt 2 lt %d title ", sep,
                    s->curve_index, b + 1);
        text_quoted(gp, title);
    }
    text_printf(gp, "\n");
    script_figure_end(gp);
}

int plot_goodput(const struct report *const *rs, int n, const struct plot_opts *o,
                 struct err *e)
{
    int *idx = malloc(sizeof *idx * (size_t)(n > 0 ? n : 1));
    struct series *ss = calloc((size_t)(n > 0 ? n : 1), sizeof *ss);
    const struct report **mine = malloc(sizeof *mine * (size_t)(n > 0 ? n : 1));
    const struct report **model_rs = malloc(sizeof *model_rs * (size_t)(n > 0 ? n : 1));
    if (!idx || !ss || !mine || !model_rs) {
        free(idx);
        free(ss);
        free(mine);
        free(model_rs);
        return err_set(e, ERR_NOMEM, "goodput plot: out of memory");
    }
    /* First pass: each strategy's model and optimum, and the axes' extent. */
    int n_series = 0;
    double x_lo = INFINITY, x_hi = -INFINITY, y_lo = 1;
    for (int i = 0; i < n; i++) {
        if (!is_first_of_strategy(rs, i)) continue;
        int m = points_of(rs, n, i, idx);
        for (int k = 0; k < m; k++) mine[k] = rs[idx[k]];
        struct series *s = &ss[n_series++];
        series_of(s, mine[0], rs, n, model_rs);
        x_lo = fmin(x_lo, (double)interval_of(mine[0]));
        x_hi = fmax(x_hi, (double)interval_of(mine[m - 1]));
        for (int k = 0; k < m; k++) y_lo = fmin(y_lo, mine[k]->failure.goodput);
        if (isfinite(s->optimum_steps)) {
            x_lo = fmin(x_lo, s->optimum_steps);
            x_hi = fmax(x_hi, s->optimum_steps);
            y_lo = fmin(y_lo, s->optimum_goodput);
        }
    }
    if (n_series == 0) {
        free(idx);
        free(ss);
        free(mine);
        free(model_rs);
        return err_set(e, ERR_INPUT, "goodput plot: no report has both a failure section and a "
                       "--checkpoint-every (sweep --vary checkpoint-every=... with --fail or "
                       "--mtbf)");
    }
    /* Intervals that span a decade or more read better on a log axis, where
     * the optimum sits in the middle of its curve's flat top. */
    bool is_log = x_hi / x_lo >= 10;
    double pad = is_log ? 1.5 : 0;
    double lo = is_log ? x_lo / pad : fmax(x_lo - 0.1 * (x_hi - x_lo), x_lo / 2);
    double hi = is_log ? x_hi * pad : x_hi + 0.1 * (x_hi - x_lo) + (x_hi == x_lo);
    /* Room below the lowest point in steps of 5%; the curve, which falls
     * steeply far from the optimum, is clipped there. */
    y_lo = fmax(0, floor(20 * y_lo - 1) / 20);

    /* The points of every strategy first (index b), then the curves that
     * can be drawn (index n_series + c): no block is ever empty. */
    struct text dat = {0}, gp = {0};
    text_printf(&dat, "# strata goodput data: a block per strategy (gnuplot's index) of its "
                      "points by ascending interval, then a block per first-order curve; each "
                      "line: interval_steps interval_s goodput\n");
    for (int b = 0, i = 0; i < n; i++) {
        if (!is_first_of_strategy(rs, i)) continue;
        const struct series *s = &ss[b];
        int m = points_of(rs, n, i, idx);
        text_printf(&dat, "%s# index %d: %s, %d points\n", b ? "\n\n" : "", b, s->strategy, m);
        describe_model(&dat, s);
        for (int k = 0; k < m; k++) {
            const struct report *r = rs[idx[k]];
            double steps = (double)interval_of(r);
            text_printf(&dat, "%.10g %.10g %.10g\n", steps,
                        goodput_steps_to_s(steps, s->model.step_s), r->failure.goodput);
        }
        b++;
    }
    for (int b = 0, c = 0; b < n_series; b++) {
        struct series *s = &ss[b];
        s->curve_index = -1;
        if (!s->has_curve) continue;
        s->curve_index = n_series + c++;
        text_printf(&dat, "\n\n# index %d: %s, first-order goodput\n", s->curve_index,
                    s->strategy);
        write_curve(&dat, s, lo, hi, is_log);
    }
    struct text tics = {0};
    for (int i = 0; i < n; i++) {
        if (!is_plotted(rs[i])) continue;
        bool is_new = true;
        for (int j = 0; j < i && is_new; j++)
            is_new = !is_plotted(rs[j]) || interval_of(rs[j]) != interval_of(rs[i]);
        if (is_new) text_printf(&tics, "%s%lld", tics.len ? ", " : "", interval_of(rs[i]));
    }
    write_script(&gp, ss, n_series, lo, hi, y_lo, is_log, tics.s ? tics.s : "", o);
    gp.is_failed |= tics.is_failed;   /* out of memory: the script lacks its tics */
    text_free(&tics);
    int rc = plot_render(o, "goodput", &dat, &gp, e);
    free(idx);
    free(ss);
    free(mine);
    free(model_rs);
    return rc;
}
