/* The duration sources of a replay (replay_durations.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/straggler_detect.h"
#include "replay_durations.h"

static bool is_compute(int kind) { return op_infos[kind].cls == OPC_COMPUTE; }

void replay_table_free(struct replay_table *t)
{
    if (!t) return;
    for (int r = 0; t->dur_s && r < t->n_ranks; r++) free(t->dur_s[r]);
    free(t->dur_s);
    free(t->n_steps);
    free(t->n_ops);
    memset(t, 0, sizeof *t);
}

/* t sized for n_steps[r] x n_ops[r] per rank (already set), every entry -1. */
static int table_alloc(struct replay_table *t, struct err *e)
{
    t->dur_s = XCALLOC(e, (size_t)t->n_ranks, sizeof *t->dur_s);
    if (!t->dur_s) return ERR_NOMEM;
    for (int r = 0; r < t->n_ranks; r++) {
        size_t n = (size_t)t->n_steps[r] * (size_t)t->n_ops[r];
        if (!n) continue;
        if (!(t->dur_s[r] = XCALLOC(e, n, sizeof **t->dur_s))) return ERR_NOMEM;
        for (size_t i = 0; i < n; i++) t->dur_s[r][i] = -1;
    }
    return 0;
}

/* An empty table shaped like `like`. */
static int table_like(const struct replay_table *like, struct replay_table *t, struct err *e)
{
    memset(t, 0, sizeof *t);
    t->n_ranks = like->n_ranks;
    t->n_steps = XCALLOC(e, (size_t)t->n_ranks + 1, sizeof *t->n_steps);
    t->n_ops = XCALLOC(e, (size_t)t->n_ranks + 1, sizeof *t->n_ops);
    if (!t->n_steps || !t->n_ops) return ERR_NOMEM;
    memcpy(t->n_steps, like->n_steps, (size_t)t->n_ranks * sizeof *t->n_steps);
    memcpy(t->n_ops, like->n_ops, (size_t)t->n_ranks * sizeof *t->n_ops);
    return table_alloc(t, e);
}

double replay_table_get(const struct replay_table *t, int rank, int64_t step, int op)
{
    if (rank < 0 || rank >= t->n_ranks || step < 0 || step >= t->n_steps[rank] || op < 0 ||
        op >= t->n_ops[rank])
        return -1;
    return t->dur_s[rank][step * t->n_ops[rank] + op];
}

/* A compute op waits only for ops of its own rank (its stream's previous
 * op, its deps, the rank's previous step). When its span starts later than
 * the last of those ended, the rank let that time pass (host overhead, the
 * process descheduled): its own time, not the network's, so the op's
 * duration takes it in (Lumos, MLSys 2025, replays such gaps as well). In a
 * simulated trace compute starts when it can, so this adds nothing. */
