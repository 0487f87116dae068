/* A real run from start to report: set-up that every rank agrees on, the
 * aligned clock, the steps (workers) or the serving (servers), then on
 * rank 0 the spans, losses and parameters of every rank turned into a
 * report. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/analysis.h"
#include "../core/straggler_detect.h"
#include "checkpoint.h"
#include "clock_align.h"
#include "failure_env.h"
#include "host_copy.h"
#include "host_map.h"
#include "momentum_shards.h"
#include "mpi_check.h"
#include "params.h"
#include "eval_snapshots.h"
#include "params_gather.h"
#include "ps_server.h"
#include "real.h"
#include "worker.h"

/* Spans kept for --trace at most: 80 bytes each, 80 MB. */
#define REAL_MAX_KEPT_SPANS 1000000

int64_t real_steps(const struct config *cfg, int64_t n_train)
{
    if (cfg->epochs <= 0) return cfg->steps;
    return cfg->epochs * sampler_steps_per_epoch(n_train, cfg->batch);
}

/* ---- set-up every rank agrees on ------------------------------------------ */

static int setup(struct real_ctx *ctx, struct err *e)
{
    const struct config *cfg = ctx->cfg;
    const struct plan *p = ctx->p;
    const bool is_worker = ctx->rank < p->n_workers;
    /* Servers apply their shard's updates on the cpu whatever the workers
     * use: they speak MPI from host memory (real/ps_server.c). The device
     * reads TF32 from the environment (nn/device.h): --tf32 says it here. */
    if (!(ctx->dev = device_find(is_worker ? cfg->device : "cpu", e))) return e->code;
    if (setenv("STRATA_TF32", cfg->tf32 ? "1" : "0", 1) != 0)
        return err_set(e, ERR_NOMEM, "out of memory for the environment (STRATA_TF32)");
    TRY(ctx->dev->init(0, e));
    /* Servers need no data, but the steps depend on its size: rank 0's
     * count reaches them below. */
    if (is_worker) {
        TRY(data_load(cfg->data, (uint64_t)cfg->seed, &ctx->data, e));
        TRY(data_check_model(&ctx->data, ctx->wl->layers[0].in, (int)ctx->wl->n_classes, e));
        if (ctx->data.train.n < p->batch)
            return err_set(e, ERR_INPUT, "--batch %d exceeds the %lld training samples of %s",
                           p->batch, (long long)ctx->data.train.n, ctx->data.train.source);
    }
    TRY(mlp_create(ctx->wl, ctx->dev, (uint64_t)cfg->seed, &ctx->m, e));
    TRY(momentum_shards_init(ctx, e));
    struct straggler_spec spec;
    TRY(straggler_parse(cfg->straggler, &spec, e));
    if (!(ctx->strag = straggler_create(&spec, (uint64_t)cfg->seed, p->n_ranks, e))) return e->code;
    return 0;
}

static void teardown(struct real_ctx *ctx)
{
    ctx->comm.ops->close(&ctx->comm);
    if (ctx->ps_comm != MPI_COMM_NULL) MPI_Comm_free(&ctx->ps_comm);
    if (ctx->params_comm != MPI_COMM_NULL) MPI_Comm_free(&ctx->params_comm);
    straggler_free(ctx->strag);
    heartbeat_close(ctx->hb);
    momentum_shards_release(ctx);
    mlp_free(ctx->m);
    data_release(&ctx->data);
    vec_free(&ctx->spans);
    vec_free(&ctx->losses);
}

/* ---- training ------------------------------------------------------------------ */

/* The test set on the parameters after `step` job steps, which training
 * had reached at time at_s: the point's time, as the simulator's is its
 * step's end, not the end of the gather and the evaluation after it (the
 * final point lay 2 to 4 times the job's time in, on the loss curve's
 * axis). */
