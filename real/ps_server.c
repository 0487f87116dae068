/* A parameter-server rank: holds its shard's parameters and momentum,
 * takes pushes and answers pulls as core/ps_policy decides (the very code
 * the simulator's server agents run), until every worker says it is done.
 *
 * Updates: an update applied alone (async, ssp) is one SGD step on that
 * push's gradient, divided by the samples it sums over; a sync or backup
 * round adds its pushes' gradients and takes one step divided by their
 * samples together. With every worker's push in the round, that is the
 * global batch's mean gradient: exactly one device's step (the tests check).
 * A round's pushes are kept apart and added in worker order when it closes,
 * not in arrival order, so that a synchronous run's arithmetic is the same
 * whatever the timing: floating-point addition is not associative.
 *
 * Spans, op -1 (a server runs no op of the plan), so that `strata replay`
 * can give the simulated server the times it took (docs/trace-format.md):
 * each update (the round's sum and its SGD step, or one push's step) is an
 * UPDATE span of the shard's layers, step = the update's index in this
 * run; each push's gradient received is a PUSH span, peer = its worker,
 * step = its round, ending when the gradient was in (a worker's own PUSH
 * span ends when it next tested the send: later). One vec_push each. */
#include <stdlib.h>
#include <string.h>

#include "../core/ps_policy.h"
#include "checkpoint.h"
#include "mpi_check.h"
#include "ps_server.h"
#include "ps_wire.h"

struct pending_pull {
    int source, w;
    int64_t round;
    bool wants_work;
};

struct server {
    struct real_ctx *ctx;
    struct ps_server ps;
    int n_workers;
    int64_t off, n;                /* the shard in the parameter block, in floats */
    int *w_of_rank;                /* [n_ranks]: index among this server's workers, -1 */
    int64_t *last_applied;         /* [workers]: their latest push's version_applied */
    float *grad;                   /* [n]: a push being received (async, ssp) */
    float **round_grad;            /* [workers][n]: sync/backup: each one's push in the open round */
    bool *in_round;                /* [workers]: its push counts in the open round */
    float *round_sum;              /* [n]: the round's gradient sum, when it closes */
    int64_t round_samples;
    VEC(struct pending_pull) pending;
    /* the first server of an asynchronous plan hands the job's work out */
    bool is_work_server;
    int64_t work_next, work_total;
    int n_checkpoint;              /* workers that asked for the coming checkpoint */
    int n_push;                    /* pushes a worker makes to this server per step */
    VEC(struct pending_pull) held; /* asynchronous: work asked for at a checkpoint's boundary */
    struct op update;              /* the shard's UPDATE: its layers, bytes and FLOPs for spans */
    int64_t n_updates;             /* applied in this run: the next span's step */
};

