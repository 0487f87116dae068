/* The text timeline: a grid of columns of equal time, each showing the op
 * that covers most of it. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "timeline_text.h"

int timeline_width(void)
{
    const char *env = getenv("COLUMNS");
    int w = env ? atoi(env) : 0;
    struct winsize ws;
    if (w <= 0 && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
        w = ws.ws_col;
    return w > 20 ? w : 100;
}

/* The span's letter (op_infos[].letters): the second one, where its kind
 * has one, for odd microbatches. */
static char letter(const struct span *s)
{
    if (s->kind < 0 || s->kind >= OP_N_KINDS) return '?';
    const char *letters = op_infos[s->kind].letters;
    return s->mb > 0 && s->mb % 2 && letters[1] ? letters[1] : letters[0];
}

/* The kinds a key lists: those a span of the chart takes time in, so the
 * key never names a letter the chart cannot show (communication is free on
 * the ideal cluster: no S or R there). */
static bool is_in_key(int k, const struct span *spans, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((int)spans[i].kind == k && spans[i].end_s > spans[i].start_s) return true;
    return false;
}

/* "F/f forward, B/b backward of even/odd microbatches,\nU update, S send,
 * ..., . idle": the kinds with a letter per microbatch parity, the other
 * compute kinds, then the communication kinds (as each rank's compute row
 * comes before its comm row), each part in ORDER OP. */
static void print_key(FILE *out, const struct span *spans, size_t n)
{
    bool is_first = true, is_line_end = false;
    for (int part = 0; part < 3; part++) {
        for (int k = 0; k < OP_N_KINDS; k++) {
            const struct op_info *o = &op_infos[k];
            bool has_pair = o->letters[1] != '\0';
            int its_part = has_pair ? 0 : o->cls == OPC_COMPUTE ? 1 : 2;
            if (its_part != part || !is_in_key(k, spans, n)) continue;
            if (is_line_end) fputs(",\n", out);
            else if (!is_first) fputs(", ", out);
            if (has_pair) fprintf(out, "%c/%c %s", o->letters[0], o->letters[1], o->label);
            else fprintf(out, "%c %s", o->letters[0], o->label);
            is_first = is_line_end = false;
        }
        /* the pairs' words end their line, when more kinds follow */
        if (part == 0 && !is_first) {
            fputs(" of even/odd microbatches", out);
            is_line_end = true;
        }
    }
    fputs(is_first ? ". idle" : ", . idle", out);
}

void timeline_print(FILE *out, const struct span *spans, size_t n, int n_ranks, double t_end_s,
                    int cols, int max_rows, const char *unit)
{
    const struct timeline_view v = {.begin_s = 0, .end_s = t_end_s, .dead_rank = -1};
    timeline_print_view(out, spans, n, n_ranks, &v, cols, max_rows, unit);
}

/* Each row's lowest and highest step among the spans it draws. */
struct row_steps {
    int64_t lo, hi;
};

/* True when some drawn rows cover other steps than the first drawn row:
 * then each row says its own (asynchronous workers). */
static bool rows_differ(const struct row_steps *st, const char *used, int n_rows)
{
    int first = -1;
    for (int r = 0; r < n_rows; r++) {
        if (used[r] != 1) continue;   /* a row drawn for a death alone has no steps */
        if (first < 0) first = r;
        else if (st[r].lo != st[first].lo || st[r].hi != st[first].hi) return true;
    }
    return false;
}

/* Paints [a, b) (seconds from the window's start) on a row of the grid with
 * ch, in each column where it covers more than what is there: the op (or
 * mark) that covers most of a column shows. */
static void paint(char *grid, double *cover, int row, int width, double per_col, double a,
                  double b, char ch)
{
    int c0 = (int)(a / per_col), c1 = (int)(b / per_col);
    for (int c = c0 < 0 ? 0 : c0; c <= c1 && c < width; c++) {
        double lo = c * per_col, hi = lo + per_col;
        double part = (b < hi ? b : hi) - (a > lo ? a : lo);
        size_t k = (size_t)row * (size_t)width + (size_t)c;
        if (part > cover[k]) {
            cover[k] = part;
            grid[k] = ch;
        }
    }
}

/* What the failure marks put in a window, for the key. */
struct marks_seen {
    int n_deaths, death_rank;   /* death_rank: -1 when several ranks died */
    bool has_gone, has_recovery, has_save, has_lost;
};

/* The column of time t (seconds from the window's start), or -1 outside. */
static int column_of(double t, double per_col, int width)
{
    if (t < 0) return -1;
    int c = (int)(t / per_col);
    return c < width ? c : -1;
}

/* The gaps on every drawn row, then the deaths on their ranks' compute rows
 * (over the gaps: a death starts a recovery). A rank gone for good shows
 * 'x' after its death wherever it runs nothing. */
