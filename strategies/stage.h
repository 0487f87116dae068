/* Layer-parallel stages: the pieces model.c and pipeline.c compose into
 * schedules, and the build around a schedule. Worker i is stage i (of
 * replica 0, with --dp D: see struct stages) and holds layers [bounds[i], bounds[i+1]);
 * activations cross a stage boundary forward (tag ACT) and their gradients
 * cross it backward (tag GRAD), one message per microbatch. */
#ifndef STRATA_STAGE_H
#define STRATA_STAGE_H

#include <stdbool.h>

#include "../core/budget.h"
#include "../core/config.h"
#include "../core/err.h"
#include "../core/plan.h"
#include "../core/workload.h"

struct stages {
    int n;                 /* stages = --devices / --dp */
    int *bounds;           /* [n + 1]: stage i holds layers [bounds[i], bounds[i+1]) */
    int batch;             /* samples per step through every stage of one replica */
    int n_microbatches;    /* the batch split as partition_share says */
    int *fwd_op;           /* [n_microbatches]: the current stage's FORWARD of each mb */

    /* Hybrid data x pipeline parallelism (--dp D): D replicas of the n
     * stages, replica d's stage i on rank d n + i, each replica a share of
     * the global batch (partition_share). Stage i's gradients are summed
     * over its D copies, group stage_group + i, in buckets of cap_bytes
     * (mirrored's), each all-reduce right after the backward of its layers
     * on the stage's last microbatch. D = 1: none of that. */
    int n_replicas;        /* D */
    int replica;           /* the replica being scheduled */
    int stage_group;       /* the plan group of stage 0's copies; -1 when D = 1 */
    double cap_bytes;      /* --bucket-mb in bytes */
    int n_backward;        /* the current stage's backwards scheduled so far */
    int last_reduce;       /* the current stage's last all-reduce; -1 none */
};

/* The rank of stage i of the replica being scheduled. */
static inline int stage_rank(const struct stages *st, int i)
{
    return st->replica * st->n + i;
}

/* Stage i's ops in a schedule: stage_forward, stage_backward and
 * stage_update calls in the order stage i runs them. */
typedef void (*stage_schedule_fn)(struct plan *p, struct stages *st, int i);

/* A layer-parallel strategy's build: checks the options for `strategy`
 * (`what` names it in messages: "pipeline parallelism"), cuts the layers
 * into --devices / --dp stages balanced by FLOPs, creates the plan and has
 * schedule emit each stage's ops, for each replica. The batch is one microbatch unless
 * is_pipelined, then --microbatches of them (one again on a single stage).
 * Builder failures stay in the plan's sticky error (strategy_build reports
 * them). */
int stages_build(const struct config *c, const struct workload *wl, const char *strategy,
                 const char *what, bool is_pipelined, stage_schedule_fn schedule,
                 struct plan **out, struct err *e);

/* The plan_size of a stages_build plan (struct strategy): on each of
 * --dp replicas, ops_per_mb ops a microbatch on a middle stage (6: receive,
 * forward, send, and back; zero-bubble's split backward makes 7), 4 fewer
 * on the two end stages, an update a stage, and with --dp a backward and
 * an all-reduce per bucket at most (2 x the layers); one stage runs the
 * one-device step, 3 ops. */
void stages_plan_size(const struct config *c, const struct workload *wl, bool is_pipelined,
                      int ops_per_mb, struct budget_plan *out);

/* Stage i, microbatch mb: RECV the input from stage i-1 (unless first),
 * FORWARD, SEND the output to stage i+1 (unless last). Records and returns
 * the FORWARD's op index. */
int stage_forward(struct plan *p, struct stages *st, int i, int mb);

/* Stage i, microbatch mb: RECV the output gradient from stage i+1 (unless
 * last), BACKWARD after it and after this mb's FORWARD, SEND the input
 * gradient to stage i-1 (unless first). Returns the BACKWARD's op index. */
int stage_backward(struct plan *p, struct stages *st, int i, int mb);

/* Stage i's optimizer step on its layers after its last BACKWARD (and,
 * with --dp, after its gradients' last all-reduce). */
int stage_update(struct plan *p, const struct stages *st, int i, int last_backward);

#endif
