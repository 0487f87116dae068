/* speedup.* and efficiency.*: what more devices (or another varied value)
 * buy, a line per strategy, against the ideal. Each figure has its own
 * NAME.dat and NAME.gp, as `strata plot --help` says every figure has. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "script.h"

static bool is_power_of_two(double x)
{
    if (!(x > 0) || !isfinite(x)) return false;
    double l = log2(x);
    return fabs(l - round(l)) < 1e-9;
}

/* The indices of pts of strategy s, by ascending x (insertion sort: a sweep
 * has tens of points). */
static int points_of(const struct speedup_point *pts, int n, const char *s, int *idx)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(pts[i].strategy, s)) continue;
        int j = m++;
        while (j > 0 && pts[idx[j - 1]].x > pts[i].x) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    return m;
}

/* Does any point, of any strategy, stand strictly between x = a and b? The
 * sweep ran there, so a strategy without a point there has a gap. O(n) a
 * call, O(n^2) a figure: a sweep has tens of points. */
static bool has_x_between(const struct speedup_point *pts, int n, double a, double b)
{
    for (int i = 0; i < n; i++)
        if (pts[i].x > a && pts[i].x < b) return true;
    return false;
}

/* Has any of the m points idx of pts a speedup to draw? */
static bool has_a_point(const struct speedup_point *pts, const int *idx, int m)
{
    for (int k = 0; k < m; k++)
        if (isfinite(pts[idx[k]].x) && isfinite(pts[idx[k]].speedup)) return true;
    return false;
}

/* Has strategy pts[i] come before i? Strategies keep their first order. */
static bool seen_before(const struct speedup_point *pts, int i)
{
    for (int j = 0; j < i; j++)
        if (!strcmp(pts[j].strategy, pts[i].strategy)) return true;
    return false;
}

/* A log2 axis gets tics at powers of 2 only: speedups of 1 to 1.96 (a
 * sweep of microbatches 1 to 8) had two labels, 1 and 2, and nothing to
 * read a value by. gnuplot stretches a log axis to whole octaves around
 * [lo, hi]; over at most 3 of them, labelled tics between the powers too:
 * quarters over one octave, halves over 2 or 3. */
static void log2_ytics_between(struct text *gp, double lo, double hi)
{
    if (!(lo > 0) || !(hi >= lo) || !isfinite(hi)) return;
    int k_lo = (int)floor(log2(lo)), k_hi = (int)ceil(log2(hi));
    if (k_hi == k_lo) {   /* one power of 2 alone: gnuplot widens it an octave each way */
        k_lo--;
        k_hi++;
    }
    int octaves = k_hi - k_lo;
    if (octaves > 3) return;
    static const double quarters[] = {1.25, 1.5, 1.75}, halves[] = {1.5};
    const double *steps = octaves == 1 ? quarters : halves;
    int n_steps = octaves == 1 ? 3 : 1;
    text_printf(gp, "    set ytics add (");
    for (int k = k_lo; k < k_hi; k++)
        for (int j = 0; j < n_steps; j++)
            text_printf(gp, "%s%.10g", k > k_lo || j ? ", " : "", ldexp(steps[j], k));
    text_printf(gp, ")\n");
}

/* One figure, drawn from fig.dat: column col (2 speedup, 3 efficiency) of
 * every block. */
static void figure(struct text *gp, const char *fig, const char *lead, const char *ylabel,
                   int col, const char *const *titles, int blocks, const struct speedup_axes *ax,
                   bool log_x, bool log_y, double y_lo, double y_hi, const char *ideal,
                   const char *key, const struct plot_opts *o)
{
    script_begin(gp, fig, col == 2 ? "speedup, a line per strategy"
                                   : "efficiency (speedup / ideal), a line per strategy");
    script_figure_titled(gp, fig, 1000, 700, 30, lead, o->title);
    text_printf(gp, "    set xlabel ");
    text_quoted(gp, ax->x_label);
    text_printf(gp, "\n    set ylabel ");
    text_quoted(gp, ylabel);
    text_printf(gp, "\n    set key %s\n    set grid\n", key);
    /* Values that are not numbers stand at 1, 2, ...: their names are the
     * tics, and nothing lies between them. */
    if (ax->x_names) {
        text_printf(gp, "    set xrange [0.75:%.2f]\n    set xtics (", ax->n_x_names + 0.25);
        for (int i = 0; i < ax->n_x_names; i++) {
            text_printf(gp, "%s", i ? ", " : "");
            text_quoted(gp, ax->x_names[i]);
            text_printf(gp, " %d", i + 1);
        }
        text_printf(gp, ")\n");
    }
    if (log_x) text_printf(gp, "    set logscale x 2\n");
    if (log_y) {
        text_printf(gp, "    set logscale y 2\n");
        log2_ytics_between(gp, y_lo, y_hi);
    }
    /* Room above the top point, so that an ideal line there stays in sight. */
    else text_printf(gp, "    set yrange [0:*]\n    set offsets 0, 0, graph 0.08, 0\n");
    for (int b = 0; b < blocks; b++) {
        /* a dash pattern and a point type a strategy, as in the convergence
         * plot: equal speedups (ps-ssp whose bound never binds, and
         * ps-async) then both show */
        text_printf(gp, "%s'%s.dat' index %d using 1:%d with linespoints lt %d dt %d pt %d "
                        "ps 1.2 lw 1.5 title ", b ? ", \\\n         " : "    plot ", fig, b, col,
                    b + 1, b % 5 + 1, b % 7 + 4);
        text_quoted(gp, titles[b]);
    }
    if (ideal) text_printf(gp, ", \\\n         %s with lines dt 2 lc rgb 'gray40' title 'ideal'", ideal);
    text_printf(gp, "\n");
    script_figure_end(gp);
}

