/* One pass over a trace: spans in, report out (definitions in analysis.h).
 *
 * State: per worker the spans of its current step (a rank's steps do not
 * overlap, so a step can be closed once a span of a later one arrives), its
 * busy totals and the end of its last closed step; one duration per
 * (worker, step) for the percentiles; the staleness histogram. O(ranks +
 * workers x steps), whatever the number of spans.
 *
 * Memory order matters as much as the count: a large simulation records a
 * span for one rank after another (lock-step: op k of every rank, then op
 * k + 1), so with 10^5 ranks a worker's state is cold by the time its next
 * span comes. The workers and their span lists are therefore two arrays in
 * rank order, each worker's lists a fixed slice of one arena (as many
 * places as its program has ops on that stream, which is what a step
 * records), so those visits walk memory forwards and the hardware
 * prefetcher fetches ahead; separate heap blocks per worker were one cache
 * miss a span, the bulk of a 100k-device run's time per event. */
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
     * notes the exception and close_step sorts then. A list starts as the
     * worker's slice of the arena; a step with more spans than that (only a
     * recorded trace can have one) moves it to its own heap block (is_own),
     * where it stays. */
    VEC(struct step_span) spans[PLAN_N_STREAMS];
    bool is_unsorted[PLAN_N_STREAMS];
    bool is_own[PLAN_N_STREAMS];
    int n_step_spans;               /* spans of the step being gathered */
    bool is_step_dropped;           /* one of its pushes was dropped (backup) */
    int n_ops;                      /* ops of its program: a complete step has a span each */
    int64_t samples_per_step;       /* samples its layer-0 forwards take in one step */
    int64_t steps_done;             /* complete steps */
    double last_step_end_s;         /* end of the last closed step; 0 before any */
    double compute_s, comm_s;       /* busy compute; comm not hidden under compute */
    double down_from_s;             /* it died then (analysis_set_down); INFINITY = never */
};

struct analysis {
    const struct plan *p;
    int steps;
    bool is_async;                  /* work shared out: steps end by count, not by number */
    struct worker *workers;         /* [p->n_workers] */
    struct step_span *arena;        /* the workers' span lists, in rank order */
    /* Where the job's steps end. Synchronous: step s ends when the last
     * worker has ended its step s (step_end_s[s], the maximum). Asynchronous:
     * the job's step k ends with the (k+1) n-th complete worker step of any
     * worker (n workers), so every complete worker step's end is kept. */
    double *step_end_s;             /* [steps]: synchronous */
    int *step_n_workers;            /* [steps]: synchronous: workers that completed it */
    VEC(double) worker_step_ends_s; /* asynchronous */
    int64_t n_async_steps;          /* asynchronous: complete worker steps */
    int64_t samples_dropped;        /* synchronous: complete steps' samples a server dropped */
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
    a->is_async = policy_is_async(p->policy);
    a->workers = XCALLOC(e, (size_t)p->n_workers, sizeof *a->workers);
    a->step_end_s = XCALLOC(e, (size_t)steps + 1, sizeof *a->step_end_s);
    a->step_n_workers = XCALLOC(e, (size_t)steps + 1, sizeof *a->step_n_workers);
    if (!a->workers || !a->step_end_s || !a->step_n_workers) goto fail;
    size_t n_places = 0;
    for (int w = 0; w < p->n_workers; w++) n_places += p->ranks[w].ops.len;
    a->arena = XCALLOC(e, n_places ? n_places : 1, sizeof *a->arena);
    if (!a->arena) goto fail;
    size_t next = 0;
    for (int w = 0; w < p->n_workers; w++) {
        struct worker *wk = &a->workers[w];
        const struct plan_rank *pr = &p->ranks[w];
        wk->step = -1;
        wk->down_from_s = INFINITY;
        wk->n_ops = (int)pr->ops.len;
        for (size_t i = 0; i < pr->ops.len; i++) {
            if (pr->ops.items[i].kind == OP_FORWARD && pr->ops.items[i].lo == 0)
                wk->samples_per_step += pr->ops.items[i].n_samples;
            wk->spans[pr->ops.items[i].stream].cap++;
        }
        for (int k = 0; k < PLAN_N_STREAMS; k++) {
            wk->spans[k].items = a->arena + next;
            next += wk->spans[k].cap;
        }
    }
    return a;
fail:
    analysis_free(a);
    return NULL;
}