static int add_start_gaps(const struct span *spans, size_t n, const struct plan *p,
                          struct replay_table *t, struct err *e)
{
    int rc = 0;
    for (int r = 0; r < t->n_ranks && rc == 0; r++) {
        int n_ops = t->n_ops[r], n_steps = t->n_steps[r];
        size_t cells = (size_t)n_ops * (size_t)n_steps;
        if (!cells) continue;
        double *end_s = XCALLOC(e, cells, sizeof *end_s);
        double *start_s = XCALLOC(e, cells, sizeof *start_s);
        double *step_end_s = XCALLOC(e, (size_t)n_steps, sizeof *step_end_s);
        if (!end_s || !start_s || !step_end_s) rc = ERR_NOMEM;
        for (size_t i = 0; rc == 0 && i < cells; i++) end_s[i] = start_s[i] = NAN;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            const struct span *s = &spans[i];
            if (s->rank != r || s->op < 0) continue;
            size_t k = (size_t)s->step * n_ops + s->op;
            end_s[k] = s->end_s;
            start_s[k] = s->start_s;
            step_end_s[s->step] = fmax(step_end_s[s->step], s->end_s);
        }
        const struct plan_rank *pr = &p->ranks[r];
        for (int st = 0; rc == 0 && st < n_steps; st++)
            for (int i = 0; i < n_ops; i++) {
                size_t k = (size_t)st * n_ops + i;
                const struct op *o = &pr->ops.items[i];
                if (!is_compute(o->kind) || isnan(start_s[k]) || t->dur_s[r][k] < 0) continue;
                double ready_s = st > 0 ? step_end_s[st - 1] : 0;
                bool is_known = true;
                for (int j = i - 1; j >= 0; j--)   /* the previous op of its stream */
                    if (pr->ops.items[j].stream == o->stream) {
                        ready_s = fmax(ready_s, end_s[(size_t)st * n_ops + j]);
                        is_known &= !isnan(end_s[(size_t)st * n_ops + j]);
                        break;
                    }
                for (int d = 0; d < o->n_deps; d++) {
                    double dep_end_s = end_s[(size_t)st * n_ops + pr->deps.items[o->dep_first + d]];
                    ready_s = fmax(ready_s, dep_end_s);
                    is_known &= !isnan(dep_end_s);
                }
                if (is_known && start_s[k] > ready_s) t->dur_s[r][k] += start_s[k] - ready_s;
            }
        free(end_s);
        free(start_s);
        free(step_end_s);
    }
    return rc;
}

/* A server's span i (op -1): an UPDATE of its shard, or a PUSH of it
 * received from a worker, on a server rank. */
static int check_server_span(const struct span *s, size_t i, size_t n_spans,
                             const struct plan *p, const char *name, struct err *e)
{
    const struct plan_rank *pr = s->rank >= 0 && s->rank < p->n_ranks ? &p->ranks[s->rank] : NULL;
    if (!pr || !pr->is_server || (s->kind != OP_UPDATE && s->kind != OP_PUSH))
        return err_set(e, ERR_INPUT, "%s: span %zu is op -1 (a server's update or received "
                       "push) of rank %d, but that rank of the plan its scenario builds (%s) is "
                       "no parameter server, or the span is %s, not UPDATE or PUSH: the trace is "
                       "of another plan", name, i, (int)s->rank, p->strategy,
                       op_infos[s->kind].name);
    if (s->kind == OP_PUSH && (s->peer < 0 || s->peer >= p->n_workers))
        return err_set(e, ERR_INPUT, "%s: span %zu, a push server rank %d received, is from "
                       "rank %d, which is no worker of the plan (0 to %d)", name, i,
                       (int)s->rank, (int)s->peer, p->n_workers - 1);
    if (s->kind == OP_UPDATE && (size_t)s->step >= n_spans)   /* at most its workers' pushes */
        return err_set(e, ERR_INPUT, "%s: span %zu, an update of server rank %d, is its "
                       "update %d, but the trace holds %zu spans: it is damaged", name, i,
                       (int)s->rank, (int)s->step, n_spans);
    if (s->lo != pr->shard_lo || s->hi != pr->shard_hi)
        return err_set(e, ERR_INPUT, "%s: span %zu, an update of server rank %d, is of layers "
                       "[%d,%d), but the server's shard is [%d,%d): the trace is of another plan",
                       name, i, (int)s->rank, (int)s->lo, (int)s->hi, pr->shard_lo, pr->shard_hi);
    return 0;
}

