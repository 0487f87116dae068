/* A worker rank: runs its program of the plan, step after step. The op's
 * class (core/plan.h op_infos) picks one of two switches over op kinds:
 * run_compute for compute ops, start_comm for communication ops.
 * Single-threaded, as a CUDA stream scheduler would be on one host thread:
 *
 *   - Each stream's ops start in program order; an op starts once its deps
 *     are satisfied and its stream's previous op is.
 *   - Compute ops run to completion when they start (the cpu device is
 *     synchronous); communication ops start nonblocking and are tested
 *     between ops, which is also what makes MPI progress them.
 *   - SEND and PUSH are eager, as the plan defines them: they satisfy their
 *     stream and dependents when issued; their buffers are left alone until
 *     they complete, and the step waits for them before it ends.
 *   - RECV, the collectives and PULL satisfy them when they complete.
 *
 * Spans (core/trace.h): a compute op's span is its own time, straggler delay
 * included. A communication op's span runs from when it was posted to when
 * this rank saw it complete; real.c later moves a RECV's start to its SEND's
 * and an ALLREDUCE's to its last member's arrival, and a PULL starts when
 * its server answered, so that waiting for peers counts as idle.
 *
 * Buffers: one struct mlp_act per microbatch (its saved activations; a RECV
 * of activations lands in act->x[boundary]) and one gradient buffer per
 * microbatch and layer boundary (what BACKWARD writes and SEND/RECV of
 * gradients carry), all made before step 0 (preallocate): a cudaMalloc
 * in step 0, while other ranks' NCCL kernels wait on this one, is what
 * NCCL warns can hang. Steps in flight (core/plan.h):
 * the plan's n_grad_slots gradient blocks, the model's own the first; the
 * model's grads pointer is set to the block of the step an op works on
 * before the op runs or is posted (a posted all-reduce keeps the block it
 * was given), and back to the model's own when the step ends. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/ps_policy.h"
#include "checkpoint.h"
#include "host_copy.h"
#include "momentum_shards.h"
#include "mpi_check.h"
#include "ps_wire.h"
#include "sleep.h"
#include "worker.h"

enum op_state {
    OPS_WAITING,    /* not started */
    OPS_RUNNING,    /* started, not complete, not yet satisfying its dependents */
    OPS_ISSUED,     /* eager SEND/PUSH: satisfies dependents, buffer still in flight */
    OPS_DONE,
};

struct op_run {
    enum op_state state;
    double post_s, end_s;
    int64_t ver_read, ver_applied;
    struct comm_req req;          /* SEND, RECV, collectives */
    MPI_Request ps_req[3];        /* PUSH: header, data; PULL: reply header, data, request */
    int n_ps_req;
    struct ps_msg msg;            /* PUSH, PULL: what was sent (must outlive the send) */
    struct ps_reply reply;        /* PULL: what came back */
};

/* What this worker knows of one server it talks to. */
struct server_link {
    int rank;
    int n_push;                   /* its pushes to the server per step */
    int64_t version_read;         /* the shard version of its last pull */
    int last_push;                /* this step's latest PUSH op to it, -1 none */
};

struct worker {
    struct real_ctx *ctx;
    const struct plan_rank *pr;
    int n_ops, n_layers, n_micro;
    struct op_run *run;           /* [n_ops] */
    int g0;                       /* the global id of op 0 (core/plan_index.h) */
    VEC(int) running;             /* ops RUNNING or ISSUED */

    /* Microbatch buffers, made before step 0 (preallocate). */
    int max_n;                    /* most samples in one microbatch */
    struct mlp_act **act;         /* [n_micro] */
    float **grad_at;              /* [n_micro * (n_layers + 1)]: gradient by boundary b's activations */
    float **inputs_host;          /* [n_micro]: sampled inputs (max_n, features), host */
    int32_t **labels_host;        /* [n_micro]: their labels, host */
    int32_t **labels_dev;         /* [n_micro]: labels on the device */
    int64_t *idx;                 /* [max_n]: sample indices */

    /* Data parallelism: which share of each step this rank's first and last
     * layers see (a pipeline is one replica; mirrored has one per rank). */
    struct sampler sampler;
    int replica_in, n_replicas_in;     /* among ranks computing layer 0 */
    int replica_out, n_replicas_out;   /* among ranks computing the last layer */
    int64_t samples_per_step;          /* what this rank's pushes sum over */

    int n_links;
    struct server_link *links;    /* servers this rank pushes to or pulls from */
    int work_link;                /* asynchronous: the first server's link, which hands out work; -1 */
    int *link_of_op;              /* [n_ops]: PUSH/PULL's index into links, -1 otherwise */
    struct host_copy *copy;       /* [n_ops]: PUSH/PULL's host copy on a GPU (real/host_copy.h) */

    int n_grad_slots;
    float **grad_slots;           /* [n_grad_slots]: [0] the model's own block, the rest made here */

    int64_t step;
    bool is_async;                /* the job's work is shared out (core/plan.h) */
    int64_t work;                 /* asynchronous: the item this step computes */
    int64_t next_work;            /* asynchronous: the next, from the first server; -1 none */
    int64_t checkpoint_step;      /* asynchronous: the checkpoint to join first; -1 none */
    int item_samples;             /* asynchronous: samples of that item's replica */
    bool is_sync_each_op;         /* compute ops wait for the device one by one (must_sync) */
    double loss_sum;              /* this step's, over its last-layer microbatches */
    int64_t loss_samples;
};