static int server_init(struct server *S, struct real_ctx *ctx, struct err *e)
{
    const struct plan *p = ctx->p;
    const struct plan_rank *me = &p->ranks[ctx->rank];
    S->ctx = ctx;
    S->off = mlp_param_offset(ctx->m, me->shard_lo);
    S->n = mlp_param_count(ctx->m, me->shard_lo, me->shard_hi);
    S->w_of_rank = XCALLOC(e, (size_t)p->n_ranks, sizeof *S->w_of_rank);
    if (!S->w_of_rank) return ERR_NOMEM;
    int n_workers = 0;
    for (int r = 0; r < p->n_ranks; r++) {
        S->w_of_rank[r] = -1;
        const struct plan_rank *pr = &p->ranks[r];
        for (size_t i = 0; i < pr->ops.len; i++)
            if (pr->ops.items[i].kind == OP_PUSH && pr->ops.items[i].peer == ctx->rank) {
                if (S->w_of_rank[r] < 0) S->w_of_rank[r] = n_workers++;
                if (n_workers == 1) S->n_push++;
            }
    }
    S->n_workers = n_workers;
    S->update = plan_update_op(p->wl, me->shard_lo, me->shard_hi);
    S->last_applied = XCALLOC(e, (size_t)n_workers + 1, sizeof *S->last_applied);
    S->round_grad = XCALLOC(e, (size_t)n_workers + 1, sizeof *S->round_grad);
    S->in_round = XCALLOC(e, (size_t)n_workers + 1, sizeof *S->in_round);
    S->grad = ctx->dev->alloc((size_t)S->n * sizeof(float), e);
    S->round_sum = ctx->dev->alloc((size_t)S->n * sizeof(float), e);
    if (!S->last_applied || !S->round_grad || !S->in_round || !S->grad || !S->round_sum)
        return ERR_NOMEM;
    for (int w = 0; w < n_workers; w++) S->last_applied[w] = -1;
    /* items 0 .. n_workers - 1 are the workers' first steps (after a
     * --resume at job step c: c x n_workers + w) */
    S->is_work_server = policy_is_async(p->policy) && ctx->rank == p->n_workers;
    S->work_next = (ctx->first_step + 1) * n_workers;
    S->work_total = ctx->steps * n_workers;
    if (n_workers) TRY(ps_server_init(&S->ps, p->policy, p->policy_arg, n_workers, e));
    /* --resume: back to the checkpoint's round, which every worker had pushed */
    const struct checkpoint_server *was = checkpoint_resumed_server(ctx);
    if (was && n_workers) {
        /* the checkpoint's round; an asynchronous job's workers all go on
         * from the checkpoint's step, their lags before it forgotten */
        ps_server_rewind(&S->ps, was->version, ctx->first_step * S->n_push);
        for (int w = 0; w < n_workers && w < was->n_workers; w++)
            S->last_applied[w] = was->last_applied[w];
    }
    return 0;
}

/* A worker's CHECKPOINT: once every worker sent it, this server's part. */
static int take_checkpoint(struct server *S, const struct ps_msg *m, struct err *e)
{
    if (++S->n_checkpoint < S->n_workers) return 0;
    S->n_checkpoint = 0;
    struct checkpoint_server state = {.version = S->ps.version, .round = m->round * S->n_push,
                                      .n_workers = S->n_workers,
                                      .last_applied = S->last_applied};
    struct checkpoint_extra x = {.server = &state};
    return checkpoint_save(S->ctx, m->round, &x, e);
}

static void server_release(struct server *S)
{
    ps_server_release(&S->ps);
    free(S->w_of_rank);
    free(S->last_applied);
    for (int w = 0; S->round_grad && w < S->n_workers; w++) S->ctx->dev->free(S->round_grad[w]);
    free(S->round_grad);
    free(S->in_round);
    if (S->ctx) {
        S->ctx->dev->free(S->grad);
        S->ctx->dev->free(S->round_sum);
    }
    vec_free(&S->pending);
    vec_free(&S->held);
}

static void sgd(struct server *S, const float *g, int64_t samples)
{
    struct real_ctx *ctx = S->ctx;
    ctx->dev->sgd_momentum(ctx->m->params + S->off, ctx->m->momentum + S->off, g, (size_t)S->n, ctx->lr,
                           ctx->momentum, ctx->weight_decay, 1.0f / (float)samples);
}

/* A span of this server's shard (op -1), ending now. */
static int record(struct server *S, enum op_kind kind, int64_t step, int peer, double start_s,
                  int64_t bytes, double flops, struct err *e)
{
    struct real_ctx *ctx = S->ctx;
    struct span s = {
        .rank = ctx->rank, .stream = (int16_t)op_infos[kind].stream, .kind = (int16_t)kind,
        .step = (int32_t)step, .op = -1, .mb = -1, .lo = S->update.lo, .hi = S->update.hi,
        .peer = peer, .start_s = start_s, .end_s = real_now(ctx), .bytes = bytes,
        .flops = flops, .version_read = -1, .version_applied = -1,
    };
    return vec_push(&ctx->spans, s) < 0 ? err_set(e, ERR_NOMEM, "out of memory for the trace") : 0;
}

