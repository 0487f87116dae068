/* Layer-parallel stages: option checks, the cut, and one microbatch's trip
 * through a stage with its boundary messages; with --dp, the replicas and
 * each stage's gradient all-reduces among its copies. */
#include <math.h>
#include <stdlib.h>

#include "partition.h"
#include "stage.h"
#include "strategy.h"

static void stages_release(struct stages *st);

/* --dp D against --devices and --batch: D divides the devices into D
 * replicas of devices / D stages, each with a sample of the batch. 0 is a
 * config made by hand, not by the option table (whose range starts at 1):
 * one replica. */
static int check_dp(const struct config *c, int n_devices, int batch, int *n_replicas,
                    struct err *e)
{
    long long d = c->dp == 0 ? 1 : c->dp;
    if (d < 1 || d > n_devices)
        return err_set(e, ERR_INPUT, "--dp: %lld is not allowed (1 to --devices %d)", d,
                       n_devices);
    if (n_devices % d)
        return err_set(e, ERR_INPUT,
                       "--dp %lld does not divide --devices %d: devices = D replicas x stages "
                       "(try --devices %lld)",
                       d, n_devices, (n_devices / d + 1) * d);
    if (d > batch)
        return err_set(e, ERR_INPUT,
                       "--dp %lld exceeds --batch %d: each replica needs at least one sample", d,
                       batch);
    *n_replicas = (int)d;
    return 0;
}

/* More stages than layers without --dp: refused as partition_check_stages
 * does, and where the strategy takes --dp and some D in 2..devices-1 cuts
 * the devices into D replicas of few enough stages, the message says so
 * (gpt2-small's 14 layers on 16 devices said only "use a deeper --model",
 * where --dp 2, 2 replicas of 8 stages, runs). */
static int check_stages_or_replicas(const char *strategy, int n_devices,
                                    const struct workload *wl, const char *what, struct err *e)
{
    if (n_devices <= wl->n_layers) return 0;
    struct err ignored = {0};
    const struct strategy *s = strategy_find(strategy, &ignored);
    int d = 2;
    while (d < n_devices && (n_devices % d || n_devices / d > wl->n_layers)) d++;
    if (!s || !strategy_reads(s, "dp") || d == n_devices)
        return partition_check_stages(n_devices, wl, what, e);
    return err_set(e, ERR_INPUT,
                   "--devices %d exceeds the model's %d layers: %s needs a layer per stage "
                   "(use a deeper --model, or --dp %d: %d replicas of %d stages)",
                   n_devices, wl->n_layers, what, d, d, n_devices / d);
}

/* The options checked, the cut made, the plan created empty (with one group
 * per stage when D > 1). On failure nothing is left to release. */
static int stages_begin(const struct config *c, const struct workload *wl, const char *strategy,
                        const char *what, bool is_pipelined, struct stages *st,
                        struct plan **out, struct err *e)
{
    *st = (struct stages){0};
    *out = NULL;
    int n_devices, batch, n_microbatches = 1, n_replicas = 1;
    TRY(partition_check_devices_batch(c, &n_devices, &batch, e));
    TRY(check_dp(c, n_devices, batch, &n_replicas, e));
    int n_stages = n_devices / n_replicas;
    /* the smallest replica's share of the batch: every microbatch needs a sample */
    int replica_batch = batch / n_replicas;
    if (is_pipelined && n_replicas > 1 && c->microbatches > replica_batch)
        return err_set(e, ERR_INPUT,
                       "--microbatches %lld exceeds the %d samples of each of the --dp %d "
                       "replicas (--batch %d / %d): each microbatch needs at least one sample",
                       c->microbatches, replica_batch, n_replicas, batch, n_replicas);
    if (is_pipelined) TRY(partition_check_microbatches(c, replica_batch, &n_microbatches, e));
    if (n_replicas > 1) TRY(partition_check_bucket_mb(c, &st->cap_bytes, e));
    /* every stage sees its replica's whole batch, so the stages are bounded
     * by the layers, not by the batch */
    if (n_replicas > 1 && n_stages > wl->n_layers)
        return err_set(e, ERR_INPUT,
                       "--devices %d / --dp %d = %d stages exceed the model's %d layers: %s "
                       "needs a layer per stage (use a deeper --model or a larger --dp)",
                       n_devices, n_replicas, n_stages, wl->n_layers, what);
    if (n_replicas == 1) TRY(check_stages_or_replicas(strategy, n_stages, wl, what, e));
    /* One stage has no bubble to fill: microbatches would only add per-op
     * overhead, and one device must run the same step under every strategy
     * (the baseline speedups are measured against). */
    if (n_stages == 1) n_microbatches = 1;
    st->n = n_stages;
    st->batch = batch;
    st->n_microbatches = n_microbatches;
    st->n_replicas = n_replicas;
    st->stage_group = -1;
    st->bounds = XCALLOC(e, (size_t)n_stages + 1, sizeof *st->bounds);
    st->fwd_op = XCALLOC(e, (size_t)n_microbatches, sizeof *st->fwd_op);
    int *copies = XCALLOC(e, (size_t)n_replicas, sizeof *copies);
    if (!st->bounds || !st->fwd_op || !copies) goto fail;
    if (partition_stages(wl, n_stages, st->bounds, e) < 0) goto fail;
    *out = plan_create(strategy, wl, n_devices, 0, batch, n_microbatches, e);
    if (!*out) goto fail;
    for (int i = 0; n_replicas > 1 && i < n_stages; i++) {
        for (int d = 0; d < n_replicas; d++) copies[d] = d * n_stages + i;
        int g = plan_add_group(*out, copies, n_replicas);   /* failures stay in the plan */
        if (i == 0) st->stage_group = g;
    }
    free(copies);
    return 0;
fail:
    free(copies);
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
    for (st.replica = 0; st.replica < st.n_replicas; st.replica++)
        for (int i = 0; i < st.n; i++) {
            st.n_backward = 0;
            st.last_reduce = -1;
            schedule(p, &st, i);
        }
    stages_release(&st);
    *out = p;
    return 0;
}

