/* Tests for core/plan_index.c: the relations plan_prepare resolves, on small
 * hand-built plans whose answers are worked out by hand, and on the plan of
 * every registered strategy against a brute-force reading of the plan. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <string.h>

#include "../core/config.h"
#include "../core/plan_check.h"
#include "../strategies/strategy.h"

/* Every test's workload: 4 dense layers. */
TEST_SUITE_WITH_WORKLOAD(index, wl, "mlp:784-256-256-256-10");

/* The index of a plan that must be valid. */
static struct plan_index *prepare(const struct plan *p)
{
    struct err e = {0};
    struct plan_verdict v;
    struct plan_index *ix = NULL;
    cr_assert_eq(plan_build_status(p, &e), 0, "%s", e.msg);
    cr_assert_eq(plan_prepare(p, &v, &ix, &e), 0, "%s", e.msg);
    cr_assert(v.is_valid, "%s: %s", p->strategy, v.n_defects ? v.defects[0].msg : "");
    cr_assert_not_null(ix);
    cr_assert_eq(ix->p, p);
    return ix;
}

Test(index, an_invalid_plan_has_no_index)
{
    struct err e = {0};
    struct plan *p = plan_create("hand", wl, 2, 0, 8, 1, &e);
    plan_send(p, 0, 1, TAG_ACT, 2, 0, 8, NO_DEPS);   /* no RECV */
    struct plan_verdict v;
    struct plan_index *ix = (struct plan_index *)&v;   /* must be overwritten */
    cr_assert_eq(plan_prepare(p, &v, &ix, &e), 0, "%s", e.msg);
    cr_assert(!v.is_valid);
    cr_assert_null(ix);
    plan_free(p);
}

/* Two stages, two microbatches, GPipe order; op indices:
 *   rank 0: F0 S0 F1 S1 R0 B0 R1 B1       (SEND activations, RECV gradients)
 *   rank 1: R0 F0 B0 S0 R1 F1 B1 S1       (g = 8 + index) */
Test(index, sends_and_recvs_pair_by_sender_receiver_and_tag)
{
    struct err e = {0};
    struct plan *p = plan_create("hand", wl, 2, 0, 16, 2, &e);
    for (int mb = 0; mb < 2; mb++) {
        int f = plan_forward(p, 0, 0, 2, mb, 8, NO_DEPS);
        plan_send(p, 0, 1, TAG_ACT, 2, mb, 8, DEPS(f));
    }
    for (int mb = 0; mb < 2; mb++) {
        int r = plan_recv(p, 1, 0, TAG_ACT, 2, mb, 8, NO_DEPS);
        int f = plan_forward(p, 1, 2, 4, mb, 8, DEPS(r));
        int b = plan_backward(p, 1, 2, 4, mb, 8, DEPS(f));
        plan_send(p, 1, 0, TAG_GRAD, 2, mb, 8, DEPS(b));
    }
    for (int mb = 0; mb < 2; mb++) {
        int r = plan_recv(p, 0, 1, TAG_GRAD, 2, mb, 8, NO_DEPS);
        plan_backward(p, 0, 0, 2, mb, 8, DEPS(r));
    }
    struct plan_index *ix = prepare(p);
    cr_assert_eq(ix->n_ops, 16);
    cr_assert_eq(ix->off[1], 8);
    /* rank 0's SEND mb 1 (op 3) is rank 1's RECV mb 1 (op 4), and back */
    cr_assert_eq(ix->partner[3], 8 + 4);
    cr_assert_eq(ix->partner[8 + 4], 3);
    cr_assert_eq(ix->partner[1], 8 + 0);
    /* rank 1's gradient SEND of mb 0 (op 3) is rank 0's RECV op 4 */
    cr_assert_eq(ix->partner[8 + 3], 4);
    cr_assert_eq(ix->partner[4], 8 + 3);
    cr_assert_eq(ix->partner[0], -1, "a FORWARD has no partner");
    /* streams: rank 0's comm ops are 1, 3, 4, 6; compute 0, 2, 5, 7 */
    cr_assert_eq(ix->first[0 * PLAN_N_STREAMS + STREAM_COMM], 1);
    cr_assert_eq(ix->next[1], 3);
    cr_assert_eq(ix->next[3], 4);
    cr_assert_eq(ix->prev[4], 3);
    cr_assert_eq(ix->next[6], -1);
    cr_assert_eq(ix->next[2], 5);
    /* roots: ops with no stream predecessor and no deps: rank 0's F0,
     * rank 1's R0 */
    cr_assert_eq(ix->root_first[1] - ix->root_first[0], 1);
    cr_assert_eq(ix->roots[ix->root_first[0]], 0);
    cr_assert_eq(ix->roots[ix->root_first[1]], 8);
    /* F0 of rank 0 (op 0) is named as a dep by its SEND (op 1) only */
    cr_assert_eq(ix->dep_first[1] - ix->dep_first[0], 1);
    cr_assert_eq(ix->dependents[ix->dep_first[0]], 1);
    plan_index_free(ix);
    plan_free(p);
}

