/* pipelined-steps: K training steps in flight on every device, the TF white
 * paper's "model computation pipelining" (Abadi et al., 2016, section 9.2)
 * done on mirrored's all-reduce. A step's gradients are all-reduced and
 * applied K-1 steps later, while the device computes those steps: step s
 * runs its forward and backward (into gradient block s mod K) as the
 * all-reduce of step s-K+1's gradients travels on the comm stream, and ends
 * with that step's UPDATE. Its parameters are thus K-1 updates old: the
 * delayed-gradient SGD of asynchronous data parallelism, inside a device
 * and without a server.
 *
 * The plan stays one step (core/plan.h "Steps in flight"): the lagged
 * ALLREDUCE and UPDATE name the step whose gradients they take, instead of
 * the step boundary being crossed, so neither executor learns a new rule
 * beyond "a lagged op works on an older gradient block, and does nothing
 * before that step exists". One cost: a run of S steps applies S-K+1
 * updates; the last K-1 steps' gradients are still in flight when it stops.
 *
 * With K = 1 (or on one device, where there is nothing to overlap) the
 * plan is mirrored's, op for op. */
#include <stdlib.h>

#include "families.h"
#include "partition.h"

static int build_pipelined_steps(const struct config *c, const struct workload *wl,
                                 struct plan **out, struct err *e)
{
    int n, batch;
    TRY(partition_check_devices_batch(c, &n, &batch, e));
    TRY(partition_check_data_parallel(n, batch, e));
    double cap_bytes;
    TRY(partition_check_bucket_mb(c, &cap_bytes, e));
    /* 0: a config filled by hand without it (as stage.c takes --dp 0) */
    long long inflight = c->inflight == 0 ? 1 : c->inflight;
    if (inflight < 1 || inflight > PLAN_MAX_LAG + 1)
        return err_set(e, ERR_INPUT, "--inflight: %lld is not allowed (1 to %d steps in flight)",
                       inflight, PLAN_MAX_LAG + 1);
    const int n_layers = wl->n_layers, lag = (int)inflight - 1;

    struct plan *p = plan_create("pipelined-steps", wl, n, 0, batch, 1, e);
    int *members = XCALLOC(e, (size_t)n, sizeof *members);
    if (!p || !members) goto fail;
    /* A shrunk job would lose the gradients in flight on the workers gone,
     * and a restart those of every worker: only K = 1 is mirrored's
     * data-parallel job (core/plan.h data_parallel). */
    p->data_parallel = lag == 0;
    for (int r = 0; r < n; r++) members[r] = r;
    int everyone = n > 1 ? plan_add_group(p, members, n) : -1;

    for (int r = 0; r < n; r++) {
        int samples = partition_share(batch, n, r);
        int fwd = plan_forward(p, r, 0, n_layers, 0, samples, NO_DEPS);
        if (n == 1) {   /* nothing to overlap: the single-device step */
            int bwd = plan_backward(p, r, 0, n_layers, 0, samples, DEPS(fwd));
            plan_update(p, r, 0, n_layers, DEPS(bwd));
            continue;
        }
        /* Buckets as mirrored's. Unlagged, each waits for its own backward;
         * lagged, for nothing of this step: the comm stream starts at once
         * on step s-K+1's gradients while compute runs step s. */
        int prev = fwd, reduce = -1;
        for (int hi = n_layers; hi > 0;) {
            int lo = partition_bucket_lo(wl, hi, cap_bytes);
            prev = plan_backward(p, r, lo, hi, 0, samples, DEPS(prev));
            reduce = lag ? plan_allreduce(p, r, everyone, lo, hi, NO_DEPS)
                         : plan_allreduce(p, r, everyone, lo, hi, DEPS(prev));
            plan_set_lag(p, r, reduce, lag);
            hi = lo;
        }
        /* after this step's backward on the compute stream, so that step
         * s+1's forward reads the parameters of s-K+2 updates */
        int update = plan_update(p, r, 0, n_layers, DEPS(reduce));
        plan_set_lag(p, r, update, lag);
    }
    free(members);
    *out = p;
    return 0;
fail:
    free(members);
    plan_free(p);
    return ERR_NOMEM;
}

const struct strategy strategy_pipelined_steps = {
    .name = "pipelined-steps",
    .summary = "mirrored with --inflight K steps in flight: a step's all-reduce overlaps the "
               "next steps' compute, its gradients applied K-1 steps late",
    .options = "bucket-mb,inflight",
    .policy = POLICY_NONE,
    .build = build_pipelined_steps,
};
