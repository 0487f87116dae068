/* The index: a checked plan compiled into the simulator's tables (see
 * sim_internal.h). Each relation the semantics of core/plan.h define is
 * resolved once, by sorting keys, into arrays over the global op id: the op
 * after each on its stream, the ops that name it as a dep, the RECV of each
 * SEND, the collective of each ALLREDUCE, the (server, worker) slot of each
 * PUSH and PULL, the link each transfer crosses.
 *
 * Cost: O(ops log ops) for the sorts, once per simulate(); nothing here runs
 * per event. */
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

struct key {
    int64_t k1, k2;
    int g;
};

static int cmp_key(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    if (x->k1 != y->k1) return (x->k1 > y->k1) - (x->k1 < y->k1);
    if (x->k2 != y->k2) return (x->k2 > y->k2) - (x->k2 < y->k2);
    return (x->g > y->g) - (x->g < y->g);
}

/* Stream order, dependents, roots and costs. */
static int index_ops(struct sim *m)
{
    const struct plan *p = m->p;
    struct err *e = m->e;
    size_t n_edges = 0;
    for (int r = 0; r < p->n_ranks; r++) n_edges += p->ranks[r].deps.len;
    m->dependents = XCALLOC(e, n_edges, sizeof *m->dependents);
    if (!m->dependents) return ERR_NOMEM;
    int n_roots = 0;
    for (int r = 0; r < p->n_ranks; r++) {
        int last[PLAN_N_STREAMS] = {-1, -1};
        for (int g = m->off[r]; g < m->off[r + 1]; g++) {
            const struct op *op = op_of(m, g);
            struct xop *x = &m->x[g];
            x->kind = (int16_t)op->kind;
            x->stream = (int16_t)op->stream;
            x->index = g - m->off[r];
            x->next = x->aux = x->link = -1;
            x->cost_s = op_infos[op->kind].cls == OPC_COMPUTE ? cost_compute_s(m->cl, op) : 0;
            x->mb = op->mb;
            x->lo = op->lo;
            x->hi = op->hi;
            x->peer = op->peer;
            x->bytes = op->bytes;
            x->flops = op->flops;
            x->pending0 = (last[op->stream] >= 0) + op->n_deps;
            if (last[op->stream] >= 0) m->x[last[op->stream]].next = g;
            last[op->stream] = g;
            const int *deps = plan_deps(p, r, g - m->off[r]);
            for (int k = 0; k < op->n_deps; k++) m->x[m->off[r] + deps[k]].n_dependents++;
            n_roots += x->pending0 == 0;
        }
    }
    int used = 0;
    for (int g = 0; g < m->n_ops; g++) {
        m->x[g].dep_first = used;
        used += m->x[g].n_dependents;
        m->x[g].n_dependents = 0;
    }
    m->roots = XCALLOC(e, (size_t)n_roots, sizeof *m->roots);
    if (!m->roots) return ERR_NOMEM;
    n_roots = 0;
    for (int r = 0; r < p->n_ranks; r++) {
        m->root_first[r] = n_roots;
        for (int g = m->off[r]; g < m->off[r + 1]; g++) {
            const int *deps = plan_deps(p, r, g - m->off[r]);
            for (int k = 0; k < op_of(m, g)->n_deps; k++) {
                struct xop *d = &m->x[m->off[r] + deps[k]];
                m->dependents[d->dep_first + d->n_dependents++] = g;
            }
            if (m->x[g].pending0 == 0) m->roots[n_roots++] = g;
        }
    }
    m->root_first[p->n_ranks] = n_roots;
    return 0;
}

/* SEND -> RECV by (sender, receiver, tag); the plan is checked, so each key
 * holds one SEND then one RECV. */
static int index_p2p(struct sim *m)
{
    size_t n = 0;
    for (int g = 0; g < m->n_ops; g++) n += op_infos[m->x[g].kind].cls == OPC_P2P;
    struct key *keys = XCALLOC(m->e, n, sizeof *keys);
    if (!keys) return ERR_NOMEM;
    n = 0;
    for (int g = 0; g < m->n_ops; g++) {
        const struct op *op = op_of(m, g);
        if (op_infos[op->kind].cls != OPC_P2P) continue;
        int r = m->x[g].rank;
        bool is_recv = op->kind == OP_RECV;
        int64_t src = is_recv ? op->peer : r, dst = is_recv ? r : op->peer;
        keys[n++] = (struct key){src * (1LL << 25) + dst, (int64_t)op->tag * 2 + is_recv, g};
    }
    qsort(keys, n, sizeof *keys, cmp_key);
    for (size_t k = 0; k + 1 < n; k += 2) {
        int send = keys[k].g, recv = keys[k + 1].g;
        m->x[send].aux = recv;
        m->x[send].link = link_of(m, m->x[send].rank, op_of(m, send)->peer, false);
    }
    free(keys);
    return 0;
}

