/* Failures on a run's timeline (timeline_marks.h): recording, and laying the
 * failure-free spans over the step runs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "timeline_marks.h"

/* Spans laid at most: the trace's own bound (bench/run.c keeps 10^6). */
#define TL_MAX_LAID 1000000

/* vec_push with the bound and the message every recorder shares. */
#define TL_PUSH(m, v, x, e)                                                              \
    ((v)->len >= TL_MAX_ENTRIES ? ((m)->n_dropped++, 0)                                  \
     : vec_push((v), (x)) < 0   ? err_set((e), ERR_NOMEM, "timeline marks: out of memory") \
                                : 0)

int timeline_marks_add_run(struct timeline_marks *m, struct tl_step_run r, struct err *e)
{
    return m ? TL_PUSH(m, &m->runs, r, e) : 0;
}

int timeline_marks_add_gap(struct timeline_marks *m, enum tl_gap_kind kind, double start_s,
                           double end_s, struct err *e)
{
    if (!m || !(end_s > start_s)) return 0;   /* a free phase leaves no gap to draw */
    struct tl_gap g = {kind, start_s, end_s};
    return TL_PUSH(m, &m->gaps, g, e);
}

int timeline_marks_add_death(struct timeline_marks *m, int rank, double time_s, bool is_gone,
                             struct err *e)
{
    struct tl_death d = {rank, time_s, is_gone};
    return m ? TL_PUSH(m, &m->deaths, d, e) : 0;
}

void timeline_marks_lose_since(struct timeline_marks *m, size_t from)
{
    if (!m) return;
    for (size_t i = from; i < m->runs.len; i++) m->runs.items[i].is_lost = true;
}

bool timeline_marks_has_runs(const struct timeline_marks *m)
{
    return m && m->runs.len > 0;
}

bool timeline_marks_any(const struct timeline_marks *m)
{
    if (!m) return false;
    if (m->deaths.len || m->gaps.len) return true;
    for (size_t i = 0; i < m->runs.len; i++)
        if (m->runs.items[i].is_lost) return true;
    return false;
}

/* When each rank of spans[0..n) stops drawing: its first death with
 * is_gone, else INFINITY. [n_ranks] (*n_ranks set), caller frees; NULL when
 * out of memory. */
static double *gone_from_s(const struct timeline_marks *m, const struct span *spans, size_t n,
                           int32_t *n_ranks)
{
    *n_ranks = 0;
    for (size_t i = 0; i < n; i++)
        if (spans[i].rank >= *n_ranks) *n_ranks = spans[i].rank + 1;
    double *t = malloc(((size_t)*n_ranks + 1) * sizeof *t);
    if (!t) return NULL;
    for (int32_t r = 0; r < *n_ranks; r++) t[r] = INFINITY;
    for (size_t i = 0; i < m->deaths.len; i++) {
        const struct tl_death *d = &m->deaths.items[i];
        if (d->is_gone && d->rank >= 0 && d->rank < *n_ranks && d->time_s < t[d->rank])
            t[d->rank] = d->time_s;
    }
    return t;
}

int timeline_marks_lay(struct timeline_marks *m, const struct span *spans, size_t n,
                       struct err *e)
{
    m->laid.len = 0;
    /* The spans by step (a counting sort of their indices), so each run
     * visits only its own step's: O(spans + runs + laid). */
    int32_t n_steps = 0;
    for (size_t i = 0; i < n; i++)
        if (spans[i].step >= n_steps) n_steps = spans[i].step + 1;
    size_t *first = calloc((size_t)n_steps + 1, sizeof *first);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int32_t n_ranks;
    double *gone_s = gone_from_s(m, spans, n, &n_ranks);
    int rc = 0;
    if (!first || !order || !gone_s) {
        rc = err_set(e, ERR_NOMEM, "timeline marks: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (spans[i].step >= 0) first[spans[i].step + 1]++;
    for (int32_t k = 0; k < n_steps; k++) first[k + 1] += first[k];
    {
        size_t *next = calloc((size_t)n_steps + 1, sizeof *next);
        if (!next) {
            rc = err_set(e, ERR_NOMEM, "timeline marks: out of memory");
            goto out;
        }
        memcpy(next, first, ((size_t)n_steps + 1) * sizeof *next);
        for (size_t i = 0; i < n; i++)
            if (spans[i].step >= 0) order[next[spans[i].step]++] = i;
        free(next);
    }
    for (size_t r = 0; r < m->runs.len && rc == 0; r++) {
        const struct tl_step_run *run = &m->runs.items[r];
        if (run->step < 0 || run->step >= n_steps) continue;
        for (size_t j = first[run->step]; j < first[run->step + 1]; j++) {
            struct span s = spans[order[j]];
            s.start_s = run->start_s + (s.start_s - run->from_s) * run->scale;
            s.end_s = run->start_s + (s.end_s - run->from_s) * run->scale;
            /* a lost run ends at the failure that cut it (or at its own end):
             * only what ran before */
            if (run->is_lost && s.start_s >= run->end_s) continue;
            if (run->is_lost && s.end_s > run->end_s) s.end_s = run->end_s;
            double gone = s.rank >= 0 ? gone_s[s.rank] : INFINITY;
            if (s.start_s >= gone) continue;
            if (s.end_s > gone) s.end_s = gone;
            if (m->laid.len >= TL_MAX_LAID) {
                m->n_dropped++;
                continue;
            }
            if (vec_push(&m->laid, s) < 0)
                rc = err_set(e, ERR_NOMEM, "timeline marks: out of memory");
        }
    }
out:
    free(first);
    free(order);
    free(gone_s);
    return rc;
}

void timeline_marks_release(struct timeline_marks *m)
{
    if (!m) return;
    vec_free(&m->runs);
    vec_free(&m->gaps);
    vec_free(&m->deaths);
    vec_free(&m->laid);
    m->n_dropped = 0;
}
