/* convergence.*: loss (and test accuracy) against time and against step, a
 * line per report, so that a fast strategy that learns slowly shows as such. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "render.h"
#include "script.h"

#define NAME_BYTES 160
/* the loss axis' label (no quote in it: it goes between gnuplot's) */
#define LOSS_LABEL "training loss (batch mean)"

/* Data: a block per curve (gnuplot's `index`), loss curves first, then
 * accuracy curves, each "step time_s value". Returns the number of blocks. */
static int write_data(struct text *dat, const struct report *const *rs, int n)
{
    text_printf(dat, "# strata convergence data: a block per report and curve, blocks apart by "
                     "two blank lines (gnuplot's index); time_s in seconds\n");
    int block = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            const struct report *r = rs[i];
            int m = pass ? r->n_accuracy_curve : r->n_loss_curve;
            if (m == 0) continue;
            char name[NAME_BYTES];
            series_name(rs, n, i, name, sizeof name);
            text_printf(dat, "%s# index %d: %s, %s: step time_s %s\n", block ? "\n\n" : "", block,
                        name, pass ? "test accuracy" : "loss", pass ? "accuracy" : "loss");
            for (int k = 0; k < m; k++) {
                if (pass)
                    text_printf(dat, "%lld %.10g %.10g\n", (long long)r->accuracy_curve[k].step,
                                r->accuracy_curve[k].time_s, r->accuracy_curve[k].accuracy);
                else
                    text_printf(dat, "%lld %.10g %.10g\n", (long long)r->loss_curve[k].step,
                                r->loss_curve[k].time_s, r->loss_curve[k].loss);
            }
            block++;
        }
    return block;
}

/* What the panels need to know beyond the curves: the loss axis's top when
 * a run diverged (else 0: gnuplot's own range), whether some run has
 * two accuracy points (one point is no curve), and whether the loss row's
 * key names every run the accuracy row draws. */
struct view {
    double loss_top;
    bool has_accuracy_curve;
    bool is_keyed_by_loss;
};

/* A run diverged when its loss left 4x the largest starting loss (or became
 * NaN or infinite): the axis then stops at that bound instead of rescaling to
 * 1e35 and flattening every other curve; the panel says who was clipped. */
static struct view view_of(const struct report *const *rs, int n)
{
    struct view v = {0, false, true};
    double start = 0;
    for (int i = 0; i < n; i++) {
        if (rs[i]->n_accuracy_curve > 0 && rs[i]->n_loss_curve == 0) v.is_keyed_by_loss = false;
        if (rs[i]->n_loss_curve > 0 && isfinite(rs[i]->loss_curve[0].loss) &&
            rs[i]->loss_curve[0].loss > start)
            start = rs[i]->loss_curve[0].loss;
        if (rs[i]->n_accuracy_curve >= 2) v.has_accuracy_curve = true;
    }
    double bound = 4 * start;
    for (int i = 0; i < n && start > 0; i++)
        for (int k = 0; k < rs[i]->n_loss_curve; k++)
            if (!(rs[i]->loss_curve[k].loss <= bound)) v.loss_top = bound;
    return v;
}

/* "name (diverged at step s)" labels of the clipped runs, one line each. */
static void label_diverged(struct text *gp, const struct report *const *rs, int n, double top)
{
    text_printf(gp, "    set label 2 \"");
    int said = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < rs[i]->n_loss_curve; k++)
            if (!(rs[i]->loss_curve[k].loss <= top)) {
                char title[NAME_BYTES];
                series_name(rs, n, i, title, sizeof title);
                for (char *c = title; *c; c++)   /* a quote would end gnuplot's string */
                    if (*c == '"' || *c == '\\') *c = '\'';
                text_printf(gp, "%s%s: loss above %.3g from step %lld (clipped)", said++ ? "\\n" : "",
                            title, top, (long long)rs[i]->loss_curve[k].step);
                break;
            }
    text_printf(gp, "\" at graph 0.02,0.06 left front textcolor rgb '#b00000'\n");
}

/* One panel: every report's curve of one kind (pass 0 loss, 1 accuracy)
 * against time or against step. Each report has its colour, dash pattern
 * and point type, the same in every panel, so curves that coincide (the
 * synchronous strategies' losses are equal by construction) still show
 * each one: a different dash, points at different places. */
