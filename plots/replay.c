/* replay.*: a replay's step times as bars: measured, replayed on the home
 * network, and the what-if when one was asked, each labelled with its
 * change against the measured run (bench/replay.h). */
#include <math.h>
#include <stdio.h>

#include "render.h"
#include "script.h"

int plot_replay(const struct replay_bar *bars, int n, const struct plot_opts *o, struct err *e)
{
    const char *name = "replay";
    double hi = 0, measured_s = NAN;
    for (int i = 0; i < n; i++) {
        if (isfinite(bars[i].step_s) && bars[i].step_s > hi) hi = bars[i].step_s;
        if (i == 0) measured_s = bars[i].step_s;
    }
    if (!(hi > 0) || !(measured_s > 0))
        return err_set(e, ERR_INPUT, "replay plot: no positive measured step time to plot");
    struct time_unit u = time_unit_for(hi);
    struct text dat = {0}, gp = {0};
    text_printf(&dat, "# strata replay data: a line per bar: index label step_s change_percent "
                      "(step / the first, measured, - 1)\n");
    for (int i = 0; i < n; i++) {
        text_printf(&dat, "%d \"", i);
        for (const char *c = bars[i].label; *c; c++) text_printf(&dat, "%c", *c == '"' ? '\'' : *c);
        text_printf(&dat, "\" %.10g %.4g\n", bars[i].step_s,
                    100.0 * (bars[i].step_s / measured_s - 1));
    }
    script_begin(&gp, name, "measured, replayed and what-if step time as bars");
    script_figure_titled(&gp, name, 900, 600, 40, "Step time: measured, replayed, what-if",
                         o->title);
    text_printf(&gp, "    set ylabel 'step time (%s)'\n    set grid ytics\n    unset key\n"
                     "    set style fill solid 0.8 border -1\n    set boxwidth 0.6\n"
                     "    set yrange [0:%.10g]\n    set xrange [-0.6:%d.6]\n",
                u.name, hi * 1.25 * u.per_s, n - 1);
    text_printf(&gp, "    plot '%s.dat' using 1:($3*%g):xtic(2) with boxes lc rgb '#4e79a7', \\\n"
                     "         '%s.dat' using 1:($3*%g):(sprintf('%%.3g %s (%%+.1f%%%%)', $3*%g, "
                     "$4)) with labels offset char 0,1 notitle\n",
                name, u.per_s, name, u.per_s, u.name, u.per_s);
    script_figure_end(&gp);
    return plot_render(o, name, &dat, &gp, e);
}
