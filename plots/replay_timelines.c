/* replay-timelines.*: the measured and the replayed timeline of a replay
 * (bench/replay.h) as two Gantt panels, one above the other on one time
 * axis, a row per rank and stream: where the replay's schedule parts from
 * the run's shows as boxes that no longer line up. */
#include <ctype.h>
#include <stdio.h>

#include "../core/plan.h"
#include "render.h"
#include "script.h"

static bool is_drawn(const struct span *s, int n_ranks, double t_end_s)
{
    return s->rank >= 0 && s->rank < n_ranks && s->kind >= 0 && s->kind < OP_N_KINDS &&
           s->stream >= 0 && s->stream < PLAN_N_STREAMS && s->end_s > s->start_s &&
           s->start_s < t_end_s;
}

/* A block per op kind present in spans (row = 2 rank + stream); returns
 * the blocks written, from *block on, their kinds in kinds[]. */
static int write_panel(struct text *dat, const char *panel, const struct span *spans, size_t n,
                       int n_ranks, double t_end_s, int *block, int *kinds)
{
    int n_blocks = 0;
    for (int k = 0; k < OP_N_KINDS; k++) {
        bool has_kind = false;
        for (size_t i = 0; i < n; i++) {
            const struct span *s = &spans[i];
            if (s->kind != k || !is_drawn(s, n_ranks, t_end_s)) continue;
            if (!has_kind)
                text_printf(dat, "%s# index %d: %s %s: start_s end_s row\n", *block ? "\n\n" : "",
                            *block, panel, op_infos[k].name);
            has_kind = true;
            text_printf(dat, "%.10g %.10g %d\n", s->start_s, s->end_s < t_end_s ? s->end_s : t_end_s,
                        2 * (int)s->rank + s->stream);
        }
        if (has_kind) {
            kinds[n_blocks++] = k;
            (*block)++;
        }
    }
    return n_blocks;
}

static void plot_panel(struct text *gp, const char *name, const char *panel, int first_block,
                       const int *kinds, int n_kinds, struct time_unit u)
{
    text_printf(gp, "    set title '%s'\n", panel);
    for (int b = 0; b < n_kinds; b++) {
        char kind[32];
        int j = 0;
        for (const char *p = op_infos[kinds[b]].name; *p && j < 31; p++) kind[j++] = (char)tolower(*p);
        kind[j] = '\0';
        text_printf(gp, "%s'%s.dat' index %d using (($1+$2)/2*%g):3:(($2-$1)/2*%g):(0.4) "
                        "with boxxyerror lc rgb '%s' fs solid 1.0 border lc rgb '#303030' "
                        "title '%s'", b ? ", \\\n         " : "    plot ", name, first_block + b,
                    u.per_s, u.per_s, op_infos[kinds[b]].colour, kind);
    }
    text_printf(gp, "%s\n", n_kinds ? "" : "    plot NaN notitle");
}

int plot_replay_timelines(const struct span *measured, size_t n_measured,
                          const struct span *replayed, size_t n_replayed, int n_ranks,
                          double t_end_s, const struct plot_opts *o, struct err *e)
{
    const char *name = "replay-timelines";
    if (n_ranks < 1 || !(t_end_s > 0))
        return err_set(e, ERR_INPUT, "replay timelines: nothing to draw (%d ranks, up to %g s)",
                       n_ranks, t_end_s);
    /* Rows up to the last rank with a span: a simulated trace's servers
     * (the last ranks) record none, and empty rows would read as idle. */
    int shown = 0;
    for (size_t i = 0; i < n_measured; i++)
        if (measured[i].rank + 1 > shown) shown = measured[i].rank + 1;
    for (size_t i = 0; i < n_replayed; i++)
        if (replayed[i].rank + 1 > shown) shown = replayed[i].rank + 1;
    if (shown > 0 && shown < n_ranks) n_ranks = shown;
    struct text dat = {0}, gp = {0};
    text_printf(&dat, "# strata replay timelines: a block per panel and op kind (gnuplot's "
                      "index), a span a line; times in seconds, row 2 rank + stream\n");
    int block = 0, kinds_m[OP_N_KINDS], kinds_r[OP_N_KINDS];
    int n_m = write_panel(&dat, "measured", measured, n_measured, n_ranks, t_end_s, &block, kinds_m);
    int n_r = write_panel(&dat, "replayed", replayed, n_replayed, n_ranks, t_end_s, &block, kinds_r);
    struct time_unit u = time_unit_for(t_end_s);
    int rows = 2 * n_ranks;
    script_begin(&gp, name, "measured and replayed timeline, one panel each");
    int height = 260 + 2 * 26 * rows;
    script_figure_begin(&gp, name, 1400, height > 4000 ? 4000 : height,
                        8 * rows + 16 > 120 ? 120 : 8 * rows + 16);
    script_title(&gp, "multiplot layout 2,1 title", "Measured and replayed timeline (white: idle)",
                 o->title);
    text_printf(&gp, "    set xlabel 'time (%s)'\n    set xrange [0:%.10g]\n"
                     "    set yrange [%d.5:-0.5]\n    set ytics (",
                u.name, t_end_s * u.per_s, rows - 1);
    for (int i = 0; i < rows; i++)
        text_printf(&gp, "%s'rank %d %s' %d", i ? ", " : "", i / 2, i % 2 ? "comm" : "compute", i);
    text_printf(&gp, ")\n    set ytics nomirror\n    set grid xtics\n"
                     "    set key outside right top vertical\n");
    plot_panel(&gp, name, "measured", 0, kinds_m, n_m, u);
    plot_panel(&gp, name, "replayed", n_m, kinds_r, n_r, u);
    text_printf(&gp, "    unset multiplot\n");
    script_figure_end(&gp);
    return plot_render(o, name, &dat, &gp, e);
}
