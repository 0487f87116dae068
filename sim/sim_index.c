/* The simulator's tables: a prepared plan (core/plan_index.h) compiled
 * into struct xop, costs, links, servers and slots (see sim_internal.h).
 * The relations themselves (stream order, dependents, roots, the RECV of
 * each SEND, collectives, the (server, worker) slot and ordinal j of each
 * PUSH and PULL) are the index's: read here, never worked out again.
 *
 * Cost: O(ops) once per simulate(); nothing here runs per event. */
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "sim_internal.h"

static inline const struct op *op_of(const struct sim *m, int g)
{
    int r = m->x[g].rank;
    return &m->p->ranks[r].ops.items[g - m->off[r]];
}

/* Link of a rank: 4 r + 2 (between nodes) + 1 (inbound). */
static int link_of(const struct sim *m, int rank, int peer, bool is_inbound)
{
    bool is_inter = cluster_node_of(m->cl, rank) != cluster_node_of(m->cl, peer);
    return 4 * rank + 2 * is_inter + is_inbound;
}

static bool has_comm_state(enum op_kind k)
{
    return k == OP_SEND || k == OP_RECV || k == OP_PUSH || k == OP_PULL;
}

/* Compute op g's cost: an index into cost_s[]. The same op of the rank
 * before (data-parallel replicas, a pipeline's replicas of a stage) or the
 * rank's compute op before it usually costs exactly the same, so the
 * table stays a few values that the cache keeps, whatever the ranks. */
static int cost_index(struct sim *m, int g, double cost_s)
{
    int r = m->x[g].rank, i = g - m->off[r];
    if (r > 0 && i < m->off[r] - m->off[r - 1]) {
        const struct xop *same = &m->x[m->off[r - 1] + i];
        if (op_infos[same->kind].cls == OPC_COMPUTE &&
            !memcmp(&m->cost_s[same->aux], &cost_s, sizeof cost_s))
            return same->aux;
    }
    if (m->n_costs > 0 && !memcmp(&m->cost_s[m->n_costs - 1], &cost_s, sizeof cost_s))
        return m->n_costs - 1;
    m->cost_s[m->n_costs] = cost_s;
    return m->n_costs++;
}

/* The fixed fields of every op, its costs and the link each SEND crosses.
 * Each op's line is written whole, once: no memset of the table first, and
 * no pass of its own for the ranks (at 100,000 devices each pass over the
 * table is 58 MB); the later passes find their ops by the index's kind
 * bytes. */
static void index_ops(struct sim *m)
{
    const struct plan_index *ix = m->ix;
    for (int r = 0; r < m->n_ranks; r++)
        for (int g = m->off[r]; g < m->off[r + 1]; g++) {
            const struct op *op = &m->p->ranks[r].ops.items[g - m->off[r]];
            struct xop *x = &m->x[g];
            *x = (struct xop){
                .rank = r,
                .next = ix->next[g],
                .dep_first = ix->dep_first[g],
                .n_dependents = ix->dep_first[g + 1] - ix->dep_first[g],
                .aux = -1,
                .kind = (int8_t)op->kind,
                .stream = (int8_t)op->stream,
                .lag = (int8_t)op->lag,   /* plan_check bounds it by PLAN_MAX_LAG */
            };
            m->pending0[g] = (ix->prev[g] >= 0) + op->n_deps;
            if (op_infos[op->kind].cls == OPC_COMPUTE)
                x->aux = cost_index(m, g, cost_compute_s(m->cl, op));
            if (has_comm_state(op->kind)) {
                x->aux = m->n_xcomm++;
                m->xc[x->aux] = (struct xcomm){.bytes = op->bytes, .peer_op = -1, .link = -1};
            }
            if (op->kind == OP_SEND) {
                m->xc[x->aux].peer_op = ix->partner[g];
                m->xc[x->aux].link = link_of(m, r, op->peer, false);
            }
        }
}

/* Each SEND's RECV's transfer state, once every op has its own. */
static void index_sends(struct sim *m)
{
    for (int g = 0; g < m->n_ops; g++)
        if (m->ix->kind[g] == OP_SEND) {
            struct xcomm *c = &m->xc[m->x[g].aux];
            c->recv_comm = m->x[c->peer_op].aux;
        }
}