static int evaluate(struct real_ctx *ctx, int64_t step, double at_s, struct real_result *res,
                    struct err *e)
{
    const char *delay = getenv(REAL_TEST_EVAL_DELAY_ENV);
    double delay_s = delay ? strtod(delay, NULL) : 0;
    if (delay_s > 0 && delay_s < 60)
        nanosleep(&(struct timespec){.tv_sec = (time_t)delay_s,
                                     .tv_nsec = (long)((delay_s - (double)(time_t)delay_s) * 1e9)},
                  NULL);
    const struct dataset *test = &ctx->data.test;
    int32_t *labels = XCALLOC(e, (size_t)test->n, sizeof *labels);
    if (!labels) return ERR_NOMEM;
    for (int64_t i = 0; i < test->n; i++) labels[i] = test->y[i];
    double accuracy = 0, loss = 0;
    int rc = mlp_evaluate(ctx->m, test->x, labels, (int)test->n, &accuracy, &loss, e);
    free(labels);
    TRY(rc);
    struct report *r = &res->report;
    struct accuracy_point *grown = realloc(r->accuracy_curve,
                                           ((size_t)r->n_accuracy_curve + 1) * sizeof *grown);
    if (!grown) return err_set(e, ERR_NOMEM, "out of memory");
    r->accuracy_curve = grown;
    grown[r->n_accuracy_curve++] = (struct accuracy_point){step, at_s, accuracy};
    res->report.has_final = true;
    res->report.final.loss = loss;
    res->report.final.test_accuracy = accuracy;
    return 0;
}

/* After the job's step `step` (this worker's last when is_last). */
static void progress(struct real_ctx *ctx, struct worker *w, int64_t step, bool is_last,
                     double *last_s)
{
    double now = real_now(ctx);
    if (!is_last && now - *last_s < 0.5) return;
    *last_s = now;
    double loss_sum = 0;
    int64_t n = 0;
    worker_last_loss(w, &loss_sum, &n);
    int64_t per_epoch = sampler_steps_per_epoch(ctx->data.train.n, ctx->p->batch);
    fprintf(stderr, "\rstep %lld/%lld  epoch %lld  loss %.4f  %.0f samples/s   ",
            (long long)(step + 1), (long long)ctx->steps,
            (long long)(per_epoch ? step / per_epoch + 1 : 1), n ? loss_sum / (double)n : 0.0,
            (double)(step + 1 - ctx->first_step) * ctx->p->batch / (now > 0 ? now : 1e-9));
    if (is_last) fputc('\n', stderr);
    fflush(stderr);
}

/* show_progress: a progress line on stderr, from the first rank that
 * computes the loss. Rank 0 keeps the parameters of --eval-every's points
 * in *evals, for finish to evaluate off the clock. */
static int train(struct real_ctx *ctx, bool show_progress, struct eval_snapshots *evals,
                 struct err *e)
{
    struct worker *w = NULL;
    TRY(worker_create(ctx, &w, e));
    const long long every = ctx->cfg->eval_every;
    const bool shows_progress = show_progress && worker_is_first_loss(w);
    double last_s = 0;
    int rc = 0;
    /* Asynchronous plans: worker w starts with work item w and runs until
     * the first server has none left for it (ps_wire.h); its job steps are
     * its items' steps. Synchronous plans: steps 0 .. steps - 1. For PS
     * plans rank 0 holds every parameter it evaluates (params_owner), so
     * evaluating at its own job steps needs no other rank. */
    const bool is_async = policy_is_async(ctx->p->policy);
    int64_t work = ctx->first_step * ctx->p->n_workers + ctx->rank;
    int64_t next_eval = every > 0 ? (ctx->first_step / every + 1) * every : 0;
    double resumed_at_s = 0;
    if (checkpoint_point_due(ctx, &resumed_at_s)) {
        rc = params_gather(ctx, false, e);
        if (rc == 0 && ctx->rank == 0)
            rc = eval_snapshots_take(evals, ctx->dev, ctx->m, ctx->first_step, resumed_at_s, e);
    }
    for (int64_t step = ctx->first_step; rc == 0 && (is_async ? work >= 0 : step < ctx->steps);
         step++) {
        heartbeat_step(ctx->hb, step, real_now(ctx));
        rc = worker_step(w, step, work, e);
        if (rc < 0) break;
        int64_t job_done = (is_async ? work / ctx->p->n_workers : step) + 1;
        /* before a checkpoint of this step, which carries the point */
        if (every > 0 && job_done >= next_eval && job_done < ctx->steps) {
            next_eval = (job_done / every + 1) * every;
            const double reached_s = real_now(ctx);
            rc = params_gather(ctx, false, e);
            if (rc == 0 && ctx->rank == 0)
                rc = eval_snapshots_take(evals, ctx->dev, ctx->m, job_done, reached_s, e);
            if (rc < 0) break;
        }
        int64_t ckpt_step = worker_checkpoint_due(w, job_done);
        if (ckpt_step >= 0 && (rc = worker_checkpoint(w, ckpt_step, e)) < 0) break;
        work = worker_next_work(w);
        bool is_last = is_async ? work < 0 : step + 1 == ctx->steps;
        if (shows_progress) progress(ctx, w, job_done - 1, is_last, &last_s);
    }
    if (rc == 0) rc = worker_finish(w, e);
    worker_free(w);
    return rc;
}

