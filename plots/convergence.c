/* convergence.*: loss (and test accuracy) against time and against step, a
 * line per report, so that a fast strategy that learns slowly shows as such. */
#include <stdbool.h>
#include <stdio.h>

#include "render.h"
#include "script.h"

#define NAME_BYTES 160

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

/* One panel: every report's curve of one kind (pass 0 loss, 1 accuracy)
 * against time or against step. */
static void panel(struct text *gp, const struct report *const *rs, int n, int pass, bool by_step,
                  struct time_unit u, const char *name)
{
    if (by_step) text_printf(gp, "    set xlabel 'step'\n");
    else text_printf(gp, "    set xlabel 'time (%s)'\n", u.name);
    text_printf(gp, "    set ylabel '%s'\n", pass ? "test accuracy" : "loss");
    /* Colours are the same in every panel, so one key a row says it all:
     * the time panel's, opaque so that a curve under it does not garble it. */
    if (by_step) text_printf(gp, "    unset key\n");
    else text_printf(gp, "    set key %s right opaque\n", pass ? "bottom" : "top");
    /* Loss comes every step (a line); accuracy at each evaluation (points). */
    const char *style = pass ? "linespoints pt 7 ps 0.6" : "lines";
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
                /* Colour by report, the same in every panel. */
                text_printf(gp, " with %s lt %d lw 1.5 title ", style, i + 1);
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

    script_begin(&gp, name, "loss and test accuracy during training, a line per run");
    int rows = has_accuracy ? 2 : 1;
    script_figure_begin(&gp, name, 1400, 500 * rows, 30 * rows);
    if (blocks == 0) {
        /* An empty frame that says why beats a missing file: the user learns
         * what to run. */
        script_title(&gp, "title", "Convergence", o->title);
        text_printf(&gp, "    set xlabel 'time (s)'\n    set ylabel 'loss'\n"
                         "    set xrange [0:1]\n    set yrange [0:1]\n"
                         "    set label 1 'no loss curve in these reports: simulate with "
                         "--numerics, or run for real' at graph 0.5,0.5 center\n"
                         "    plot NaN notitle\n");
    } else {
        char layout[48];
        snprintf(layout, sizeof layout, "multiplot layout %d,2 title", rows);
        script_title(&gp, layout, "Convergence", o->title);
        for (int pass = 0; pass < rows; pass++) {
            panel(&gp, rs, n, pass, false, u, name);
            panel(&gp, rs, n, pass, true, u, name);
        }
        text_printf(&gp, "    unset multiplot\n");
    }
    script_figure_end(&gp);
    int rc = plot_render(o, name, &dat, &gp, e);
    return rc;
}