Test(index, allreduces_form_collectives_numbered_by_group_then_ordinal)
{
    struct err e = {0};
    struct plan *p = plan_create("hand", wl, 3, 0, 24, 1, &e);
    int all = plan_add_group(p, (const int[]){2, 0, 1}, 3);
    int pair = plan_add_group(p, (const int[]){1, 2}, 2);
    for (int r = 0; r < 3; r++) {
        int b = plan_backward(p, r, 0, 4, 0, 8, NO_DEPS);
        if (r > 0) plan_allreduce(p, r, pair, 2, 4, DEPS(b));    /* rank r op 1 */
        plan_allreduce(p, r, all, 2, 4, DEPS(b));
        plan_allreduce(p, r, all, 0, 2, DEPS(b));
    }
    struct plan_index *ix = prepare(p);
    cr_assert_eq(ix->n_coll, 3, "two on group 0, one on group 1");
    for (int k = 0; k < 3; k++)
        cr_assert_eq(ix->coll_group[k], k < 2 ? all : pair);
    cr_assert_eq(ix->coll_ordinal[0], 0);
    cr_assert_eq(ix->coll_ordinal[1], 1);
    cr_assert_eq(ix->coll_ordinal[2], 0);
    /* collective 1: the second all-reduce on group 0 of ranks 0, 1, 2 in
     * rank order: rank 0 op 2, rank 1 op 3, rank 2 op 3 */
    cr_assert_eq(ix->coll_first[2] - ix->coll_first[1], 3);
    cr_assert_eq(ix->coll_ops[ix->coll_first[1] + 0], plan_index_g(ix, 0, 2));
    cr_assert_eq(ix->coll_ops[ix->coll_first[1] + 1], plan_index_g(ix, 1, 3));
    cr_assert_eq(ix->coll_ops[ix->coll_first[1] + 2], plan_index_g(ix, 2, 3));
    cr_assert_eq(ix->coll[plan_index_g(ix, 1, 1)], 2);
    cr_assert_eq(ix->coll[plan_index_g(ix, 2, 2)], 0);
    cr_assert_eq(ix->coll[plan_index_g(ix, 2, 0)], -1);
    plan_index_free(ix);
    plan_free(p);
}

/* Workers 0..2, servers 3 (layers [0,2)) and 4 ([2,4)), async: worker 1
 * pushes server 4 twice, worker 2 only pulls from server 4. */
Test(index, pushes_and_pulls_get_their_slot_and_ordinal)
{
    struct err e = {0};
    struct plan *p = plan_create("hand", wl, 3, 2, 24, 1, &e);
    p->policy = POLICY_ASYNC;
    p->ranks[3].shard_lo = 0, p->ranks[3].shard_hi = 2;
    p->ranks[4].shard_lo = 2, p->ranks[4].shard_hi = 4;
    for (int r = 0; r < 2; r++) {
        int b = plan_backward(p, r, 0, 4, 0, 8, NO_DEPS);
        int a = plan_push(p, r, 4, 2, 4, DEPS(b));       /* op 1 */
        if (r == 1) a = plan_push(p, r, 4, 2, 4, DEPS(a));   /* rank 1 op 2 */
        plan_push(p, r, 3, 0, 2, DEPS(b));
        plan_pull(p, r, 3, 0, 2, DEPS(a));
        plan_pull(p, r, 4, 2, 4, DEPS(a));
        plan_pull(p, r, 4, 2, 4, DEPS(a));
    }
    plan_pull(p, 2, 4, 2, 4, NO_DEPS);
    struct plan_index *ix = prepare(p);
    /* slots by server, then worker: (3,0) (3,1) (4,0) (4,1) */
    cr_assert_eq(ix->n_slots, 4);
    const int server[] = {3, 3, 4, 4}, worker[] = {0, 1, 0, 1}, n_push[] = {1, 1, 1, 2};
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(ix->slot_server[k], server[k], "slot %d", k);
        cr_assert_eq(ix->slot_worker[k], worker[k], "slot %d", k);
        cr_assert_eq(ix->slot_w[k], worker[k], "slot %d", k);
        cr_assert_eq(ix->slot_n_push[k], n_push[k], "slot %d", k);
    }
    /* rank 1: B, PUSH 4 (j 0), PUSH 4 (j 1), PUSH 3 (j 0), PULL 3 (j 0),
     * PULL 4 (j 0), PULL 4 (j 1) */
    const int j1[] = {-1, 0, 1, 0, 0, 0, 1}, slot1[] = {-1, 3, 3, 1, 1, 3, 3};
    for (int i = 0; i < 7; i++) {
        cr_assert_eq(ix->j[plan_index_g(ix, 1, i)], j1[i], "rank 1 op %d", i);
        cr_assert_eq(ix->slot[plan_index_g(ix, 1, i)], slot1[i], "rank 1 op %d", i);
    }
    /* a pull from a server its rank never pushes to has an ordinal, no slot */
    cr_assert_eq(ix->j[plan_index_g(ix, 2, 0)], 0);
    cr_assert_eq(ix->slot[plan_index_g(ix, 2, 0)], -1);
    cr_assert_eq(ix->n_rounds, 0, "async servers have no rounds");
    plan_index_free(ix);
    plan_free(p);
}