/* Collective k of group G is the k-th ALLREDUCE on G of every member. */
static int index_collectives(struct sim *m)
{
    const struct plan *p = m->p;
    size_t n = 0;
    for (int g = 0; g < m->n_ops; g++) n += m->x[g].kind == OP_ALLREDUCE;
    struct key *keys = XCALLOC(m->e, n, sizeof *keys);
    m->coll_ops = XCALLOC(m->e, n, sizeof *m->coll_ops);
    m->coll_first = XCALLOC(m->e, n + 1, sizeof *m->coll_first);
    if (!keys || !m->coll_ops || !m->coll_first) {
        free(keys);
        return ERR_NOMEM;
    }
    n = 0;
    for (int g = 0; g < m->n_ops; g++)
        if (m->x[g].kind == OP_ALLREDUCE) keys[n++] = (struct key){op_of(m, g)->group, 0, g};
    qsort(keys, n, sizeof *keys, cmp_key);   /* by group, then rank, then program order */
    int used = 0;
    for (size_t lo = 0, hi; lo < n; lo = hi) {
        for (hi = lo; hi < n && keys[hi].k1 == keys[lo].k1; hi++) {}
        const struct plan_group *G = &p->groups.items[keys[lo].k1];
        int per = (int)(hi - lo) / G->n_ranks;   /* all-reduces each member reaches */
        for (int k = 0; k < per; k++, m->n_coll++) {
            m->coll_first[m->n_coll] = used;
            for (int mem = 0; mem < G->n_ranks; mem++) {
                int g = keys[lo + (size_t)mem * per + k].g;
                m->coll_ops[used++] = g;
                m->x[g].aux = m->n_coll;
            }
        }
    }
    m->coll_first[m->n_coll] = used;
    free(keys);
    m->coll_cost_s = XCALLOC(m->e, (size_t)m->n_coll, sizeof *m->coll_cost_s);
    m->coll_arrived = XCALLOC(m->e, (size_t)m->n_coll, sizeof *m->coll_arrived);
    if (!m->coll_cost_s || !m->coll_arrived) return ERR_NOMEM;
    for (int c = 0; c < m->n_coll; c++) {
        const struct op *op = op_of(m, m->coll_ops[m->coll_first[c]]);
        const struct plan_group *G = &p->groups.items[op->group];
        m->coll_cost_s[c] = cost_allreduce_s(m->cl, G->ranks, G->n_ranks, op->bytes);
    }
    return 0;
}


/* Slots: one per (server, worker pushing to it), sorted by server then
 * worker rank, so a server's workers are contiguous and w is the position
 * among them. Then each PUSH/PULL's slot, j and link. */
static int find_slot(const struct sim *m, int n_slots, int server, int rank)
{
    int lo = 0, hi = n_slots;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const struct slot *sl = &m->slots[mid];
        if (sl->server < server || (sl->server == server && sl->rank < rank)) lo = mid + 1;
        else hi = mid;
    }
    return lo < n_slots && m->slots[lo].server == server && m->slots[lo].rank == rank ? lo : -1;
}

