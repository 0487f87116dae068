/* What every plot's gnuplot script shares: the header that says how to draw
 * it again, the frame that draws one figure to PNG and SVG (or to the
 * terminal), titles, time units and legend names. */
#ifndef STRATA_PLOTS_SCRIPT_H
#define STRATA_PLOTS_SCRIPT_H

#include <stddef.h>

#include "../core/report.h"
#include "text.h"

/* The script's first lines: what it draws from which data file, how to draw
 * it again, and the variables `term` ("files" or "dumb") and `cols` (width
 * of the dumb terminal) that strata sets with gnuplot -e. */
void script_begin(struct text *gp, const char *name, const char *what);

/* Opens figure fig: a loop over the formats that draws it to fig.png
 * (pngcairo, else png) and fig.svg at width x height pixels, or to the
 * terminal in `lines` lines. The body follows, then script_figure_end. */
void script_figure_begin(struct text *gp, const char *fig, int width_px, int height_px,
                         int lines);
void script_figure_end(struct text *gp);

/* `set <what> 'lead' . "\n" . 'scenario'`: a title in two lines, the
 * scenario second (one line when scenario is NULL or ""). what is "title" or
 * "multiplot layout R,C title". */
void script_title(struct text *gp, const char *what, const char *lead, const char *scenario);

/* A one-plot figure's opening: script_figure_begin, then its title, lead
 * with the scenario under it. (A multiplot titles its layout instead.) */
void script_figure_titled(struct text *gp, const char *fig, int width_px, int height_px,
                          int lines, const char *lead, const char *scenario);

/* Seconds shown in the unit that suits the largest time: s, ms or µs. */
struct time_unit {
    const char *name;   /* "ms" */
    double per_s;       /* 1e3: multiply seconds by this */
};
struct time_unit time_unit_for(double max_s);

/* The legend of rs[i]: its strategy, " (real)" or " (sim)" when the reports
 * mix modes, ", N devices" when its strategy and mode come more than once,
 * and when they come more than once on N devices too, ", KEY VALUE" of each
 * option of its config that differs among those reports (or ", #K", its
 * place among them, when none does). */
void series_name(const struct report *const *rs, int n, int i, char *buf, size_t size);

#endif
