/* Private to real/: the state one rank of a real run holds, which real.c
 * sets up and hands to the parts it runs (worker.c, ps_server.c,
 * params.c). Those parts depend on this header only, never on real.c. */
#ifndef STRATA_REAL_CTX_H
#define STRATA_REAL_CTX_H

#include <mpi.h>

#include "../core/config.h"
#include "../core/plan_index.h"
#include "../core/report.h"
#include "../core/straggler.h"
#include "../core/trace.h"
#include "../core/vec.h"
#include "../core/workload.h"
#include "../nn/data.h"
#include "../nn/mlp.h"
#include "comm.h"
#include "eval_snapshots.h"
#include "heartbeat.h"

struct real_ctx {
    const struct config *cfg;    /* lr, momentum, seed, --eval-every, --save-params ... */
    const struct workload *wl;   /* an mlp: workload */
    const struct plan *p;        /* checked; one rank per MPI process */
    const struct plan_index *ix; /* p's: its ops' relations (core/plan_index.h) */
    int rank;
    int64_t steps;
    const struct device *dev;
    struct mlp *m;               /* the whole model on every rank, from the seed; its
                                  * momentum block only the rank's shards' under ZeRO-1
                                  * (real/momentum_shards.h) */
    int64_t n_momentum;          /* floats in m->momentum: n_params, or its shards' */
    int64_t *momentum_at;        /* [n_ops]: a shard UPDATE's momentum in m->momentum; NULL
                                  * when m->momentum is the whole block */
    struct data data;            /* workers only */
    struct straggler *strag;
    struct comm comm;            /* SEND, RECV, ALLREDUCE */
    MPI_Comm ps_comm;            /* PUSH, PULL (real/ps_wire.h) */
    MPI_Comm params_comm;        /* gathering parameters on rank 0 */
    double t0;                   /* MPI_Wtime of the aligned start (real/clock_align.h) */
    double clock_error_s;        /* rank 0: the largest of the ranks' bounds on their zero */
    float lr, momentum, weight_decay;
    int64_t first_step;          /* 0, or the step --resume continues at */
    struct eval_snapshots *evals;   /* rank 0: --eval-every's points (eval_snapshots.h) */
    struct checkpointer *ckpt;   /* --checkpoint-every, --resume (real/checkpoint.h); NULL none */
    struct heartbeat *hb;        /* progress for the supervisor, and --fail (heartbeat.h) */

    VEC(struct span) spans;      /* this rank's, all steps, in step order */
    VEC(struct step_loss) losses;
};

/* Seconds since the aligned start, on this rank's clock. */
static inline double real_now(const struct real_ctx *ctx)
{
    return MPI_Wtime() - ctx->t0;
}

#endif