/* ---- rank 0: the report ---------------------------------------------------------- */

/* gather's work, with its buffers given: displs and bytes [n_ranks]. */
static int gather_into(struct real_ctx *ctx, const void *items, size_t n, size_t size,
                       char **all, int *counts, int *displs, int *bytes, struct err *e)
{
    int n_ranks = ctx->p->n_ranks, mine = (int)n;
    MPI_TRY(e, MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD));
    size_t total = 0;
    for (int r = 0; ctx->rank == 0 && r < n_ranks; r++) {
        displs[r] = (int)(total * size);
        bytes[r] = (int)((size_t)counts[r] * size);
        total += (size_t)counts[r];
    }
    if (total * size > INT_MAX) return err_set(e, ERR_RUN, "too many trace entries to gather");
    if (ctx->rank == 0 && !(*all = XCALLOC(e, total + 1, size))) return ERR_NOMEM;
    MPI_TRY(e, MPI_Gatherv(items, (int)(n * size), MPI_BYTE, *all, bytes, displs, MPI_BYTE, 0,
                           MPI_COMM_WORLD));
    return 0;
}

/* Gathers every rank's items (n of `size` bytes each) on rank 0: *all and
 * *counts (per rank) there; the caller frees both, whatever happened. */
static int gather(struct real_ctx *ctx, const void *items, size_t n, size_t size, char **all,
                  int **counts, struct err *e)
{
    size_t n_ranks = (size_t)ctx->p->n_ranks;
    *all = NULL;
    *counts = NULL;
    if (n > (size_t)INT_MAX / size) return err_set(e, ERR_RUN, "too many trace entries to gather");
    *counts = XCALLOC(e, n_ranks, sizeof **counts);
    int *displs = XCALLOC(e, n_ranks, sizeof *displs), *bytes = XCALLOC(e, n_ranks, sizeof *bytes);
    int rc = *counts && displs && bytes
                 ? gather_into(ctx, items, n, size, all, *counts, displs, bytes, e)
                 : ERR_NOMEM;
    free(displs);
    free(bytes);
    return rc;
}

/* A message or collective instance in one step, to find its partners:
 * SEND: its op g; a collective op: its collective (core/plan_index.h). */
struct meet {
    int64_t key, step;
    double t_s;
    struct span *s;
};

static int by_key(const void *pa, const void *pb)
{
    const struct meet *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (a->step != b->step) return a->step < b->step ? -1 : 1;
    return 0;
}

/* The real clock cannot tell a rank's waiting from its transfer, but the
 * partners can: a RECV's data starts moving when its SEND was posted, an
 * all-reduce when its last member arrived. Moves those starts, so that the
 * waiting before counts as idle, as core/trace.h defines spans. */
