/* Layer-parallel stages: option checks, the cut, and one microbatch's trip
 * through a stage with its boundary messages. */
#include <stdlib.h>

#include "partition.h"
#include "stage.h"

static void stages_release(struct stages *st);

/* The options checked, the cut made, the plan created empty. On failure
 * nothing is left to release. */
static int stages_begin(const struct config *c, const struct workload *wl, const char *strategy,
                        const char *what, bool is_pipelined, struct stages *st,
                        struct plan **out, struct err *e)
{
    *st = (struct stages){0};
    *out = NULL;
    int n_devices, batch, n_microbatches = 1;
    TRY(partition_check_devices_batch(c, &n_devices, &batch, e));
    if (is_pipelined) TRY(partition_check_microbatches(c, batch, &n_microbatches, e));
    /* every stage sees the whole batch, so --devices is bounded by the
     * layers, not by the batch */
    TRY(partition_check_stages(n_devices, wl, what, e));
    /* One stage has no bubble to fill: microbatches would only add per-op
     * overhead, and one device must run the same step under every strategy
     * (the baseline speedups are measured against). */
    if (n_devices == 1) n_microbatches = 1;
    st->n = n_devices;
    st->batch = batch;
    st->n_microbatches = n_microbatches;
    st->bounds = XCALLOC(e, (size_t)n_devices + 1, sizeof *st->bounds);
    st->fwd_op = XCALLOC(e, (size_t)n_microbatches, sizeof *st->fwd_op);
    if (!st->bounds || !st->fwd_op) goto fail;
    if (partition_stages(wl, n_devices, st->bounds, e) < 0) goto fail;
    *out = plan_create(strategy, wl, n_devices, 0, batch, n_microbatches, e);
    if (!*out) goto fail;
    return 0;
fail:
    stages_release(st);
    return ERR_NOMEM;   /* the only failure left once the options passed */
}

static void stages_release(struct stages *st)
{
    free(st->bounds);
    free(st->fwd_op);
    *st = (struct stages){0};
}

int stages_build(const struct config *c, const struct workload *wl, const char *strategy,
                 const char *what, bool is_pipelined, stage_schedule_fn schedule,
                 struct plan **out, struct err *e)
{
    struct stages st;
    struct plan *p;
    TRY(stages_begin(c, wl, strategy, what, is_pipelined, &st, &p, e));
    for (int i = 0; i < st.n; i++) schedule(p, &st, i);
    stages_release(&st);
    *out = p;
    return 0;
}

int stage_forward(struct plan *p, struct stages *st, int i, int mb)
{
    int lo = st->bounds[i], hi = st->bounds[i + 1];
    int n = partition_share(st->batch, st->n_microbatches, mb);
    int in = i > 0 ? plan_recv(p, i, i - 1, TAG_ACT, lo, mb, n, NO_DEPS) : -1;
    int fwd = plan_forward(p, i, lo, hi, mb, n, DEPS(in));
    if (i < st->n - 1) plan_send(p, i, i + 1, TAG_ACT, hi, mb, n, DEPS(fwd));
    st->fwd_op[mb] = fwd;
    return fwd;
}

int stage_backward(struct plan *p, struct stages *st, int i, int mb)
{
    int lo = st->bounds[i], hi = st->bounds[i + 1];
    int n = partition_share(st->batch, st->n_microbatches, mb);
    int grad = i < st->n - 1 ? plan_recv(p, i, i + 1, TAG_GRAD, hi, mb, n, NO_DEPS) : -1;
    int bwd = plan_backward(p, i, lo, hi, mb, n, DEPS(grad, st->fwd_op[mb]));
    if (i > 0) plan_send(p, i, i - 1, TAG_GRAD, lo, mb, n, DEPS(bwd));
    return bwd;
}

int stage_update(struct plan *p, const struct stages *st, int i, int last_backward)
{
    return plan_update(p, i, st->bounds[i], st->bounds[i + 1], DEPS(last_backward));
}