int replay_table_from_spans(const struct span *spans, size_t n, const struct plan *p,
                            int64_t max_steps, const char *name, struct replay_table *t,
                            struct err *e)
{
    memset(t, 0, sizeof *t);
    t->n_ranks = p->n_ranks;
    t->n_steps = XCALLOC(e, (size_t)p->n_ranks + 1, sizeof *t->n_steps);
    t->n_ops = XCALLOC(e, (size_t)p->n_ranks + 1, sizeof *t->n_ops);
    if (!t->n_steps || !t->n_ops) return ERR_NOMEM;
    for (int r = 0; r < p->n_ranks; r++) t->n_ops[r] = (int)p->ranks[r].ops.len;
    /* First pass: check every span against the plan, and size the steps. */
    for (size_t i = 0; i < n; i++) {
        const struct span *s = &spans[i];
        if (s->op == -1) {
            TRY(check_server_span(s, i, n, p, name, e));
            continue;
        }
        if (s->rank < 0 || s->rank >= p->n_ranks || s->op < 0 || s->op >= t->n_ops[s->rank])
            return err_set(e, ERR_INPUT, "%s: span %zu is op %d of rank %d, but the plan its "
                           "scenario builds (%s) has no such op: the trace is of another plan",
                           name, i, (int)s->op, (int)s->rank, p->strategy);
        const struct op *o = &p->ranks[s->rank].ops.items[s->op];
        if ((int)o->kind != s->kind || o->lo != s->lo || o->hi != s->hi)
            return err_set(e, ERR_INPUT, "%s: span %zu (rank %d, op %d) is %s of layers [%d,%d), "
                           "but that op of the plan its scenario builds is %s of [%d,%d): the "
                           "trace is of another plan", name, i, (int)s->rank, (int)s->op,
                           op_infos[s->kind].name, (int)s->lo, (int)s->hi,
                           op_infos[o->kind].name, o->lo, o->hi);
        if (s->step >= max_steps)
            return err_set(e, ERR_INPUT, "%s: span %zu (rank %d, op %d) is of step %d, but the "
                           "run had %lld steps a rank at most", name, i, (int)s->rank,
                           (int)s->op, (int)s->step, (long long)max_steps);
        if (s->step >= t->n_steps[s->rank]) t->n_steps[s->rank] = s->step + 1;
    }
    TRY(table_alloc(t, e));
    for (size_t i = 0; i < n; i++) {
        const struct span *s = &spans[i];
        if (s->op >= 0 && is_compute(s->kind))
            t->dur_s[s->rank][(size_t)s->step * t->n_ops[s->rank] + s->op] = s->end_s - s->start_s;
    }
    return add_start_gaps(spans, n, p, t, e);
}

/* first[r][step * n_ops + op]: the index of the span of that op, SIZE_MAX
 * for none yet; a second span of it is refused. */
static int index_spans(const struct span *spans, size_t n, const struct replay_table *t,
                       size_t **first, const char *name, struct err *e)
{
    for (int r = 0; r < t->n_ranks; r++) {
        size_t cells = (size_t)t->n_steps[r] * (size_t)t->n_ops[r];
        if (cells && !(first[r] = XCALLOC(e, cells, sizeof **first))) return ERR_NOMEM;
        for (size_t k = 0; k < cells; k++) first[r][k] = SIZE_MAX;
    }
    for (size_t i = 0; i < n; i++) {
        const struct span *s = &spans[i];
        if (s->op < 0) continue;   /* a server's: replay_updates keeps them apart */
        size_t *at = &first[s->rank][(size_t)s->step * t->n_ops[s->rank] + s->op];
        if (*at != SIZE_MAX)
            return err_set(e, ERR_INPUT, "%s: span %zu repeats span %zu (rank %d, step %d, op %d, "
                           "%s): a run writes each op of a step once, so the trace is edited or "
                           "damaged", name, i, *at, (int)s->rank, (int)s->step, (int)s->op,
                           op_infos[s->kind].name);
        *at = i;
    }
    return 0;
}

/* Every op of worker r in each step it has spans of, and with synchronous
 * workers in each of the job's steps. */
