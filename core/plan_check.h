/* The static checker: proves a plan well formed and free of deadlock before
 * anything runs it, and runs it abstractly at unit cost.
 *
 * plan_check finds, each with the rank and op index it concerns:
 *  - malformed ops: layers outside the model or empty, a peer that is not a
 *    worker (SEND/RECV) or not a server holding those layers (PUSH/PULL), a
 *    group the rank is not in, a stream out of range, ops on a server rank;
 *  - a SEND without exactly one matching RECV (same sender, receiver, tag,
 *    bytes), and a RECV without its SEND;
 *  - a group member that does not reach the group's all-reduces in the same
 *    order, with the same layers, as the other members;
 *  - deadlock: the wait-for graph (stream order and deps within a rank,
 *    SEND -> RECV, each collective one node, server joins for synchronous
 *    policies) has a cycle; the cycle is named op by op.
 * The deadlock check is the unit-cost run itself: if it cannot finish, the
 * ops it is stuck on form the cycle.
 *
 * The checks resolve every relation between the plan's ops on the way
 * (core/plan_index.h); plan_prepare hands that index out, so that a plan is
 * checked once and every executor follows the same relations. */
#ifndef STRATA_PLAN_CHECK_H
#define STRATA_PLAN_CHECK_H

#include <stdbool.h>

#include "err.h"
#include "plan.h"
#include "plan_index.h"

#define PLAN_MAX_DEFECTS 16

struct plan_defect {
    int rank;                /* -1 when the defect is not one rank's */
    int op;                  /* op index in that rank's program, -1 when none */
    char msg[512];           /* "SEND to rank 2 tag ACT@1 mb 3 has no matching RECV" */
};

struct plan_verdict {
    bool is_valid;
    bool has_deadlock;                           /* the one defect is the unit-cost run's cycle */
    int n_defects;                               /* all found */
    struct plan_defect defects[PLAN_MAX_DEFECTS];  /* the first ones */
};

/* Checks p into v and, when p is valid and ix is not NULL, returns its
 * index in *ix (NULL otherwise; the caller frees it with plan_index_free,
 * before p). Returns 0 when the check ran (whatever it found), or
 * ERR_NOMEM (ERR_INPUT: too many ops). */
int plan_prepare(const struct plan *p, struct plan_verdict *v, struct plan_index **ix,
                 struct err *e);

/* plan_prepare without the index: only the verdict. */
int plan_check(const struct plan *p, struct plan_verdict *v, struct err *e);

/* Unit cost, the textbook picture: FORWARD takes hi-lo time units (one per
 * layer, whatever the microbatch size), BACKWARD twice that, each of its
 * zero-bubble halves (BACKWARD_INPUT, BACKWARD_WEIGHT) as much as FORWARD,
 * everything else is free. */
double plan_unit_cost(const struct op *op);

struct plan_times {
    int n_ranks;
    double makespan;          /* time units until the last op ends */
    double **start, **end;    /* [rank][op]: rows into storage, borrowed from it */
    double *busy_compute;     /* [rank]: time units of compute ops */
    double *storage;          /* owns start/end rows: every op's start, then every op's end */
};

/* The unit-cost times of a prepared plan: the run plan_prepare made to
 * prove it free of deadlock. Release t with plan_times_release. */
int plan_unit_times(const struct plan_index *ix, struct plan_times *t, struct err *e);

/* Prepares p and returns its unit-cost times: ERR_RUN when p has defects
 * (on deadlock, with the blocked cycle in e). Release t with
 * plan_times_release. */
int plan_unit_run(const struct plan *p, struct plan_times *t, struct err *e);
void plan_times_release(struct plan_times *t);

/* Idle share of the compute stream of worker ranks that own layers, over
 * the makespan: (p-1)/(m+p-1) for GPipe and 1F1B with equal stages. */
double plan_unit_bubble(const struct plan *p, const struct plan_times *t);

#endif