/* The update that began at start_s has been issued: its span, once the
 * device has done it. */
static int record_update(struct server *S, double start_s, struct err *e)
{
    TRY(S->ctx->dev->sync(e));
    return record(S, OP_UPDATE, S->n_updates++, -1, start_s, S->update.bytes, S->update.flops, e);
}

static int reply_to(struct server *S, const struct pending_pull *q, int64_t next_work,
                    int64_t checkpoint_step, struct err *e)
{
    struct real_ctx *ctx = S->ctx;
    int source = q->source, w = q->w;
    struct ps_reply reply = {.version = S->ps.version, .version_applied = S->last_applied[w],
                             .answer_s = real_now(ctx), .next_work = next_work,
                             .checkpoint_step = checkpoint_step};
    /* the worker posted both receives before asking */
    MPI_TRY(e, MPI_Send(&reply, sizeof reply, MPI_BYTE, source, PS_PULL_HDR, ctx->ps_comm));
    MPI_TRY(e, MPI_Send(ctx->m->params + S->off, (int)S->n, MPI_FLOAT, source, PS_PULL_DATA,
                        ctx->ps_comm));
    return 0;
}

/* Asynchronous, at a checkpoint's boundary (ps_wire.h): once every worker
 * asked for work, each gets its item and the checkpoint to join first. */
static int release_held(struct server *S, struct err *e)
{
    if ((int)S->held.len < S->ps.n_live) return 0;
    int64_t base = S->work_next, step = base / S->n_workers;
    for (size_t k = 0; k < S->held.len; k++)
        TRY(reply_to(S, &S->held.items[k], base + S->held.items[k].w, step, e));
    S->work_next = base + S->n_workers;
    S->held.len = 0;
    return 0;
}

static int answer(struct server *S, const struct pending_pull *q, struct err *e)
{
    int64_t next_work = -1;
    if (q->wants_work && S->is_work_server && S->work_next < S->work_total) {
        bool is_boundary = S->work_next % S->n_workers == 0 &&
                           checkpoint_is_due(S->ctx, S->work_next / S->n_workers);
        if (is_boundary) {
            if (vec_push(&S->held, *q) < 0) return err_set(e, ERR_NOMEM, "out of memory");
            return release_held(S, e);
        }
        next_work = S->work_next++;
    }
    return reply_to(S, q, next_work, -1, e);
}

/* Answers the waiting pulls an applied update now allows, in arrival order. */
static int recheck(struct server *S, struct err *e)
{
    size_t keep = 0;
    for (size_t k = 0; k < S->pending.len; k++) {
        struct pending_pull q = S->pending.items[k];
        if (ps_server_pull_ready(&S->ps, q.w, q.round)) TRY(answer(S, &q, e));
        else S->pending.items[keep++] = q;
    }
    S->pending.len = keep;
    return 0;
}

