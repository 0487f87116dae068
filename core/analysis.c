/* One pass over a trace: spans in, report out (definitions in analysis.h).
 *
 * State: per worker the spans of its current step (a rank's steps do not
 * overlap, so a step can be closed once a span of a later one arrives), its
 * busy totals and the end of its last closed step; one duration per
 * (worker, step) for the percentiles; the staleness histogram. O(ranks +
 * workers x steps), whatever the number of spans. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "plan_memory.h"

struct step_span {
    double start_s, end_s;
};

struct worker {
    int32_t step;                   /* the step being gathered; -1 before the first span */
    /* That step's spans, one list per stream. Executors record a stream's ops
     * in order, so each list is usually sorted by start already; is_unsorted
     * notes the exception and close_step sorts then. */
    VEC(struct step_span) spans[PLAN_N_STREAMS];
    bool is_unsorted[PLAN_N_STREAMS];
    double last_step_end_s;         /* end of the last closed step; 0 before any */
    double compute_s, comm_s;       /* busy compute; comm not hidden under compute */
};

struct analysis {
    const struct plan *p;
    int steps;
    struct worker *workers;         /* [p->n_workers] */
    VEC(double) step_times_s;       /* one per closed (worker, step) */
    VEC(int64_t) staleness;         /* [k]: applied pushes of staleness k */
    int64_t n_applied;
    double staleness_sum;
    int64_t staleness_max;
    bool is_finished;
};

/* A worker that runs only some of the model's layers is a pipeline or model
 * stage: its idle compute is the bubble. A data-parallel replica runs them
 * all, and its idle time is waiting, not a bubble. */
static bool holds_a_stage(const struct plan *p, int w)
{
    const struct plan_rank *pr = &p->ranks[w];
    int lo = p->wl->n_layers, hi = 0;
    for (size_t i = 0; i < pr->ops.len; i++)
        if (pr->ops.items[i].kind == OP_FORWARD) {
            if (pr->ops.items[i].lo < lo) lo = pr->ops.items[i].lo;
            if (pr->ops.items[i].hi > hi) hi = pr->ops.items[i].hi;
        }
    return lo < hi && (lo > 0 || hi < p->wl->n_layers);
}

struct analysis *analysis_create(const struct plan *p, int steps, struct err *e)
{
    if (steps < 0) {
        err_set(e, ERR_INPUT, "analysis: %d steps is not allowed (0 or more)", steps);
        return NULL;
    }
    struct analysis *a = XCALLOC(e, 1, sizeof *a);
    if (!a) return NULL;
    a->p = p;
    a->steps = steps;
    a->workers = XCALLOC(e, (size_t)p->n_workers, sizeof *a->workers);
    if (!a->workers) goto fail;
    for (int w = 0; w < p->n_workers; w++) a->workers[w].step = -1;
    return a;
fail:
    analysis_free(a);
    return NULL;
}

void analysis_free(struct analysis *a)
{
    if (!a) return;
    for (int w = 0; a->workers && w < a->p->n_workers; w++)
        for (int k = 0; k < PLAN_N_STREAMS; k++) vec_free(&a->workers[w].spans[k]);
    free(a->workers);
    vec_free(&a->step_times_s);
    vec_free(&a->staleness);
    free(a);
}

static int by_start(const void *x, const void *y)
{
    const struct step_span *a = x, *b = y;
    return (a->start_s > b->start_s) - (a->start_s < b->start_s);
}

/* Length of the union of sorted spans s[0..n); 0 for none. */
static double union_s(const struct step_span *s, size_t n)
{
    double sum = 0, lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || s[i].start_s > hi) {
            sum += hi - lo;
            lo = s[i].start_s;
            hi = s[i].end_s;
        } else if (s[i].end_s > hi) {
            hi = s[i].end_s;
        }
    }
    return sum + hi - lo;
}

/* Closes worker w's current step: its compute busy time is the union of its
 * compute spans, its exposed comm the union of all its spans less that, its
 * duration the step's last end less the previous step's. Both streams'
 * lists are sorted by start, so the union of all is one merge pass: O(k)
 * for the step's k spans (O(k log k) when an executor recorded out of order). */
