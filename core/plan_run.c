/* The unit-cost run of a plan (see plan_check.h), and the wait-for cycle
 * finder that names a deadlock for plan_check and plan_unit_run.
 *
 * The run follows the index the static checks built (core/plan_index.h);
 * it never checks a plan itself. plan_prepare runs it as its deadlock check
 * and keeps the times in the index, which plan_unit_times hands out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_check_internal.h"
#include "text_append.h"

/* ---- the unit-cost run ---------------------------------------------------- */

double plan_unit_cost(const struct op *op)
{
    switch (op->kind) {
    case OP_FORWARD: return op->hi - op->lo;
    case OP_BACKWARD: return 2.0 * (op->hi - op->lo);
    /* zero-bubble's halves: F = B = W, so that B + W is BACKWARD's 2 */
    case OP_BACKWARD_INPUT:
    case OP_BACKWARD_WEIGHT: return op->hi - op->lo;
    default: return 0;
    }
}

/* The run's queue of op ends is a bucket queue (Dial's): every time is a
 * whole number of layer units (plan_unit_cost), and an op starts no later
 * than the end being released when it becomes ready, so every queued end
 * lies in [now, now + max cost]. A ring of buckets one per unit, at least
 * max cost + 1 of them, holds each time apart; a bucket is a FIFO list
 * threaded through the ops' queue_next, and a bitmap of the non-empty ones skips
 * idle stretches 64 units at a time. A push and a pop are O(1), where the
 * binary heap it replaced took O(log n) cold lines for each of a large
 * plan's millions of ops; the whole run is O(ops + makespan / 64).
 *
 * Ends of the same time pop in the order they were pushed, not by op id as
 * the heap had them: the run's results do not depend on that order. Each
 * op's start is the latest end among its conditions (a collective's, the
 * latest arrival), the ends met before the release that made it ready
 * (whatever their order), and a round of pushes completes at the time of
 * its need-th earliest end, which is the same time whichever of the pushes
 * ending then counts last; what ends at all, and so the cycle a deadlock
 * names, is decided by the conditions alone. */

static void queue_push(struct run_state *s, int g, int64_t t_units)
{
    size_t b = (size_t)(t_units & s->bucket_mask);
    s->ops[g].queue_next = -1;
    if (s->bucket_last[b] < 0) {
        s->bucket_first[b] = g;
        s->nonempty[b / 64] |= UINT64_C(1) << (b % 64);
    } else {
        s->ops[s->bucket_last[b]].queue_next = g;
    }
    s->bucket_last[b] = g;
    s->n_queued++;
}

/* The first end of the earliest non-empty bucket, at or after s->now_units,
 * which it advances to that bucket's time. Only with s->n_queued > 0. */
static int queue_pop(struct run_state *s)
{
    for (;;) {
        size_t b = (size_t)(s->now_units & s->bucket_mask);
        uint64_t bits = s->nonempty[b / 64] >> (b % 64);
        if (bits) {
            int skip = __builtin_ctzll(bits);
            s->now_units += skip;
            b += (size_t)skip;
            int g = s->bucket_first[b];
            s->bucket_first[b] = s->ops[g].queue_next;
            if (s->bucket_first[b] < 0) {
                s->bucket_last[b] = -1;
                s->nonempty[b / 64] &= ~(UINT64_C(1) << (b % 64));
            }
            s->n_queued--;
            return g;
        }
        s->now_units += 64 - (int64_t)(b % 64);   /* to the next word: the ring is whole words */
    }
}

static void schedule(struct run_state *s, int g, double t)
{
    s->start[g] = t;
    queue_push(s, g, (int64_t)t + s->ops[g].cost_units);
}

/* All of g's own conditions are met: start it, or for a collective, arrive
 * at its collective, which starts for every member with the last arrival. */
