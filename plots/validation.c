/* validation.*: the simulator's predicted step time against the measured
 * one, a point per run coloured by strategy (a validation matrix holds one
 * run per cell and strategy); the closer to y = x, the better the model. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "script.h"

/* Filled point types (circle, square, triangle up and down, diamond,
 * pentagon): a strategy's shape beside its colour, so that strategies stay
 * apart in grey, and beyond gnuplot's 8 colours (24 strategies unique). */
static const int point_types[] = {7, 5, 9, 11, 13, 15};
#define N_POINT_TYPES ((int)(sizeof point_types / sizeof point_types[0]))

/* A label's box in the graph's fractions (0..1 both ways), to the right of
 * its point as gnuplot draws it ("left offset char 1,0.5"): about 0.0095
 * of the 900-pixel figure's graph a character, 0.03 high. */
struct label_box {
    double x0, x1, y0, y1;
};

static double graph_fraction(double v, double a, double b, bool is_log)
{
    return is_log ? log(v / a) / log(b / a) : (v - a) / (b - a);
}

static struct label_box label_box_of(const struct validation_point *p, double error_pct,
                                     double a, double b, bool is_log)
{
    char label[160];
    int n = snprintf(label, sizeof label, "%s %+.0f%%", p->strategy, error_pct);
    double x = graph_fraction(p->measured_s, a, b, is_log);
    double y = graph_fraction(p->predicted_s, a, b, is_log);
    return (struct label_box){x + 0.01, x + 0.01 + 0.0095 * n, y, y + 0.03};
}

static bool boxes_overlap(const struct label_box *p, const struct label_box *q)
{
    return p->x0 < q->x1 && q->x0 < p->x1 && p->y0 < q->y1 && q->y0 < p->y1;
}

/* Whether point i's label would cover none of the labels of points[0..i)
 * that are shown: near-equal predictions (ps-sync, ps-async and ps-ssp
 * often are) wrote their labels over each other, unreadable. A point whose
 * label is left out keeps its shape and colour, which the key names; the
 * data file has its error. O(n^2): labels are drawn up to 12 points. */
static bool label_fits(const struct label_box *boxes, const bool *is_shown, int i)
{
    for (int j = 0; j < i; j++)
        if (is_shown[j] && boxes_overlap(&boxes[i], &boxes[j])) return false;
    return true;
}

static bool is_drawable(const struct validation_point *p)
{
    return p->predicted_s > 0 && p->measured_s > 0 && isfinite(p->predicted_s) &&
           isfinite(p->measured_s);
}

int plot_validation(const struct validation_point *pts, int n, const struct plot_opts *o,
                    struct err *e)
{
    const char *name = "validation";
    double lo = INFINITY, hi = 0;
    int n_drawable = 0;
    for (int i = 0; i < n; i++)
        if (is_drawable(&pts[i])) {
            lo = fmin(lo, fmin(pts[i].predicted_s, pts[i].measured_s));
            hi = fmax(hi, fmax(pts[i].predicted_s, pts[i].measured_s));
            n_drawable++;
        }
    if (!(lo <= hi))
        return err_set(e, ERR_INPUT, "validation plot: no point with positive predicted and "
                       "measured step times");

    /* Step times that span a decade or more read better on log axes, where
     * a constant relative error is a constant distance from the diagonal. */
    bool is_log = hi / lo >= 10;
    double a = is_log ? lo / 1.5 : 0, b = hi * (is_log ? 1.5 : 1.15);
    /* Labels (strategy and error) while they stay readable: up to a dozen
     * points, and none over another. */
    bool *is_shown = calloc((size_t)n + 1, sizeof *is_shown);
    struct label_box *boxes = calloc((size_t)n + 1, sizeof *boxes);
    if (!is_shown || !boxes) {
        free(is_shown);
        free(boxes);
        return err_set(e, ERR_NOMEM, "validation plot: out of memory");
    }

    /* A block of the data file per strategy, in order of first appearance,
     * so gnuplot's `index` gives each its colour, shape and key entry.
     * O(n^2) in the points: a matrix of a few hundred at most. The last
     * column says whether the point's label is drawn. */
    struct text dat = {0}, gp = {0};
    text_printf(&dat, "# strata validation data: a line per run: strategy measured_s predicted_s "
                      "error_percent (predicted / measured - 1) labelled (1: the figure shows "
                      "its label, 0: it would cover another); a block per strategy\n");
    script_begin(&gp, name, "predicted against measured step time, a point per run");
    script_figure_titled(&gp, name, 900, 900, 40, "Simulated against measured step time",
                         o->title);
    struct time_unit u = time_unit_for(hi);
    text_printf(&gp, "    set xlabel 'measured step time (%s)'\n"
                     "    set ylabel 'predicted step time (%s)'\n"
                     "    set size square\n    set grid\n    set key top left\n"
                     "    set xrange [%.10g:%.10g]\n    set yrange [%.10g:%.10g]\n",
                u.name, u.name, a * u.per_s, b * u.per_s, a * u.per_s, b * u.per_s);
    if (is_log) text_printf(&gp, "    set logscale xy\n");
    text_printf(&gp, "    plot x with lines dt 2 lc rgb 'gray40' "
                     "title 'perfect prediction (y = x)'");
    int n_blocks = 0;
    for (int i = 0; i < n; i++) {
        bool is_first = true;
        for (int j = 0; j < i && is_first; j++) is_first = strcmp(pts[j].strategy, pts[i].strategy);
        if (!is_first) continue;
        int in_block = 0;
        for (int j = i; j < n; j++) {
            const struct validation_point *p = &pts[j];
            if (strcmp(p->strategy, pts[i].strategy)) continue;
            if (!is_drawable(p)) {
                text_printf(&dat, "# left out: %s, predicted %g s, measured %g s\n", p->strategy,
                            p->predicted_s, p->measured_s);
                continue;
            }
            if (in_block++ == 0) {
                if (n_blocks > 0) text_printf(&dat, "\n\n");
                text_printf(&gp, ", \\\n         '%s.dat' index %d using ($2*%g):($3*%g) with "
                                 "points pt %d ps 1.5 lc %d title ",
                            name, n_blocks, u.per_s, u.per_s,
                            point_types[n_blocks % N_POINT_TYPES], n_blocks + 1);
                text_quoted(&gp, p->strategy);
                n_blocks++;
            }
            double error_pct = 100.0 * (p->predicted_s / p->measured_s - 1);
            boxes[j] = label_box_of(p, error_pct, a, b, is_log);
            is_shown[j] = n_drawable <= 12 && label_fits(boxes, is_shown, j);
            /* The strategy is a quoted column: gnuplot reads it as one word. */
            text_printf(&dat, "\"");
            for (const char *c = p->strategy; *c; c++) text_printf(&dat, "%c", *c == '"' ? '\'' : *c);
            text_printf(&dat, "\" %.10g %.10g %.4g %d\n", p->measured_s, p->predicted_s,
                        error_pct, is_shown[j]);
        }
    }
    text_printf(&gp, ", \\\n         '%s.dat' using ($2*%g):($3*%g):($5 != 0 ? "
                     "sprintf('%%s %%+.0f%%%%', strcol(1), $4) : '') "
                     "with labels left offset char 1,0.5 notitle\n",
                name, u.per_s, u.per_s);
    script_figure_end(&gp);
    free(is_shown);
    free(boxes);
    return plot_render(o, name, &dat, &gp, e);
}