static int align_starts(const struct plan_index *ix, struct span *spans, size_t n, struct err *e)
{
    struct meet *sends = XCALLOC(e, n + 1, sizeof *sends), *colls = XCALLOC(e, n + 1, sizeof *colls);
    if (!sends || !colls) {
        free(sends);
        free(colls);
        return ERR_NOMEM;
    }
    size_t n_sends = 0, n_colls = 0;
    for (size_t i = 0; i < n; i++) {
        struct span *s = &spans[i];
        int g = plan_index_g(ix, s->rank, s->op);
        enum op_kind kind = plan_index_op(ix, g)->kind;
        if (kind == OP_SEND) sends[n_sends++] = (struct meet){g, s->step, s->start_s, s};
        if (plan_is_collective(kind))
            colls[n_colls++] = (struct meet){ix->coll[g], s->step, s->start_s, s};
    }
    qsort(sends, n_sends, sizeof *sends, by_key);
    qsort(colls, n_colls, sizeof *colls, by_key);
    for (size_t i = 0; i < n; i++) {
        struct span *s = &spans[i];
        int g = plan_index_g(ix, s->rank, s->op);
        if (plan_index_op(ix, g)->kind != OP_RECV) continue;
        struct meet key = {ix->partner[g], s->step, 0, NULL};
        const struct meet *m = bsearch(&key, sends, n_sends, sizeof *sends, by_key);
        if (m && m->t_s > s->start_s) s->start_s = m->t_s < s->end_s ? m->t_s : s->end_s;
    }
    for (size_t i = 0; i < n_colls;) {
        size_t j = i;
        double last_s = 0;
        for (; j < n_colls && by_key(&colls[i], &colls[j]) == 0; j++)
            if (colls[j].t_s > last_s) last_s = colls[j].t_s;
        for (size_t k = i; k < j; k++)
            if (last_s > colls[k].s->start_s)
                colls[k].s->start_s = last_s < colls[k].s->end_s ? last_s : colls[k].s->end_s;
        i = j;
    }
    free(sends);
    free(colls);
    return 0;
}

static int make_report(struct real_ctx *ctx, struct real_result *res, struct span *spans,
                       size_t n_spans, const struct step_loss *losses, size_t n_losses,
                       int64_t updates_resumed, struct err *e)
{
    const struct plan *p = ctx->p;
    /* The servers' update spans (op -1, real/ps_server.c) are no op of the
     * plan: moved after the workers' (whose order each rank keeps), they go
     * to the trace only, counted in their own run's updates. Gathered in
     * rank order, the servers' come last already, and nothing moves. */
    size_t n_ops_spans = 0;
    for (size_t i = 0; i < n_spans; i++)
        if (spans[i].op >= 0) {
            struct span s = spans[i];
            memmove(&spans[n_ops_spans + 1], &spans[n_ops_spans], (i - n_ops_spans) * sizeof *spans);
            spans[n_ops_spans++] = s;
        }
    TRY(align_starts(ctx->ix, spans, n_ops_spans, e));
    /* a resumed run's analysis covers the steps it ran, counted from the
     * resume point; its loss curve keeps the job's step numbers */
    const int64_t steps_run = ctx->steps - ctx->first_step;
    for (size_t i = 0; i < n_ops_spans; i++) spans[i].step -= (int32_t)ctx->first_step;
    double makespan_s = 0;
    for (size_t i = 0; i < n_spans; i++)
        if (spans[i].end_s > makespan_s) makespan_s = spans[i].end_s;
    res->makespan_s = makespan_s;
    res->steps = ctx->steps;
    res->first_step = ctx->first_step;
    res->clock_error_s = ctx->clock_error_s;
    ctx->dev->describe(res->device, sizeof res->device);
    size_t len = strlen(res->device);
    snprintf(res->device + len, sizeof res->device - len, ", comm %s", ctx->comm.ops->name);

    struct analysis *a = analysis_create(p, (int)steps_run, e);
    if (!a) return e->code;
    int rc = 0;
    for (size_t i = 0; i < n_spans && rc == 0; i++) {
        rc = analysis_add(a, &spans[i]);
        if (rc == 0) rc = trace_add(&res->trace, &spans[i]);
    }
    if (rc < 0 && e->code == 0)
        err_set(e, ERR_RUN, rc == ERR_NOMEM ? "out of memory in the analysis"
                                            : "the analysis rejected a span of the real run");
    if (rc == 0) rc = analysis_finish(a, makespan_s, &res->report, e);
    analysis_free(a);
    TRY(rc);
    struct report *r = &res->report;
    /* the analysis counted this job's updates; the model also holds those
     * of the checkpoint it went on from (docs/metrics.md) */
    r->updates += updates_resumed;
    r->updates_resumed = updates_resumed;
    r->has_updates_resumed = ctx->first_step > 0;
    r->mode = "real";
    snprintf(r->strategy, sizeof r->strategy, "%s", p->strategy);
    r->devices = p->n_workers;
    r->config = ctx->cfg;
    r->config_groups = REAL_CONFIG_GROUPS;
    double checkpoint_s = 0;
    int n_checkpoints = 0;
    checkpoint_stats(ctx, &checkpoint_s, &n_checkpoints);
    TRY(failure_env_report(r, heartbeat_start_s(ctx->hb), makespan_s, checkpoint_s, e));
    TRY(straggler_detect(spans, n_ops_spans, &r->paces, &r->n_paces, e));
    return report_set_loss_curve(r, losses, n_losses, ctx->steps, e);
}