static bool is_compute(int kind) { return op_infos[kind].cls == OPC_COMPUTE; }

/* Which ops fold into the next on their stream (struct xop): compute, not
 * lagged, whose next is compute, not lagged, and waits on it alone (its
 * stream predecessor and its deps are all this op), and which no other op
 * waits on. Its end then does nothing but make that next op ready, at the
 * same instant. */
static void index_folds(struct sim *m)
{
    for (int g = 0; g < m->n_ops; g++) {
        struct xop *x = &m->x[g];
        int nx = x->next;
        if (!is_compute(x->kind) || x->lag != 0 || nx < 0) continue;
        if (!is_compute(m->x[nx].kind) || m->x[nx].lag != 0) continue;
        bool is_alone = true;
        for (int k = x->dep_first; k < x->dep_first + x->n_dependents && is_alone; k++)
            is_alone = m->dependents[k] == nx;
        if (!is_alone || m->pending0[nx] != 1 + x->n_dependents) continue;
        x->fold |= FOLD_INTO_NEXT;
        m->x[nx].fold |= FOLD_TAIL;
    }
}

/* Each collective op's collective, and what the collective costs. */
static int index_collectives(struct sim *m)
{
    const struct plan_index *ix = m->ix;
    const struct plan *p = m->p;
    m->n_coll = ix->n_coll;
    m->coll_first = ix->coll_first;
    m->coll_ops = ix->coll_ops;
    for (int g = 0; g < m->n_ops; g++)
        if (plan_is_collective(ix->kind[g])) m->x[g].aux = ix->coll[g];
    m->coll_cost_s = XCALLOC(m->e, (size_t)m->n_coll, sizeof *m->coll_cost_s);
    m->coll_arrived = XCALLOC(m->e, (size_t)m->n_coll, sizeof *m->coll_arrived);
    m->coll_start_s = XCALLOC(m->e, (size_t)m->n_coll, sizeof *m->coll_start_s);
    if (!m->coll_cost_s || !m->coll_arrived || !m->coll_start_s) return ERR_NOMEM;
    for (int c = 0; c < m->n_coll; c++) {
        const struct plan_group *G = &p->groups.items[ix->coll_group[c]];
        const struct op *op = op_of(m, m->coll_ops[m->coll_first[c]]);
        m->coll_cost_s[c] = cost_collective_s(m->cl, op->kind, G->ranks, G->n_ranks, op->bytes);
    }
    return 0;
}

/* The index's slots with the run's state, one ps_server per server that
 * some worker pushes to (its workers: its slots, in order), and each
 * PUSH/PULL's slot, j and link. */
static int index_servers(struct sim *m)
{
    const struct plan_index *ix = m->ix;
    const struct plan *p = m->p;
    struct err *e = m->e;
    int n_slots = ix->n_slots;
    m->servers = XCALLOC(e, (size_t)p->n_servers, sizeof *m->servers);
    m->slots = XCALLOC(e, (size_t)n_slots + 1, sizeof *m->slots);
    if (!m->servers || !m->slots) return ERR_NOMEM;
    for (int k = 0; k < n_slots; k++) {
        int s = ix->slot_server[k] - p->n_workers;
        m->slots[k] = (struct slot){s, ix->slot_worker[k], ix->slot_w[k], ix->slot_n_push[k], 0};
        m->servers[s].is_used = true;
    }
    for (int k = 0; k < n_slots; k++) {
        struct server *S = &m->servers[m->slots[k].server];
        if (k + 1 < n_slots && m->slots[k + 1].server == m->slots[k].server) continue;
        /* the server's last slot: its worker count is w + 1 */
        int rc = ps_server_init(&S->ps, p->policy, p->policy_arg, m->slots[k].w + 1, e);
        if (rc < 0) {
            S->is_used = false;
            return rc;
        }
        S->n_push = m->slots[k].n_push;
        const struct plan_rank *sr = &p->ranks[p->n_workers + m->slots[k].server];
        struct op update = plan_update_op(p->wl, sr->shard_lo, sr->shard_hi);
        S->update_cost_s = cost_compute_s(m->cl, &update);
    }
    for (int g = 0; g < m->n_ops; g++) {
        if (ix->kind[g] != OP_PUSH && ix->kind[g] != OP_PULL) continue;
        struct xop *x = &m->x[g];
        struct xcomm *c = &m->xc[x->aux];
        c->peer_op = ix->slot[g];
        if (c->peer_op < 0)
            return err_set(e, ERR_INPUT,
                           "rank %d op %d pulls from server %d, to which rank %d never pushes: "
                           "the simulated server knows its workers by their pushes",
                           x->rank, g - m->off[x->rank], op_of(m, g)->peer, x->rank);
        c->j = ix->j[g];
        c->link = link_of(m, op_of(m, g)->peer, x->rank, x->kind == OP_PUSH);
    }
    return 0;
}