static void become_ready(struct run_state *s, int g)
{
    const struct plan_index *ix = s->ix;
    if (!plan_is_collective(s->kind[g] & RUN_KIND_MASK)) {
        schedule(s, g, s->start[g]);   /* the latest end among its conditions */
        return;
    }
    int k = ix->coll[g];
    s->kind[g] |= RUN_ARRIVED;
    if (s->start[g] > s->coll_t[k]) s->coll_t[k] = s->start[g];
    if (++s->coll_arrived[k] == ix->coll_first[k + 1] - ix->coll_first[k])
        for (int m = ix->coll_first[k]; m < ix->coll_first[k + 1]; m++)
            schedule(s, ix->coll_ops[m], s->coll_t[k]);
}

static void satisfy(struct run_state *s, int g, double t)
{
    if (t > s->start[g]) s->start[g] = t;   /* until g is ready, the latest end it saw */
    if (--s->ops[g].pending == 0) become_ready(s, g);
}

/* Op g ended at t: release what waited for it. */
static void release(struct run_state *s, int g, double t)
{
    const struct plan_index *ix = s->ix;
    int kind = s->kind[g] & RUN_KIND_MASK;
    if (ix->next[g] >= 0) satisfy(s, ix->next[g], t);
    for (int k = ix->dep_first[g]; k < ix->dep_first[g + 1]; k++) satisfy(s, ix->dependents[k], t);
    if (kind == OP_SEND) satisfy(s, ix->partner[g], t);
    /* ends pop in time order, so the round completes with its need-th
     * earliest push: all of them (sync) or the first n - B (backup) */
    if (kind == OP_PUSH && ix->round[g] >= 0 && ++s->round_done[ix->round[g]] ==
                                                    ix->round_need[ix->round[g]]) {
        int r = ix->round[g];
        for (int k = ix->pull_first[r]; k < ix->pull_first[r + 1]; k++)
            satisfy(s, ix->pull_ops[k], t);
    }
}

void ck_run_state_free(struct run_state *s)
{
    free(s->ops);
    free(s->kind);
    free(s->coll_arrived);
    free(s->coll_t);
    free(s->round_done);
    free(s->bucket_first);
    free(s->bucket_last);
    free(s->nonempty);
}

/* Event-driven list scheduling: an op's conditions are counted up front
 * (stream predecessor, deps, the SEND of a RECV, the round of a sync PULL);
 * each end releases what waited for it. Every op enters the queue once:
 * O(ops + makespan / 64). Fills start of every op that ran; s->n_done <
 * n_ops means deadlock. On a well-formed, matched plan only. */
int ck_unit_run(const struct plan_index *ix, struct run_state *s, double *start, struct err *e)
{
    memset(s, 0, sizeof *s);
    s->ix = ix;
    s->start = start;
    size_t n = (size_t)ix->n_ops;
    s->ops = XCALLOC(e, n + 1, sizeof *s->ops);
    s->kind = XCALLOC(e, n + 1, sizeof *s->kind);
    s->coll_arrived = XCALLOC(e, (size_t)ix->n_coll + 1, sizeof *s->coll_arrived);
    s->coll_t = XCALLOC(e, (size_t)ix->n_coll + 1, sizeof *s->coll_t);
    s->round_done = XCALLOC(e, (size_t)ix->n_rounds + 1, sizeof *s->round_done);
    if (!s->ops || !s->kind || !s->coll_arrived || !s->coll_t || !s->round_done)
        return ERR_NOMEM;
    int max_cost_units = 0;
    for (int r = 0; r < ix->n_ranks; r++)
        for (int g = ix->off[r]; g < ix->off[r + 1]; g++) {
            const struct op *op = &ix->p->ranks[r].ops.items[g - ix->off[r]];
            s->kind[g] = (uint8_t)op->kind;
            s->ops[g].cost_units = (int)plan_unit_cost(op);
            s->ops[g].pending = (ix->prev[g] >= 0) + op->n_deps + (op->kind == OP_RECV) +
                                (op->kind == OP_PULL && ix->round[g] >= 0);
            if (s->ops[g].cost_units > max_cost_units) max_cost_units = s->ops[g].cost_units;
        }
    size_t n_buckets = 64;   /* a power of two, whole bitmap words */
    while (n_buckets <= (size_t)max_cost_units) n_buckets *= 2;
    s->bucket_mask = (int64_t)n_buckets - 1;
    s->bucket_first = XCALLOC(e, n_buckets, sizeof *s->bucket_first);
    s->bucket_last = XCALLOC(e, n_buckets, sizeof *s->bucket_last);
    s->nonempty = XCALLOC(e, n_buckets / 64, sizeof *s->nonempty);
    if (!s->bucket_first || !s->bucket_last || !s->nonempty) return ERR_NOMEM;
    for (size_t b = 0; b < n_buckets; b++) s->bucket_first[b] = s->bucket_last[b] = -1;
    for (int g = 0; g < ix->n_ops; g++)
        if (s->ops[g].pending == 0) become_ready(s, g);
    while (s->n_queued) {
        int g = queue_pop(s);
        s->kind[g] |= RUN_DONE;
        s->n_done++;
        release(s, g, (double)s->now_units);
    }
    return 0;
}

