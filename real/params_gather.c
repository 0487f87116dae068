/* Who holds the current parameters, and gathering them on rank 0
 * (real/params_gather.h). */
#include "host_copy.h"
#include "mpi_check.h"
#include "params_gather.h"

int params_owner(const struct plan *p, int layer, bool is_final)
{
    if (is_final)
        for (int r = p->n_workers; r < p->n_ranks; r++)
            if (p->ranks[r].shard_lo <= layer && layer < p->ranks[r].shard_hi) return r;
    for (int r = 0; r < p->n_workers; r++) {
        const struct plan_rank *pr = &p->ranks[r];
        for (size_t i = 0; i < pr->ops.len; i++) {
            const struct op *o = &pr->ops.items[i];
            if ((o->kind == OP_UPDATE || o->kind == OP_PULL) && o->lo <= layer && layer < o->hi)
                return r;
        }
    }
    return -1;
}

/* One message per layer not on rank 0: simple, and a model has few layers.
 * A GPU rank's parameters travel through a host copy (real/host_copy.h). */
static int gather_layer(struct real_ctx *ctx, int l, int owner, struct host_copy *host, struct err *e)
{
    struct mlp *m = ctx->m;
    float *w = m->params + mlp_param_offset(m, l);
    int n = (int)mlp_param_count(m, l, l + 1);
    size_t bytes = (size_t)n * sizeof(float);
    if (ctx->rank == owner) {
        const float *h = host_copy_out(ctx->dev, host, w, bytes, e);
        if (!h) return e->code;
        MPI_TRY(e, MPI_Send(h, n, MPI_FLOAT, 0, l, ctx->params_comm));
    } else if (ctx->rank == 0) {
        float *h = host_copy_in(ctx->dev, host, w, bytes, e);
        if (!h) return e->code;
        MPI_TRY(e, MPI_Recv(h, n, MPI_FLOAT, owner, l, ctx->params_comm, MPI_STATUS_IGNORE));
        host_copy_in_done(ctx->dev, host, w, bytes);
    }
    return 0;
}

int params_gather(struct real_ctx *ctx, bool is_final, struct err *e)
{
    const struct plan *p = ctx->p;
    struct host_copy host = {0};
    int rc = 0;
    for (int l = 0; l < ctx->m->n_layers && rc == 0; l++) {
        int owner = params_owner(p, l, is_final);
        if (owner < 0)
            rc = err_set(e, ERR_RUN, "no rank updates layer %d: the plan never trains it", l);
        else if (owner != 0)
            rc = gather_layer(ctx, l, owner, &host, e);
    }
    host_copy_release(&host);
    return rc == 0 ? ctx->dev->sync(e) : rc;
}
