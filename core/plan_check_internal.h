/* Private to plan_check.c and plan_run.c: the index of a plan both work on,
 * and the unit-cost run state the deadlock check shares with plan_unit_run.
 *
 * Every op gets a global id g = off[rank] + index, and the relations the
 * semantics of plan.h define are resolved once into arrays over g: the op
 * before and after on its stream, the SEND of each RECV, the collective an
 * ALLREDUCE belongs to, the server round a PUSH feeds and a synchronous PULL
 * waits for. The checks (plan_check.c) build that index; the run
 * (plan_run.c) only follows it. */
#ifndef STRATA_PLAN_CHECK_INTERNAL_H
#define STRATA_PLAN_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "plan.h"
#include "plan_check.h"

struct ck {
    const struct plan *p;
    int n_ops;
    int *off;          /* [n_ranks + 1]: rank r's ops are g = off[r] .. off[r+1) */
    int *rank_of;      /* [n_ops] */
    bool *is_ok;       /* [n_ops]: well formed, so later checks may follow its fields */
    int *prev, *next;  /* [n_ops]: the op before / after it on its stream, or -1 */
    int *partner;      /* [n_ops]: SEND <-> its RECV, or -1 */
    int *inst;         /* [n_ops]: ALLREDUCE: its collective; PUSH: its server round;
                          PULL under sync/backup: the round it waits for; else -1 */
    /* collective c has members coll_ops[coll_first[c] .. coll_first[c+1]) */
    int n_coll, *coll_first, *coll_ops;
    /* server round s (the j-th push of every pushing worker to one server):
     * pushes round_ops[round_first[s] ..), pulls waiting for it
     * pull_ops[pull_first[s] ..), pushes needed before they may start */
    int n_rounds, *round_first, *round_ops, *round_need, *pull_first, *pull_ops;
    /* ops that name each op as a dep: dependents[dep_first[g] .. dep_first[g+1]) */
    int *dep_first, *dependents;
};

static inline const struct op *op_at(const struct ck *c, int g)
{
    return &c->p->ranks[c->rank_of[g]].ops.items[g - c->off[c->rank_of[g]]];
}

/* plan_check.c: the index and the static checks. */

/* Sizes and clears the index of p; the checks fill in the relations. 0,
 * ERR_INPUT (too many ops) or ERR_NOMEM. Call ck_free on every path. */
int ck_init(struct ck *c, const struct plan *p, struct err *e);
void ck_free(struct ck *c);
/* Runs every static check, recording defects in v; 0 or ERR_NOMEM. */
int ck_check_static(struct ck *c, struct plan_verdict *v, struct err *e);

enum { NAME_BYTES = 112 };
/* "rank 1 op 4 (RECV from 0, ACT@1 mb 3)" into buf; returns buf. */
const char *ck_op_name(const struct ck *c, int g, char buf[NAME_BYTES]);

/* plan_run.c: the unit-cost run and the wait-for cycle finder. */

struct event;   /* an op end in the run's min-heap; plan_run.c */

struct run_state {
    struct ck *c;
    double *avail;     /* [n_ops]: latest end among the conditions met so far */
    double *start, *end;
    int *pending;      /* [n_ops]: conditions not met yet */
    bool *is_arrived;  /* [n_ops]: ALLREDUCE: reached its collective */
    bool *is_done;     /* [n_ops] */
    int *coll_arrived; /* [n_coll] */
    double *coll_t;    /* [n_coll]: when the last member so far arrived */
    int *round_done;   /* [n_rounds]: pushes ended */
    struct event *heap;
    int n_heap, n_done;
};

/* Runs a well-formed, matched plan at unit cost into start/end [n_ops]
 * (borrowed); s->n_done < c->n_ops afterwards means deadlock. 0 or
 * ERR_NOMEM. Call ck_run_state_free on every path. */
int ck_unit_run(struct ck *c, struct run_state *s, double *start, double *end, struct err *e);
void ck_run_state_free(struct run_state *s);
/* After a deadlocked run: the blocked cycle, op by op, into buf; returns its
 * first op, or -1 when none was found. *rc is 0 or ERR_NOMEM. */
int ck_cycle_message(const struct run_state *s, char *buf, size_t size, struct err *e, int *rc);

#endif