static int take_push(struct server *S, int source, int w, const struct ps_msg *m, struct err *e)
{
    struct real_ctx *ctx = S->ctx;
    if (m->n_floats != S->n || m->n_samples < 1)
        return err_set(e, ERR_RUN, "server %d: a push from rank %d of %lld floats and %lld "
                       "samples; the shard has %lld floats", ctx->rank, source,
                       (long long)m->n_floats, (long long)m->n_samples, (long long)S->n);
    bool is_sync = policy_infos[S->ps.policy].has_rounds;
    if (is_sync && !S->round_grad[w] &&
        !(S->round_grad[w] = ctx->dev->alloc((size_t)S->n * sizeof(float), e)))
        return ERR_NOMEM;
    float *into = is_sync ? S->round_grad[w] : S->grad;
    double recv_s = real_now(ctx);
    MPI_TRY(e, MPI_Recv(into, (int)S->n, MPI_FLOAT, source, PS_PUSH_DATA, ctx->ps_comm,
                        MPI_STATUS_IGNORE));
    TRY(record(S, OP_PUSH, m->round, source, recv_s, S->n * (int64_t)sizeof(float), 0, e));
    struct ps_push_result pr = ps_server_push(&S->ps, w, m->round, m->version_read);
    S->last_applied[w] = pr.version_applied;
    double start_s = real_now(ctx);
    switch (pr.action) {
    case PS_APPLIED:
        sgd(S, S->grad, m->n_samples);
        TRY(record_update(S, start_s, e));
        return recheck(S, e);
    case PS_GATHERED:
    case PS_ROUND:
        S->in_round[w] = true;
        S->round_samples += m->n_samples;
        if (pr.action == PS_GATHERED) return 0;
        ctx->dev->fill(S->round_sum, (size_t)S->n, 0);
        for (int v = 0; v < S->n_workers; v++)
            if (S->in_round[v]) ctx->dev->axpy((size_t)S->n, 1.0f, S->round_grad[v], S->round_sum);
        sgd(S, S->round_sum, S->round_samples);
        TRY(record_update(S, start_s, e));
        memset(S->in_round, 0, (size_t)S->n_workers * sizeof *S->in_round);
        S->round_samples = 0;
        return recheck(S, e);
    case PS_DROPPED:
        return 0;
    }
    return 0;
}

/* The next message to this server, from any worker. */
static int receive(struct server *S, struct ps_msg *m, MPI_Status *st, struct err *e)
{
    MPI_TRY(e, MPI_Recv(m, sizeof *m, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, S->ctx->ps_comm, st));
    return 0;
}

int ps_serve(struct real_ctx *ctx, struct err *e)
{
    struct server S = {0};
    int rc = server_init(&S, ctx, e);
    int n_workers = S.ps.n_workers, n_done = 0;
    while (rc == 0 && n_done < n_workers) {
        struct ps_msg m;
        MPI_Status st;
        heartbeat_step(ctx->hb, S.ps.version, real_now(ctx));
        if ((rc = receive(&S, &m, &st, e)) < 0) break;
        int w = st.MPI_SOURCE >= 0 && st.MPI_SOURCE < ctx->p->n_ranks ? S.w_of_rank[st.MPI_SOURCE] : -1;
        if (w < 0) {
            rc = err_set(e, ERR_RUN, "server %d: a message from rank %d, which does not push to it",
                         ctx->rank, st.MPI_SOURCE);
            break;
        }
        switch (st.MPI_TAG) {
        case PS_PUSH_HDR: rc = take_push(&S, st.MPI_SOURCE, w, &m, e); break;
        case PS_PULL_REQ: {
            struct pending_pull q = {.source = st.MPI_SOURCE, .w = w, .round = m.round,
                                     .wants_work = m.wants_work != 0};
            if (ps_server_pull_ready(&S.ps, w, m.round)) rc = answer(&S, &q, e);
            else if (vec_push(&S.pending, q) < 0) rc = err_set(e, ERR_NOMEM, "out of memory");
            break;
        }
        case PS_CHECKPOINT: rc = take_checkpoint(&S, &m, e); break;
        case PS_DONE:
            n_done++;
            /* a worker with no work left holds ssp's bound back no more */
            if (policy_is_async(S.ps.policy)) {
                ps_server_retire(&S.ps, w);
                rc = recheck(&S, e);
            }
            break;
        default:
            rc = err_set(e, ERR_RUN, "server %d: unexpected message tag %d from rank %d", ctx->rank,
                         st.MPI_TAG, st.MPI_SOURCE);
        }
    }
    if (rc == 0 && S.pending.len)
        rc = err_set(e, ERR_RUN, "server %d: %zu pulls were never answered", ctx->rank,
                     S.pending.len);
    server_release(&S);
    return rc;
}
