/* The prepared plan (see plan_index.h): its storage, and the relations that
 * follow from what the checker matched. Counting sorts and linear passes
 * only: O(ops + ranks + servers). */
#include <stdlib.h>
#include <string.h>

#include "plan_index.h"

void plan_index_free(struct plan_index *ix)
{
    if (!ix) return;
    free(ix->off);
    free(ix->rank_of);
    free(ix->kind);
    free(ix->prev);
    free(ix->next);
    free(ix->first);
    free(ix->dep_first);
    free(ix->dependents);
    free(ix->root_first);
    free(ix->roots);
    free(ix->partner);
    free(ix->coll);
    free(ix->coll_first);
    free(ix->coll_ops);
    free(ix->coll_group);
    free(ix->coll_ordinal);
    free(ix->slot);
    free(ix->j);
    free(ix->slot_server);
    free(ix->slot_worker);
    free(ix->slot_w);
    free(ix->slot_n_push);
    free(ix->round);
    free(ix->round_first);
    free(ix->round_ops);
    free(ix->round_need);
    free(ix->pull_first);
    free(ix->pull_ops);
    free(ix->unit_start);
    free(ix);
}

int plan_index_create(const struct plan *p, struct plan_index **out, struct err *e)
{
    *out = NULL;
    int64_t n = plan_n_ops(p);
    if (n > (1 << 30))
        return err_set(e, ERR_INPUT, "a plan of %lld ops is too large to check", (long long)n);
    struct plan_index *ix = XCALLOC(e, 1, sizeof *ix);
    if (!ix) return ERR_NOMEM;
    ix->p = p;
    ix->n_ranks = p->n_ranks;
    ix->n_ops = (int)n;
    size_t un = (size_t)n, nr = (size_t)p->n_ranks;
    ix->off = XCALLOC(e, nr + 1, sizeof *ix->off);
    ix->rank_of = XCALLOC(e, un, sizeof *ix->rank_of);
    ix->kind = XCALLOC(e, un + 1, sizeof *ix->kind);
    ix->prev = XCALLOC(e, un, sizeof *ix->prev);
    ix->next = XCALLOC(e, un, sizeof *ix->next);
    ix->partner = XCALLOC(e, un, sizeof *ix->partner);
    ix->coll = XCALLOC(e, un, sizeof *ix->coll);
    ix->slot = XCALLOC(e, un, sizeof *ix->slot);
    ix->j = XCALLOC(e, un, sizeof *ix->j);
    ix->round = XCALLOC(e, un, sizeof *ix->round);
    if (!ix->off || !ix->rank_of || !ix->kind || !ix->prev || !ix->next || !ix->partner || !ix->coll ||
        !ix->slot || !ix->j || !ix->round) {
        plan_index_free(ix);
        return ERR_NOMEM;
    }
    for (int r = 0; r < p->n_ranks; r++) {
        ix->off[r + 1] = ix->off[r] + (int)p->ranks[r].ops.len;
        for (int g = ix->off[r]; g < ix->off[r + 1]; g++) ix->rank_of[g] = r;
    }
    memset(ix->kind, OP_N_KINDS, un);
    for (int g = 0; g < ix->n_ops; g++)
        ix->prev[g] = ix->next[g] = ix->partner[g] = ix->coll[g] = ix->slot[g] = ix->j[g] =
            ix->round[g] = -1;
    *out = ix;
    return 0;
}

/* The first op of each stream; roots; reverse deps by a counting sort, so
 * each op's dependents come in ascending g. */
static int derive_deps(struct plan_index *ix, struct err *e)
{
    const struct plan *p = ix->p;
    size_t n_edges = 0;
    for (int r = 0; r < p->n_ranks; r++) n_edges += p->ranks[r].deps.len;
    ix->first = XCALLOC(e, (size_t)ix->n_ranks * PLAN_N_STREAMS, sizeof *ix->first);
    ix->dep_first = XCALLOC(e, (size_t)ix->n_ops + 2, sizeof *ix->dep_first);
    ix->dependents = XCALLOC(e, n_edges + 1, sizeof *ix->dependents);
    ix->root_first = XCALLOC(e, (size_t)ix->n_ranks + 1, sizeof *ix->root_first);
    ix->roots = XCALLOC(e, (size_t)ix->n_ops + 1, sizeof *ix->roots);
    if (!ix->first || !ix->dep_first || !ix->dependents || !ix->root_first || !ix->roots)
        return ERR_NOMEM;
    for (int k = 0; k < ix->n_ranks * PLAN_N_STREAMS; k++) ix->first[k] = -1;
    int n_roots = 0;
    for (int r = 0; r < p->n_ranks; r++) {
        ix->root_first[r] = n_roots;
        for (int g = ix->off[r]; g < ix->off[r + 1]; g++) {
            const struct op *op = plan_index_op(ix, g);
            if (ix->prev[g] < 0) {
                int *f = &ix->first[r * PLAN_N_STREAMS + op->stream];
                if (*f < 0) *f = g;
                if (op->n_deps == 0) ix->roots[n_roots++] = g;
            }
            const int *deps = plan_deps(p, r, g - ix->off[r]);
            for (int k = 0; k < op->n_deps; k++) ix->dep_first[ix->off[r] + deps[k] + 2]++;
        }
    }
    ix->root_first[p->n_ranks] = n_roots;
    for (int g = 0; g < ix->n_ops; g++) ix->dep_first[g + 2] += ix->dep_first[g + 1];
    for (int r = 0; r < p->n_ranks; r++) {
        const struct plan_rank *pr = &p->ranks[r];
        for (int i = 0; i < (int)pr->ops.len; i++) {
            const int *deps = pr->deps.items + pr->ops.items[i].dep_first;
            for (int k = 0; k < pr->ops.items[i].n_deps; k++)
                ix->dependents[ix->dep_first[ix->off[r] + deps[k] + 1]++] = ix->off[r] + i;
        }
    }
    return 0;
}

