/* mirrored-zero1: mirrored with the optimizer state sharded, ZeRO stage 1
 * (Rajbhandari et al., SC 2020). Every worker still holds the whole model
 * and computes its share of the batch, but keeps the momentum of only its
 * shard of each bucket (core/plan.h plan_shard): the gradients of a bucket
 * are reduce-scattered as soon as its backward is done (overlapping the
 * backward of the layers below, as mirrored's all-reduces do), each worker
 * steps its shard, and an all-gather hands every worker the new
 * parameters. A ring reduce-scatter plus a ring all-gather move the bytes
 * of one ring all-reduce, so the step costs about what mirrored's does,
 * while the momentum per device drops by (N-1)/N. */
#include <stdlib.h>

#include "families.h"
#include "partition.h"

int mirrored_zero1_build(const struct strategy *s, const struct config *c,
                         const struct workload *wl, struct plan **out, struct err *e)
{
    int n, batch;
    double cap_bytes;
    TRY(partition_check_devices_batch(c, &n, &batch, e));
    TRY(partition_check_data_parallel(n, batch, e));
    TRY(partition_check_bucket_mb(c, &cap_bytes, e));
    const int n_layers = wl->n_layers;

    struct plan *p = plan_create(s->name, wl, n, 0, batch, 1, e);
    int *members = XCALLOC(e, (size_t)n, sizeof *members);
    /* the buckets' reduce-scatters, in the order they are issued */
    int *scatter = XCALLOC(e, (size_t)n_layers, sizeof *scatter);
    int *bucket = XCALLOC(e, (size_t)n_layers + 1, sizeof *bucket);
    if (!p || !members || !scatter || !bucket) goto fail;
    /* Not data_parallel (core/plan.h): each worker's momentum is its shard
     * of N, so the plan for fewer workers would lose the shards of those
     * gone (a checkpoint resumed on another count, --on-failure shrink). */
    p->data_parallel = false;
    for (int r = 0; r < n; r++) members[r] = r;
    int everyone = n > 1 ? plan_add_group(p, members, n) : -1;

    for (int r = 0; r < n; r++) {
        int samples = partition_share(batch, n, r);
        int fwd = plan_forward(p, r, 0, n_layers, 0, samples, NO_DEPS);
        if (n == 1) {   /* nothing to shard: the single-device step */
            int bwd = plan_backward(p, r, 0, n_layers, 0, samples, DEPS(fwd));
            plan_update(p, r, 0, n_layers, DEPS(bwd));
            continue;
        }
        /* bucket[k] .. bucket[k+1] descending: bucket k is [bucket[k+1], bucket[k]) */
        int n_buckets = 0, prev = fwd;
        bucket[0] = n_layers;
        for (int hi = n_layers; hi > 0; n_buckets++) {
            int lo = partition_bucket_lo(wl, hi, cap_bytes);
            prev = plan_backward(p, r, lo, hi, 0, samples, DEPS(prev));
            scatter[n_buckets] = plan_reduce_scatter(p, r, everyone, lo, hi, DEPS(prev));
            bucket[n_buckets + 1] = hi = lo;
        }
        /* Each shard's step waits for its own reduce-scatter only, and each
         * all-gather for its own step: the comm stream gathers one bucket
         * while compute steps the next. */
        for (int k = 0; k < n_buckets; k++) {
            int step = plan_update_shard(p, r, everyone, bucket[k + 1], bucket[k], DEPS(scatter[k]));
            plan_all_gather(p, r, everyone, bucket[k + 1], bucket[k], DEPS(step));
        }
    }
    free(members);
    free(scatter);
    free(bucket);
    *out = p;
    return 0;
fail:
    free(members);
    free(scatter);
    free(bucket);
    plan_free(p);
    return ERR_NOMEM;
}

/* A forward, then per bucket a backward, a reduce-scatter, the shard's
 * update and an all-gather. */
void mirrored_zero1_plan_size(const struct config *c, const struct workload *wl,
                              struct budget_plan *out)
{
    partition_bucketed_plan_size(c, wl, 4, 1, out);
}