/* ---- set-up ------------------------------------------------------------ */

static int preallocate(struct worker *w, struct err *e);
static void *message_buffer(struct worker *w, const struct op *o, size_t *bytes, struct err *e);

/* Rank r's position among the workers whose FORWARD covers layer (0 or the
 * last), and how many there are: the data-parallel replicas. */
static void replica_of(const struct plan *p, int rank, int layer, int *index, int *count)
{
    *index = -1;
    *count = 0;
    for (int r = 0; r < p->n_workers; r++) {
        const struct plan_rank *pr = &p->ranks[r];
        bool covers = false;
        for (size_t i = 0; i < pr->ops.len && !covers; i++) {
            const struct op *o = &pr->ops.items[i];
            covers = o->kind == OP_FORWARD && o->lo <= layer && layer < o->hi;
        }
        if (!covers) continue;
        if (r == rank) *index = *count;
        (*count)++;
    }
}

static int link_index(struct worker *w, int server)
{
    for (int k = 0; k < w->n_links; k++)
        if (w->links[k].rank == server) return k;
    struct server_link *l = &w->links[w->n_links];
    *l = (struct server_link){.rank = server, .last_push = -1};
    return w->n_links++;
}

/* This rank's stream order and ordinals, read from the plan's index (in
 * global op ids, core/plan_index.h) as indices into its own program. */
static int first_on_stream(const struct worker *w, int stream)
{
    int g = w->ctx->ix->first[w->ctx->rank * PLAN_N_STREAMS + stream];
    return g < 0 ? -1 : g - w->g0;
}

static int next_on_stream(const struct worker *w, int i)
{
    int g = w->ctx->ix->next[w->g0 + i];
    return g < 0 ? -1 : g - w->g0;
}

/* PUSH/PULL i: its index among the step's pushes/pulls to its server */
static int push_j(const struct worker *w, int i)
{
    return w->ctx->ix->j[w->g0 + i];
}

/* The servers this rank talks to, in the order it first does; stream order
 * and each PUSH/PULL's ordinal j come from the plan's index. */
static int index_program(struct worker *w, struct err *e)
{
    const struct plan_rank *pr = w->pr;
    for (int i = 0; i < w->n_ops; i++) {
        const struct op *o = &pr->ops.items[i];
        w->link_of_op[i] = -1;
        if (o->kind == OP_FORWARD && o->lo == 0) w->samples_per_step += o->n_samples;
        if (o->kind != OP_PUSH && o->kind != OP_PULL) continue;
        int k = link_index(w, o->peer);
        w->link_of_op[i] = k;
        if (o->kind == OP_PUSH) {
            const struct plan_rank *srv = &w->ctx->p->ranks[o->peer];
            if (o->lo != srv->shard_lo || o->hi != srv->shard_hi)
                return err_set(e, ERR_RUN,
                               "rank %d: PUSH of layers [%d,%d) to server %d, whose shard is "
                               "[%d,%d): real runs push whole shards",
                               w->ctx->rank, o->lo, o->hi, o->peer, srv->shard_lo, srv->shard_hi);
            w->links[k].n_push++;
        }
    }
    return 0;
}