static int check_rank_complete(const struct plan *p, int r, int64_t steps,
                               const struct replay_table *t, const size_t *first,
                               const char *name, struct err *e)
{
    int n_ops = t->n_ops[r];
    if (!n_ops) return 0;
    if (!policy_is_async(p->policy) && t->n_steps[r] < steps)
        return err_set(e, ERR_INPUT, "%s: rank %d's spans cover %d of the run's %lld steps, "
                       "but %s's workers each run every step: the trace is cut short or edited "
                       "(a replay needs every op of every step)", name, r, t->n_steps[r],
                       (long long)steps, p->strategy);
    for (int st = 0; st < t->n_steps[r]; st++)
        for (int i = 0; i < n_ops; i++) {
            if (first[(size_t)st * n_ops + i] != SIZE_MAX) continue;
            const struct op *o = &p->ranks[r].ops.items[i];
            return err_set(e, ERR_INPUT, "%s: rank %d has no span of op %d (%s of layers "
                           "[%d,%d)) in step %d, though its spans go on to step %d: the trace "
                           "is cut short or edited (a replay needs every op of every step)",
                           name, r, i, op_infos[o->kind].name, o->lo, o->hi, st,
                           t->n_steps[r] - 1);
        }
    return 0;
}

int replay_check_complete(const struct span *spans, size_t n, const struct plan *p,
                          int64_t steps, const struct replay_table *t, const char *name,
                          struct err *e)
{
    size_t **first = XCALLOC(e, (size_t)t->n_ranks + 1, sizeof *first);
    if (!first) return ERR_NOMEM;
    int rc = index_spans(spans, n, t, first, name, e);
    for (int r = 0; rc == 0 && r < p->n_workers && r < t->n_ranks; r++)
        rc = check_rank_complete(p, r, steps, t, first[r], name, e);
    for (int r = 0; r < t->n_ranks; r++) free(first[r]);
    free(first);
    return rc;
}

/* A push as its server received it (op -1 PUSH spans): server, worker,
 * round, and when the gradient was in. */
struct receipt {
    int32_t server, worker;
    int64_t round;
    double end_s;
};

static int by_receipt(const void *pa, const void *pb)
{
    const struct receipt *a = pa, *b = pb;
    if (a->server != b->server) return a->server < b->server ? -1 : 1;
    if (a->worker != b->worker) return a->worker < b->worker ? -1 : 1;
    return (a->round > b->round) - (a->round < b->round);
}

/* Worker op i, a PUSH to `server`: its index among the rank's pushes to
 * that server in a step (j), and their count (n): its round in step s is
 * s * n + j, as real/worker.c numbers them. O(ops of the rank). */
static void push_slot(const struct plan_rank *pr, int i, int server, int *j, int *n)
{
    *j = *n = 0;
    for (size_t k = 0; k < pr->ops.len; k++) {
        const struct op *o = &pr->ops.items[k];
        if (o->kind != OP_PUSH || o->peer != server) continue;
        if ((int)k < i) (*j)++;
        (*n)++;
    }
}

int replay_comm_from_spans(const struct span *spans, size_t n, const struct plan *p,
                           const struct replay_table *shape, struct replay_table *comm,
                           struct err *e)
{
    TRY(table_like(shape, comm, e));
    VEC(struct receipt) got = {0};
    for (size_t i = 0; i < n; i++) {
        const struct span *s = &spans[i];
        if (s->op == -1 && s->kind == OP_PUSH &&
            vec_push(&got, ((struct receipt){s->rank, s->peer, s->step, s->end_s})) < 0) {
            vec_free(&got);
            return err_set(e, ERR_NOMEM, "replay: out of memory collecting received pushes");
        }
    }
    if (got.len) qsort(got.items, got.len, sizeof *got.items, by_receipt);   /* NULL when none */
    for (size_t i = 0; i < n; i++) {
        const struct span *s = &spans[i];
        if (s->op < 0 || is_compute(s->kind)) continue;
        double d = s->end_s - s->start_s;
        if (s->kind == OP_PUSH) {
            /* A worker's PUSH span ends when it next tested the send, often
             * after the server had applied it and answered the pull behind
             * it: the server's receipt says when it arrived. Without one
             * (older traces), the network's. */
            int j, n_push;
            push_slot(&p->ranks[s->rank], s->op, s->peer, &j, &n_push);
            struct receipt key = {s->peer, s->rank, (int64_t)s->step * n_push + j, 0};
            const struct receipt *r = got.len ? bsearch(&key, got.items, got.len,
                                                        sizeof *got.items, by_receipt)
                                              : NULL;
            d = r ? fmax(0, r->end_s - s->start_s) : -1;
        }
        comm->dur_s[s->rank][(size_t)s->step * comm->n_ops[s->rank] + s->op] = d;
    }
    vec_free(&got);
    return 0;
}