int sim_index_init(struct sim *m)
{
    const struct plan_index *ix = m->ix;
    struct err *e = m->e;
    if (ix->n_ops >= INT32_MAX / 2)
        return err_set(e, ERR_INPUT, "a plan of %d ops is too large to simulate", ix->n_ops);
    m->n_ranks = ix->n_ranks;
    m->n_ops = ix->n_ops;
    m->n_links = 4 * ix->n_ranks;
    m->off = ix->off;
    m->dependents = ix->dependents;
    m->roots = ix->roots;
    m->root_first = ix->root_first;
    size_t n = (size_t)ix->n_ops, nr = (size_t)ix->n_ranks;
    /* cache-line aligned, so that no op straddles two lines; aligned_alloc
     * wants a whole number of lines (two ops a line: an odd count rounds up) */
    size_t x_bytes = ((n ? n : 1) * sizeof *m->x + 63) / 64 * 64;
    m->x = aligned_alloc(64, x_bytes);
    if (!m->x) return err_set(e, ERR_NOMEM, "simulate: out of memory for %zu ops", n);
    size_t n_comm = 0;   /* from the index's kind bytes: no op is read */
    for (int g = 0; g < m->n_ops; g++) n_comm += has_comm_state(ix->kind[g]);
    m->xc = XCALLOC(e, n_comm ? n_comm : 1, sizeof *m->xc);
    if (!m->xc) return ERR_NOMEM;
    m->cost_s = XCALLOC(e, n ? n : 1, sizeof *m->cost_s);
    if (!m->cost_s) return ERR_NOMEM;
    m->pending0 = XCALLOC(e, n ? n : 1, sizeof *m->pending0);
    m->pending = XCALLOC(e, n ? n : 1, sizeof *m->pending);
    if (!m->pending0 || !m->pending) return ERR_NOMEM;
    m->step = XCALLOC(e, nr, sizeof *m->step);
    m->n_done = XCALLOC(e, nr, sizeof *m->n_done);
    m->is_dead = XCALLOC(e, nr, sizeof *m->is_dead);
    m->is_done = XCALLOC(e, nr, sizeof *m->is_done);
    m->work = XCALLOC(e, nr, sizeof *m->work);
    m->fold_head = XCALLOC(e, nr ? nr : 1, sizeof *m->fold_head);
    if (!m->step || !m->n_done || !m->is_dead || !m->is_done || !m->work || !m->fold_head)
        return ERR_NOMEM;
    for (int r = 0; r < m->n_ranks; r++) m->n_working += m->off[r + 1] > m->off[r];
    index_ops(m);
    index_sends(m);
    index_folds(m);
    TRY(index_collectives(m));
    return index_servers(m);
}

void sim_index_release(struct sim *m)
{
    free(m->x);
    free(m->xc);
    free(m->cost_s);
    free(m->pending0);
    free(m->pending);
    free(m->coll_cost_s);
    free(m->coll_arrived);
    free(m->coll_start_s);
    for (int s = 0; m->servers && s < m->p->n_servers; s++) {
        if (m->servers[s].is_used) ps_server_release(&m->servers[s].ps);
        held_pulls_release(&m->servers[s].held);
    }
    free(m->servers);
    free(m->slots);
    free(m->step);
    free(m->n_done);
    free(m->is_dead);
    free(m->is_done);
    free(m->work);
    free(m->fold_head);
    vec_free(&m->work_free);
    vec_free(&m->touched);
    plan_index_free(m->ix);
}