/* --save-params: the parameter block, through a host copy on a GPU. */
static int save_params(struct real_ctx *ctx, const char *path, struct err *e)
{
    struct host_copy host = {0};
    const float *params = host_copy_out(ctx->dev, &host, ctx->m->params,
                                        (size_t)ctx->m->n_params * sizeof(float), e);
    int rc = params ? ctx->dev->sync(e) : e->code;
    if (rc == 0) rc = params_save(path, params, ctx->m->n_params, e);
    host_copy_release(&host);
    return rc;
}

/* The accuracy curve: each point of --eval-every on the parameters kept
 * there, then the final model, the one training ended with, at the
 * makespan. The model is left holding the final parameters. */
static int evaluate_points(struct real_ctx *ctx, struct eval_snapshots *evals,
                           struct real_result *res, struct err *e)
{
    TRY(eval_snapshots_take(evals, ctx->dev, ctx->m, ctx->steps, res->makespan_s, e));
    for (int i = 0; i < evals->n; i++) {
        TRY(eval_snapshots_load(evals, i, ctx->dev, ctx->m, e));
        TRY(evaluate(ctx, evals->step[i], evals->at_s[i], res, e));
        heartbeat_finishing(ctx->hb);
    }
    return 0;
}

/* A resumed run's curves: this job's times (its losses and points, and
 * those the checkpoint carried, all on its clock) onto the run's, which
 * started offset_s before this job (checkpoint_clock_offset_s). */
static void onto_run_clock(struct report *r, double offset_s)
{
    for (int i = 0; i < r->n_loss_curve; i++) r->loss_curve[i].time_s += offset_s;
    for (int i = 0; i < r->n_accuracy_curve; i++) r->accuracy_curve[i].time_s += offset_s;
}