static void paint_marks(const struct timeline_marks *m, const struct timeline_view *v,
                        int n_ranks, char *grid, double *cover, char *used, int width,
                        double per_col, struct marks_seen *seen)
{
    int n_rows = 2 * n_ranks;
    for (size_t i = 0; i < m->deaths.len; i++) {
        const struct tl_death *d = &m->deaths.items[i];
        /* 2: drawn for the death alone (no step of its own to say) */
        if (d->rank >= 0 && d->rank < n_ranks && d->time_s < v->end_s && !used[2 * d->rank])
            used[2 * d->rank] = 2;
    }
    for (size_t i = 0; i < m->gaps.len; i++) {
        const struct tl_gap *g = &m->gaps.items[i];
        if (g->end_s <= v->begin_s || g->start_s >= v->end_s) continue;
        bool is_save = g->kind == TL_GAP_SAVE;
        for (int row = 0; row < n_rows; row++)
            if (used[row])
                paint(grid, cover, row, width, per_col, g->start_s - v->begin_s,
                      g->end_s - v->begin_s, is_save ? '=' : '#');
        if (is_save) seen->has_save = true;
        else seen->has_recovery = true;
    }
    for (size_t i = 0; i < m->deaths.len; i++) {
        const struct tl_death *d = &m->deaths.items[i];
        if (d->rank < 0 || d->rank >= n_ranks || d->time_s >= v->end_s) continue;
        char *row = grid + (size_t)(2 * d->rank) * (size_t)width;
        int c = column_of(d->time_s - v->begin_s, per_col, width);
        if (d->is_gone) {   /* both its rows: it takes part in nothing any more */
            for (int stream = 0; stream < 2; stream++) {
                char *g = row + (size_t)stream * (size_t)width;
                if (stream && !used[2 * d->rank + 1]) continue;
                for (int j = c < 0 ? 0 : c + 1; j < width; j++)
                    if (g[j] == '.' || g[j] == '#' || g[j] == '=') g[j] = 'x';
            }
            seen->has_gone = true;
        }
        if (c < 0) continue;   /* died before the window: only its 'x' shows */
        row[c] = 'X';
        seen->death_rank = seen->n_deaths++ == 0 || seen->death_rank == d->rank ? d->rank : -1;
    }
}

/* The row under the ranks: '-' where a lost step run covers most of a
 * column, '+' where a redone one does, ' ' elsewhere. False when no lost
 * run is in the window (no row then). */
static bool lost_row(const struct timeline_marks *m, const struct timeline_view *v, int width,
                     double per_col, char *row, double *cover)
{
    bool has_lost = false;
    memset(row, ' ', (size_t)width);
    for (int c = 0; c < width; c++) cover[c] = 0;
    for (size_t i = 0; i < m->runs.len; i++) {
        const struct tl_step_run *r = &m->runs.items[i];
        if (!r->is_lost && !r->is_redo) continue;
        if (r->end_s <= v->begin_s || r->start_s >= v->end_s) continue;
        if (r->is_lost) has_lost = true;
        paint(row, cover, 0, width, per_col, r->start_s - v->begin_s, r->end_s - v->begin_s,
              r->is_lost ? '-' : '+');
    }
    return has_lost;
}

static void print_marks_key(FILE *out, const struct marks_seen *seen)
{
    const char *const sep_first = ",\n";
    const char *sep = sep_first;
    if (seen->n_deaths == 1 || (seen->n_deaths > 1 && seen->death_rank >= 0))
        fprintf(out, "%sX rank %d dies", sep, seen->death_rank), sep = ", ";
    else if (seen->n_deaths > 1)
        fprintf(out, "%sX a rank dies", sep), sep = ", ";
    if (seen->has_gone) fprintf(out, "%sx dead (gone for good)", sep), sep = ", ";
    if (seen->has_recovery)
        fprintf(out, "%s# detection + relaunch + loading", sep), sep = ", ";
    if (seen->has_save) fprintf(out, "%s= checkpoint or commit", sep), sep = ", ";
    if (seen->has_lost)
        fprintf(out, "%srow lost/redone: - work a failure threw away, + the same steps run "
                     "again (a redone step is drawn twice)", sep == sep_first ? sep : ",\n");
}

