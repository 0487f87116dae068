/* Private to real/: the state every rank of a real run shares, and the
 * pieces real.c puts together (worker.c, ps_server.c, params.c). */
#ifndef STRATA_REAL_INTERNAL_H
#define STRATA_REAL_INTERNAL_H

#include <mpi.h>

#include "../core/straggler.h"
#include "../core/trace.h"
#include "../core/vec.h"
#include "../nn/data.h"
#include "../nn/mlp.h"
#include "comm.h"
#include "real.h"

struct real_ctx {
    const struct real_setup *s;
    const struct plan *p;
    const struct plan_index *ix; /* p's: its ops' relations */
    int rank;
    int64_t steps;
    const struct device *dev;
    struct mlp *m;               /* the whole model on every rank, from the seed */
    struct data data;            /* workers only */
    struct straggler *strag;
    struct comm comm;            /* SEND, RECV, ALLREDUCE */
    MPI_Comm ps_comm;            /* PUSH, PULL (real/ps_wire.h) */
    MPI_Comm params_comm;        /* gathering parameters on rank 0 */
    double t0;                   /* MPI_Wtime of the aligned start */
    float lr, momentum, weight_decay;

    VEC(struct span) spans;      /* this rank's, all steps, in step order */
    VEC(struct step_loss) losses;
};

static inline double real_now(const struct real_ctx *x)
{
    return MPI_Wtime() - x->t0;
}

/* An MPI error code as an ERR_RUN naming the call. */
int real_mpi_fail(struct err *e, int rc, const char *call);
#define REAL_MPI(e, call)                                              \
    do {                                                               \
        int real_rc_ = (call);                                         \
        if (real_rc_ != MPI_SUCCESS) return real_mpi_fail(e, real_rc_, #call); \
    } while (0)

/* Sleeps seconds (a straggler's delay); nothing for s <= 0. */
void real_sleep(double s);

/* ---- worker.c ---------------------------------------------------------- */

struct worker;
int worker_create(struct real_ctx *x, struct worker **out, struct err *e);
void worker_free(struct worker *w);
/* Runs step `step` of the rank's program; appends its spans and loss to x. */
/* Asynchronous plans: `work` is the job's work item the step computes
 * (ps_wire.h); synchronous ones ignore it. */
int worker_step(struct worker *w, int64_t step, int64_t work, struct err *e);
/* Asynchronous: the item the first server gave for the next step, -1 when
 * the job's work is all given out (this worker is done); else -1. */
int64_t worker_next_work(const struct worker *w);
/* Is this the first data-parallel replica's rank computing the loss? */
bool worker_is_first_loss(const struct worker *w);
/* Tells every server this worker pushes to that it is done. */
int worker_finish(struct worker *w, struct err *e);
/* The step's training loss this worker computed (0/0 when it computes no
 * loss) */
void worker_last_loss(const struct worker *w, double *loss_sum, int64_t *n_samples);

/* ---- ps_server.c ------------------------------------------------------- */

/* Serves this server rank's shard until every worker is done. */
int ps_serve(struct real_ctx *x, struct err *e);

/* ---- params.c ---------------------------------------------------------- */

/* Rank that holds the current parameters of layer l: at the end
 * (is_final), a server holding it; otherwise, and where no server does, the
 * lowest worker that UPDATEs or PULLs it. */
int params_owner(const struct plan *p, int layer, bool is_final);
/* Collective over the owners and rank 0: rank 0's model receives every
 * layer it does not own. */
int params_gather(struct real_ctx *x, bool is_final, struct err *e);

#endif
