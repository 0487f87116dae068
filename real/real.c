/* A real run from start to report: set-up that every rank agrees on, the
 * aligned clock, the steps (workers) or the serving (servers), then on
 * rank 0 the spans, losses and parameters of every rank turned into a
 * report. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/analysis.h"
#include "params.h"
#include "real_internal.h"

/* Spans kept for --trace at most: 80 bytes each, 80 MB. */
#define REAL_MAX_KEPT_SPANS 1000000

int real_mpi_fail(struct err *e, int rc, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
    return err_set(e, ERR_RUN, "%s failed: %s", call, msg);
}

void real_sleep(double s)
{
    if (!(s > 0)) return;
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int64_t real_steps(const struct config *cfg, int64_t n_train)
{
    if (cfg->epochs <= 0) return cfg->steps;
    return cfg->epochs * sampler_steps_per_epoch(n_train, cfg->batch);
}

/* ---- set-up every rank agrees on ------------------------------------------ */

/* After a phase that may fail on some ranks only: every rank returns the
 * error of the lowest failing rank, so all stop together and rank 0 can
 * print what went wrong. */
static int agree(struct real_ctx *x, int rc, struct err *e)
{
    int mine = rc < 0 ? x->rank : INT_MAX, first = INT_MAX;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return err_set(e, ERR_RUN, "MPI_Allreduce failed while ranks compared their set-up");
    if (first == INT_MAX) return 0;
    MPI_Bcast(e, (int)sizeof *e, MPI_BYTE, first, MPI_COMM_WORLD);
    if (first != 0 && x->rank == 0) err_prefix(e, "rank %d", first);
    return e->code < 0 ? e->code : ERR_RUN;
}

static int setup(struct real_ctx *x, struct err *e)
{
    const struct real_setup *s = x->s;
    const struct config *cfg = s->cfg;
    const struct plan *p = s->plan;
    const bool is_worker = x->rank < p->n_workers;
    /* Servers apply their shard's updates on the cpu whatever the workers
     * use: they speak MPI from host memory (real/ps_server.c). The device
     * reads TF32 from the environment (nn/device.h): --tf32 says it here. */
    if (!(x->dev = device_find(is_worker ? cfg->device : "cpu", e))) return e->code;
    if (setenv("STRATA_TF32", cfg->tf32 ? "1" : "0", 1) != 0)
        return err_set(e, ERR_NOMEM, "out of memory for the environment (STRATA_TF32)");
    TRY(x->dev->init(0, e));
    /* Servers need no data, but the steps depend on its size: rank 0's
     * count reaches them below. */
    if (is_worker) {
        TRY(data_load(cfg->data, (uint64_t)cfg->seed, &x->data, e));
        TRY(data_check_model(&x->data, s->wl->layers[0].in, (int)s->wl->n_classes, e));
        if (x->data.train.n < p->batch)
            return err_set(e, ERR_INPUT, "--batch %d exceeds the %lld training samples of %s",
                           p->batch, (long long)x->data.train.n, x->data.train.source);
    }
    TRY(mlp_create(s->wl, x->dev, (uint64_t)cfg->seed, &x->m, e));
    struct straggler_spec spec;
    TRY(straggler_parse(cfg->straggler, &spec, e));
    if (!(x->strag = straggler_create(&spec, (uint64_t)cfg->seed, p->n_ranks, e))) return e->code;
    return 0;
}

static void teardown(struct real_ctx *x)
{
    x->comm.ops->close(&x->comm);
    if (x->ps_comm != MPI_COMM_NULL) MPI_Comm_free(&x->ps_comm);
    if (x->params_comm != MPI_COMM_NULL) MPI_Comm_free(&x->params_comm);
    straggler_free(x->strag);
    mlp_free(x->m);
    data_release(&x->data);
    vec_free(&x->spans);
    vec_free(&x->losses);
}

/* ---- training ------------------------------------------------------------------ */

static int evaluate(struct real_ctx *x, int64_t step, struct real_result *res, struct err *e)
{
    const struct dataset *test = &x->data.test;
    int32_t *labels = XCALLOC(e, (size_t)test->n, sizeof *labels);
    if (!labels) return ERR_NOMEM;
    for (int64_t i = 0; i < test->n; i++) labels[i] = test->y[i];
    double accuracy = 0, loss = 0;
    int rc = mlp_evaluate(x->m, test->x, labels, (int)test->n, &accuracy, &loss, e);
    free(labels);
    TRY(rc);
    struct report *r = &res->report;
    struct accuracy_point *grown = realloc(r->accuracy_curve,
                                           ((size_t)r->n_accuracy_curve + 1) * sizeof *grown);
    if (!grown) return err_set(e, ERR_NOMEM, "out of memory");
    r->accuracy_curve = grown;
    grown[r->n_accuracy_curve++] = (struct accuracy_point){step, real_now(x), accuracy};
    res->report.has_final = true;
    res->report.final.loss = loss;
    res->report.final.test_accuracy = accuracy;
    return 0;
}

/* After the job's step `step` (this worker's last when is_last). */
static void progress(struct real_ctx *x, struct worker *w, int64_t step, bool is_last,
                     double *last_s)
{
    double now = real_now(x);
    if (!is_last && now - *last_s < 0.5) return;
    *last_s = now;
    double loss_sum = 0;
    int64_t n = 0;
    worker_last_loss(w, &loss_sum, &n);
    int64_t per_epoch = sampler_steps_per_epoch(x->data.train.n, x->p->batch);
    fprintf(stderr, "\rstep %lld/%lld  epoch %lld  loss %.4f  %.0f samples/s   ",
            (long long)(step + 1), (long long)x->steps,
            (long long)(per_epoch ? step / per_epoch + 1 : 1), n ? loss_sum / (double)n : 0.0,
            (double)(step + 1) * x->p->batch / (now > 0 ? now : 1e-9));
    if (is_last) fputc('\n', stderr);
    fflush(stderr);
}

static int train(struct real_ctx *x, struct real_result *res, struct err *e)
{
    struct worker *w = NULL;
    TRY(worker_create(x, &w, e));
    const long long every = x->s->cfg->eval_every;
    /* one progress line, from the first rank that computes the loss */
    const bool shows_progress = x->s->show_progress && worker_is_first_loss(w);
    double last_s = 0;
    int rc = 0;
    /* Asynchronous plans: worker w starts with work item w and runs until
     * the first server has none left for it (ps_wire.h); its job steps are
     * its items' steps. Synchronous plans: steps 0 .. steps - 1. For PS
     * plans rank 0 holds every parameter it evaluates (params_owner), so
     * evaluating at its own job steps needs no other rank. */
    const bool is_async = policy_is_async(x->p->policy);
    int64_t work = x->rank, next_eval = every;
    for (int64_t step = 0; rc == 0 && (is_async ? work >= 0 : step < x->steps); step++) {
        rc = worker_step(w, step, work, e);
        if (rc < 0) break;
        int64_t job_done = (is_async ? work / x->p->n_workers : step) + 1;
        work = worker_next_work(w);
        bool is_last = is_async ? work < 0 : step + 1 == x->steps;
        if (shows_progress) progress(x, w, job_done - 1, is_last, &last_s);
        if (every > 0 && job_done >= next_eval && job_done < x->steps) {
            next_eval = (job_done / every + 1) * every;
            rc = params_gather(x, false, e);
            if (rc == 0 && x->rank == 0) rc = evaluate(x, job_done, res, e);
        }
    }
    if (rc == 0) rc = worker_finish(w, e);
    worker_free(w);
    return rc;
}

/* ---- rank 0: the report ---------------------------------------------------------- */

/* Gathers every rank's items (n of `size` bytes each) on rank 0: *all and
 * *counts (per rank) there. */
static int gather(struct real_ctx *x, const void *items, size_t n, size_t size, char **all,
                  int **counts, struct err *e)
{
    int n_ranks = x->p->n_ranks, mine = (int)n;
    if (n > (size_t)INT_MAX / size) return err_set(e, ERR_RUN, "too many trace entries to gather");
    *all = NULL;
    *counts = XCALLOC(e, (size_t)n_ranks, sizeof **counts);
    int *displs = XCALLOC(e, (size_t)n_ranks, sizeof *displs), *bytes = XCALLOC(e, (size_t)n_ranks, sizeof *bytes);
    if (!*counts || !displs || !bytes) goto nomem;
    REAL_MPI(e, MPI_Gather(&mine, 1, MPI_INT, *counts, 1, MPI_INT, 0, MPI_COMM_WORLD));
    size_t total = 0;
    for (int r = 0; x->rank == 0 && r < n_ranks; r++) {
        displs[r] = (int)(total * size);
        bytes[r] = (int)((size_t)(*counts)[r] * size);
        total += (size_t)(*counts)[r];
    }
    if (total * size > INT_MAX) {
        free(displs);
        free(bytes);
        return err_set(e, ERR_RUN, "too many trace entries to gather");
    }
    if (x->rank == 0 && !(*all = XCALLOC(e, total + 1, size))) goto nomem;
    REAL_MPI(e, MPI_Gatherv(items, (int)(n * size), MPI_BYTE, *all, bytes, displs, MPI_BYTE, 0,
                            MPI_COMM_WORLD));
    free(displs);
    free(bytes);
    return 0;
nomem:
    free(displs);
    free(bytes);
    return ERR_NOMEM;
}

/* A message or collective instance in one step, to find its partners:
 * SEND: its op g; ALLREDUCE: its collective (core/plan_index.h). */
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
        if (kind == OP_ALLREDUCE)
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

static int make_report(struct real_ctx *x, struct real_result *res, struct span *spans,
                       size_t n_spans, const struct step_loss *losses, size_t n_losses,
                       struct err *e)
{
    const struct plan *p = x->p;
    TRY(align_starts(x->ix, spans, n_spans, e));
    double makespan_s = 0;
    for (size_t i = 0; i < n_spans; i++)
        if (spans[i].end_s > makespan_s) makespan_s = spans[i].end_s;
    res->makespan_s = makespan_s;
    res->steps = x->steps;
    x->dev->describe(res->device, sizeof res->device);
    size_t len = strlen(res->device);
    snprintf(res->device + len, sizeof res->device - len, ", comm %s", x->comm.ops->name);

    struct analysis *a = analysis_create(p, (int)x->steps, e);
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
    r->mode = "real";
    snprintf(r->strategy, sizeof r->strategy, "%s", p->strategy);
    r->devices = p->n_workers;
    r->config = x->s->cfg;
    r->config_groups = REAL_CONFIG_GROUPS;
    return report_set_loss_curve(r, losses, n_losses, x->steps, e);
}

/* --save-params: the parameter block, through a host copy on a GPU. */
static int save_params(struct real_ctx *x, const char *path, struct err *e)
{
    struct stage host = {0};
    const float *params = stage_out(x->dev, &host, x->m->params,
                                    (size_t)x->m->n_params * sizeof(float), e);
    int rc = params ? x->dev->sync(e) : e->code;
    if (rc == 0) rc = params_save(path, params, x->m->n_params, e);
    stage_release(&host);
    return rc;
}

static int finish(struct real_ctx *x, struct real_result *res, struct err *e)
{
    char *spans = NULL, *losses = NULL;
    int *n_spans = NULL, *n_losses = NULL;
    int rc = gather(x, x->spans.items, x->spans.len, sizeof(struct span), &spans, &n_spans, e);
    if (rc == 0)
        rc = gather(x, x->losses.items, x->losses.len, sizeof(struct step_loss), &losses,
                    &n_losses, e);
    if (rc == 0) rc = params_gather(x, true, e);
    if (rc == 0 && x->rank == 0) {
        size_t total_spans = 0, total_losses = 0;
        for (int r = 0; r < x->p->n_ranks; r++) {
            total_spans += (size_t)n_spans[r];
            total_losses += (size_t)n_losses[r];
        }
        rc = make_report(x, res, (struct span *)spans, total_spans,
                         (const struct step_loss *)losses, total_losses, e);
        if (rc == 0) rc = evaluate(x, x->steps, res, e);
        const char *path = x->s->cfg->save_params;
        if (rc == 0 && path[0]) rc = save_params(x, path, e);
    }
    free(spans);
    free(losses);
    free(n_spans);
    free(n_losses);
    return rc;
}

int real_run(const struct real_setup *s, struct real_result *res, struct err *e)
{
    memset(res, 0, sizeof *res);
    const struct config *cfg = s->cfg;
    struct real_ctx x = {.s = s, .p = s->plan, .ix = s->ix, .ps_comm = MPI_COMM_NULL,
                         .params_comm = MPI_COMM_NULL, .lr = (float)cfg->lr,
                         .momentum = (float)cfg->momentum, .weight_decay = (float)cfg->weight_decay};
    if (!s->ix || s->ix->p != s->plan)
        return err_set(e, ERR_INPUT, "real_run: the setup needs its plan's index (real_prepare "
                       "makes it)");
    int n_ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    if (n_ranks != s->plan->n_ranks)
        return err_set(e, ERR_INPUT,
                       "%s needs %d MPI processes (%d workers + %d servers); this job has %d: run "
                       "`strata real --np %d ...`, or mpirun -np %d",
                       s->plan->strategy, s->plan->n_ranks, s->plan->n_workers,
                       s->plan->n_servers, n_ranks, s->plan->n_workers, s->plan->n_ranks);
    if (!(x.comm.ops = comm_find("mpi", e))) return e->code;
    report_init(&res->report);
    trace_init(&res->trace, s->keep_steps, s->keep_steps ? REAL_MAX_KEPT_SPANS : 0);

    int rc = agree(&x, setup(&x, e), e);
    /* every rank needs the step count; rank 0 always has the data */
    int64_t steps = x.rank == 0 ? real_steps(cfg, x.data.train.n) : 0;
    if (rc == 0) {
        MPI_Bcast(&steps, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
        x.steps = steps;
        /* --comm auto|mpi|nccl, alike on every rank, by the workers' device */
        const struct device *workers = device_find(cfg->device, e);
        const struct comm_ops *ops = workers ? comm_choose(cfg->comm, x.dev, workers, e) : NULL;
        rc = agree(&x, ops ? 0 : e->code, e);
        if (rc == 0) x.comm.ops = ops;
        x.comm.dev = x.dev;
        x.comm.ix = x.ix;
        if (rc == 0) rc = agree(&x, x.comm.ops->open(&x.comm, x.p, e), e);
    }
    if (rc == 0 && (MPI_Comm_dup(MPI_COMM_WORLD, &x.ps_comm) != MPI_SUCCESS ||
                    MPI_Comm_dup(MPI_COMM_WORLD, &x.params_comm) != MPI_SUCCESS))
        rc = err_set(e, ERR_RUN, "MPI_Comm_dup failed");
    if (rc == 0) {
        MPI_Barrier(MPI_COMM_WORLD);   /* the aligned start: every clock's zero */
        x.t0 = MPI_Wtime();
        rc = x.rank < x.p->n_workers ? train(&x, res, e) : ps_serve(&x, e);
        /* A rank that fails mid-run leaves its peers waiting on it forever:
         * nothing short of ending the job frees them. */
        if (rc < 0) {
            fprintf(stderr, "strata real: rank %d: %s\n", x.rank, e->msg);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        rc = agree(&x, finish(&x, res, e), e);
    }
    teardown(&x);
    if (rc < 0 || x.rank != 0) {
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
