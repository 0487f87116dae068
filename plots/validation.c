/* validation.*: the simulator's predicted step time against the measured
 * one, a labelled point per run; the closer to y = x, the better the model. */
#include <math.h>
#include <stdio.h>

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

    struct text dat = {0}, gp = {0};
    text_printf(&dat, "# strata validation data: a line per run: strategy measured_s predicted_s "
                      "error_percent (predicted / measured - 1)\n");
    for (int i = 0; i < n; i++) {
        const struct validation_point *p = &pts[i];
        if (!(p->predicted_s > 0 && p->measured_s > 0 && isfinite(p->predicted_s) &&
              isfinite(p->measured_s))) {
            text_printf(&dat, "# left out: %s, predicted %g s, measured %g s\n", p->strategy,
                        p->predicted_s, p->measured_s);
            continue;
        }
        /* The strategy is a quoted column: gnuplot reads it as one word. */
        text_printf(&dat, "\"");
        for (const char *c = p->strategy; *c; c++) text_printf(&dat, "%c", *c == '"' ? '\'' : *c);
        text_printf(&dat, "\" %.10g %.10g %.4g\n", p->measured_s, p->predicted_s,
                    100.0 * (p->predicted_s / p->measured_s - 1));
    }

    struct time_unit u = time_unit_for(hi);
    /* Step times that span a decade or more read better on log axes, where
     * a constant relative error is a constant distance from the diagonal. */
    bool is_log = hi / lo >= 10;
    double a = is_log ? lo / 1.5 : 0, b = hi * (is_log ? 1.5 : 1.15);
    script_begin(&gp, name, "predicted against measured step time, a point per run");
    script_figure_begin(&gp, name, 900, 900, 40);
    script_title(&gp, "title", "Simulated against measured step time", o->title);
    text_printf(&gp, "    set xlabel 'measured step time (%s)'\n"
                     "    set ylabel 'predicted step time (%s)'\n"
                     "    set size square\n    set grid\n    set key top left\n"
                     "    set xrange [%.10g:%.10g]\n    set yrange [%.10g:%.10g]\n",
                u.name, u.name, a * u.per_s, b * u.per_s, a * u.per_s, b * u.per_s);
    if (is_log) text_printf(&gp, "    set logscale xy\n");
    text_printf(&gp, "    plot x with lines dt 2 lc rgb 'gray40' title 'perfect prediction (y = x)', "
                     "\\\n         '%s.dat' using ($2*%g):($3*%g) with points pt 7 ps 1.5 lt 1 "
                     "title 'a run (label: strategy, prediction error)', \\\n"
                     "         '' using ($2*%g):($3*%g):(sprintf('%%s %%+.0f%%%%', strcol(1), $4)) "
                     "with labels left offset char 1,0.5 notitle\n",
                name, u.per_s, u.per_s, u.per_s, u.per_s);
    script_figure_end(&gp);
    int rc = plot_render(o, name, &dat, &gp, e);
    text_free(&dat);
    text_free(&gp);
    return rc;
}
