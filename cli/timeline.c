#include <ctype.h>
#include <stdlib.h>

#include "timeline.h"

static char op_letter(const struct op *op)
{
    char c = op->kind == OP_FORWARD ? 'F' : op->kind == OP_BACKWARD ? 'B' : 'U';
    return op->mb > 0 && op->mb % 2 ? (char)tolower(c) : c;
}

void timeline_print(FILE *out, const struct plan *p, const struct plan_times *t, int max_cols,
                    int max_ranks)
{
    if (t->makespan <= 0) {
        fputs("  (every op is free at unit cost: nothing to draw)\n", out);
        return;
    }
    int cols = t->makespan < max_cols ? (int)t->makespan : max_cols;
    double unit_per_col = t->makespan / cols;
    fprintf(out, "timeline at unit cost (F/f forward, B/b backward of even/odd microbatches, "
                 ". idle; one column = %.3g unit%s):\n",
            unit_per_col, unit_per_col == 1 ? "" : "s");
    char *row = malloc((size_t)cols + 1);
    if (!row) return;
    int shown = 0;
    for (int r = 0; r < p->n_workers && shown < max_ranks; r++, shown++) {
        const struct plan_rank *pr = &p->ranks[r];
        for (int c = 0; c < cols; c++) row[c] = '.';
        row[cols] = '\0';
        /* A column shows the op running at its midpoint: compute ops of one
         * stream never overlap, so at most one does. */
        for (size_t i = 0; i < pr->ops.len; i++) {
            const struct op *op = &pr->ops.items[i];
            if (op->stream != STREAM_COMPUTE || t->end[r][i] <= t->start[r][i]) continue;
            for (int c = (int)(t->start[r][i] / unit_per_col); c < cols; c++) {
                double mid = (c + 0.5) * unit_per_col;
                if (mid >= t->end[r][i]) break;
                if (mid >= t->start[r][i]) row[c] = op_letter(op);
            }
        }
        fprintf(out, "  rank %-4d |%s|\n", r, row);
    }
    if (p->n_workers > shown) fprintf(out, "  ... %d more ranks\n", p->n_workers - shown);
    free(row);
}