void timeline_print_view(FILE *out, const struct span *spans, size_t n, int n_ranks,
                         const struct timeline_view *v, int cols, int max_rows, const char *unit)
{
    double len_s = v->end_s - v->begin_s;
    if (!(len_s > 0) || n == 0) {
        fputs("  (nothing takes time: no timeline to draw)\n", out);
        return;
    }
    /* Rows: rank r stream s is row 2r+s; a row with no span is not drawn. */
    int n_rows = 2 * n_ranks;
    const int label = 16;
    int width = cols - label - 2 > 10 ? cols - label - 2 : 10;
    double per_col = len_s / width;
    char *grid = malloc((size_t)n_rows * (size_t)width);
    double *cover = calloc((size_t)n_rows * (size_t)width, sizeof *cover);
    char *used = calloc((size_t)n_rows, 1);
    struct row_steps *st = calloc((size_t)n_rows, sizeof *st);
    char *lost = malloc((size_t)width);
    double *lost_cover = malloc((size_t)width * sizeof *lost_cover);
    bool has_dead = false;
    struct marks_seen seen = {.death_rank = -1};
    if (!grid || !cover || !used || !st || !lost || !lost_cover) goto out;
    memset(grid, '.', (size_t)n_rows * (size_t)width);
    for (size_t i = 0; i < n; i++) {
        const struct span *s = &spans[i];
        if (s->rank < 0 || s->rank >= n_ranks || s->end_s <= s->start_s) continue;
        if (s->end_s <= v->begin_s || s->start_s >= v->end_s) continue;   /* outside the window */
        int row = 2 * s->rank + (s->stream ? 1 : 0);
        if (!used[row] || s->step < st[row].lo) st[row].lo = s->step;
        if (!used[row] || s->step > st[row].hi) st[row].hi = s->step;
        used[row] = 1;
        paint(grid, cover, row, width, per_col, s->start_s - v->begin_s, s->end_s - v->begin_s,
              letter(s));
    }
    if (v->marks) {
        paint_marks(v->marks, v, n_ranks, grid, cover, used, width, per_col, &seen);
        seen.has_lost = lost_row(v->marks, v, width, per_col, lost, lost_cover);
    }
    /* The dead rank: its idle columns after the death are 'x', so its row
     * is drawn even when it ran nothing in the window. */
    if (v->dead_rank >= 0 && v->dead_rank < n_ranks && v->dead_from_s < v->end_s) {
        int row = 2 * v->dead_rank;
        double from = v->dead_from_s - v->begin_s;
        int c0 = from > 0 ? (int)(from / per_col) : 0;
        for (int c = c0; c < width; c++) {
            char *g = &grid[(size_t)row * (size_t)width + (size_t)c];
            if (*g == '.') *g = 'x';
        }
        if (!used[row]) used[row] = 2;   /* drawn, with no steps of its own */
        has_dead = true;
    }
    fprintf(out, "timeline, one column = %.3g %s (", per_col,
            per_col == 1 && !strcmp(unit, "units") ? "unit" : unit);
    print_key(out, spans, n);
    if (has_dead) fprintf(out, ", x rank %d dead", v->dead_rank);
    print_marks_key(out, &seen);
    fputs("):\n", out);
    bool say_steps = rows_differ(st, used, n_rows);
    int shown = 0, hidden = 0;
    for (int row = 0; row < n_rows; row++) {
        if (!used[row]) continue;
        if (shown == max_rows) {
            hidden++;
            continue;
        }
        char name[32];
        snprintf(name, sizeof name, "rank %d %s", row / 2, row % 2 ? "comm" : "compute");
        fprintf(out, "  %-*s|%.*s|", label - 2, name, width, grid + (size_t)row * (size_t)width);
        bool has_steps = say_steps && used[row] == 1;
        if (has_steps && st[row].lo == st[row].hi)
            fprintf(out, " step %lld", (long long)st[row].lo);
        else if (has_steps)
            fprintf(out, " steps %lld-%lld", (long long)st[row].lo, (long long)st[row].hi);
        fputc('\n', out);
        shown++;
    }
    if (hidden) fprintf(out, "  ... %d more rows\n", hidden);
    if (seen.has_lost) fprintf(out, "  %-*s|%.*s|\n", label - 2, "lost/redone", width, lost);
out:
    free(grid);
    free(cover);
    free(used);
    free(st);
    free(lost);
    free(lost_cover);
}

struct span *timeline_spans_of_unit_run(const struct plan *p, const struct plan_times *t,
                                        size_t *n)
{
    *n = (size_t)plan_n_ops(p);
    struct span *spans = calloc(*n ? *n : 1, sizeof *spans);
    if (!spans) return NULL;
    size_t k = 0;
    for (int r = 0; r < p->n_ranks; r++)
        for (size_t i = 0; i < p->ranks[r].ops.len; i++) {
            const struct op *op = &p->ranks[r].ops.items[i];
            spans[k++] = (struct span){
                .rank = r, .stream = (int16_t)op->stream, .kind = (int16_t)op->kind,
                .op = (int32_t)i, .mb = op->mb, .lo = op->lo, .hi = op->hi, .peer = op->peer,
                .start_s = t->start[r][i], .end_s = t->end[r][i], .bytes = op->bytes,
                .flops = op->flops, .version_read = -1, .version_applied = -1};
        }
    return spans;
}
