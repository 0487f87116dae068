/* mirrored: synchronous data parallelism, as PyTorch DDP does it. Every
 * worker holds the whole model and computes its share of the batch; the
 * gradients are summed over all workers by all-reduces of buckets of whole
 * layers, each started as soon as the backward of its layers is done, so
 * communication overlaps the backward of the layers below. */
#include <stdlib.h>

#include "families.h"
#include "partition.h"

int mirrored_build_plan(const struct config *c, const struct workload *wl, const char *name,
                        int lag, struct plan **out, struct err *e)
{
    int n, batch;
    TRY(partition_check_devices_batch(c, &n, &batch, e));
    TRY(partition_check_data_parallel(n, batch, e));
    double cap_bytes;
    TRY(partition_check_bucket_mb(c, &cap_bytes, e));
    const int n_layers = wl->n_layers;

    struct plan *p = plan_create(name, wl, n, 0, batch, 1, e);
    int *members = XCALLOC(e, (size_t)n, sizeof *members);
    if (!p || !members) goto fail;
    /* A shrunk job would lose the gradients in flight on the workers gone,
     * and a restart those of every worker: only unlagged plans are
     * data-parallel jobs (core/plan.h data_parallel). */
    p->data_parallel = lag == 0;
    for (int r = 0; r < n; r++) members[r] = r;
    int everyone = n > 1 ? plan_add_group(p, members, n) : -1;

    for (int r = 0; r < n; r++) {
        int samples = partition_share(batch, n, r);
        int fwd = plan_forward(p, r, 0, n_layers, 0, samples, NO_DEPS);
        if (n == 1) {   /* nothing to reduce or overlap: the single-device step */
            int bwd = plan_backward(p, r, 0, n_layers, 0, samples, DEPS(fwd));
            plan_update(p, r, 0, n_layers, DEPS(bwd));
            continue;
        }
        /* Unlagged, each bucket's all-reduce waits only for its own
         * backward, and the comm stream runs them in order while compute
         * moves on. Lagged, it waits for nothing of this step: the comm
         * stream starts at once on step s-lag's gradients. */
        int prev = fwd, reduce = -1;
        for (int hi = n_layers; hi > 0;) {
            int lo = partition_bucket_lo(wl, hi, cap_bytes);
            prev = plan_backward(p, r, lo, hi, 0, samples, DEPS(prev));
            reduce = lag ? plan_allreduce(p, r, everyone, lo, hi, NO_DEPS)
                         : plan_allreduce(p, r, everyone, lo, hi, DEPS(prev));
            if (lag) plan_set_lag(p, r, reduce, lag);
            hi = lo;
        }
        /* after the last bucket is summed; lagged, also after this step's
         * backward on the compute stream, so that step s+1's forward reads
         * the parameters of s-lag+1 updates */
        int update = plan_update(p, r, 0, n_layers, DEPS(reduce));
        if (lag) plan_set_lag(p, r, update, lag);
    }
    free(members);
    *out = p;
    return 0;
fail:
    free(members);
    plan_free(p);
    return ERR_NOMEM;
}

/* whatever its lag (pipelined-steps' too: lagged ops are ops all the
 * same): a backward and an all-reduce per bucket, a forward and the
 * update */
void mirrored_plan_size(const struct config *c, const struct workload *wl,
                        struct budget_plan *out)
{
    partition_bucketed_plan_size(c, wl, 2, 2, out);
}

int mirrored_build(const struct strategy *s, const struct config *c, const struct workload *wl,
                   struct plan **out, struct err *e)
{
    return mirrored_build_plan(c, wl, s->name, 0, out, e);
}