void analysis_free(struct analysis *a)
{
    if (!a) return;
    for (int w = 0; a->workers && w < a->p->n_workers; w++)
        for (int k = 0; k < PLAN_N_STREAMS; k++)
            if (a->workers[w].is_own[k]) vec_free(&a->workers[w].spans[k]);
    free(a->workers);
    free(a->arena);
    free(a->step_end_s);
    free(a->step_n_workers);
    vec_free(&a->worker_step_ends_s);
    vec_free(&a->staleness);
    free(a);
}

int analysis_set_down(struct analysis *a, int rank, double from_s)
{
    if (rank < 0 || rank >= a->p->n_workers || !(from_s >= 0) || !isfinite(from_s))
        return ERR_INPUT;
    if (from_s < a->workers[rank].down_from_s) a->workers[rank].down_from_s = from_s;
    return 0;
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
 * compute spans, its exposed comm the union of all its spans less that. A
 * step with a span for every op of the program is complete: its end (the
 * last span's) marks the job's steps, and its samples count as applied
 * unless a push of it was dropped. A step cut short (its rank died) counts
 * its busy time only. Both streams' lists are sorted by start, so the union
 * of all is one merge pass: O(k) for the step's k spans (O(k log k) when an
 * executor recorded out of order). */
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

    if (w->n_step_spans >= w->n_ops) {
        w->steps_done++;
        if (a->is_async) {
            a->n_async_steps++;
            TRY(vec_push(&a->worker_step_ends_s, end_s));
        } else if (w->step < a->steps) {
            if (end_s > a->step_end_s[w->step]) a->step_end_s[w->step] = end_s;
            a->step_n_workers[w->step]++;
            if (w->is_step_dropped) a->samples_dropped += w->samples_per_step;
        }
    }
    w->n_step_spans = 0;
    w->is_step_dropped = false;
    w->compute_s += compute_s;
    /* the two unions round differently: never a negative hair of comm */
    w->comm_s += all_s > compute_s ? all_s - compute_s : 0;
    w->last_step_end_s = end_s;
    w->spans[STREAM_COMPUTE].len = w->spans[STREAM_COMM].len = 0;
    return 0;
}

/* Appends sp to worker w's list of stream k. Past its arena slice the list
 * moves to a heap block of its own (is_own) and grows there: 0 or ERR_NOMEM. */
static int push_span(struct worker *w, int k, struct step_span sp)
{
    if (w->spans[k].len == w->spans[k].cap && !w->is_own[k]) {
        struct step_span *slice = w->spans[k].items;
        size_t len = w->spans[k].len;
        struct step_span *own = malloc((len ? 2 * len : 4) * sizeof *own);
        if (!own) return ERR_NOMEM;
        if (len) memcpy(own, slice, len * sizeof *own);
        w->spans[k].items = own;
        w->spans[k].cap = len ? 2 * len : 4;
        w->is_own[k] = true;
    }
    return vec_push(&w->spans[k], sp);
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
    /* a push a server applied, or a lagged UPDATE (core/plan.h "Steps in
     * flight"): both apply gradients read from an older version */
    bool is_applied_push = (s->kind == OP_PUSH || s->kind == OP_UPDATE) &&
                           s->version_applied >= 0;
    if (is_applied_push && (s->version_read < 0 || s->version_applied < s->version_read ||
                            s->version_applied - s->version_read > INT_MAX - 1))
        return ERR_INPUT;   /* a push applied to a version older than it read */
    /* Servers are agents, not devices: should an executor record their
     * work, it is nobody's device time. */
    if (s->rank >= a->p->n_workers) return 0;   /* is_server: the ranks after the workers */

    struct worker *w = &a->workers[s->rank];
    if (s->step < w->step) return ERR_INPUT;   /* steps of one rank must not go back */
    if (s->step > w->step) {
        TRY(close_step(a, w));
        w->step = s->step;
    }
    struct step_span sp = {s->start_s, s->end_s};
    if (w->spans[s->stream].len && sp.start_s < w->spans[s->stream].items[w->spans[s->stream].len - 1].start_s)
        w->is_unsorted[s->stream] = true;
    TRY(push_span(w, s->stream, sp));
    w->n_step_spans++;
    if (s->kind == OP_PUSH && s->version_applied < 0) w->is_step_dropped = true;
    if (is_applied_push) TRY(add_staleness(a, s->version_applied - s->version_read));
    return 0;
}

