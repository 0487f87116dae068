/* mirrored: synchronous data parallelism, as PyTorch DDP does it. Every
 * worker holds the whole model and computes its share of the batch; the
 * gradients are summed over all workers by all-reduces of buckets of whole
 * layers, each started as soon as the backward of its layers is done, so
 * communication overlaps the backward of the layers below. */
#include <stdlib.h>

#include "families.h"
#include "partition.h"

static int build_mirrored(const struct config *c, const struct workload *wl, struct plan **out,
                          struct err *e)
{
    int n, batch;
    TRY(partition_check_devices_batch(c, &n, &batch, e));
    TRY(partition_check_data_parallel(n, batch, e));
    double cap_bytes;
    TRY(partition_check_bucket_mb(c, &cap_bytes, e));
    const int n_layers = wl->n_layers;

    struct plan *p = plan_create("mirrored", wl, n, 0, batch, 1, e);
    int *members = XCALLOC(e, (size_t)n, sizeof *members);
    if (!p || !members) goto fail;
    p->data_parallel = true;
    for (int r = 0; r < n; r++) members[r] = r;
    int everyone = n > 1 ? plan_add_group(p, members, n) : -1;

    for (int r = 0; r < n; r++) {
        int samples = partition_share(batch, n, r);
        int fwd = plan_forward(p, r, 0, n_layers, 0, samples, NO_DEPS);
        if (n == 1) {   /* nothing to reduce: the single-device step */
            int bwd = plan_backward(p, r, 0, n_layers, 0, samples, DEPS(fwd));
            plan_update(p, r, 0, n_layers, DEPS(bwd));
            continue;
        }
        /* Each bucket's all-reduce waits only for its own backward; the
         * comm stream runs them in order while compute moves on. */
        int prev = fwd, reduce = -1;
        for (int hi = n_layers; hi > 0;) {
            int lo = partition_bucket_lo(wl, hi, cap_bytes);
            prev = plan_backward(p, r, lo, hi, 0, samples, DEPS(prev));
            reduce = plan_allreduce(p, r, everyone, lo, hi, DEPS(prev));
            hi = lo;
        }
        plan_update(p, r, 0, n_layers, DEPS(reduce));   /* after the last bucket is summed */
    }
    free(members);
    *out = p;
    return 0;
fail:
    free(members);
    plan_free(p);
    return ERR_NOMEM;
}

const struct strategy strategy_mirrored = {
    .name = "mirrored",
    .summary = "synchronous data parallel: full replicas, gradients all-reduced in buckets "
               "overlapped with backward (DDP)",
    .options = "bucket-mb",
    .policy = POLICY_NONE,
    .build = build_mirrored,
};