/* ---- every registered strategy, against the plan read the slow way ------- */

static int brute_next(const struct plan *p, int r, int i)
{
    const struct plan_rank *pr = &p->ranks[r];
    for (size_t k = (size_t)i + 1; k < pr->ops.len; k++)
        if (pr->ops.items[k].stream == pr->ops.items[i].stream) return (int)k;
    return -1;
}

/* Earlier ops of rank r like op i: same kind and the same peer (PUSH,
 * PULL) or group (ALLREDUCE). */
static int brute_ordinal(const struct plan *p, int r, int i)
{
    const struct op *o = &p->ranks[r].ops.items[i];
    int n = 0;
    for (int k = 0; k < i; k++) {
        const struct op *q = &p->ranks[r].ops.items[k];
        n += q->kind == o->kind && q->peer == o->peer && q->group == o->group;
    }
    return n;
}

static void assert_index_matches_plan(const struct plan_index *ix, const char *name)
{
    const struct plan *p = ix->p;
    int n_dependents = 0;
    for (int r = 0; r < p->n_ranks; r++)
        for (int i = 0; i < (int)p->ranks[r].ops.len; i++) {
            int g = plan_index_g(ix, r, i);
            const struct op *o = &p->ranks[r].ops.items[i];
            int nx = brute_next(p, r, i);
            cr_assert_eq(ix->kind[g], o->kind, "%s: rank %d op %d", name, r, i);
            cr_assert_eq(ix->next[g], nx < 0 ? -1 : plan_index_g(ix, r, nx), "%s: rank %d op %d",
                         name, r, i);
            n_dependents += o->n_deps;
            if (o->kind == OP_SEND || o->kind == OP_RECV) {
                int q = ix->partner[g];
                cr_assert_geq(q, 0, "%s: rank %d op %d has no partner", name, r, i);
                const struct op *m = plan_index_op(ix, q);
                cr_assert_eq(ix->rank_of[q], o->peer, "%s", name);
                cr_assert_eq(m->peer, r, "%s", name);
                cr_assert_eq(m->tag, o->tag, "%s", name);
                cr_assert_neq(m->kind, o->kind, "%s", name);
                cr_assert_eq(ix->partner[q], g, "%s", name);
            }
            if (o->kind == OP_ALLREDUCE) {
                int k = ix->coll[g];
                cr_assert_eq(ix->coll_group[k], o->group, "%s", name);
                cr_assert_eq(ix->coll_ordinal[k], brute_ordinal(p, r, i), "%s: rank %d op %d",
                             name, r, i);
                cr_assert_eq(ix->coll_first[k + 1] - ix->coll_first[k],
                             p->groups.items[o->group].n_ranks, "%s", name);
            }
            if (o->kind == OP_PUSH || o->kind == OP_PULL) {
                cr_assert_eq(ix->j[g], brute_ordinal(p, r, i), "%s: rank %d op %d", name, r, i);
                int s = ix->slot[g];
                if (o->kind == OP_PUSH) cr_assert_geq(s, 0, "%s", name);
                if (s >= 0) {
                    cr_assert_eq(ix->slot_server[s], o->peer, "%s", name);
                    cr_assert_eq(ix->slot_worker[s], r, "%s", name);
                }
            }
        }
    cr_assert_eq(ix->dep_first[ix->n_ops], n_dependents, "%s", name);
}

Test(index, every_strategy_index_matches_its_plan)
{
    for (size_t k = 0; k < strategy_count; k++) {
        const struct strategy *st = &strategy_registry[k];
        for (int devices = 1; devices <= 4; devices *= 2) {
            struct config c;
            config_init(&c);
            c.devices = devices;
            c.batch = 64;
            c.microbatches = 4;
            c.servers = 2;
            c.chunks = wl->n_layers / devices;   /* interleaved: a layer per chunk */
            snprintf(c.model, sizeof c.model, "%s", wl->spec);
            struct err e = {0};
            struct plan *p = NULL;
            cr_assert_eq(strategy_build(st, &c, wl, &p, &e), 0, "%s: %s", st->name, e.msg);
            struct plan_index *ix = prepare(p);
            assert_index_matches_plan(ix, st->name);
            plan_index_free(ix);
            plan_free(p);
            config_release(&c);
        }
    }
}