/* Each collective's group, and its ordinal among the group's. */
static int derive_collectives(struct plan_index *ix, struct err *e)
{
    ix->coll_group = XCALLOC(e, (size_t)ix->n_coll + 1, sizeof *ix->coll_group);
    ix->coll_ordinal = XCALLOC(e, (size_t)ix->n_coll + 1, sizeof *ix->coll_ordinal);
    if (!ix->coll_group || !ix->coll_ordinal) return ERR_NOMEM;
    for (int k = 0; k < ix->n_coll; k++) {
        ix->coll_group[k] = plan_index_op(ix, ix->coll_ops[ix->coll_first[k]])->group;
        ix->coll_ordinal[k] =
            k > 0 && ix->coll_group[k - 1] == ix->coll_group[k] ? ix->coll_ordinal[k - 1] + 1 : 0;
    }
    return 0;
}

/* Slots by server, then worker: a first pass counts each server's workers
 * (a rank pushing to server s is new to s when s's last pusher was
 * another rank; ranks come in ascending order), a second numbers them.
 * j counts a rank's ops of one kind to one server, reset per rank. */
static int derive_servers(struct plan_index *ix, struct err *e)
{
    const struct plan *p = ix->p;
    int ns = p->n_servers, nw = p->n_workers;
    int *last = XCALLOC(e, (size_t)ns + 1, sizeof *last);        /* the last rank seen per server */
    int *first = XCALLOC(e, (size_t)ns + 2, sizeof *first);      /* each server's first slot */
    int *cur = XCALLOC(e, (size_t)ns + 1, sizeof *cur);          /* rank's slot at each server */
    int *count = XCALLOC(e, 2 * (size_t)ns + 1, sizeof *count);  /* rank's pushes, pulls per server */
    int rc = ERR_NOMEM;
    if (!last || !first || !cur || !count) goto done;
    for (int s = 0; s < ns; s++) last[s] = -1;
    /* the kind bytes pick out the PUSH and PULL ops: no other op is read */
    for (int g = 0; g < ix->n_ops && ns > 0; g++) {
        if (ix->kind[g] != OP_PUSH) continue;
        int s = plan_index_op(ix, g)->peer - nw;
        if (last[s] != ix->rank_of[g]) {
            last[s] = ix->rank_of[g];
            first[s + 2]++;
        }
    }
    for (int s = 0; s < ns; s++) first[s + 2] += first[s + 1];
    ix->n_slots = first[ns + 1];
    size_t n = (size_t)ix->n_slots + 1;
    ix->slot_server = XCALLOC(e, n, sizeof *ix->slot_server);
    ix->slot_worker = XCALLOC(e, n, sizeof *ix->slot_worker);
    ix->slot_w = XCALLOC(e, n, sizeof *ix->slot_w);
    ix->slot_n_push = XCALLOC(e, n, sizeof *ix->slot_n_push);
    if (!ix->slot_server || !ix->slot_worker || !ix->slot_w || !ix->slot_n_push) goto done;
    for (int s = 0; s < ns; s++) last[s] = -1;
    for (int r = 0; r < p->n_workers && ns > 0; r++) {
        /* pushes first, so that a pull before its rank's first push finds the slot */
        for (int g = ix->off[r]; g < ix->off[r + 1]; g++) {
            if (ix->kind[g] != OP_PUSH) continue;
            const struct op *op = plan_index_op(ix, g);
            int s = op->peer - nw;
            if (last[s] != r) {
                last[s] = r;
                cur[s] = first[s + 1]++;
                ix->slot_server[cur[s]] = op->peer;
                ix->slot_worker[cur[s]] = r;
            }
            ix->slot[g] = cur[s];
            ix->slot_n_push[cur[s]]++;
        }
        for (int g = ix->off[r]; g < ix->off[r + 1]; g++) {
            if (ix->kind[g] != OP_PUSH && ix->kind[g] != OP_PULL) continue;
            const struct op *op = plan_index_op(ix, g);
            int s = op->peer - nw;
            if (op->kind == OP_PULL && last[s] == r) ix->slot[g] = cur[s];
            ix->j[g] = count[2 * s + (op->kind == OP_PULL)]++;
        }
        for (int g = ix->off[r]; g < ix->off[r + 1]; g++) {
            if (ix->kind[g] != OP_PUSH && ix->kind[g] != OP_PULL) continue;
            int s = plan_index_op(ix, g)->peer - nw;
            count[2 * s] = count[2 * s + 1] = 0;
        }
    }
    for (int k = 1; k < ix->n_slots; k++)
        if (ix->slot_server[k] == ix->slot_server[k - 1]) ix->slot_w[k] = ix->slot_w[k - 1] + 1;
    rc = 0;
done:
    free(last);
    free(first);
    free(cur);
    free(count);
    return rc;
}

int plan_index_derive(struct plan_index *ix, struct err *e)
{
    TRY(derive_deps(ix, e));
    TRY(derive_collectives(ix, e));
    return derive_servers(ix, e);
}