void analysis_prefetch(const struct analysis *a, int rank)
{
#if defined(__GNUC__)
    /* the worker's lines only: reading them here to find its spans would
     * wait for the very miss this is meant to hide (its spans lie in rank
     * order in the arena, where the hardware's own prefetcher follows) */
    if (rank < 0 || rank >= a->p->n_workers) return;
    const struct worker *w = &a->workers[rank];
    __builtin_prefetch(w);
    __builtin_prefetch((const char *)(w + 1) - 1);
#else
    (void)a;
    (void)rank;
#endif
}

void analysis_prefetch_slot(const struct analysis *a, int rank, int stream)
{
#if defined(__GNUC__)
    if (rank < 0 || rank >= a->p->n_workers || stream < 0 || stream >= PLAN_N_STREAMS) return;
    const struct worker *w = &a->workers[rank];
    /* the last span (read for the order check) and the next slot: one line
     * but where the list crosses one */
    if (w->spans[stream].len) __builtin_prefetch(&w->spans[stream].items[w->spans[stream].len - 1]);
    if (w->spans[stream].len < w->spans[stream].cap)
        __builtin_prefetch(&w->spans[stream].items[w->spans[stream].len], 1);
#else
    (void)a;
    (void)rank;
    (void)stream;
#endif
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
double analysis_percentile(double *x, size_t n, int pct)
{
    size_t rank = ((size_t)pct * n + 99) / 100;
    return select_kth(x, n, rank ? rank - 1 : 0);
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The job's step times (analysis.h): mean = makespan / steps; p50 and p99
 * over the durations of the job's steps that ended, each from the end of
 * the one before (the first from 0), the last of a finished job ending at
 * the makespan. With no step ended, p50 = p99 = mean. */
static void fill_step_times(struct analysis *a, double makespan_s, struct report *r,
                            int64_t *samples_applied, int64_t *updates)
{
    const int n_workers = a->p->n_workers;
    double *ends = a->step_end_s;   /* synchronous: already one per step */
    int n = 0;
    if (a->is_async) {
        double *v = a->worker_step_ends_s.items;
        size_t count = a->worker_step_ends_s.len;
        if (count) qsort(v, count, sizeof *v, by_value);
        for (int k = 0; k < a->steps && (size_t)(k + 1) * n_workers <= count; k++)
            ends[n++] = v[(size_t)(k + 1) * n_workers - 1];
        /* each worker step is a work item, a replica's share of a global
         * batch: B/N samples (exactly S x B when all S x N are done; the
         * shares of an uneven batch differ by one sample) */
        *samples_applied = a->n_async_steps * a->p->batch / n_workers;
        *updates = (int64_t)a->n_applied;   /* each push is its own update */
    } else {
        /* a step is the global batch, less what a server dropped (backup);
         * with steps in flight (core/plan.h) the last n_grad_slots - 1
         * steps' gradients are still in flight when the run stops */
        while (n < a->steps && a->step_n_workers[n] >= n_workers) n++;
        int64_t in_flight = n >= a->p->n_grad_slots ? a->p->n_grad_slots - 1 : n;
        *samples_applied = (int64_t)(n - in_flight) * a->p->batch - a->samples_dropped;
        *updates = n - in_flight;   /* one update of the global batch a step */
    }
    r->step_time_s.mean = a->steps > 0 ? makespan_s / a->steps : 0;
    r->step_time_s.p50 = r->step_time_s.p99 = r->step_time_s.mean;
    if (n == 0) return;
    if (n == a->steps) ends[n - 1] = fmax(ends[n - 1], makespan_s);
    /* durations in place, back to front */
    for (int k = n - 1; k > 0; k--) ends[k] -= ends[k - 1];
    r->step_time_s.p50 = analysis_percentile(ends, (size_t)n, 50);
    r->step_time_s.p99 = analysis_percentile(ends, (size_t)n, 99);
}

int analysis_worker_busy(struct analysis *a, int w, double *compute_s, double *comm_s,
                         int64_t *steps)
{
    if (w < 0 || w >= a->p->n_workers) return ERR_INPUT;
    /* its last step is still open until a later span or finish closes it;
     * closing it now leaves finish nothing of it to add */
    TRY(close_step(a, &a->workers[w]));
    *compute_s = a->workers[w].compute_s;
    *comm_s = a->workers[w].comm_s;
    *steps = a->workers[w].steps_done;
    return 0;
}

/* The breakdown of busy sums over the workers' time device_s (> 0), which
 * sum exactly 1 */
static void set_shares(struct report *r, double compute_s, double comm_s, double down_s,
                       double device_s)
{
    r->breakdown.compute = compute_s / device_s;
    r->breakdown.comm = comm_s / device_s;
    r->breakdown.down = down_s / device_s;
    r->breakdown.idle = 1 - r->breakdown.compute - r->breakdown.comm - r->breakdown.down;
    if (r->breakdown.idle < 0) {   /* a rounding hair, when nothing waited */
        r->breakdown.idle = 0;
        r->breakdown.comm = 1 - r->breakdown.compute - r->breakdown.down;
    }
}

void analysis_reshare(struct report *r, double makespan_s)
{
    double compute_s = 0, comm_s = 0, down_s = 0;
    for (int i = 0; i < r->n_per_rank; i++) {
        struct rank_time *t = &r->per_rank[i];
        t->idle_s = fmax(makespan_s - t->compute_s - t->comm_s - t->down_s, 0);
        compute_s += t->compute_s;
        comm_s += t->comm_s;
        down_s += t->down_s;
    }
    r->breakdown.compute = r->breakdown.comm = r->breakdown.idle = r->breakdown.down = 0;
    if (makespan_s > 0 && r->n_per_rank > 0)
        set_shares(r, compute_s, comm_s, down_s, makespan_s * r->n_per_rank);
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

    int64_t samples_applied = 0, updates = 0;
    fill_step_times(a, makespan_s, r, &samples_applied, &updates);
    r->updates = updates;

    /* Device time, per worker and over all of them. A worker's time runs
     * from 0 to the end of the job, less the time it was done (asynchronous:
     * after its last step, with no work left) and split into compute, comm,
     * down (dead) and idle. A run that took no time has no shares: every
     * share stays 0 rather than 0/0. */
    double compute_s = 0, comm_s = 0, down_s = 0, device_s = 0, bubble = 0;
    int n_stages = 0;
    for (int w = 0; w < p->n_workers; w++) {
        const struct worker *wk = &a->workers[w];
        bool is_dead = wk->down_from_s < makespan_s;
        double down = is_dead ? makespan_s - wk->down_from_s : 0;
        double active_s = a->is_async && !is_dead && wk->steps_done > 0 ? wk->last_step_end_s
                                                                        : makespan_s;
        per_rank[w] = (struct rank_time){
            .rank = w,
            .compute_s = wk->compute_s,
            .comm_s = wk->comm_s,
            .down_s = down,
            .idle_s = fmax(active_s - wk->compute_s - wk->comm_s - down, 0),
            .steps = wk->steps_done,
        };
        compute_s += wk->compute_s;
        comm_s += wk->comm_s;
        down_s += down;
        device_s += active_s;
        if (makespan_s > 0 && holds_a_stage(p, w)) {
            bubble += 1 - wk->compute_s / makespan_s;
            n_stages++;
        }
    }
    r->throughput_samples_per_s = 0;
    r->breakdown.compute = r->breakdown.comm = r->breakdown.idle = r->breakdown.down = 0;
    r->bubble_fraction = 0;
    if (makespan_s > 0 && device_s > 0) {
        r->throughput_samples_per_s = (double)samples_applied / makespan_s;
        set_shares(r, compute_s, comm_s, down_s, device_s);
        r->bubble_fraction = n_stages ? bubble / n_stages : 0;
    }
    r->samples_applied = samples_applied;

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