/* A data file: its header line, then the blocks of body. */
static void data_file(struct text *dat, const char *what, const struct text *body)
{
    text_printf(dat, "# strata %s data: a block per strategy (gnuplot's index), a line per "
                     "point by ascending x: x speedup efficiency\n", what);
    text_printf(dat, "%s", body->s ? body->s : "");
    dat->is_failed |= body->is_failed;
}

int plot_speedup(const struct speedup_point *pts, int n, const struct speedup_axes *ax,
                 const struct plot_opts *o, struct err *e)
{
    if (n < 1) return err_set(e, ERR_INPUT, "speedup plot: no points to draw");
    int *idx = malloc(sizeof *idx * (size_t)n);
    const char **titles = malloc(sizeof *titles * (size_t)n);
    if (!idx || !titles) {
        free(idx);
        free(titles);
        return err_set(e, ERR_NOMEM, "speedup plot: out of memory");
    }
    struct speedup_axes axes = *ax;
    if (!axes.x_label || !*axes.x_label) axes.x_label = "x";
    if (!axes.speedup_over || !*axes.speedup_over) axes.speedup_over = "one device";
    if (!axes.efficiency_label) axes.efficiency_label = "efficiency (speedup / ideal)";
    if (axes.n_x_names < 1) axes.x_names = NULL;
    bool log_x = !axes.x_names, speedups_positive = true;
    double x_lo = INFINITY, x_hi = -INFINITY, sp_lo = INFINITY, sp_hi = -INFINITY;
    struct text dat = {0}, gp = {0}, eff_dat = {0}, eff_gp = {0};
    int blocks = 0;
    for (int i = 0; i < n; i++) {
        if (seen_before(pts, i)) continue;
        int m = points_of(pts, n, pts[i].strategy, idx);
        if (!has_a_point(pts, idx, m)) continue;   /* no line, no key entry */
        text_printf(&dat, "%s# index %d: %s\n", blocks ? "\n\n" : "", blocks, pts[i].strategy);
        const struct speedup_point *drawn = NULL;
        for (int k = 0; k < m; k++) {
            const struct speedup_point *p = &pts[idx[k]];
            /* A run that failed has no speedup: a gap, not a zero. */
            if (!isfinite(p->x) || !isfinite(p->speedup)) {
                text_printf(&dat, "# left out: x = %g, no speedup\n", p->x);
                continue;
            }
            /* A blank line ends gnuplot's line there: one drawn across an x
             * where this strategy did not run would read as a point on it. */
            if (drawn && has_x_between(pts, n, drawn->x, p->x)) text_printf(&dat, "\n");
            drawn = p;
            text_printf(&dat, "%.10g %.10g %.10g\n", p->x, p->speedup, p->efficiency);
            if (!is_power_of_two(p->x)) log_x = false;
            if (!(p->speedup > 0)) speedups_positive = false;
            if (p->x < x_lo) x_lo = p->x;
            if (p->x > x_hi) x_hi = p->x;
            sp_lo = fmin(sp_lo, p->speedup);
            sp_hi = fmax(sp_hi, p->speedup);
        }
        titles[blocks++] = pts[i].strategy;
    }
    if (!(x_lo <= x_hi)) {
        free(idx);
        free(titles);
        text_free(&dat);
        return err_set(e, ERR_INPUT, "speedup plot: no point has a finite x and speedup");
    }
    /* The same points in both data files: each script reads its own. */
    struct text body = dat;
    dat = (struct text){0};
    data_file(&dat, "speedup", &body);
    data_file(&eff_dat, "efficiency", &body);
    text_free(&body);
    /* On log2 axes both ways, ideal scaling is the diagonal. */
    char speedup_label[256];
    snprintf(speedup_label, sizeof speedup_label, "speedup (x %s)", axes.speedup_over);
    /* the ideal line y = x spans the x range too */
    if (axes.ideal_line) {
        sp_lo = fmin(sp_lo, x_lo);
        sp_hi = fmax(sp_hi, x_hi);
    }
    figure(&gp, "speedup", "Speedup", speedup_label, 2, titles, blocks, &axes, log_x,
           log_x && speedups_positive, sp_lo, sp_hi, axes.ideal_line ? "x" : NULL, "top left", o);
    figure(&eff_gp, "efficiency", "Efficiency", axes.efficiency_label, 3, titles, blocks, &axes,
           log_x, false, NAN, NAN, axes.ideal_line ? "1" : NULL, "bottom left", o);
    int rc = plot_render(o, "speedup", &dat, &gp, e);
    if (rc == 0) rc = plot_render(o, "efficiency", &eff_dat, &eff_gp, e);
    text_free(&eff_dat);   /* when the speedup figure failed */
    text_free(&eff_gp);
    free(idx);
    free(titles);
    return rc;
}