static void panel(struct text *gp, const struct report *const *rs, int n, int pass, bool by_step,
                  struct time_unit u, const char *name, const struct view *v)
{
    if (by_step) text_printf(gp, "    set xlabel 'step'\n");
    else text_printf(gp, "    set xlabel 'time (%s)'\n", u.name);
    /* The loss curve is training's (each step's global batch: docs/metrics.md);
     * the table's loss is the test set's after the last step: one word for
     * both read as one number drawn wrong. */
    text_printf(gp, "    set ylabel '%s'\n", pass ? "test accuracy" : LOSS_LABEL);
    /* Styles are the same in every panel, so one key says it all: the loss
     * row's time panel's, opaque so that a curve under it does not garble
     * it. Top right, where falling losses leave room; an accuracy row's key
     * had none: its final points, the last time and step, sat under it. */
    if (by_step || (pass == 1 && v->is_keyed_by_loss)) text_printf(gp, "    unset key\n");
    else text_printf(gp, "    set key %s right opaque\n", pass ? "bottom" : "top");
    /* Accuracy points at the top and bottom of the range sat on the frame,
     * half drawn: room above and below them, the axis kept within 0 to 1
     * (an accuracy). Not beside them: room there stretched the time axis
     * below 0 and the step axis past the run. */
    if (pass == 1)
        text_printf(gp, "    set offsets 0, 0, graph 0.08, graph 0.08\n"
                        "    set yrange [0<*:*<1]\n");
    if (pass == 0 && v->loss_top > 0) {
        text_printf(gp, "    set yrange [0:%.6g]\n", v->loss_top);
        label_diverged(gp, rs, n, v->loss_top);
    }
    /* above the panel, not in it, where it could cover a point */
    if (pass == 1 && !v->has_accuracy_curve)
        text_printf(gp, "    set title 'one evaluation per run, at the end: --eval-every K "
                        "draws a curve'\n");
    int block = 0, shown = 0;
    for (int p = 0; p <= pass; p++)
        for (int i = 0; i < n; i++) {
            int m = p ? rs[i]->n_accuracy_curve : rs[i]->n_loss_curve;
            if (m == 0) continue;
            if (p == pass) {
                char title[NAME_BYTES];
                series_name(rs, n, i, title, sizeof title);
                text_printf(gp, "%s'%s.dat' index %d using ", shown ? ", \\\n         " :
                            "    plot ", name, block);
                if (by_step) text_printf(gp, "1:3");
                else text_printf(gp, "($2*%g):3", u.per_s);
                /* A point every ~8th step, each report at another
                 * interval, so the points of coinciding curves fall apart. */
                int every = m / 8 + 1 + i;
                text_printf(gp, " with linespoints lt %d dt %d pt %d pi %d ps %s lw 1.5 title ",
                            i + 1, i % 5 + 1, i % 7 + 4, pass ? 1 : every, pass ? "0.9" : "0.7");
                text_quoted(gp, title);
                shown++;
            }
            block++;
        }
    if (shown == 0)  /* keeps the panel's place in the layout, and says why */
        text_printf(gp, "    set label 1 'no %s curve' at graph 0.5,0.5 center\n"
                        "    plot [0:1][0:1] NaN notitle\n    unset label 1",
                    pass ? "accuracy" : "loss");
    text_printf(gp, "\n");
    if (pass == 0 && v->loss_top > 0) text_printf(gp, "    set autoscale y\n    unset label 2\n");
    if (pass == 1) text_printf(gp, "    set offsets 0, 0, 0, 0\n    set autoscale y\n");
    if (pass == 1 && !v->has_accuracy_curve) text_printf(gp, "    unset title\n");
}

int plot_convergence(const struct report *const *rs, int n, const struct plot_opts *o,
                     struct err *e)
{
    const char *name = "convergence";
    struct text dat = {0}, gp = {0};
    int blocks = write_data(&dat, rs, n);
    bool has_accuracy = false;
    double t_max = 0;
    for (int i = 0; i < n; i++) {
        if (rs[i]->n_accuracy_curve > 0) has_accuracy = true;
        for (int k = 0; k < rs[i]->n_loss_curve; k++)
            if (rs[i]->loss_curve[k].time_s > t_max) t_max = rs[i]->loss_curve[k].time_s;
        for (int k = 0; k < rs[i]->n_accuracy_curve; k++)
            if (rs[i]->accuracy_curve[k].time_s > t_max) t_max = rs[i]->accuracy_curve[k].time_s;
    }
    struct time_unit u = time_unit_for(t_max);
    struct view v = view_of(rs, n);

    script_begin(&gp, name, "loss and test accuracy during training, a line per run");
    int rows = has_accuracy ? 2 : 1;
    script_figure_begin(&gp, name, 1400, 500 * rows, 30 * rows);
    if (blocks == 0) {
        /* An empty frame that says why beats a missing file: the user learns
         * what to run. */
        script_title(&gp, "title", "Convergence", o->title);
        text_printf(&gp, "    set xlabel 'time (s)'\n    set ylabel '" LOSS_LABEL "'\n"
                         "    set xrange [0:1]\n    set yrange [0:1]\n"
                         "    set label 1 'no loss curve in these reports: simulate with "
                         "--numerics, or run for real' at graph 0.5,0.5 center\n"
                         "    plot NaN notitle\n");
    } else {
        char layout[48];
        snprintf(layout, sizeof layout, "multiplot layout %d,2 title", rows);
        script_title(&gp, layout, "Convergence", o->title);
        for (int pass = 0; pass < rows; pass++) {
            panel(&gp, rs, n, pass, false, u, name, &v);
            panel(&gp, rs, n, pass, true, u, name, &v);
        }
        text_printf(&gp, "    unset multiplot\n");
    }
    script_figure_end(&gp);
    int rc = plot_render(o, name, &dat, &gp, e);
    return rc;
}