void stages_plan_size(const struct config *c, const struct workload *wl, bool is_pipelined,
                      int ops_per_mb, struct budget_plan *out)
{
    double devices = (double)c->devices, replicas = c->dp > 1 ? (double)c->dp : 1;
    double stages = ceil(devices / replicas);
    double m = is_pipelined && stages > 1 ? (double)c->microbatches : 1;
    double micro = stages > 1 ? stages * ops_per_mb * m - 4 * m : 0;
    double replica = (stages > 1 ? micro + stages : 3) + (replicas > 1 ? 2.0 * wl->n_layers : 0);
    *out = (struct budget_plan){
        .ranks = devices, .ops = replicas * replica, .micro_ops = replicas * micro};
}

/* Samples of microbatch mb of the replica being scheduled. */
static int mb_samples(const struct stages *st, int mb)
{
    int replica_batch = partition_share(st->batch, st->n_replicas, st->replica);
    return partition_share(replica_batch, st->n_microbatches, mb);
}

int stage_forward(struct plan *p, struct stages *st, int i, int mb)
{
    int lo = st->bounds[i], hi = st->bounds[i + 1], r = stage_rank(st, i);
    int n = mb_samples(st, mb);
    int in = i > 0 ? plan_recv(p, r, r - 1, TAG_ACT, lo, mb, n, NO_DEPS) : -1;
    int fwd = plan_forward(p, r, lo, hi, mb, n, DEPS(in));
    if (i < st->n - 1) plan_send(p, r, r + 1, TAG_ACT, hi, mb, n, DEPS(fwd));
    st->fwd_op[mb] = fwd;
    return fwd;
}

/* The last microbatch's backward of stage i with --dp: in mirrored's
 * buckets from the top layer down, each bucket's all-reduce among the
 * stage's copies issued as soon as its layers' gradients are final, so
 * that it overlaps the backward of the layers below and the drain of the
 * stages before. The input gradient's SEND goes before the lowest bucket's
 * all-reduce on the comm stream, so that the previous stage never waits
 * for that one; it may still wait for the upper buckets' (one comm stream
 * a rank: the cost of bucket caps smaller than the stage). Returns the
 * lowest bucket's BACKWARD. */
static int backward_reducing(struct plan *p, struct stages *st, int i, int mb, int n, int grad)
{
    int lo = st->bounds[i], r = stage_rank(st, i), prev = -1;
    for (int hi = st->bounds[i + 1]; hi > lo;) {
        int b_lo = partition_bucket_lo_from(p->wl, lo, hi, st->cap_bytes);
        prev = plan_backward(p, r, b_lo, hi, mb, n, DEPS(grad, st->fwd_op[mb], prev));
        if (b_lo == lo && i > 0) plan_send(p, r, r - 1, TAG_GRAD, lo, mb, n, DEPS(prev));
        st->last_reduce = plan_allreduce(p, r, st->stage_group + i, b_lo, hi, DEPS(prev));
        hi = b_lo;
    }
    return prev;
}

int stage_backward(struct plan *p, struct stages *st, int i, int mb)
{
    int lo = st->bounds[i], hi = st->bounds[i + 1], r = stage_rank(st, i);
    int n = mb_samples(st, mb);
    int grad = i < st->n - 1 ? plan_recv(p, r, r + 1, TAG_GRAD, hi, mb, n, NO_DEPS) : -1;
    if (++st->n_backward == st->n_microbatches && st->n_replicas > 1)
        return backward_reducing(p, st, i, mb, n, grad);   /* sends the gradient itself */
    int bwd = plan_backward(p, r, lo, hi, mb, n, DEPS(grad, st->fwd_op[mb]));
    if (i > 0) plan_send(p, r, r - 1, TAG_GRAD, lo, mb, n, DEPS(bwd));
    return bwd;
}

int stage_update(struct plan *p, const struct stages *st, int i, int last_backward)
{
    return plan_update(p, stage_rank(st, i), st->bounds[i], st->bounds[i + 1],
                       DEPS(last_backward, st->last_reduce));
}
