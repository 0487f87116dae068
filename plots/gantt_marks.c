/* Failures on the Gantt chart (gantt_marks.h). */
#include <stddef.h>
#include <stdio.h>

#include "gantt_marks.h"

/* How each layer looks and what its key says; the lost band over the ranks
 * shares the lost row's entry. Colours: Tableau 10's grey, blue, red and
 * green (those of op_infos' palette), so marks sit with the ops' colours. */
static const struct {
    const char *style;   /* gnuplot's "with ..." part after the using clause */
    const char *title;   /* NULL: no key entry */
} layers[GANTT_N_LAYERS] = {
    [GANTT_RECOVERY] = {"with boxxyerror fs transparent solid 0.45 noborder lc rgb '#79706e'",
                        "detection, relaunch, loading"},
    [GANTT_SAVE] = {"with boxxyerror fs transparent solid 0.45 noborder lc rgb '#4e79a7'",
                    "checkpoint or commit"},
    [GANTT_GONE] = {"with boxxyerror fs transparent solid 0.3 noborder lc rgb '#e15759'",
                    "rank gone"},
    [GANTT_LOST_BAND] = {"with boxxyerror lc rgb '#e15759' fs transparent pattern 4 noborder",
                         NULL},
    [GANTT_LOST] = {"with boxxyerror lc rgb '#e15759' fs pattern 4 border lc rgb '#e15759'",
                    "work lost (hatched)"},
    [GANTT_REDONE] = {"with boxxyerror lc rgb '#59a14f' lw 2 fs empty border lc rgb '#59a14f'",
                      "steps redone"},
    [GANTT_DEATH] = {"with points pt 2 ps 2.5 lw 3 lc rgb '#000000'", "rank dies"},
};

static bool overlaps(double a, double b, double begin_s, double end_s)
{
    return b > begin_s && a < end_s && b > a;
}

void gantt_marks_rows(const struct timeline_marks *m, int n_ranks, double begin_s, double end_s,
                      int *y)
{
    if (!m) return;
    for (size_t i = 0; i < m->deaths.len; i++) {
        const struct tl_death *d = &m->deaths.items[i];
        bool is_shown = d->time_s < end_s && (d->is_gone || d->time_s >= begin_s);
        if (d->rank >= 0 && d->rank < n_ranks && is_shown) y[2 * d->rank] = 0;
    }
}

/* "# index N: what" once before a block's first line. */
static void open_block(struct text *dat, struct gantt_marks *g, enum gantt_layer l, int *next,
                       const char *what)
{
    if (g->block[l] >= 0) return;
    g->block[l] = (*next)++;
    text_printf(dat, "\n\n# index %d: %s\n", g->block[l], what);
}

/* [a, b) cut to the window, as "a b" */
static void interval(struct text *dat, double a, double b, double begin_s, double end_s,
                     const char *rest)
{
    text_printf(dat, "%.10g %.10g%s\n", a > begin_s ? a : begin_s, b < end_s ? b : end_s, rest);
}

