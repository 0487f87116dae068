/* timeline-<strategy>.*: a Gantt chart of a trace, the picture of a
 * schedule: what every rank's streams did when, and where they waited. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/plan.h"
#include "gantt_marks.h"
#include "render.h"
#include "script.h"

/* The window drawn, [begin_s, end_s): --timeline-steps' steps. */
struct window {
    double begin_s, end_s;
};

static bool is_drawn(const struct span *s, int n_ranks, const struct window *w)
{
    return s->rank >= 0 && s->rank < n_ranks && s->kind >= 0 && s->kind < OP_N_KINDS &&
           s->end_s > s->start_s && s->start_s < w->end_s && s->end_s > w->begin_s;
}

/* Rank r's stream s is row 2r + s of the grid; only rows with a span (or a
 * death: marks) are drawn, numbered from the top in *y. Returns the number
 * drawn. */
static int number_rows(const struct span *spans, size_t n, int n_ranks, const struct window *w,
                       const struct timeline_marks *marks, int *y)
{
    for (int i = 0; i < 2 * n_ranks; i++) y[i] = -1;
    for (size_t i = 0; i < n; i++)
        if (is_drawn(&spans[i], n_ranks, w)) y[2 * spans[i].rank + (spans[i].stream ? 1 : 0)] = 0;
    gantt_marks_rows(marks, n_ranks, w->begin_s, w->end_s, y);
    int rows = 0;
    for (int i = 0; i < 2 * n_ranks; i++)
        if (y[i] == 0) y[i] = rows++;
    return rows;
}

/* Each drawn row's lowest and highest step (lo > hi: a row drawn for a
 * death alone). True when rows differ: asynchronous workers each count
 * their own steps, and each row's label then says its own, as the text
 * timeline's rows do. */
static bool row_steps(const struct span *spans, size_t n, int n_ranks, const struct window *w,
                      int64_t *lo, int64_t *hi)
{
    for (int i = 0; i < 2 * n_ranks; i++) {
        lo[i] = INT64_MAX;
        hi[i] = INT64_MIN;
    }
    for (size_t i = 0; i < n; i++) {
        const struct span *sp = &spans[i];
        if (!is_drawn(sp, n_ranks, w)) continue;
        int row = 2 * sp->rank + (sp->stream ? 1 : 0);
        if (sp->step < lo[row]) lo[row] = sp->step;
        if (sp->step > hi[row]) hi[row] = sp->step;
    }
    int first = -1;
    for (int i = 0; i < 2 * n_ranks; i++) {
        if (lo[i] > hi[i]) continue;
        if (first < 0) first = i;
        else if (lo[i] != lo[first] || hi[i] != hi[first]) return true;
    }
    return false;
}

/* A block per op kind present (so the key names each kind once), each span
 * "start_s end_s row mb step", cut to the window. */
/* Returns the number of blocks written. */
static int write_data(struct text *dat, const struct span *spans, size_t n, int n_ranks,
                      const struct window *w, const int *y, bool *has_kind)
{
    text_printf(dat, "# strata timeline data: a block per op kind (gnuplot's index), a span a "
                     "line; times in seconds, row 0 at the top\n");
    int block = 0;
    for (int k = 0; k < OP_N_KINDS; k++) {
        has_kind[k] = false;
        for (size_t i = 0; i < n; i++) {
            const struct span *s = &spans[i];
            if (s->kind != k || !is_drawn(s, n_ranks, w)) continue;
            if (!has_kind[k])
                text_printf(dat, "%s# index %d: %s: start_s end_s row microbatch step\n",
                            block ? "\n\n" : "", block, op_infos[k].name);
            has_kind[k] = true;
            text_printf(dat, "%.10g %.10g %d %d %d\n",
                        s->start_s > w->begin_s ? s->start_s : w->begin_s,
                        s->end_s < w->end_s ? s->end_s : w->end_s,
                        y[2 * s->rank + (s->stream ? 1 : 0)], (int)s->mb, (int)s->step);
        }
        if (has_kind[k]) block++;
    }
    return block;
}

/* The rows' labels as gnuplot's ytics: "rank 1 compute", and the row's
 * steps when rows differ (lo NULL: they do not). */
static void write_ytics(struct text *gp, int n_ranks, const int *y, const int64_t *lo,
                        const int64_t *hi)
{
    for (int i = 0, shown = 0; i < 2 * n_ranks; i++) {
        if (y[i] < 0) continue;
        text_printf(gp, "%s'rank %d %s", shown++ ? ", " : "", i / 2, i % 2 ? "comm" : "compute");
        if (lo && lo[i] == hi[i]) text_printf(gp, ", step %lld", (long long)lo[i]);
        else if (lo && lo[i] < hi[i])
            text_printf(gp, ", steps %lld-%lld", (long long)lo[i], (long long)hi[i]);
        text_printf(gp, "' %d", y[i]);
    }
}