static int close_step(struct analysis *a, struct worker *w)
{
    const struct step_span *c = w->spans[STREAM_COMPUTE].items, *m = w->spans[STREAM_COMM].items;
    size_t nc = w->spans[STREAM_COMPUTE].len, nm = w->spans[STREAM_COMM].len;
    if (nc + nm == 0) return 0;
    for (int k = 0; k < PLAN_N_STREAMS; k++)
        if (w->is_unsorted[k]) {
            qsort(w->spans[k].items, w->spans[k].len, sizeof *w->spans[k].items, by_start);
            w->is_unsorted[k] = false;
        }

    double compute_s = union_s(c, nc);
    double all_s = 0, lo = 0, hi = 0, end_s = 0;
    size_t i = 0, j = 0;
    for (size_t k = 0; k < nc + nm; k++) {
        const struct step_span *s = j == nm || (i < nc && c[i].start_s <= m[j].start_s) ? &c[i++]
                                                                                        : &m[j++];
        if (s->end_s > end_s) end_s = s->end_s;
        if (k == 0 || s->start_s > hi) {
            all_s += hi - lo;
            lo = s->start_s;
            hi = s->end_s;
        } else if (s->end_s > hi) {
            hi = s->end_s;
        }
    }
    all_s += hi - lo;

    TRY(vec_push(&a->step_times_s, end_s - w->last_step_end_s));
    w->compute_s += compute_s;
    /* the two unions round differently: never a negative hair of comm */
    w->comm_s += all_s > compute_s ? all_s - compute_s : 0;
    w->last_step_end_s = end_s;
    w->spans[STREAM_COMPUTE].len = w->spans[STREAM_COMM].len = 0;
    return 0;
}

/* An applied PUSH: one more count in the histogram, grown as needed. The
 * caller has checked 0 <= k <= INT_MAX - 1 (the report's count is an int). */
static int add_staleness(struct analysis *a, int64_t k)
{
    if ((size_t)k >= a->staleness.len) {
        TRY(vec_reserve(&a->staleness, (size_t)k + 1));
        memset(a->staleness.items + a->staleness.len, 0,
               ((size_t)k + 1 - a->staleness.len) * sizeof *a->staleness.items);
        a->staleness.len = (size_t)k + 1;
    }
    a->staleness.items[k]++;
    a->n_applied++;
    a->staleness_sum += (double)k;
    if (k > a->staleness_max) a->staleness_max = k;
    return 0;
}

int analysis_add(struct analysis *a, const struct span *s)
{
    if (a->is_finished) return ERR_RUN;   /* finish closed every step already */
    if (s->rank < 0 || s->rank >= a->p->n_ranks || s->stream < 0 ||
        s->stream >= PLAN_N_STREAMS || s->step < 0 || !isfinite(s->start_s) ||
        !isfinite(s->end_s) || s->end_s < s->start_s)
        return ERR_INPUT;
    bool is_applied_push = s->kind == OP_PUSH && s->version_applied >= 0;
    if (is_applied_push && (s->version_read < 0 || s->version_applied < s->version_read ||
                            s->version_applied - s->version_read > INT_MAX - 1))
        return ERR_INPUT;   /* a push applied to a version older than it read */
    /* Servers are agents, not devices: should an executor record their
     * work, it is nobody's device time. */
    if (a->p->ranks[s->rank].is_server) return 0;

    struct worker *w = &a->workers[s->rank];
    if (s->step < w->step) return ERR_INPUT;   /* steps of one rank must not go back */
    if (s->step > w->step) {
        TRY(close_step(a, w));
        w->step = s->step;
    }
    struct step_span sp = {s->start_s, s->end_s};
    if (w->spans[s->stream].len && sp.start_s < w->spans[s->stream].items[w->spans[s->stream].len - 1].start_s)
        w->is_unsorted[s->stream] = true;
    TRY(vec_push(&w->spans[s->stream], sp));
    if (is_applied_push) TRY(add_staleness(a, s->version_applied - s->version_read));
    return 0;
}

/* The k-th smallest of x[0..n) (0-based), rearranging x: Hoare's
 * quickselect with a median-of-three pivot, O(n) on average. Sorting all
 * worker x step durations (4 million for 4,096 ranks x 1,000 steps) only
 * for two percentiles cost a third of a large run. */