int worker_create(struct real_ctx *ctx, struct worker **out, struct err *e)
{
    *out = NULL;
    const struct plan *p = ctx->p;
    struct worker *w = XCALLOC(e, 1, sizeof *w);
    if (!w) return ERR_NOMEM;
    w->ctx = ctx;
    w->pr = &p->ranks[ctx->rank];
    w->g0 = ctx->ix->off[ctx->rank];
    w->n_ops = (int)w->pr->ops.len;
    w->n_layers = ctx->m->n_layers;
    w->n_micro = p->n_microbatches;
    replica_of(p, ctx->rank, 0, &w->replica_in, &w->n_replicas_in);
    replica_of(p, ctx->rank, w->n_layers - 1, &w->replica_out, &w->n_replicas_out);
    int n_rep = w->n_replicas_in > w->n_replicas_out ? w->n_replicas_in : w->n_replicas_out;
    w->max_n = (int)sampler_max_count(p->batch, n_rep > 0 ? n_rep : 1, w->n_micro);
    size_t n_ops = (size_t)w->n_ops + 1, n_mb = (size_t)w->n_micro;
    w->run = XCALLOC(e, n_ops, sizeof *w->run);
    w->link_of_op = XCALLOC(e, n_ops, sizeof *w->link_of_op);
    w->copy = XCALLOC(e, n_ops, sizeof *w->copy);
    w->links = XCALLOC(e, (size_t)p->n_servers + 1, sizeof *w->links);
    w->act = XCALLOC(e, n_mb, sizeof *w->act);
    w->grad_at = XCALLOC(e, n_mb * (size_t)(w->n_layers + 1), sizeof *w->grad_at);
    w->inputs_host = XCALLOC(e, n_mb, sizeof *w->inputs_host);
    w->labels_host = XCALLOC(e, n_mb, sizeof *w->labels_host);
    w->labels_dev = XCALLOC(e, n_mb, sizeof *w->labels_dev);
    w->idx = XCALLOC(e, (size_t)w->max_n + 1, sizeof *w->idx);
    w->n_grad_slots = p->n_grad_slots > 1 ? p->n_grad_slots : 1;
    w->grad_slots = XCALLOC(e, (size_t)w->n_grad_slots, sizeof *w->grad_slots);
    if (!w->run || !w->link_of_op || !w->copy ||
        !w->links || !w->act || !w->grad_slots ||
        !w->grad_at || !w->inputs_host || !w->labels_host || !w->labels_dev || !w->idx) {
        worker_free(w);
        return ERR_NOMEM;
    }
    w->grad_slots[0] = ctx->m->grads;
    for (int k = 1; k < w->n_grad_slots; k++) {
        size_t n = (size_t)ctx->m->n_params;
        if (!(w->grad_slots[k] = ctx->dev->alloc(n * sizeof(float), e))) {
            worker_free(w);
            return ERR_NOMEM;
        }
        ctx->dev->fill(w->grad_slots[k], n, 0);
    }
    int rc = index_program(w, e);
    for (int k = 0; k < w->n_links; k++)   /* --resume: the versions last read */
        w->links[k].version_read = checkpoint_resumed_link(ctx, w->links[k].rank, 0);
    w->is_async = policy_is_async(p->policy);
    w->work_link = -1;
    for (int k = 0; k < w->n_links; k++)
        if (w->links[k].rank == p->n_workers) w->work_link = k;
    if (rc == 0 && w->is_async &&
        (w->work_link < 0 || w->n_replicas_in != p->n_workers || w->n_micro != 1))
        rc = err_set(e, ERR_RUN, "rank %d: an asynchronous worker must pull from the first "
                     "server (rank %d) and be one of %d data-parallel replicas of one "
                     "microbatch", ctx->rank, p->n_workers, p->n_workers);
    if (rc == 0 && (w->n_replicas_in > 0 || w->n_replicas_out > 0))
        rc = sampler_init(&w->sampler, ctx->data.train.n, p->batch, (uint64_t)ctx->cfg->seed, e);
    if (rc == 0) rc = preallocate(w, e);
    /* a straggler model that scales each compute op's measured time needs
     * that time op by op; the cpu's sync is free (it computes at once) */
    struct straggler_spec spec = {0};
    w->is_sync_each_op = ctx->dev->is_host_memory ||
                         (straggler_parse(ctx->cfg->straggler, &spec, NULL) == 0 &&
                          spec.kind != STRAG_NONE && spec.kind != STRAG_PAUSE);
    if (rc < 0) {
        worker_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void worker_free(struct worker *w)
{
    if (!w) return;
    const struct device *dev = w->ctx->dev;
    for (int mb = 0; mb < w->n_micro && w->act; mb++) {
        mlp_act_free(w->act[mb]);
        free(w->inputs_host[mb]);
        free(w->labels_host[mb]);
        dev->free(w->labels_dev[mb]);
    }
    for (int i = 0; w->grad_at && i < w->n_micro * (w->n_layers + 1); i++) dev->free(w->grad_at[i]);
    if (w->grad_slots) {
        if (w->grad_slots[0]) w->ctx->m->grads = w->grad_slots[0];   /* the model's own again */
        for (int k = 1; k < w->n_grad_slots; k++) dev->free(w->grad_slots[k]);
        free(w->grad_slots);
    }
    free(w->act);
    free(w->grad_at);
    free(w->inputs_host);
    free(w->labels_host);
    free(w->labels_dev);
    free(w->idx);
    free(w->run);
    free(w->link_of_op);
    for (int i = 0; w->copy && i < w->n_ops; i++) host_copy_release(&w->copy[i]);
    free(w->copy);
    free(w->links);
    vec_free(&w->running);
    sampler_release(&w->sampler);
    free(w);
}

/* ---- buffers ------------------------------------------------------------- */

static int check_mb(const struct worker *w, int mb, int n, struct err *e)
{
    if (mb < 0 || mb >= w->n_micro || n < 1 || n > w->max_n)
        return err_set(e, ERR_RUN, "rank %d: microbatch %d of %d samples is outside the plan's "
                       "%d microbatches of at most %d", w->ctx->rank, mb, n, w->n_micro, w->max_n);
    return 0;
}

static struct mlp_act *act_of(struct worker *w, int mb, struct err *e)
{
    if (!w->act[mb] && mlp_act_create(w->ctx->m, w->max_n, &w->act[mb], e) < 0) return NULL;
    return w->act[mb];
}

static float *grad_at(struct worker *w, int mb, int boundary, struct err *e)
{
    float **slot = &w->grad_at[(size_t)mb * (size_t)(w->n_layers + 1) + (size_t)boundary];
    if (!*slot)
        *slot = w->ctx->dev->alloc((size_t)w->max_n * (size_t)w->ctx->m->sizes[boundary] * sizeof(float), e);
    return *slot;
}

/* Every microbatch buffer the program's ops will touch, made now, through
 * the same getters the ops use (which then find them made). */
static int preallocate(struct worker *w, struct err *e)
{
    const struct dataset *tr = &w->ctx->data.train;
    for (int i = 0; i < w->n_ops; i++) {
        const struct op *o = &w->pr->ops.items[i];
        const int mb = o->mb;
        if (o->kind == OP_SEND || o->kind == OP_RECV) {
            size_t bytes = 0;
            if (!message_buffer(w, o, &bytes, e)) return e->code;
            continue;
        }
        if (o->kind != OP_FORWARD && o->kind != OP_BACKWARD && o->kind != OP_BACKWARD_INPUT &&
            o->kind != OP_BACKWARD_WEIGHT)
            continue;
        if (mb < 0 || mb >= w->n_micro) continue;   /* the op itself says so when it runs */
        if (!act_of(w, mb, e)) return e->code;
        if (o->kind == OP_FORWARD && o->lo == 0 && !w->inputs_host[mb] &&
            !(w->inputs_host[mb] = XCALLOC(e, (size_t)w->max_n * (size_t)data_features(tr),
                                           sizeof(float))))
            return ERR_NOMEM;
        if (o->kind == OP_FORWARD && o->hi == w->n_layers) {
            if (!w->labels_host[mb] &&
                !(w->labels_host[mb] = XCALLOC(e, (size_t)w->max_n, sizeof(int32_t))))
                return ERR_NOMEM;
            if (!w->labels_dev[mb] &&
                !(w->labels_dev[mb] = w->ctx->dev->alloc((size_t)w->max_n * sizeof(int32_t), e)))
                return e->code;
        }
        if (o->kind == OP_BACKWARD || o->kind == OP_BACKWARD_INPUT) {
            if (o->hi < w->n_layers && !grad_at(w, mb, o->hi, e)) return e->code;
            if (o->lo > 0 && !grad_at(w, mb, o->lo, e)) return e->code;
        }
    }
    return 0;
}

/* The job's step this worker step computes: its own (synchronous), or its
 * work item's, k / n of n replicas (asynchronous). */
static int64_t job_step(const struct worker *w)
{
    return w->is_async ? w->work / w->n_replicas_in : w->step;
}

/* The samples of microbatch mb this step, as replica `replica` of n (an
 * asynchronous worker's item says which); checks that the sampler and the
 * plan agree on how many. */
static int sample_indices(struct worker *w, int mb, int replica, int n_replicas, int n,
                          struct err *e)
{
    int64_t count = 0;
    if (w->is_async) replica = (int)(w->work % n_replicas);
    TRY(sampler_indices(&w->sampler, job_step(w), replica, n_replicas, mb, w->n_micro, w->idx,
                        &count, e));
    if (count != n)
        return err_set(e, ERR_RUN, "rank %d: the sampler gives microbatch %d %lld samples, the "
                       "plan %d", w->ctx->rank, mb, (long long)count, n);
    return 0;
}

/* Copies microbatch mb's input rows to the device, into a->x[0]. */
static int load_inputs(struct worker *w, struct mlp_act *a, int mb, int n, struct err *e)
{
    const struct dataset *tr = &w->ctx->data.train;
    const size_t features = (size_t)data_features(tr);
    if (!w->inputs_host[mb] && !(w->inputs_host[mb] = XCALLOC(e, (size_t)w->max_n * features, sizeof(float))))
        return ERR_NOMEM;
    TRY(sample_indices(w, mb, w->replica_in, w->n_replicas_in, n, e));
    for (int i = 0; i < n; i++)
        memcpy(w->inputs_host[mb] + (size_t)i * features, tr->x + (size_t)w->idx[i] * features,
               features * sizeof(float));
    w->ctx->dev->copy(a->x[0], w->inputs_host[mb], (size_t)n * features * sizeof(float), DEV_H2D);
    return 0;
}

static const int32_t *load_labels(struct worker *w, int mb, int n, struct err *e)
{
    const struct device *dev = w->ctx->dev;
    if (!w->labels_host[mb] && !(w->labels_host[mb] = XCALLOC(e, (size_t)w->max_n, sizeof(int32_t))))
        return NULL;
    if (!w->labels_dev[mb] && !(w->labels_dev[mb] = dev->alloc((size_t)w->max_n * sizeof(int32_t), e)))
        return NULL;
    if (sample_indices(w, mb, w->replica_out, w->n_replicas_out, n, e) < 0) return NULL;
    for (int i = 0; i < n; i++) w->labels_host[mb][i] = w->ctx->data.train.y[w->idx[i]];
    dev->copy(w->labels_dev[mb], w->labels_host[mb], (size_t)n * sizeof(int32_t), DEV_H2D);
    return w->labels_dev[mb];
}

/* ---- compute ops ----------------------------------------------------------- */

/* The samples op o works on: the plan's, or (asynchronous) its work item's
 * replica's, which may differ by one when the batch does not divide. */
static int op_samples(const struct worker *w, const struct op *o)
{
    return w->is_async ? w->item_samples : o->n_samples;
}

static int run_forward(struct worker *w, const struct op *o, struct err *e)
{
    const int n = op_samples(w, o);
    TRY(check_mb(w, o->mb, n, e));
    struct mlp_act *a = act_of(w, o->mb, e);
    if (!a) return e->code;
    if (o->lo == 0) TRY(load_inputs(w, a, o->mb, n, e));
    TRY(mlp_forward(w->ctx->m, a, o->lo, o->hi, NULL, n, NULL, e));
    if (o->hi < w->n_layers) return 0;
    const int32_t *labels = load_labels(w, o->mb, n, e);
    if (!labels) return e->code;
    double loss = 0;
    TRY(mlp_loss(w->ctx->m, a, labels, n, &loss, e));
    w->loss_sum += loss;
    w->loss_samples += n;
    return 0;
}

/* BACKWARD, or its input half (BACKWARD_INPUT): the gradient by the
 * stage's output comes from the loss or from the next stage, the one by its
 * input goes where SEND of tag GRAD finds it (layer 0's is not needed). */
static int run_backward(struct worker *w, const struct op *o, struct err *e)
{
    const int n = op_samples(w, o);
    TRY(check_mb(w, o->mb, n, e));
    struct mlp_act *a = act_of(w, o->mb, e);
    if (!a) return e->code;
    const float *dout = o->hi == w->n_layers ? a->dlogits : grad_at(w, o->mb, o->hi, e);
    float *din = o->lo == 0 ? NULL : grad_at(w, o->mb, o->lo, e);
    if (!dout || (o->lo > 0 && !din)) return e->code;
    if (o->kind == OP_BACKWARD_INPUT)
        return mlp_backward_input(w->ctx->m, a, o->lo, o->hi, dout, n, din, e);
    return mlp_backward(w->ctx->m, a, o->lo, o->hi, dout, n, din, e);
}

/* BACKWARD_WEIGHT: the weight half, from what the input half kept. */
static int run_backward_weight(struct worker *w, const struct op *o, struct err *e)
{
    const int n = op_samples(w, o);
    TRY(check_mb(w, o->mb, n, e));
    struct mlp_act *a = act_of(w, o->mb, e);
    if (!a) return e->code;
    return mlp_backward_weight(w->ctx->m, a, o->lo, o->hi, n, e);
}

/* ZeRO-1's UPDATE: SGD on this rank's shard of [lo,hi) only (core/plan.h
 * plan_shard), whose gradient sum the REDUCE_SCATTER before it left here;
 * the ALL_GATHER after it brings the other shards. Its momentum is the
 * shard's alone (real/momentum_shards.h). */
static void run_shard_update(struct worker *w, int i, const struct op *o)
{
    struct real_ctx *ctx = w->ctx;
    const struct plan_group *G = &ctx->p->groups.items[o->group];
    int64_t at = mlp_param_offset(ctx->m, o->lo), lo, hi;
    plan_shard(mlp_param_count(ctx->m, o->lo, o->hi), G->n_ranks,
               plan_group_member(ctx->p, o->group, ctx->rank), &lo, &hi);
    struct mlp *m = ctx->m;
    m->dev->sgd_momentum(m->params + at + lo, momentum_of_shard(ctx, i, at, lo), m->grads + at + lo,
                         (size_t)(hi - lo), ctx->lr, ctx->momentum, ctx->weight_decay,
                         1.0f / (float)ctx->p->batch);
}

/* Does compute op i wait for the device before the next op? On a GPU the
 * host reads results only through copies and the loss, which wait by
 * themselves (nn/device.h), and communication orders itself after the
 * compute stream; so a run of compute ops is queued back to back and
 * waited for once, at its end: its last op's span then holds the run's
 * queued work (the run's total compute time stays true, its split among
 * the run's ops does not). Every op waits where each one's own time is
 * needed (is_sync_each_op). */
static bool must_sync(const struct worker *w, int i)
{
    if (w->is_sync_each_op || i + 1 >= w->n_ops) return true;
    return op_infos[w->pr->ops.items[i + 1].kind].cls != OPC_COMPUTE;
}

/* Runs compute op i now, straggler delay included. */
static int run_compute(struct worker *w, int i, struct err *e)
{
    struct real_ctx *ctx = w->ctx;
    const struct op *o = &w->pr->ops.items[i];
    double start_s = real_now(ctx);
    switch (o->kind) {
    case OP_FORWARD: TRY(run_forward(w, o, e)); break;
    case OP_BACKWARD:
    case OP_BACKWARD_INPUT: TRY(run_backward(w, o, e)); break;
    case OP_BACKWARD_WEIGHT: TRY(run_backward_weight(w, o, e)); break;
    case OP_UPDATE:
        if (o->group >= 0) {
            run_shard_update(w, i, o);
            break;
        }
        mlp_sgd_step(ctx->m, o->lo, o->hi, ctx->lr, ctx->momentum, ctx->weight_decay,
                     1.0f / (float)ctx->p->batch);
        break;
    default: return err_set(e, ERR_RUN, "rank %d: op %d is not a compute op", ctx->rank, i);
    }
    if (must_sync(w, i)) TRY(ctx->dev->sync(e));
    double took_s = real_now(ctx) - start_s;
    sleep_s(straggler_compute_s(ctx->strag, ctx->rank, took_s) - took_s);
    w->run[i].post_s = start_s;
    w->run[i].end_s = real_now(ctx);
    w->run[i].state = OPS_DONE;
    return 0;
}

/* ---- communication ops ------------------------------------------------------ */

/* The buffer a SEND or RECV of op o moves, and its bytes. */
static void *message_buffer(struct worker *w, const struct op *o, size_t *bytes, struct err *e)
{
    int boundary = plan_tag_boundary(o->tag);
    if (check_mb(w, o->mb, o->n_samples, e) < 0) return NULL;
    if (boundary < 0 || boundary > w->n_layers) {
        err_set(e, ERR_RUN, "rank %d: message across boundary %d of a %d-layer model",
                w->ctx->rank, boundary, w->n_layers);
        return NULL;
    }
    *bytes = (size_t)o->n_samples * (size_t)w->ctx->m->sizes[boundary] * sizeof(float);
    if (plan_tag_kind(o->tag) == TAG_GRAD) return grad_at(w, o->mb, boundary, e);
    struct mlp_act *a = act_of(w, o->mb, e);
    return a ? a->x[boundary] : NULL;
}

static int start_push(struct worker *w, int i, struct err *e)
{
    struct real_ctx *ctx = w->ctx;
    const struct op *o = &w->pr->ops.items[i];
    struct op_run *r = &w->run[i];
    struct server_link *l = &w->links[w->link_of_op[i]];
    int64_t off = mlp_param_offset(ctx->m, o->lo), n = mlp_param_count(ctx->m, o->lo, o->hi);
    r->msg = (struct ps_msg){.round = w->step * l->n_push + push_j(w, i),
                             .version_read = l->version_read,
                             .n_samples = w->samples_per_step, .n_floats = n};
    r->ver_read = l->version_read;
    r->ver_applied = -1;   /* until the server says, in its next pull reply */
    l->last_push = i;
    MPI_TRY(e, MPI_Isend(&r->msg, sizeof r->msg, MPI_BYTE, o->peer, PS_PUSH_HDR, ctx->ps_comm,
                         &r->ps_req[0]));
    /* servers are cpu ranks: a GPU's gradients go through a host copy */
    const float *g = host_copy_out(ctx->dev, &w->copy[i], ctx->m->grads + off,
                                   (size_t)n * sizeof(float), e);
    if (!g) return e->code;
    MPI_TRY(e, MPI_Isend(g, (int)n, MPI_FLOAT, o->peer, PS_PUSH_DATA, ctx->ps_comm,
                         &r->ps_req[1]));
    r->n_ps_req = 2;
    return 0;
}

static int start_pull(struct worker *w, int i, struct err *e)
{
    struct real_ctx *ctx = w->ctx;
    const struct op *o = &w->pr->ops.items[i];
    struct op_run *r = &w->run[i];
    const struct server_link *l = &w->links[w->link_of_op[i]];
    int64_t off = mlp_param_offset(ctx->m, o->lo), n = mlp_param_count(ctx->m, o->lo, o->hi);
    int j = push_j(w, i) < l->n_push ? push_j(w, i) : l->n_push - 1;
    r->msg = (struct ps_msg){.round = w->step * (l->n_push > 0 ? l->n_push : 1) + (j > 0 ? j : 0)};
    r->msg.wants_work = w->is_async && w->link_of_op[i] == w->work_link && j == l->n_push - 1;
    /* the answer's receives first: the server may answer at once */
    MPI_TRY(e, MPI_Irecv(&r->reply, sizeof r->reply, MPI_BYTE, o->peer, PS_PULL_HDR, ctx->ps_comm,
                         &r->ps_req[0]));
    /* into a host copy on a GPU: test_comm moves it to the device */
    float *into = host_copy_in(ctx->dev, &w->copy[i], ctx->m->params + off,
                               (size_t)n * sizeof(float), e);
    if (!into) return e->code;
    MPI_TRY(e, MPI_Irecv(into, (int)n, MPI_FLOAT, o->peer, PS_PULL_DATA, ctx->ps_comm,
                         &r->ps_req[1]));
    MPI_TRY(e, MPI_Isend(&r->msg, sizeof r->msg, MPI_BYTE, o->peer, PS_PULL_REQ, ctx->ps_comm,
                         &r->ps_req[2]));
    r->n_ps_req = 3;
    return 0;
}

static int start_comm(struct worker *w, int i, struct err *e)
{
    struct real_ctx *ctx = w->ctx;
    const struct op *o = &w->pr->ops.items[i];
    struct op_run *r = &w->run[i];
    r->post_s = real_now(ctx);
    r->ver_read = r->ver_applied = -1;
    size_t bytes = 0;
    void *buf = NULL;
    switch (o->kind) {
    case OP_SEND:
    case OP_RECV:
        if (!(buf = message_buffer(w, o, &bytes, e))) return e->code;
        if (o->kind == OP_SEND)
            TRY(ctx->comm.ops->isend(&ctx->comm, buf, bytes, o->peer, o->tag, &r->req, e));
        else
            TRY(ctx->comm.ops->irecv(&ctx->comm, buf, bytes, o->peer, o->tag, &r->req, e));
        break;
    case OP_ALLREDUCE: {
        int64_t off = mlp_param_offset(ctx->m, o->lo);
        TRY(ctx->comm.ops->iallreduce_sum(&ctx->comm, ctx->m->grads + off,
                                          (size_t)mlp_param_count(ctx->m, o->lo, o->hi), o->group,
                                        &r->req, e));
        break;
    }
    case OP_REDUCE_SCATTER: {
        int64_t off = mlp_param_offset(ctx->m, o->lo);
        TRY(ctx->comm.ops->ireduce_scatter_sum(&ctx->comm, ctx->m->grads + off,
                                               (size_t)mlp_param_count(ctx->m, o->lo, o->hi),
                                               o->group, &r->req, e));
        break;
    }
    case OP_ALL_GATHER: {
        int64_t off = mlp_param_offset(ctx->m, o->lo);
        TRY(ctx->comm.ops->iall_gather(&ctx->comm, ctx->m->params + off,
                                       (size_t)mlp_param_count(ctx->m, o->lo, o->hi), o->group,
                                       &r->req, e));
        break;
    }
    case OP_PUSH: TRY(start_push(w, i, e)); break;
    case OP_PULL: TRY(start_pull(w, i, e)); break;
    default: return err_set(e, ERR_RUN, "rank %d: op %d is not a communication op", ctx->rank, i);
    }
    r->state = o->kind == OP_SEND || o->kind == OP_PUSH ? OPS_ISSUED : OPS_RUNNING;
    return vec_push(&w->running, i) < 0 ? err_set(e, ERR_NOMEM, "out of memory") : 0;
}

/* Has running op i completed? Then it is DONE, with its end time. */
static int test_comm(struct worker *w, int i, bool *done, struct err *e)
{
    struct real_ctx *ctx = w->ctx;
    struct op_run *r = &w->run[i];
    const struct op *o = &w->pr->ops.items[i];
    if (r->n_ps_req) {
        int flag = 0;
        MPI_TRY(e, MPI_Testall(r->n_ps_req, r->ps_req, &flag, MPI_STATUSES_IGNORE));
        *done = flag != 0;
    } else {
        TRY(ctx->comm.ops->test(&ctx->comm, &r->req, done, e));
    }
    if (!*done) return 0;
    r->n_ps_req = 0;
    r->end_s = real_now(ctx);
    r->state = OPS_DONE;
    if (o->kind == OP_PULL) {
        int64_t off = mlp_param_offset(ctx->m, o->lo), n = mlp_param_count(ctx->m, o->lo, o->hi);
        host_copy_in_done(ctx->dev, &w->copy[i], ctx->m->params + off, (size_t)n * sizeof(float));
        struct server_link *l = &w->links[w->link_of_op[i]];
        l->version_read = r->ver_read = r->reply.version;
        if (r->msg.wants_work) {
            w->next_work = r->reply.next_work;
            w->checkpoint_step = r->reply.checkpoint_step;
        }
        if (l->last_push >= 0) w->run[l->last_push].ver_applied = r->reply.version_applied;
        /* the server's clock is aligned only to within clock_align's
         * error (microseconds on one host): an answer cannot come after
         * its arrival */
        if (r->reply.answer_s > r->post_s)
            r->post_s = r->reply.answer_s < r->end_s ? r->reply.answer_s : r->end_s;
    }
    return 0;
}

/* ---- the step ----------------------------------------------------------------- */

/* Points the model's gradients at the block of step - lag (core/plan.h
 * "Steps in flight"); the caller has checked that step exists. */
static void use_grads_of(struct worker *w, int lag)
{
    if (w->n_grad_slots > 1)
        w->ctx->m->grads = w->grad_slots[(w->step - lag) % w->n_grad_slots];
}

/* Are op i's deps satisfied? */
static bool is_ready(const struct worker *w, int i)
{
    const struct plan *p = w->ctx->p;
    const int *deps = plan_deps(p, w->ctx->rank, i);
    for (int k = 0; k < w->pr->ops.items[i].n_deps; k++)
        if (w->run[deps[k]].state == OPS_WAITING || w->run[deps[k]].state == OPS_RUNNING)
            return false;
    return true;
}

static int record_span(struct worker *w, int i)
{
    const struct op *o = &w->pr->ops.items[i];
    const struct op_run *r = &w->run[i];
    bool is_msg = o->kind == OP_SEND || o->kind == OP_RECV;
    struct span s = {
        .rank = w->ctx->rank, .stream = (int16_t)o->stream, .kind = (int16_t)o->kind,
        .step = (int32_t)w->step, .op = i, .mb = o->mb,
        .lo = is_msg ? plan_tag_boundary(o->tag) : o->lo,
        .hi = is_msg ? plan_tag_boundary(o->tag) : o->hi,
        .peer = o->peer, .start_s = r->post_s, .end_s = r->end_s, .bytes = o->bytes,
        .flops = o->flops, .version_read = -1, .version_applied = -1,
    };
    if (o->kind == OP_PUSH || o->kind == OP_PULL) s.version_read = r->ver_read;
    if (o->kind == OP_PUSH) s.version_applied = r->ver_applied;
    if (o->kind == OP_UPDATE) plan_lag_versions(o, w->step, &s.version_read, &s.version_applied);
    return vec_push(&w->ctx->spans, s);
}

/* Completes what has completed among the running ops; *progress when any did. */
static int reap(struct worker *w, int *n_done, bool *progress, struct err *e)
{
    size_t keep = 0;
    for (size_t k = 0; k < w->running.len; k++) {
        int i = w->running.items[k];
        bool done = false;
        TRY(test_comm(w, i, &done, e));
        if (done) {
            (*n_done)++;
            *progress = true;
        } else {
            w->running.items[keep++] = i;
        }
    }
    w->running.len = keep;
    return 0;
}

int worker_step(struct worker *w, int64_t step, int64_t work, struct err *e)
{
    struct real_ctx *ctx = w->ctx;
    w->step = step;
    w->work = work;
    w->next_work = -1;
    w->checkpoint_step = -1;
    if (w->is_async) {
        int64_t count = 0;
        TRY(sampler_indices(&w->sampler, job_step(w), (int)(work % w->n_replicas_in),
                            w->n_replicas_in, 0, 1, w->idx, &count, e));
        w->item_samples = (int)count;
        w->samples_per_step = count;   /* what its pushes sum over */
    }
    w->loss_sum = 0;
    w->loss_samples = 0;
    for (int i = 0; i < w->n_ops; i++) w->run[i] = (struct op_run){.state = OPS_WAITING};
    for (int k = 0; k < w->n_links; k++) w->links[k].last_push = -1;
    sleep_s(straggler_pause_s(ctx->strag, ctx->rank));
    use_grads_of(w, 0);   /* this step's block: the one step - n_grad_slots was applied from */
    mlp_zero_grad(ctx->m, 0, w->n_layers);

    int head[PLAN_N_STREAMS], n_done = 0;
    for (int s = 0; s < PLAN_N_STREAMS; s++) head[s] = first_on_stream(w, s);
    while (n_done < w->n_ops) {
        bool progress = false;
        TRY(reap(w, &n_done, &progress, e));
        /* communication first: a started transfer moves while compute runs */
        for (int s = PLAN_N_STREAMS - 1; s >= 0; s--) {
            /* the head is the first op of its stream not yet satisfied, so
             * only its deps remain to check */
            int i = head[s];
            if (i < 0 || w->run[i].state != OPS_WAITING || !is_ready(w, i)) continue;
            const struct op *o = &w->pr->ops.items[i];
            if (o->lag > w->step) {
                /* no step - lag yet: nothing to work on (core/plan.h) */
                w->run[i].post_s = w->run[i].end_s = real_now(ctx);
                w->run[i].state = OPS_DONE;
                n_done++;
            } else if (op_infos[o->kind].cls == OPC_COMPUTE) {
                use_grads_of(w, o->lag);
                TRY(run_compute(w, i, e));
                n_done++;
            } else {
                use_grads_of(w, o->lag);
                TRY(start_comm(w, i, e));
            }
            progress = true;
        }
        /* move each stream's head past the ops that satisfy their stream */
        for (int s = 0; s < PLAN_N_STREAMS; s++)
            while (head[s] >= 0 && (w->run[head[s]].state == OPS_DONE ||
                                    w->run[head[s]].state == OPS_ISSUED))
                head[s] = next_on_stream(w, head[s]);
        if (progress) continue;
        if (w->running.len == 0)
            return err_set(e, ERR_RUN, "rank %d, step %lld: no op can start and none is running "
                           "(the plan deadlocks; `strata schedule` checks it)",
                           ctx->rank, (long long)step);
        sched_yield();   /* waiting on peers: let an oversubscribed core run them */
    }
    TRY(ctx->dev->sync(e));   /* the step's queued work too, and its failures */
    w->ctx->m->grads = w->grad_slots[0];   /* every op of the step has completed */
    for (int i = 0; i < w->n_ops; i++)
        if (record_span(w, i) < 0) return err_set(e, ERR_NOMEM, "out of memory for the trace");
    if (w->loss_samples > 0) {
        struct step_loss l = {.step = job_step(w), .end_s = real_now(ctx), .loss_sum = w->loss_sum,
                              .n_samples = w->loss_samples};
        if (vec_push(&ctx->losses, l) < 0) return err_set(e, ERR_NOMEM, "out of memory");
    }
    return 0;
}

int64_t worker_checkpoint_due(const struct worker *w, int64_t job_done)
{
    if (w->is_async) return w->checkpoint_step;
    return checkpoint_is_due(w->ctx, job_done) ? job_done : -1;
}

int64_t worker_next_work(const struct worker *w)
{
    return w->is_async ? w->next_work : -1;
}

void worker_last_loss(const struct worker *w, double *loss_sum, int64_t *n_samples)
{
    *loss_sum = w->loss_sum;
    *n_samples = w->loss_samples;
}

int worker_finish(struct worker *w, struct err *e)
{
    struct ps_msg done = {.round = w->step + 1};
    for (int k = 0; k < w->n_links; k++)
        MPI_TRY(e, MPI_Send(&done, sizeof done, MPI_BYTE, w->links[k].rank, PS_DONE,
                            w->ctx->ps_comm));
    return 0;
}

int worker_checkpoint(struct worker *w, int64_t next_step, struct err *e)
{
    struct ps_msg m = {.round = next_step};
    for (int k = 0; k < w->n_links; k++)
        MPI_TRY(e, MPI_Send(&m, sizeof m, MPI_BYTE, w->links[k].rank, PS_CHECKPOINT,
                            w->ctx->ps_comm));
    struct checkpoint_link *links = XCALLOC(e, (size_t)w->n_links + 1, sizeof *links);
    if (!links) return ERR_NOMEM;
    for (int k = 0; k < w->n_links; k++)
        links[k] = (struct checkpoint_link){w->links[k].rank - w->ctx->p->n_workers,
                                            w->links[k].version_read};
    struct checkpoint_extra x = {.links = links, .n_links = w->n_links};
    int rc = checkpoint_save(w->ctx, next_step, &x, e);
    free(links);
    return rc;
}

bool worker_is_first_loss(const struct worker *w)
{
    return w->replica_out == 0;
}