static int finish(struct real_ctx *ctx, struct eval_snapshots *evals, struct real_result *res,
                  struct err *e)
{
    char *spans = NULL, *losses = NULL;
    int *n_spans = NULL, *n_losses = NULL;
    int rc = gather(ctx, ctx->spans.items, ctx->spans.len, sizeof(struct span), &spans, &n_spans, e);
    if (rc == 0)
        rc = gather(ctx, ctx->losses.items, ctx->losses.len, sizeof(struct step_loss), &losses,
                    &n_losses, e);
    int64_t updates_resumed = 0;
    if (rc == 0) rc = checkpoint_updates_resumed(ctx, &updates_resumed, e);
    /* each stage is progress for the supervisor's watchdog (heartbeat.h) */
    heartbeat_finishing(ctx->hb);
    if (rc == 0) rc = params_gather(ctx, true, e);
    heartbeat_finishing(ctx->hb);
    struct report hosts;   /* rank 0: where each rank ran, for the report made below */
    report_init(&hosts);
    if (rc == 0) rc = host_map_gather(ctx->params_comm, &hosts, e);
    if (rc == 0 && ctx->rank == 0) {
        size_t total_spans = 0, total_losses = 0;
        for (int r = 0; r < ctx->p->n_ranks; r++) {
            total_spans += (size_t)n_spans[r];
            total_losses += (size_t)n_losses[r];
        }
        rc = make_report(ctx, res, (struct span *)spans, total_spans,
                         (const struct step_loss *)losses, total_losses, updates_resumed, e);
        if (rc == 0) {
            res->report.has_hosts = hosts.has_hosts;
            res->report.rank_hosts = hosts.rank_hosts;
            res->report.n_rank_hosts = hosts.n_rank_hosts;
            hosts.rank_hosts = NULL;
        }
        heartbeat_finishing(ctx->hb);
        if (rc == 0) rc = evaluate_points(ctx, evals, res, e);
        if (rc == 0) {
            onto_run_clock(&res->report, checkpoint_clock_offset_s(ctx));
            res->report.time_resumed_s = checkpoint_clock_offset_s(ctx);
            res->report.has_time_resumed = ctx->first_step > 0;
        }
        /* --target-accuracy was taken and never read: time_to_accuracy_s
         * was null however early the curve crossed it (the simulator's
         * numerics alone set it). On the curve's clock: the run's, from
         * step 0 (a relaunch after a failure: with the time it lost). */
        if (rc == 0) report_set_time_to_accuracy(&res->report, ctx->cfg->target_accuracy);
        const char *path = ctx->cfg->save_params;
        if (rc == 0 && path[0]) rc = save_params(ctx, path, e);
    }
    report_release(&hosts);
    free(spans);
    free(losses);
    free(n_spans);
    free(n_losses);
    return rc;
}

/* This rank's place in MPI_COMM_WORLD, whose size must be the plan's. */
static int join_world(struct real_ctx *ctx, struct err *e)
{
    const struct plan *p = ctx->p;
    int n_ranks = 0;
    MPI_TRY(e, MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank));
    MPI_TRY(e, MPI_Comm_size(MPI_COMM_WORLD, &n_ranks));
    if (n_ranks != p->n_ranks)
        return err_set(e, ERR_INPUT,
                       "%s needs %d MPI processes (%d workers + %d servers); this job has %d: run "
                       "`strata real --np %d ...`, or mpirun -np %d",
                       p->strategy, p->n_ranks, p->n_workers, p->n_servers, n_ranks,
                       p->n_workers, p->n_ranks);
    return 0;
}

/* Collective, after every rank's set-up succeeded: the step count (rank 0
 * always has the data), the comm, the communicators of the parameter
 * traffic, and the aligned start. */