/* ---- naming a deadlock: the wait-for cycle -------------------------------- */

/* What blocked op g waits for: an op that has not ended (one that has not
 * arrived, for a collective's missing member), or -1. */
static int waits_for(const struct run_state *s, int g)
{
    const struct plan_index *ix = s->ix;
    const struct op *op = plan_index_op(ix, g);
    int r = ix->rank_of[g];
    if (ix->prev[g] >= 0 && !run_is_done(s, ix->prev[g])) return ix->prev[g];
    const int *deps = plan_deps(ix->p, r, g - ix->off[r]);
    for (int k = 0; k < op->n_deps; k++)
        if (!run_is_done(s, ix->off[r] + deps[k])) return ix->off[r] + deps[k];
    if (op->kind == OP_RECV) return ix->partner[g];
    if (plan_is_collective(op->kind))
        for (int m = ix->coll_first[ix->coll[g]]; m < ix->coll_first[ix->coll[g] + 1]; m++)
            if (!run_is_arrived(s, ix->coll_ops[m])) return ix->coll_ops[m];
    if (op->kind == OP_PULL && ix->round[g] >= 0)
        for (int m = ix->round_first[ix->round[g]]; m < ix->round_first[ix->round[g] + 1]; m++)
            if (!run_is_done(s, ix->round_ops[m])) return ix->round_ops[m];
    return -1;
}

/* Every blocked op waits for another blocked one, so following those edges
 * from the first blocked op must come back to an op already seen: that loop
 * is the cycle. It is printed from its lowest op, and shortened in the
 * middle when it does not fit in size bytes. Returns the first op of the
 * cycle, or -1 when none was found (a bug: the message says so). */
int ck_cycle_message(const struct run_state *s, char *buf, size_t size, struct err *e,
                     int *rc)
{
    const struct plan_index *ix = s->ix;
    *rc = 0;
    int *pos = XCALLOC(e, (size_t)ix->n_ops, sizeof *pos), *path = XCALLOC(e, (size_t)ix->n_ops,
                                                                            sizeof *path);
    if (!pos || !path) {
        free(pos);
        free(path);
        *rc = ERR_NOMEM;
        return -1;
    }
    int g = 0, len = 0;
    while (run_is_done(s, g)) g++;
    for (int k = 0; k < ix->n_ops; k++) pos[k] = -1;
    while (g >= 0 && pos[g] < 0) {
        pos[g] = len;
        path[len++] = g;
        g = waits_for(s, g);
    }
    char name[NAME_BYTES];
    if (g < 0) {
        snprintf(buf, size, "%s is blocked on nothing the checker can name (a checker bug)",
                 ck_op_name(ix, path[len - 1], name));
        free(pos);
        free(path);
        return -1;
    }
    const int *cyc = path + pos[g];
    int n = len - pos[g], first = 0;
    for (int k = 1; k < n; k++)
        if (cyc[k] < cyc[first]) first = k;
    size_t used = 0;
    text_appendf(buf, size, &used, "deadlock, a cycle of %d ops: ", n);
    /* room kept for " ... (k more)" and the closing " which waits for rank R op I" */
    const size_t tail = 64;
    for (int k = 0; k < n; k++) {
        ck_op_name(ix, cyc[(first + k) % n], name);
        const char *link = k == 0 ? "" : k == 1 ? " waits for " : " which waits for ";
        if (used + strlen(link) + strlen(name) + tail >= size) {
            text_appendf(buf, size, &used, " ... (%d more)", n - k);
            break;
        }
        text_appendf(buf, size, &used, "%s%s", link, name);
    }
    int h0 = cyc[first];
    text_appendf(buf, size, &used, " which waits for rank %d op %d", ix->rank_of[h0],
            h0 - ix->off[ix->rank_of[h0]]);
    free(pos);
    free(path);
    return h0;
}

