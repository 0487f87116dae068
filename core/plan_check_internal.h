/* Private to plan_check.c and plan_run.c: the checker's state over the
 * index it builds (core/plan_index.h), and the unit-cost run state the
 * deadlock check shares with plan_unit_run.
 *
 * The checks (plan_check.c) fill in the relations of the index as they
 * match ops, recording a defect wherever the semantics of plan.h are
 * broken; the run (plan_run.c) only follows a complete index. */
#ifndef STRATA_PLAN_CHECK_INTERNAL_H
#define STRATA_PLAN_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "plan.h"
#include "plan_check.h"
#include "plan_index.h"

struct ck {
    const struct plan *p;
    struct plan_index *ix;   /* owned until plan_prepare hands it out */
    /* well-formed ops of each kind: ix->kind[g] names g's kind once it is
     * well formed, so that later checks may follow its fields */
    int n_of_kind[OP_N_KINDS];
};

static inline bool ck_is_ok(const struct ck *c, int g)
{
    return c->ix->kind[g] != OP_N_KINDS;
}

/* plan_check.c: the index and the static checks. */

/* Makes the index of p, its relations cleared; the checks fill them in. 0,
 * ERR_INPUT (too many ops) or ERR_NOMEM. Call ck_free on every path. */
int ck_init(struct ck *c, const struct plan *p, struct err *e);
void ck_free(struct ck *c);
/* Runs every static check, recording defects in v; 0 or ERR_NOMEM. */
int ck_check_static(struct ck *c, struct plan_verdict *v, struct err *e);

enum { NAME_BYTES = 112 };
/* "rank 1 op 4 (RECV from 0, ACT@1 mb 3)" into buf; returns buf. */
const char *ck_op_name(const struct plan_index *ix, int g, char buf[NAME_BYTES]);

/* plan_run.c: the unit-cost run and the wait-for cycle finder. */

/* One op's state in the run: eight bytes. Until the op is ready its start
 * (s->start) holds the latest end among the conditions met so far, which
 * is its start once the last is met; an op enters the queue only when its
 * last condition is met, so it no longer needs a count of them then, and
 * the same field links it into its bucket. */
struct run_op {
    union {
        int pending;   /* conditions not met yet, until it is queued */
        int queue_next;   /* queued: the op after it in its bucket, -1 last */
    };
    int cost_units;    /* plan_unit_cost: a whole number of layer units */
};

/* s->kind[g]: the op's kind in the low bits, and two flags for the cycle
 * finder: one byte an op, so its reads stay in cache. */
enum { RUN_KIND_MASK = 0x3f, RUN_ARRIVED = 0x40, RUN_DONE = 0x80 };

struct run_state {
    const struct plan_index *ix;
    double *start;          /* [n_ops], borrowed, zeroed: when each op that ran started */
    struct run_op *ops;     /* [n_ops] */
    uint8_t *kind;          /* [n_ops]: enum op_kind | RUN_ARRIVED (a collective op reached
                             * its collective) | RUN_DONE (ended) */
    int *coll_arrived;      /* [n_coll] */
    double *coll_t;         /* [n_coll]: when the last member so far arrived */
    int *round_done;        /* [n_rounds]: pushes ended */
    /* the queue of op ends: a ring of buckets, one a time unit (plan_run.c) */
    int *bucket_first, *bucket_last;   /* [bucket_mask + 1]: -1 when empty */
    uint64_t *nonempty;     /* [(bucket_mask + 1) / 64]: a bit a non-empty bucket */
    int64_t bucket_mask, now_units;
    int n_queued, n_done;
};

static inline bool run_is_done(const struct run_state *s, int g)
{
    return s->kind[g] & RUN_DONE;
}

static inline bool run_is_arrived(const struct run_state *s, int g)
{
    return s->kind[g] & RUN_ARRIVED;
}

/* Runs a well-formed, matched plan (its index derived) at unit cost into
 * start [n_ops] (borrowed, zeroed; an op's end is its start plus plan_unit_cost);
 * s->n_done < ix->n_ops afterwards means deadlock. 0 or ERR_NOMEM. Call
 * ck_run_state_free on every path. */
int ck_unit_run(const struct plan_index *ix, struct run_state *s, double *start, struct err *e);
void ck_run_state_free(struct run_state *s);
/* After a deadlocked run: the blocked cycle, op by op, into buf; returns its
 * first op, or -1 when none was found. *rc is 0 or ERR_NOMEM. */
int ck_cycle_message(const struct run_state *s, char *buf, size_t size, struct err *e, int *rc);

#endif