static int connect(struct real_ctx *ctx, struct err *e)
{
    const struct config *cfg = ctx->cfg;
    int64_t steps = ctx->rank == 0 ? real_steps(cfg, ctx->data.train.n) : 0;
    MPI_TRY(e, MPI_Bcast(&steps, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
    ctx->steps = steps;
    /* --comm auto|mpi|nccl, alike on every rank, by the workers' device */
    const struct device *workers = device_find(cfg->device, e);
    const struct comm_ops *ops = workers ? comm_choose(cfg->comm, ctx->dev, workers, e) : NULL;
    TRY(mpi_check_agree(ops ? 0 : e->code, e));
    ctx->comm.ops = ops;
    ctx->comm.dev = ctx->dev;
    ctx->comm.ix = ctx->ix;
    TRY(mpi_check_agree(ctx->comm.ops->open(&ctx->comm, ctx->p, e), e));
    MPI_TRY(e, MPI_Comm_dup(MPI_COMM_WORLD, &ctx->ps_comm));
    MPI_TRY(e, MPI_Comm_dup(MPI_COMM_WORLD, &ctx->params_comm));
    /* the aligned start: every clock's zero (real/clock_align.h) */
    struct clock_zero zero;
    TRY(mpi_check_agree(clock_align(MPI_COMM_WORLD, MPI_Wtime, &zero, e), e));
    ctx->t0 = zero.t0_s;
    MPI_TRY(e, MPI_Reduce(&zero.error_s, &ctx->clock_error_s, 1, MPI_DOUBLE, MPI_MAX, 0,
                          MPI_COMM_WORLD));
    heartbeat_start(ctx->hb);
    return 0;
}

/* Rank 0, which holds the data: room for the --eval-every points short of
 * the last step, before the clock starts (a --resume takes fewer). */
static int reserve_eval_points(const struct real_ctx *ctx, struct eval_snapshots *evals,
                               struct err *e)
{
    const long long every = ctx->cfg->eval_every;
    if (ctx->rank != 0 || every <= 0) return 0;
    int64_t points = (real_steps(ctx->cfg, ctx->data.train.n) - 1) / every;
    if (points > INT_MAX)
        return err_set(e, ERR_INPUT, "--eval-every %lld: %lld evaluation points are too many to "
                       "keep; raise --eval-every", every, (long long)points);
    return eval_snapshots_reserve(evals, (int)points, ctx->m->n_params, e);
}

int real_run(const struct real_setup *s, struct real_result *res, struct err *e)
{
    memset(res, 0, sizeof *res);
    const struct config *cfg = s->cfg;
    if (!s->ix)
        return err_set(e, ERR_INPUT, "real_run: the setup needs its plan's index (real_prepare "
                       "makes it)");
    struct real_ctx ctx = {.cfg = cfg, .wl = s->wl, .p = s->ix->p, .ix = s->ix,
                           .ps_comm = MPI_COMM_NULL, .params_comm = MPI_COMM_NULL,
                           .lr = (float)cfg->lr, .momentum = (float)cfg->momentum,
                           .weight_decay = (float)cfg->weight_decay};
    TRY(join_world(&ctx, e));
    if (!(ctx.comm.ops = comm_find("mpi", e))) return e->code;
    TRY(heartbeat_open(ctx.rank, cfg->fail, &ctx.hb, e));
    report_init(&res->report);
    trace_init(&res->trace, s->keep_steps, s->keep_steps ? REAL_MAX_KEPT_SPANS : 0);

    struct eval_snapshots evals = {0};   /* rank 0's */
    if (ctx.rank == 0) ctx.evals = &evals;
    int rc = mpi_check_agree(setup(&ctx, e), e);
    if (rc == 0) rc = mpi_check_agree(reserve_eval_points(&ctx, &evals, e), e);
    if (rc == 0) rc = connect(&ctx, e);
    if (rc == 0) rc = mpi_check_agree(checkpoint_open(&ctx, e), e);
    if (rc == 0) {
        rc = ctx.rank < ctx.p->n_workers ? train(&ctx, s->show_progress, &evals, e)
                                         : ps_serve(&ctx, e);
        /* A rank that fails mid-run leaves its peers waiting on it forever:
         * nothing short of ending the job frees them. */
        if (rc < 0) {
            /* an error every rank agreed on (real/mpi_check.h: a failed
             * checkpoint) is the failing rank's, which says it; the others
             * hold it as "rank N: ..." and said it again, "rank 1: rank 0:
             * cannot write ...", once per rank */
            int from = -1;
            bool is_peers = sscanf(e->msg, "rank %d: ", &from) == 1 && from != ctx.rank;
            if (!is_peers) fprintf(stderr, "strata real: rank %d: %s\n", ctx.rank, e->msg);
            heartbeat_say(ctx.hb, e->msg);
            /* the failing rank, which agreed on it too, says it and ends the
             * job; a peer's abort first killed it before it had said it
             * (test_ckpt_faults saw no message at all). A second's grace,
             * then the peer ends the job itself. */
            if (is_peers) nanosleep(&(struct timespec){.tv_sec = 1}, NULL);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        heartbeat_finishing(ctx.hb);
        rc = mpi_check_agree(finish(&ctx, &evals, res, e), e);
    }
    eval_snapshots_release(&evals);
    checkpoint_stats(&ctx, &res->checkpoint_s, &res->n_checkpoints);
    checkpoint_close(&ctx, rc == 0);
    teardown(&ctx);
    if (rc < 0 || ctx.rank != 0) {
        real_result_release(res);
        memset(res, 0, sizeof *res);
    }
    return rc;
}

void real_result_release(struct real_result *res)
{
    report_release(&res->report);
    trace_release(&res->trace);
}