void gantt_marks_data(struct text *dat, const struct timeline_marks *m, int n_ranks,
                      double begin_s, double end_s, const int *y, int rows, int first_block,
                      struct gantt_marks *g)
{
    for (int l = 0; l < GANTT_N_LAYERS; l++) g->block[l] = -1;
    g->n_deaths = 0;
    g->lost_row = -1;
    if (!m) return;
    int next = first_block;
    for (int kind = 0; kind < 2; kind++) {
        enum gantt_layer l = kind == TL_GAP_SAVE ? GANTT_SAVE : GANTT_RECOVERY;
        for (size_t i = 0; i < m->gaps.len; i++) {
            const struct tl_gap *gap = &m->gaps.items[i];
            if ((int)gap->kind != kind || !overlaps(gap->start_s, gap->end_s, begin_s, end_s))
                continue;
            open_block(dat, g, l, &next, l == GANTT_SAVE ? "checkpoints and commits: start_s end_s"
                                                         : "recoveries: start_s end_s");
            interval(dat, gap->start_s, gap->end_s, begin_s, end_s, "");
        }
    }
    for (size_t i = 0; i < m->deaths.len; i++) {
        const struct tl_death *d = &m->deaths.items[i];
        if (!d->is_gone || d->rank < 0 || d->rank >= n_ranks || y[2 * d->rank] < 0 ||
            !overlaps(d->time_s, end_s, begin_s, end_s))
            continue;
        open_block(dat, g, GANTT_GONE, &next, "ranks gone for good: start_s end_s row");
        char row[24];
        snprintf(row, sizeof row, " %d", y[2 * d->rank]);
        interval(dat, d->time_s, end_s, begin_s, end_s, row);
    }
    /* the lost runs twice: hatched over the ranks, and on their own row */
    for (int pass = 0; pass < 3; pass++) {
        enum gantt_layer l = pass == 0 ? GANTT_LOST_BAND : pass == 1 ? GANTT_LOST : GANTT_REDONE;
        for (size_t i = 0; i < m->runs.len; i++) {
            const struct tl_step_run *r = &m->runs.items[i];
            bool is_wanted = l == GANTT_REDONE ? r->is_redo && !r->is_lost : r->is_lost;
            if (!is_wanted || !overlaps(r->start_s, r->end_s, begin_s, end_s)) continue;
            open_block(dat, g, l, &next, l == GANTT_LOST_BAND ? "lost step runs: start_s end_s"
                                         : l == GANTT_LOST    ? "lost step runs, on their row: start_s end_s"
                                                              : "redone step runs: start_s end_s");
            interval(dat, r->start_s, r->end_s, begin_s, end_s, "");
        }
    }
    if (g->block[GANTT_LOST] >= 0 || g->block[GANTT_REDONE] >= 0) g->lost_row = rows;
    for (size_t i = 0; i < m->deaths.len; i++) {
        const struct tl_death *d = &m->deaths.items[i];
        if (d->rank < 0 || d->rank >= n_ranks || y[2 * d->rank] < 0 || d->time_s < begin_s ||
            d->time_s >= end_s)
            continue;
        open_block(dat, g, GANTT_DEATH, &next, "deaths: time_s row");
        text_printf(dat, "%.10g %d\n", d->time_s, y[2 * d->rank]);
        g->n_deaths++;
    }
}

void gantt_marks_plot(struct text *gp, const char *name, const struct gantt_marks *g, int rows,
                      double per_s)
{
    for (int l = 0; l < GANTT_N_LAYERS; l++) {
        if (g->block[l] < 0) continue;
        text_printf(gp, ", \\\n         '%s.dat' index %d using ", name, g->block[l]);
        switch (l) {
        case GANTT_RECOVERY:
        case GANTT_SAVE:
        case GANTT_LOST_BAND:   /* over every rank's row: rows 0 to rows - 1 */
            text_printf(gp, "(($1+$2)/2*%g):(%g):(($2-$1)/2*%g):(%g) ", per_s, (rows - 1) / 2.0,
                        per_s, rows / 2.0);
            break;
        case GANTT_GONE:
            text_printf(gp, "(($1+$2)/2*%g):3:(($2-$1)/2*%g):(0.4) ", per_s, per_s);
            break;
        case GANTT_LOST:
        case GANTT_REDONE:
            text_printf(gp, "(($1+$2)/2*%g):(%d):(($2-$1)/2*%g):(0.3) ", per_s, g->lost_row,
                        per_s);
            break;
        case GANTT_DEATH:
            text_printf(gp, "($1*%g):2 ", per_s);
            break;
        }
        text_printf(gp, "%s ", layers[l].style);
        if (layers[l].title) text_printf(gp, "title '%s'", layers[l].title);
        else text_printf(gp, "notitle");
    }
}
