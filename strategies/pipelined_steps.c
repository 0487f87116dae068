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
#include "families.h"

int pipelined_steps_build(const struct strategy *s, const struct config *c,
                          const struct workload *wl, struct plan **out, struct err *e)
{
    /* 0: a config filled by hand without it (as stage.c takes --dp 0) */
    long long inflight = c->inflight == 0 ? 1 : c->inflight;
    if (inflight < 1 || inflight > PLAN_MAX_LAG + 1)
        return err_set(e, ERR_INPUT, "--inflight: %lld is not allowed (1 to %d steps in flight)",
                       inflight, PLAN_MAX_LAG + 1);
    return mirrored_build_plan(c, wl, s->name, (int)inflight - 1, out, e);
}