static double select_kth(double *x, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        double a = x[lo], b = x[mid], c = x[hi];
        double pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        size_t i = lo, j = hi;
        while (i <= j) {
            while (x[i] < pivot) i++;
            while (x[j] > pivot) j--;
            if (i <= j) {
                double t = x[i];
                x[i] = x[j];
                x[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j && j != (size_t)-1) hi = j;
        else if (k >= i) lo = i;
        else return x[k];
    }
    return x[k];
}

/* Nearest-rank percentile of x[0..n), n > 0: the smallest value with at
 * least pct% of the values at or below it, the ceil(pct n / 100)-th
 * smallest. No interpolation, so it is always a step time that happened. */
static double percentile(double *x, size_t n, int pct)
{
    size_t rank = ((size_t)pct * n + 99) / 100;
    return select_kth(x, n, rank ? rank - 1 : 0);
}

int analysis_finish(struct analysis *a, double makespan_s, struct report *r, struct err *e)
{
    const struct plan *p = a->p;
    if (!isfinite(makespan_s) || makespan_s < 0)
        return err_set(e, ERR_INPUT, "analysis: makespan %g s is not allowed (0 or more)",
                       makespan_s);
    for (int w = 0; w < p->n_workers; w++)
        if (close_step(a, &a->workers[w]) < 0)
            return err_set(e, ERR_NOMEM, "analysis: out of memory keeping step times");
    a->is_finished = true;

    struct rank_time *per_rank = calloc((size_t)p->n_workers, sizeof *per_rank);
    int64_t *histogram = a->staleness.len ? malloc(a->staleness.len * sizeof *histogram) : NULL;
    if (!per_rank || (a->staleness.len && !histogram)) {
        free(per_rank);
        free(histogram);
        return err_set(e, ERR_NOMEM, "analysis: out of memory filling the report");
    }

    /* Step times: every worker's every step */
    size_t n = a->step_times_s.len;
    double *t = a->step_times_s.items;
    r->step_time_s.mean = r->step_time_s.p50 = r->step_time_s.p99 = 0;
    if (n > 0) {
        double sum = 0;
        for (size_t i = 0; i < n; i++) sum += t[i];
        r->step_time_s.mean = sum / (double)n;
        r->step_time_s.p50 = percentile(t, n, 50);
        r->step_time_s.p99 = percentile(t, n, 99);
    }

    /* Device time, per worker and over all of them. A run that took no time
     * has no shares: everything stays 0 rather than 0/0. */
    double compute_s = 0, comm_s = 0, bubble = 0;
    int n_stages = 0;
    for (int w = 0; w < p->n_workers; w++) {
        const struct worker *wk = &a->workers[w];
        per_rank[w] = (struct rank_time){
            .rank = w,
            .compute_s = wk->compute_s,
            .comm_s = wk->comm_s,
            .idle_s = fmax(makespan_s - wk->compute_s - wk->comm_s, 0),
        };
        compute_s += wk->compute_s;
        comm_s += wk->comm_s;
        if (makespan_s > 0 && holds_a_stage(p, w)) {
            bubble += 1 - wk->compute_s / makespan_s;
            n_stages++;
        }
    }
    r->throughput_samples_per_s = 0;
    r->breakdown.compute = r->breakdown.comm = r->breakdown.idle = 0;
    r->bubble_fraction = 0;
    if (makespan_s > 0) {
        double device_s = makespan_s * p->n_workers;
        r->throughput_samples_per_s = (double)a->steps * p->batch / makespan_s;
        r->breakdown.compute = compute_s / device_s;
        r->breakdown.comm = comm_s / device_s;
        r->breakdown.idle = 1 - r->breakdown.compute - r->breakdown.comm;   /* sum exactly 1 */
        if (r->breakdown.idle < 0) {   /* a rounding hair, when nothing waited */
            r->breakdown.idle = 0;
            r->breakdown.comm = 1 - r->breakdown.compute;
        }
        r->bubble_fraction = n_stages ? bubble / n_stages : 0;
    }

    free(r->per_rank);
    r->per_rank = per_rank;
    r->n_per_rank = p->n_workers;

    if (histogram) memcpy(histogram, a->staleness.items, a->staleness.len * sizeof *histogram);
    free(r->staleness.histogram);
    r->staleness.histogram = histogram;
    r->staleness.n_histogram = (int)a->staleness.len;
    r->staleness.max = a->staleness_max;
    r->staleness.mean = a->n_applied ? a->staleness_sum / (double)a->n_applied : 0;

    struct plan_memory m;
    plan_memory_max(p, &m);
    r->memory_bytes_per_device.params = m.params;
    r->memory_bytes_per_device.grads = m.grads;
    r->memory_bytes_per_device.optimizer = m.optimizer;
    r->memory_bytes_per_device.activations = m.activations;
    r->memory_bytes_per_device.peak = m.peak;
    return 0;
}
