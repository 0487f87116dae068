/* validation.*: the simulator's predicted step time against the measured
 * one, a point per run coloured by strategy (a validation matrix holds one
 * run per cell and strategy); the closer to y = x, the better the model. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "script.h"

int plot_validation(const struct validation_point *pts, int n, const struct plot_opts *o,
                    struct err *e)
{
    const char *name = "validation";
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++)
        if (pts[i].predicted_s > 0 && pts[i].measured_s > 0 && isfinite(pts[i].predicted_s) &&
            isfinite(pts[i].measured_s)) {
            lo = fmin(lo, fmin(pts[i].predicted_s, pts[i].measured_s));
            hi = fmax(hi, fmax(pts[i].predicted_s, pts[i].measured_s));
        }
    if (!(lo <= hi))
        return err_set(e, ERR_INPUT, "validation plot: no point with positive predicted and "
                       "measured step times");

    /* A block of the data file per strategy, in order of first appearance,
     * so gnuplot's `index` gives each its colour and key entry. O(n^2) in
     * the points: a matrix of a few hundred at most. */
    struct text dat = {0}, gp = {0}, names = {0};
    text_printf(&dat, "# strata validation data: a line per run: strategy measured_s predicted_s "
                      "error_percent (predicted / measured - 1); a block per strategy\n");
    int n_blocks = 0, n_plotted = 0;
    for (int i = 0; i < n; i++) {
        bool is_first = true;
        for (int j = 0; j < i && is_first; j++) is_first = strcmp(pts[j].strategy, pts[i].strategy);
        if (!is_first) continue;
        int in_block = 0;
        for (int j = i; j < n; j++) {
            const struct validation_point *p = &pts[j];
            if (strcmp(p->strategy, pts[i].strategy)) continue;
            if (!(p->predicted_s > 0 && p->measured_s > 0 && isfinite(p->predicted_s) &&
                  isfinite(p->measured_s))) {
                text_printf(&dat, "# left out: %s, predicted %g s, measured %g s\n", p->strategy,
                            p->predicted_s, p->measured_s);
                continue;
            }
            if (in_block++ == 0) {
                if (n_blocks++ > 0) text_printf(&dat, "\n\n");
                text_printf(&names, "%s", n_blocks > 1 ? " " : "");
                for (const char *c = p->strategy; *c; c++)
                    text_printf(&names, "%c", *c == '"' || *c == ' ' || *c == '\'' ? '_' : *c);
            }
            /* The strategy is a quoted column: gnuplot reads it as one word. */
            text_printf(&dat, "\"");
            for (const char *c = p->strategy; *c; c++) text_printf(&dat, "%c", *c == '"' ? '\'' : *c);
            text_printf(&dat, "\" %.10g %.10g %.4g\n", p->measured_s, p->predicted_s,
                        100.0 * (p->predicted_s / p->measured_s - 1));
            n_plotted++;
        }
    }

    struct time_unit u = time_unit_for(hi);
    /* Step times that span a decade or more read better on log axes, where
     * a constant relative error is a constant distance from the diagonal. */
    bool is_log = hi / lo >= 10;
    double a = is_log ? lo / 1.5 : 0, b = hi * (is_log ? 1.5 : 1.15);
    script_begin(&gp, name, "predicted against measured step time, a point per run");
    script_figure_titled(&gp, name, 900, 900, 40, "Simulated against measured step time",
                         o->title);
    text_printf(&gp, "    set xlabel 'measured step time (%s)'\n"
                     "    set ylabel 'predicted step time (%s)'\n"
                     "    set size square\n    set grid\n    set key top left\n"
                     "    set xrange [%.10g:%.10g]\n    set yrange [%.10g:%.10g]\n",
                u.name, u.name, a * u.per_s, b * u.per_s, a * u.per_s, b * u.per_s);
    if (is_log) text_printf(&gp, "    set logscale xy\n");
    /* Labels (strategy and error) while they stay readable; beyond a dozen
     * points they overlap, and the key and colours name the strategies. */
    text_printf(&gp, "    names = \"%s\"\n", names.s ? names.s : "");
    text_printf(&gp, "    plot x with lines dt 2 lc rgb 'gray40' title 'perfect prediction (y = x)', "
                     "\\\n         for [i=0:%d] '%s.dat' index i using ($2*%g):($3*%g) with points "
                     "pt 7 ps 1.5 lc i+1 title word(names, i+1)",
                n_blocks - 1, name, u.per_s, u.per_s);
    if (n_plotted <= 12)
        text_printf(&gp, ", \\\n         '%s.dat' using ($2*%g):($3*%g):(sprintf('%%s %%+.0f%%%%', "
                         "strcol(1), $4)) with labels left offset char 1,0.5 notitle",
                    name, u.per_s, u.per_s);
    text_printf(&gp, "\n");
    gp.is_failed |= names.is_failed;   /* out of memory: the script lacks the key's names */
    script_figure_end(&gp);
    int rc = plot_render(o, name, &dat, &gp, e);
    text_free(&names);
    return rc;
}
