/* A prepared plan: the relations core/plan.h defines between a plan's ops,
 * resolved once, for every executor to follow instead of working them out
 * again (SQLite prepares a statement once and every step of the VDBE reads
 * the prepared program).
 *
 * Every op has a global id g = off[rank] + its index in the rank's program;
 * every relation is a flat int array over g (or over the collectives, slots
 * and rounds), -1 where it does not apply. plan_prepare (plan_check.h)
 * checks a plan and returns its index; an index exists only for a valid
 * plan, so its relations are complete: each SEND has its RECV, each
 * collective op its collective, each PUSH its slot.
 *
 * Cost: O(ops log ops) once, in plan_prepare; reading it is O(1). */
#ifndef STRATA_PLAN_INDEX_H
#define STRATA_PLAN_INDEX_H

#include <stdint.h>

#include "err.h"
#include "plan.h"

struct plan_index {
    const struct plan *p;   /* borrowed: outlives the index */
    int n_ranks, n_ops;
    int *off;               /* [n_ranks + 1]: rank r's ops are g = off[r] .. off[r+1) */
    int *rank_of;           /* [n_ops] */
    /* [n_ops]: op g's enum op_kind, OP_N_KINDS until the checker has found
     * it well formed (so never in a valid plan's index). A byte an op: the
     * passes that look for a few kinds (messages, collectives, servers) read
     * 1.8 MB at 100,000 devices instead of the ops' 144 MB (struct op is 80
     * bytes), and touch an op only when it is one they want. */
    uint8_t *kind;

    /* streams: program order of each (rank, stream) */
    int *prev, *next;       /* [n_ops]: the op before / after it on its stream */
    int *first;             /* [n_ranks * PLAN_N_STREAMS]: the first op of each stream */

    /* deps: the ops that name g as a dep are dependents[dep_first[g] .. dep_first[g+1]),
     * ascending; roots[root_first[r] ..) are rank r's ops with no stream
     * predecessor and no deps, in program order */
    int *dep_first;         /* [n_ops + 1] */
    int *dependents;
    int *root_first;        /* [n_ranks + 1] */
    int *roots;

    /* messages: a SEND's RECV and a RECV's SEND (same sender, receiver, tag) */
    int *partner;           /* [n_ops] */

    /* collectives: collective k is the coll_ordinal[k]-th collective op on group
     * coll_group[k] of every member; its ops coll_ops[coll_first[k] ..
     * coll_first[k+1]) in the group's rank order. Numbered by group, then
     * ordinal. */
    int *coll;              /* [n_ops]: ALLREDUCE, REDUCE_SCATTER, ALL_GATHER: its collective */
    int n_coll;
    int *coll_first;        /* [n_coll + 1] */
    int *coll_ops;
    int *coll_group, *coll_ordinal;   /* [n_coll] */

    /* parameter servers: a slot is one (server, worker that pushes to it)
     * pair; slots are numbered by server, then worker rank, and slot_w is
     * the worker's position among the server's workers (its index in the
     * server's policy). */
    int *slot;              /* [n_ops]: PUSH/PULL: its slot; -1 for a PULL from a
                               server its rank never pushes to */
    int *j;                 /* [n_ops]: PUSH/PULL: its ordinal among its rank's ops of
                               the same kind to the same server in the step */
    int n_slots;
    int *slot_server;       /* [n_slots]: the server's rank */
    int *slot_worker;       /* [n_slots]: the worker's rank */
    int *slot_w;            /* [n_slots] */
    int *slot_n_push;       /* [n_slots]: the worker's pushes to the server a step */

    /* synchronous servers (POLICY_SYNC, POLICY_BACKUP): round s is the j-th
     * push of every worker pushing to one server; its pushes
     * round_ops[round_first[s] ..), the pushes that complete it
     * round_need[s], the pulls waiting for it pull_ops[pull_first[s] ..).
     * No rounds under the other policies. */
    int *round;             /* [n_ops]: PUSH: its round; PULL: the round it waits for */
    int n_rounds;
    int *round_first, *round_ops, *round_need, *pull_first, *pull_ops;

    /* the unit-cost run that proved the plan free of deadlock: when each
     * op starts (it ends plan_unit_cost later) */
    double *unit_start;     /* [n_ops] */
};

/* Op g of the indexed plan. */
static inline const struct op *plan_index_op(const struct plan_index *ix, int g)
{
    int r = ix->rank_of[g];
    return &ix->p->ranks[r].ops.items[g - ix->off[r]];
}

/* The global id of op i of rank r. */
static inline int plan_index_g(const struct plan_index *ix, int r, int i)
{
    return ix->off[r] + i;
}

/* An index of p with the per-op arrays sized and every relation -1 (off and
 * rank_of filled, every kind OP_N_KINDS): what the checker fills in. ERR_INPUT (too many ops) or
 * ERR_NOMEM; *out NULL then. */
int plan_index_create(const struct plan *p, struct plan_index **out, struct err *e);

/* Once the checker has filled prev/next, partner, collectives and rounds of
 * a plan without defects: the relations that follow from them (first,
 * dependents, roots, collective groups and ordinals, slots and j). 0 or
 * ERR_NOMEM. */
int plan_index_derive(struct plan_index *ix, struct err *e);

/* Accepts NULL. */
void plan_index_free(struct plan_index *ix);

#endif