/* --- servers' updates ---------------------------------------------------------- */

static int by_value(const void *pa, const void *pb);

void replay_updates_free(struct replay_updates *u)
{
    if (!u) return;
    for (int r = 0; u->secs && r < u->n_ranks; r++) vec_free(&u->secs[r]);
    free(u->secs);
    free(u->median_s);
    memset(u, 0, sizeof *u);
}

int replay_updates_from_spans(const struct span *spans, size_t n, const struct plan *p,
                              struct replay_updates *u, struct err *e)
{
    memset(u, 0, sizeof *u);
    u->n_ranks = p->n_ranks;
    u->secs = XCALLOC(e, (size_t)p->n_ranks + 1, sizeof *u->secs);
    u->median_s = XCALLOC(e, (size_t)p->n_ranks + 1, sizeof *u->median_s);
    if (!u->secs || !u->median_s) return ERR_NOMEM;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct span *s = &spans[i];
        if (s->op != -1 || s->kind != OP_UPDATE) continue;
        /* the step is the update's index (below n: checked): a gap, a span
         * the writer dropped, takes the server's median */
        while (rc == 0 && u->secs[s->rank].len <= (size_t)s->step)
            rc = vec_push(&u->secs[s->rank], -1.0);
        if (rc == 0) u->secs[s->rank].items[s->step] = s->end_s - s->start_s;
        u->has_any = true;
    }
    for (int r = 0; r < p->n_ranks && rc == 0; r++) {
        const double *secs = u->secs[r].items;
        size_t len = u->secs[r].len;
        u->median_s[r] = -1;
        double *sorted = len ? XCALLOC(e, len, sizeof *sorted) : NULL;
        if (len && !sorted) return ERR_NOMEM;
        size_t m = 0;
        for (size_t k = 0; k < len; k++)
            if (secs[k] >= 0) sorted[m++] = secs[k];
        if (m) {
            qsort(sorted, m, sizeof *sorted, by_value);
            u->median_s[r] = sorted[(m - 1) / 2];
        }
        free(sorted);
    }
    return rc < 0 ? err_set(e, ERR_NOMEM, "replay: out of memory collecting server updates") : 0;
}

double replay_updates_get(const struct replay_updates *u, int rank, int64_t k)
{
    if (rank < 0 || rank >= u->n_ranks || k < 0) return -1;
    if ((size_t)k < u->secs[rank].len && u->secs[rank].items[k] >= 0)
        return u->secs[rank].items[k];
    return u->median_s[rank];
}

/* --- typical durations ------------------------------------------------------- */

struct entry {
    int kind, lo, hi, mb, step, rank, op;
    double dur_s;
};

/* By the op's identity, then the step, then the duration. */
static int by_op_step_dur(const void *pa, const void *pb)
{
    const struct entry *a = pa, *b = pb;
    int d[] = {a->kind - b->kind, a->lo - b->lo, a->hi - b->hi, a->mb - b->mb, a->step - b->step};
    for (size_t i = 0; i < sizeof d / sizeof *d; i++)
        if (d[i]) return d[i] < 0 ? -1 : 1;
    return (a->dur_s > b->dur_s) - (a->dur_s < b->dur_s);
}