/* ---- public entry points -------------------------------------------------- */

int plan_unit_times(const struct plan_index *ix, struct plan_times *t, struct err *e)
{
    memset(t, 0, sizeof *t);
    const struct plan *p = ix->p;
    t->n_ranks = p->n_ranks;
    t->start = XCALLOC(e, (size_t)p->n_ranks, sizeof *t->start);
    t->end = XCALLOC(e, (size_t)p->n_ranks, sizeof *t->end);
    t->busy_compute = XCALLOC(e, (size_t)p->n_ranks, sizeof *t->busy_compute);
    /* one block for both: start of every op, then end of every op */
    t->storage = XCALLOC(e, 2 * (size_t)ix->n_ops, sizeof *t->storage);
    if (!t->start || !t->end || !t->busy_compute || !t->storage) {
        plan_times_release(t);
        return ERR_NOMEM;
    }
    double *start = t->storage, *end = t->storage + ix->n_ops;
    memcpy(start, ix->unit_start, (size_t)ix->n_ops * sizeof *start);
    for (int r = 0; r < p->n_ranks; r++) {
        t->start[r] = start + ix->off[r];
        t->end[r] = end + ix->off[r];
    }
    for (int g = 0; g < ix->n_ops; g++) {
        const struct op *op = plan_index_op(ix, g);
        end[g] = start[g] + plan_unit_cost(op);   /* as the run timed it */
        if (end[g] > t->makespan) t->makespan = end[g];
        if (op->stream == STREAM_COMPUTE && op_infos[op->kind].cls == OPC_COMPUTE)
            t->busy_compute[ix->rank_of[g]] += end[g] - start[g];
    }
    return 0;
}

int plan_unit_run(const struct plan *p, struct plan_times *t, struct err *e)
{
    memset(t, 0, sizeof *t);
    struct plan_index *ix = NULL;
    struct plan_verdict *v = XCALLOC(e, 1, sizeof *v);
    int rc = v ? plan_prepare(p, v, &ix, e) : ERR_NOMEM;
    if (rc == 0 && !v->is_valid) {
        if (v->has_deadlock)
            rc = err_set(e, ERR_RUN, "the %s plan at unit cost: %s", p->strategy,
                         v->defects[0].msg);
        else
            rc = err_set(e, ERR_RUN, "the %s plan cannot run: %s%s", p->strategy,
                         v->defects[0].msg,
                         v->n_defects > 1 ? " (and more; plan_check lists them)" : "");
    }
    if (rc == 0) rc = plan_unit_times(ix, t, e);
    plan_index_free(ix);
    free(v);
    return rc;
}

void plan_times_release(struct plan_times *t)
{
    free(t->storage);
    free(t->start);
    free(t->end);
    free(t->busy_compute);
    memset(t, 0, sizeof *t);
}

double plan_unit_bubble(const struct plan *p, const struct plan_times *t)
{
    if (t->makespan <= 0) return 0;
    double sum = 0;
    int n = 0;
    for (int r = 0; r < p->n_workers && r < t->n_ranks; r++) {
        bool has_compute = false;
        for (size_t i = 0; i < p->ranks[r].ops.len && !has_compute; i++)
            has_compute = op_infos[p->ranks[r].ops.items[i].kind].cls == OPC_COMPUTE;
        if (!has_compute) continue;
        sum += (t->makespan - t->busy_compute[r]) / t->makespan;
        n++;
    }
    return n ? sum / n : 0;
}