static void write_script(struct text *gp, const char *name, const char *strategy, int n_ranks,
                         const struct window *w, int rows, const int *y, const int64_t *lo,
                         const int64_t *hi, const bool *has_kind, const struct gantt_marks *g,
                         const char *scenario)
{
    struct time_unit u = time_unit_for(w->end_s);
    int all_rows = rows + (g->lost_row >= 0);
    script_begin(gp, name, "timeline of a run, a row per rank and stream");
    int height = 200 + 28 * all_rows;
    char lead[160];
    snprintf(lead, sizeof lead, "Timeline of %s (white: idle)", strategy);
    script_figure_titled(gp, name, 1400, height > 4000 ? 4000 : height,
                         4 * all_rows + 12 > 100 ? 100 : 4 * all_rows + 12, lead, scenario);
    text_printf(gp, "    set xlabel 'time (%s)'\n    set xrange [%.10g:%.10g]\n", u.name,
                w->begin_s * u.per_s, w->end_s * u.per_s);
    /* Row 0 (rank 0's compute) on top, as `strata sim --timeline` prints it. */
    text_printf(gp, "    set yrange [%d.5:-0.5]\n    set ytics (", all_rows - 1);
    write_ytics(gp, n_ranks, y, lo, hi);
    if (g->lost_row >= 0) text_printf(gp, ", 'lost/redone' %d", g->lost_row);
    text_printf(gp, ")\n    set ytics nomirror\n    set grid xtics\n"
                    "    set key outside bottom center horizontal\n");
    int block = 0;
    for (int k = 0; k < OP_N_KINDS; k++) {
        if (!has_kind[k]) continue;
        char kind[32];
        int j = 0;
        for (const char *p = op_infos[k].name; *p && j < 31; p++) kind[j++] = (char)tolower(*p);
        kind[j] = '\0';
        /* A box from start to end, 0.8 rows high; the dark border parts
         * back-to-back ops (consecutive microbatches) of one compute kind.
         * Messages are too short for a fill to show inside a border: theirs
         * is their own colour, so a send and a receive look as the key says. */
        const char *border = op_infos[k].cls == OPC_COMPUTE ? "#303030" : op_infos[k].colour;
        text_printf(gp, "%s'%s.dat' index %d using (($1+$2)/2*%g):3:(($2-$1)/2*%g):(0.4) "
                        "with boxxyerror lc rgb '%s' fs solid 1.0 border lc rgb '%s' "
                        "title '%s'", block ? ", \\\n         " : "    plot ", name, block,
                    u.per_s, u.per_s, op_infos[k].colour, border, kind);
        block++;
    }
    gantt_marks_plot(gp, name, g, rows, u.per_s);
    text_printf(gp, "\n");
    script_figure_end(gp);
}

int plot_timeline(const struct span *spans, size_t n, int n_ranks, const char *strategy,
                  double t_end_s, const struct plot_opts *o, struct err *e)
{
    return plot_timeline_window(spans, n, n_ranks, strategy, 0, t_end_s, o, e);
}

int plot_timeline_window(const struct span *spans, size_t n, int n_ranks, const char *strategy,
                         double t_begin_s, double t_end_s, const struct plot_opts *o,
                         struct err *e)
{
    return plot_timeline_marked(spans, n, n_ranks, strategy, t_begin_s, t_end_s, NULL, o, e);
}

int plot_timeline_marked(const struct span *spans, size_t n, int n_ranks, const char *strategy,
                         double t_begin_s, double t_end_s, const struct timeline_marks *marks,
                         const struct plot_opts *o, struct err *e)
{
    const struct window w = {t_begin_s, t_end_s};
    if (n_ranks < 1 || !(t_end_s > t_begin_s) || !(t_begin_s >= 0))
        return err_set(e, ERR_INPUT, "timeline of %s: nothing to draw (%d ranks, %g to %g s)",
                       strategy, n_ranks, t_begin_s, t_end_s);
    int *y = malloc(sizeof *y * 2 * (size_t)n_ranks);
    int64_t *lo = malloc(sizeof *lo * 4 * (size_t)n_ranks), *hi = lo ? lo + 2 * n_ranks : NULL;
    if (!y || !lo) {
        free(y);
        free(lo);
        return err_set(e, ERR_NOMEM, "timeline of %s: out of memory", strategy);
    }
    int rows = number_rows(spans, n, n_ranks, &w, marks, y);
    if (rows == 0) {
        free(y);
        free(lo);
        return err_set(e, ERR_INPUT, "timeline of %s: no span takes time between %g and %g s "
                       "(nothing to draw)", strategy, t_begin_s, t_end_s);
    }
    /* The strategy names the file: keep it to characters safe in a name. */
    char name[96];
    int j = snprintf(name, sizeof name, "timeline-");
    for (const char *p = strategy; *p && j < (int)sizeof name - 1; p++)
        name[j++] = isalnum((unsigned char)*p) || *p == '-' || *p == '.' ? *p : '_';
    name[j] = '\0';

    struct text dat = {0}, gp = {0};
    bool has_kind[OP_N_KINDS];
    struct gantt_marks g;
    int blocks = write_data(&dat, spans, n, n_ranks, &w, y, has_kind);
    gantt_marks_data(&dat, marks, n_ranks, t_begin_s, t_end_s, y, rows, blocks, &g);
    bool is_own_steps = row_steps(spans, n, n_ranks, &w, lo, hi);
    write_script(&gp, name, strategy, n_ranks, &w, rows, y, is_own_steps ? lo : NULL, hi,
                 has_kind, &g, o->title);
    int rc = plot_render(o, name, &dat, &gp, e);
    free(y);
    free(lo);
    return rc;
}