static bool same_op_step(const struct entry *a, const struct entry *b)
{
    return a->kind == b->kind && a->lo == b->lo && a->hi == b->hi && a->mb == b->mb &&
           a->step == b->step;
}

static int by_value(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* The lower median of one rank's op over the steps that have it. */
static double median_over_steps(const struct replay_table *t, int r, int op, double *scratch)
{
    int n = 0;
    for (int s = 0; s < t->n_steps[r]; s++) {
        double d = t->dur_s[r][(size_t)s * t->n_ops[r] + op];
        if (d >= 0) scratch[n++] = d;
    }
    if (!n) return -1;
    qsort(scratch, (size_t)n, sizeof *scratch, by_value);
    return scratch[(n - 1) / 2];
}

/* Each group of sorted entries [g, end): one op identity in one step,
 * durations ascending. *end_out: the group's end; the return: whether more
 * than one rank runs it. */
static bool next_group(const struct entry *xs, size_t n, size_t g, size_t *end_out)
{
    size_t end = g + 1;
    bool is_shared = false;
    while (end < n && same_op_step(&xs[g], &xs[end])) {
        is_shared |= xs[end].rank != xs[g].rank;
        end++;
    }
    *end_out = end;
    return is_shared;
}

/* The lower median of the group's durations over the ranks is_slow does not
 * mark (over all of them when it marks every one); the group is sorted. */
static double group_typical_s(const struct entry *xs, size_t g, size_t end, const bool *is_slow)
{
    size_t n_fair = 0;
    for (size_t k = g; k < end; k++) n_fair += !is_slow[xs[k].rank];
    if (!n_fair) return xs[g + (end - g - 1) / 2].dur_s;
    size_t want = (n_fair - 1) / 2;
    for (size_t k = g; k < end; k++)
        if (!is_slow[xs[k].rank] && want-- == 0) return xs[k].dur_s;
    return xs[g].dur_s;   /* not reached */
}

/* Each rank's pace: the median over its shared ops of its duration over the
 * median of the other ranks' at the same op and step (core/straggler_detect.h's
 * ratio, as a real report's "stragglers" has it: with 2 of 3 ranks slow, the
 * lower median over all three was a slow one's, and neither was slow),
 * NaN for a rank with no shared op; is_slow: at least STRAGGLER_SLOW_RATIO. */
static int rank_paces(const struct entry *xs, size_t n, int n_ranks, double *pace,
                      bool *is_slow, struct err *e)
{
    VEC(double) *ratios = XCALLOC(e, (size_t)n_ranks + 1, sizeof *ratios);
    double *durs = XCALLOC(e, n + 1, sizeof *durs);   /* one group's, ascending */
    int rc = ratios && durs ? 0 : ERR_NOMEM;
    for (size_t g = 0, end; g < n && rc == 0; g = end) {
        if (!next_group(xs, n, g, &end)) continue;
        for (size_t k = g; k < end; k++) durs[k - g] = xs[k].dur_s;
        for (size_t k = g; k < end && rc == 0; k++) {
            double others_s = straggler_median_of_others(durs, end - g, k - g);
            if (others_s > 0) rc = vec_push(&ratios[xs[k].rank], xs[k].dur_s / others_s);
        }
    }
    free(durs);
    if (!ratios) return err_set(e, ERR_NOMEM, "replay: out of memory measuring the ranks' pace");
    for (int r = 0; r < n_ranks; r++) {
        pace[r] = NAN;
        if (rc == 0 && ratios[r].len) {
            qsort(ratios[r].items, ratios[r].len, sizeof(double), by_value);
            pace[r] = ratios[r].items[(ratios[r].len - 1) / 2];
        }
        vec_free(&ratios[r]);
    }
    free(ratios);
    if (rc < 0) return err_set(e, ERR_NOMEM, "replay: out of memory measuring the ranks' pace");
    for (int r = 0; r < n_ranks; r++) is_slow[r] = pace[r] >= STRAGGLER_SLOW_RATIO;
    return 0;
}

int replay_table_typical(const struct replay_table *in, const struct plan *p,
                         struct replay_table *out, struct err *e)
{
    TRY(table_like(in, out, e));
    VEC(struct entry) all = {0};
    int max_steps = 1;
    for (int r = 0; r < in->n_ranks; r++) {
        if (in->n_steps[r] > max_steps) max_steps = in->n_steps[r];
        for (int s = 0; s < in->n_steps[r]; s++)
            for (int i = 0; i < in->n_ops[r]; i++) {
                double d = in->dur_s[r][(size_t)s * in->n_ops[r] + i];
                if (d < 0) continue;
                const struct op *o = &p->ranks[r].ops.items[i];
                struct entry x = {(int)o->kind, o->lo, o->hi, o->mb, s, r, i, d};
                if (vec_push(&all, x) < 0) {
                    vec_free(&all);
                    return err_set(e, ERR_NOMEM, "replay: out of memory making durations typical");
                }
            }
    }
    double *scratch = XCALLOC(e, (size_t)max_steps, sizeof *scratch);
    double *pace = XCALLOC(e, (size_t)in->n_ranks + 1, sizeof *pace);
    bool *is_slow = XCALLOC(e, (size_t)in->n_ranks + 1, sizeof *is_slow);
    int rc = scratch && pace && is_slow ? 0 : ERR_NOMEM;
    if (all.len) qsort(all.items, all.len, sizeof *all.items, by_op_step_dur);
    if (rc == 0) rc = rank_paces(all.items, all.len, in->n_ranks, pace, is_slow, e);
    /* A consistently slow rank keeps its own durations over its pace: its
     * work as it ran, alongside the others (what it took from them in
     * cores, caches and memory bandwidth, what noise it had), without the
     * slowness. Taking the others' durations instead would lend it times
     * measured while it was slow: while a slow rank sleeps, waits or
     * computes less, the others run faster than they would beside a
     * typical one (measured on a loaded 2-core machine: 2 ranks, a 3x slow
     * rank, its peer's ops 2-4x shorter than in the run without it). The
     * other ranks take
     * each op's lower median over the ranks that are not slow, or, for an
     * op one rank alone runs, that rank's over the steps. */
    for (size_t g = 0, end; rc == 0 && g < all.len; g = end) {
        bool is_shared = next_group(all.items, all.len, g, &end);
        double shared_s = is_shared ? group_typical_s(all.items, g, end, is_slow) : -1;
        for (size_t k = g; k < end; k++) {
            const struct entry *x = &all.items[k];
            double d = is_slow[x->rank] ? x->dur_s / pace[x->rank]
                       : is_shared      ? shared_s
                                        : median_over_steps(in, x->rank, x->op, scratch);
            out->dur_s[x->rank][(size_t)x->step * out->n_ops[x->rank] + x->op] = d;
        }
    }
    free(scratch);
    free(pace);
    free(is_slow);
    vec_free(&all);
    return rc;
}

int replay_table_one_typical(const struct replay_table *measured,
                             const struct replay_table *typical, int r,
                             struct replay_table *out, struct err *e)
{
    TRY(table_like(measured, out, e));
    for (int k = 0; k < out->n_ranks; k++) {
        const struct replay_table *from = k == r ? typical : measured;
        size_t n = (size_t)out->n_steps[k] * (size_t)out->n_ops[k];
        if (n) memcpy(out->dur_s[k], from->dur_s[k], n * sizeof *out->dur_s[k]);
    }
    return 0;
}

/* --- per-layer rates --------------------------------------------------------- */

static int rate_class(int kind)
{
    switch ((enum op_kind)kind) {
    case OP_FORWARD: return RATE_FORWARD;
    case OP_BACKWARD:
    case OP_BACKWARD_INPUT:
    case OP_BACKWARD_WEIGHT: return RATE_BACKWARD;
    case OP_UPDATE: return RATE_UPDATE;
    default: return -1;
    }
}

/* What layer l weighs in an op of class c: its share of the op's work. */
static double layer_weight(const struct workload *wl, int c, int l)
{
    const struct layer *L = &wl->layers[l];
    return c == RATE_FORWARD ? L->fwd_flops_per_sample
           : c == RATE_BACKWARD ? L->bwd_flops_per_sample
                                : (double)L->params;
}

void replay_rates_free(struct replay_rates *r)
{
    if (!r) return;
    for (int i = 0; r->by_layer && i < RATE_N_CLASSES * r->n_layers; i++) vec_free(&r->by_layer[i]);
    free(r->by_layer);
    for (int c = 0; c < RATE_N_CLASSES; c++) vec_free(&r->pooled[c]);
    memset(r, 0, sizeof *r);
}

int replay_rates_build(const struct replay_table *t, const struct plan *p,
                       struct replay_rates *r, struct err *e)
{
    memset(r, 0, sizeof *r);
    r->n_layers = p->wl->n_layers;
    r->by_layer = XCALLOC(e, (size_t)RATE_N_CLASSES * (size_t)r->n_layers + 1, sizeof *r->by_layer);
    if (!r->by_layer) return ERR_NOMEM;
    for (int k = 0; k < t->n_ranks; k++)
        for (int s = 0; s < t->n_steps[k]; s++)
            for (int i = 0; i < t->n_ops[k]; i++) {
                double d = t->dur_s[k][(size_t)s * t->n_ops[k] + i];
                const struct op *o = &p->ranks[k].ops.items[i];
                int c = rate_class(o->kind);
                if (d < 0 || c < 0 || !(o->flops > 0)) continue;
                double rate = d / o->flops;
                for (int l = o->lo; l < o->hi && l < r->n_layers; l++)
                    if (vec_push(&r->by_layer[c * r->n_layers + l], rate) < 0 ||
                        vec_push(&r->pooled[c], rate) < 0)
                        return err_set(e, ERR_NOMEM, "replay: out of memory collecting rates");
            }
    /* an empty vector's items are NULL, which qsort may not be given */
    for (int i = 0; i < RATE_N_CLASSES * r->n_layers; i++)
        if (r->by_layer[i].len)
            qsort(r->by_layer[i].items, r->by_layer[i].len, sizeof(double), by_value);
    for (int c = 0; c < RATE_N_CLASSES; c++)
        if (r->pooled[c].len) qsort(r->pooled[c].items, r->pooled[c].len, sizeof(double), by_value);
    return 0;
}

/* The u-quantile of sorted xs[0..n) (u < 0: the lower median); n > 0. */
static double quantile(const double *xs, size_t n, double u)
{
    if (u < 0) return xs[(n - 1) / 2];
    size_t k = (size_t)(u * (double)n);
    return xs[k < n ? k : n - 1];
}

double replay_rates_op_s(const struct replay_rates *r, const struct workload *wl,
                         const struct op *op, double u)
{
    int c = rate_class(op->kind);
    if (c < 0 || !(op->flops > 0) || op->hi > r->n_layers || op->hi > wl->n_layers) return -1;
    double total_w = 0;
    for (int l = op->lo; l < op->hi; l++) total_w += layer_weight(wl, c, l);
    if (!(total_w > 0)) return -1;
    double d = 0;
    for (int l = op->lo; l < op->hi; l++) {
        const double *xs = r->by_layer[c * r->n_layers + l].items;
        size_t n = r->by_layer[c * r->n_layers + l].len;
        if (!n) {
            xs = r->pooled[c].items;
            n = r->pooled[c].len;
        }
        if (!n) return -1;
        d += quantile(xs, n, u) * op->flops * layer_weight(wl, c, l) / total_w;
    }
    return d;
}