static int index_servers(struct sim *m)
{
    const struct plan *p = m->p;
    struct err *e = m->e;
    size_t n = 0;
    for (int g = 0; g < m->n_ops; g++) n += m->x[g].kind == OP_PUSH;
    struct key *keys = XCALLOC(e, n, sizeof *keys);
    int32_t *count = NULL;
    int rc = ERR_NOMEM, n_slots = 0;
    m->servers = XCALLOC(e, (size_t)p->n_servers, sizeof *m->servers);
    if (!keys || !m->servers) goto done;
    n = 0;
    for (int g = 0; g < m->n_ops; g++)
        if (m->x[g].kind == OP_PUSH)
            keys[n++] = (struct key){op_of(m, g)->peer - p->n_workers, m->x[g].rank, g};
    qsort(keys, n, sizeof *keys, cmp_key);
    m->slots = XCALLOC(e, n, sizeof *m->slots);
    if (!m->slots) goto done;
    for (size_t k = 0; k < n; k++) {
        if (k > 0 && keys[k].k1 == keys[k - 1].k1 && keys[k].k2 == keys[k - 1].k2) continue;
        int s = (int)keys[k].k1;
        int w = n_slots > 0 && m->slots[n_slots - 1].server == s ? m->slots[n_slots - 1].w + 1 : 0;
        m->slots[n_slots++] = (struct slot){s, (int32_t)keys[k].k2, w, 0, 0};
        m->servers[s].is_used = true;
    }
    for (int k = 0; k < n_slots; k++) {
        struct server *S = &m->servers[m->slots[k].server];
        if (k + 1 < n_slots && m->slots[k + 1].server == m->slots[k].server) continue;
        /* the server's last slot: its worker count is w + 1 */
        rc = ps_server_init(&S->ps, p->policy, p->policy_arg, m->slots[k].w + 1, e);
        if (rc < 0) {
            S->is_used = false;
            goto done;
        }
        const struct plan_rank *sr = &p->ranks[p->n_workers + m->slots[k].server];
        struct op update = plan_update_op(p->wl, sr->shard_lo, sr->shard_hi);
        S->update_cost_s = cost_compute_s(m->cl, &update);
    }
    rc = ERR_NOMEM;
    count = XCALLOC(e, 2 * (size_t)n_slots, sizeof *count);   /* pushes, pulls per slot */
    if (!count) goto done;
    for (int g = 0; g < m->n_ops; g++) {
        struct xop *x = &m->x[g];
        if (x->kind != OP_PUSH && x->kind != OP_PULL) continue;
        const struct op *op = op_of(m, g);
        int s = op->peer - p->n_workers;
        x->aux = find_slot(m, n_slots, s, x->rank);
        if (x->aux < 0) {
            rc = err_set(e, ERR_INPUT,
                         "rank %d op %d pulls from server %d, to which rank %d never pushes: the "
                         "simulated server knows its workers by their pushes",
                         x->rank, g - m->off[x->rank], op->peer, x->rank);
            goto done;
        }
        bool is_pull = x->kind == OP_PULL;
        x->j = count[2 * x->aux + is_pull]++;   /* ops come in program order */
        x->link = link_of(m, op->peer, x->rank, !is_pull);
    }
    for (int k = 0; k < n_slots; k++) m->slots[k].n_push = count[2 * k];
    rc = 0;
done:
    free(keys);
    free(count);
    return rc;
}

int sim_index_init(struct sim *m)
{
    const struct plan *p = m->p;
    struct err *e = m->e;
    int64_t n_ops = plan_n_ops(p);
    if (n_ops >= INT32_MAX / 2)
        return err_set(e, ERR_INPUT, "a plan of %lld ops is too large to simulate",
                       (long long)n_ops);
    m->n_ranks = p->n_ranks;
    m->n_ops = (int)n_ops;
    m->n_links = 4 * p->n_ranks;
    size_t n = (size_t)n_ops, nr = (size_t)p->n_ranks;
    m->off = XCALLOC(e, nr + 1, sizeof *m->off);
    m->root_first = XCALLOC(e, nr + 1, sizeof *m->root_first);
    /* cache-line aligned, so that each op's two lines are its own */
    m->x = aligned_alloc(64, (n ? n : 1) * sizeof *m->x);
    if (!m->x) return err_set(e, ERR_NOMEM, "simulate: out of memory for %zu ops", n);
    memset(m->x, 0, n * sizeof *m->x);
    m->step = XCALLOC(e, nr, sizeof *m->step);
    m->n_done = XCALLOC(e, nr, sizeof *m->n_done);
    m->is_dead = XCALLOC(e, nr, sizeof *m->is_dead);
    m->is_done = XCALLOC(e, nr, sizeof *m->is_done);
    m->work = XCALLOC(e, nr, sizeof *m->work);
    if (!m->off || !m->root_first || !m->step || !m->n_done || !m->is_dead || !m->is_done ||
        !m->work)
        return ERR_NOMEM;
    for (int r = 0; r < p->n_ranks; r++) {
        m->off[r + 1] = m->off[r] + (int)p->ranks[r].ops.len;
        for (int g = m->off[r]; g < m->off[r + 1]; g++) m->x[g].rank = r;
        m->n_working += m->off[r + 1] > m->off[r];
    }
    TRY(index_ops(m));
    TRY(index_p2p(m));
    TRY(index_collectives(m));
    TRY(index_servers(m));
    return 0;
}

void sim_index_release(struct sim *m)
{
    free(m->off);
    free(m->x);
    free(m->dependents);
    free(m->roots);
    free(m->root_first);
    free(m->coll_first);
    free(m->coll_ops);
    free(m->coll_cost_s);
    free(m->coll_arrived);
    for (int s = 0; m->servers && s < m->p->n_servers; s++) {
        if (m->servers[s].is_used) ps_server_release(&m->servers[s].ps);
        vec_free(&m->servers[s].waiting);
    }
    free(m->servers);
    free(m->slots);
    free(m->step);
    free(m->n_done);
    free(m->is_dead);
    free(m->is_done);
    free(m->work);
    vec_free(&m->work_free);
}
