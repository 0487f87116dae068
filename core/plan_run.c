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

/* Min-heap of op ends, ordered by (time, g): deterministic. */
struct event {
    double t;
    int g;
};

static bool ev_less(struct event a, struct event b)
{
    return a.t < b.t || (a.t == b.t && a.g < b.g);
}

static void heap_push(struct run_state *s, double t, int g)
{
    int i = s->n_heap++;
    struct event ev = {t, g};
    while (i > 0 && ev_less(ev, s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = ev;
}

static struct event heap_pop(struct run_state *s)
{
    struct event top = s->heap[0], last = s->heap[--s->n_heap];
    int i = 0;
    for (;;) {
        int k = 2 * i + 1;
        if (k >= s->n_heap) break;
        if (k + 1 < s->n_heap && ev_less(s->heap[k + 1], s->heap[k])) k++;
        if (!ev_less(s->heap[k], last)) break;
        s->heap[i] = s->heap[k];
        i = k;
    }
    s->heap[i] = last;
    return top;
}

static void schedule(struct run_state *s, int g, double t)
{
    s->start[g] = t;
    s->end[g] = t + plan_unit_cost(plan_index_op(s->ix, g));
    heap_push(s, s->end[g], g);
}

/* All of g's own conditions are met: start it, or for a collective, arrive
 * at its collective, which starts for every member with the last arrival. */
static void become_ready(struct run_state *s, int g)
{
    const struct plan_index *ix = s->ix;
    if (!plan_is_collective(plan_index_op(ix, g)->kind)) {
        schedule(s, g, s->avail[g]);
        return;
    }
    int k = ix->coll[g];
    s->is_arrived[g] = true;
    if (s->avail[g] > s->coll_t[k]) s->coll_t[k] = s->avail[g];
    if (++s->coll_arrived[k] == ix->coll_first[k + 1] - ix->coll_first[k])
        for (int m = ix->coll_first[k]; m < ix->coll_first[k + 1]; m++)
            schedule(s, ix->coll_ops[m], s->coll_t[k]);
}

static void satisfy(struct run_state *s, int g, double t)
{
    if (t > s->avail[g]) s->avail[g] = t;
    if (--s->pending[g] == 0) become_ready(s, g);
}

/* Op g ended at t: release what waited for it. */
static void release(struct run_state *s, int g, double t)
{
    const struct plan_index *ix = s->ix;
    const struct op *op = plan_index_op(ix, g);
    if (ix->next[g] >= 0) satisfy(s, ix->next[g], t);
    for (int k = ix->dep_first[g]; k < ix->dep_first[g + 1]; k++) satisfy(s, ix->dependents[k], t);
    if (op->kind == OP_SEND) satisfy(s, ix->partner[g], t);
    /* ends pop in time order, so the round completes with its need-th
     * earliest push: all of them (sync) or the first n - B (backup) */
    if (op->kind == OP_PUSH && ix->round[g] >= 0 && ++s->round_done[ix->round[g]] ==
                                                       ix->round_need[ix->round[g]]) {
        int r = ix->round[g];
        for (int k = ix->pull_first[r]; k < ix->pull_first[r + 1]; k++)
            satisfy(s, ix->pull_ops[k], t);
    }
}

void ck_run_state_free(struct run_state *s)
{
    free(s->avail);
    free(s->pending);
    free(s->is_arrived);
    free(s->is_done);
    free(s->coll_arrived);
    free(s->coll_t);
    free(s->round_done);
    free(s->heap);
}

/* Event-driven list scheduling: an op's conditions are counted up front
 * (stream predecessor, deps, the SEND of a RECV, the round of a sync PULL);
 * each end releases what waited for it. Every op enters the heap once:
 * O(n log n). Fills start/end of every op that ran; s->n_done < n_ops
 * means deadlock. On a well-formed, matched plan only. */
int ck_unit_run(const struct plan_index *ix, struct run_state *s, double *start, double *end,
                struct err *e)
{
    memset(s, 0, sizeof *s);
    s->ix = ix;
    s->start = start;
    s->end = end;
    size_t n = (size_t)ix->n_ops;
    s->avail = XCALLOC(e, n, sizeof *s->avail);
    s->pending = XCALLOC(e, n, sizeof *s->pending);
    s->is_arrived = XCALLOC(e, n, sizeof *s->is_arrived);
    s->is_done = XCALLOC(e, n, sizeof *s->is_done);
    s->coll_arrived = XCALLOC(e, (size_t)ix->n_coll, sizeof *s->coll_arrived);
    s->coll_t = XCALLOC(e, (size_t)ix->n_coll, sizeof *s->coll_t);
    s->round_done = XCALLOC(e, (size_t)ix->n_rounds, sizeof *s->round_done);
    s->heap = XCALLOC(e, n, sizeof *s->heap);
    if (!s->avail || !s->pending || !s->is_arrived || !s->is_done || !s->coll_arrived ||
        !s->coll_t || !s->round_done || !s->heap)
        return ERR_NOMEM;
    for (int g = 0; g < ix->n_ops; g++) {
        const struct op *op = plan_index_op(ix, g);
        s->pending[g] = (ix->prev[g] >= 0) + op->n_deps + (op->kind == OP_RECV) +
                        (op->kind == OP_PULL && ix->round[g] >= 0);
    }
    for (int g = 0; g < ix->n_ops; g++)
        if (s->pending[g] == 0) become_ready(s, g);
    while (s->n_heap) {
        struct event ev = heap_pop(s);
        s->is_done[ev.g] = true;
        s->n_done++;
        release(s, ev.g, ev.t);
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
    if (ix->prev[g] >= 0 && !s->is_done[ix->prev[g]]) return ix->prev[g];
    const int *deps = plan_deps(ix->p, r, g - ix->off[r]);
    for (int k = 0; k < op->n_deps; k++)
        if (!s->is_done[ix->off[r] + deps[k]]) return ix->off[r] + deps[k];
    if (op->kind == OP_RECV) return ix->partner[g];
    if (plan_is_collective(op->kind))
        for (int m = ix->coll_first[ix->coll[g]]; m < ix->coll_first[ix->coll[g] + 1]; m++)
            if (!s->is_arrived[ix->coll_ops[m]]) return ix->coll_ops[m];
    if (op->kind == OP_PULL && ix->round[g] >= 0)
        for (int m = ix->round_first[ix->round[g]]; m < ix->round_first[ix->round[g] + 1]; m++)
            if (!s->is_done[ix->round_ops[m]]) return ix->round_ops[m];
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
    while (s->is_done[g]) g++;
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
    memcpy(end, ix->unit_end, (size_t)ix->n_ops * sizeof *end);
    for (int r = 0; r < p->n_ranks; r++) {
        t->start[r] = start + ix->off[r];
        t->end[r] = end + ix->off[r];
    }
    for (int g = 0; g < ix->n_ops; g++) {
        const struct op *op = plan_index_op(ix, g);
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
