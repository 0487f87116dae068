#include <stdlib.h>
#include <string.h>

#include "../core/plan_memory.h"
#include "../sim/cluster.h"
#include "run_failures.h"

int run_failures_prepare(const struct config *cfg, struct sim_setup *setup,
                         struct run_failures *rf, struct err *e)
{
    memset(rf, 0, sizeof *rf);
    TRY(failure_parse(cfg->fail, &rf->spec, e));
    rf->has_failures = rf->spec.is_set || cfg->mtbf_hours > 0;
    /* a policy that nothing will use is not refused (a sweep's one-device
     * point under --on-failure shrink) */
    bool is_used = rf->has_failures || cfg->checkpoint_every > 0;
    TRY(failure_policy_resolve(is_used ? cfg->on_failure : "auto", setup->plan, &rf->policy, e));
    if (rf->spec.is_set) TRY(failure_policy_check_rank(rf->policy, setup->plan, rf->spec.rank, e));
    if (rf->has_failures && cfg->numerics)
        return err_set(e, ERR_INPUT, "--fail or --mtbf with --numerics is not supported: the "
                       "arithmetic of work that a failure throws away cannot be taken back");
    if (rf->policy == FAILURE_CONTINUE) {
        setup->failure = rf->spec;
        setup->mtbf_s = cfg->mtbf_hours * 3600;
        return 0;
    }
    rf->is_timeline = rf->has_failures || cfg->checkpoint_every > 0;
    if (rf->is_timeline &&
        !(rf->step_end_s = XCALLOC(e, (size_t)setup->steps + 1, sizeof *rf->step_end_s)))
        return e->code;
    setup->step_end_s = rf->step_end_s;
    return 0;
}

/* The job's step durations of plan p's run that ended at makespan_s, in
 * place of t[k], the event loop's step ends (sim_setup.step_end_s: when
 * every rank had ended its step k). Asynchronous workers are not in
 * lockstep: a slow one runs fewer of the shared-out steps, so the later
 * ends are never written (left 0, or a previous run's), and the job's
 * steps take the mean. */
static void job_step_durations(const struct plan *p, double *t, int steps, double makespan_s)
{
    if (policy_is_async(p->policy)) {
        for (int k = 0; k < steps; k++) t[k] = makespan_s / steps;
        return;
    }
    for (int k = steps - 1; k > 0; k--) t[k] -= t[k - 1];
}

/* What each worker of a run was busy, and its steps: [workers] each. */
struct busy_of_run {
    double *compute_s, *comm_s;
    int64_t *steps;
};

/* Shrink: the same scenario on n workers, simulated without failures. */
struct shrunk {
    const struct config *cfg;
    const struct strategy *st;
    const struct workload *wl;
    const struct sim_setup *setup;   /* the first run's: steps, seed, stragglers */
    double *step_s;                  /* [steps], owned */
    struct busy_of_run busy;         /* the last run's, owned */
};

/* b for n workers: 0 or ERR_NOMEM. */
static int busy_of_run_alloc(struct busy_of_run *b, size_t n, struct err *e)
{
    if (!(b->compute_s = XCALLOC(e, n, sizeof *b->compute_s)) ||
        !(b->comm_s = XCALLOC(e, n, sizeof *b->comm_s)) ||
        !(b->steps = XCALLOC(e, n, sizeof *b->steps)))
        return e->code;
    return 0;
}

static void busy_of_run_free(struct busy_of_run *b)
{
    free(b->compute_s);
    free(b->comm_s);
    free(b->steps);
}

/* What each worker of plan p's run was busy, from its analysis a. */
static int workers_busy(struct analysis *a, const struct plan *p, struct busy_of_run *b)
{
    for (int w = 0; w < p->n_workers; w++)
        TRY(analysis_worker_busy(a, w, &b->compute_s[w], &b->comm_s[w], &b->steps[w]));
    return 0;
}

static int shrunk_step_times(void *ctx, int n_workers, struct failure_run *run, struct err *e)
{
    struct shrunk *sh = ctx;
    struct config c = *sh->cfg;
    c.devices = n_workers;
    c.positional = NULL;
    c.n_positional = 0;
    struct plan *p = NULL;
    struct cluster cl;
    struct sim_result res;
    struct sim_setup s = *sh->setup;
    s.failure.is_set = false;
    s.mtbf_s = 0;
    s.step_end_s = sh->step_s;
    struct analysis *a = NULL;
    int rc = cluster_load(c.cluster, &cl, e);
    if (rc == 0) rc = cluster_set_jitter(&cl, c.jitter, e);
    if (rc == 0) rc = strategy_build(sh->st, &c, sh->wl, &p, e);
    if (rc == 0) rc = cluster_layout(&cl, p->n_ranks, c.nodes, c.devices_per_node, c.allreduce, e);
    if (rc == 0 && !(a = analysis_create(p, s.steps, e))) rc = e->code;
    if (rc == 0) {
        s.plan = p;
        s.cluster = &cl;
        rc = simulate(&s, a, NULL, &res, e);
    }
    if (rc == 0 && workers_busy(a, p, &sh->busy) < 0)
        rc = err_set(e, ERR_NOMEM, "out of memory counting the shrunk job's busy time");
    if (rc == 0) job_step_durations(p, sh->step_s, s.steps, res.makespan_s);
    analysis_free(a);
    plan_free(p);
    TRY(rc);
    *run = (struct failure_run){sh->step_s, sh->busy.compute_s, sh->busy.comm_s, sh->busy.steps};
    return 0;
}

/* Shrink: the arrays where the timeline records who did the surviving
 * work, the shrunk runs' busy times, and the first run's, from its
 * analysis a. */
static int busy_begin(struct run_failures *rf, const struct plan *p, int steps,
                      struct analysis *a, struct shrunk *sh, struct busy_of_run *first,
                      struct err *e)
{
    size_t n = (size_t)p->n_workers;
    struct failure_busy *b = &rf->busy;
    rf->has_busy = true;
    if (!(b->compute_s = XCALLOC(e, n, sizeof *b->compute_s)) ||
        !(b->comm_s = XCALLOC(e, n, sizeof *b->comm_s)) ||
        !(b->down_from_s = XCALLOC(e, n, sizeof *b->down_from_s)) ||
        !(b->steps = XCALLOC(e, n, sizeof *b->steps)) ||
        !(b->step_s = XCALLOC(e, (size_t)steps + 1, sizeof *b->step_s)) ||
        !(sh->step_s = XCALLOC(e, (size_t)steps + 1, sizeof *sh->step_s)) ||
        busy_of_run_alloc(&sh->busy, n, e) < 0 || busy_of_run_alloc(first, n, e) < 0)
        return e->code;
    if (workers_busy(a, p, first) < 0)
        return err_set(e, ERR_NOMEM, "out of memory counting the job's busy time");
    return 0;
}

int run_failures_replay(struct run_failures *rf, const struct config *cfg,
                        const struct strategy *st, const struct workload *wl,
                        const struct sim_setup *setup, const struct sim_result *res,
                        struct analysis *a, struct err *e)
{
    if (!rf->is_timeline) return 0;
    const struct plan *p = setup->plan;
    int steps = setup->steps;
    job_step_durations(p, rf->step_end_s, steps, res->makespan_s);
    struct plan_memory mem;
    plan_memory_max(p, &mem);
    struct shrunk sh = {.cfg = cfg, .st = st, .wl = wl, .setup = setup};
    struct busy_of_run first = {0};   /* the first run's */
    int rc = rf->policy == FAILURE_SHRINK ? busy_begin(rf, p, steps, a, &sh, &first, e) : 0;
    struct failure_setup fs = {
        .policy = rf->policy,
        .failure = rf->spec,
        .mtbf_s = cfg->mtbf_hours * 3600,
        .seed = setup->seed,
        .n_workers = p->n_workers,
        .n_servers = p->n_servers,
        .steps = steps,
        .checkpoint_every = (int)cfg->checkpoint_every,
        .commit_every = (int)cfg->commit_every,
        .costs = cluster_failure_costs(setup->cluster, mem.params + mem.optimizer),
        .step_s = rf->step_end_s,
        .compute_s = first.compute_s,
        .comm_s = first.comm_s,
        .worker_steps = first.steps,
        .step_times = rf->policy == FAILURE_SHRINK ? shrunk_step_times : NULL,
        .ctx = &sh,
        .busy = rf->has_busy ? &rf->busy : NULL,
        .marks = rf->marks,
    };
    if (rc == 0) rc = failure_timeline(&fs, &rf->outcome, e);
    const struct failure_outcome *o = &rf->outcome;
    if (rc == 0 && o->n_failures > 0) {
        /* the job's durations as the timeline ran them last: shrink's on
         * the workers left (sh.step_s holds the last shrink's) */
        const double *last = o->n_workers_end < p->n_workers ? sh.step_s : rf->step_end_s;
        rf->n_final_steps = steps - o->final_first_step;
        rf->final_step_s = XCALLOC(e, (size_t)rf->n_final_steps + 1, sizeof *rf->final_step_s);
        if (!rf->final_step_s) rc = e->code;
        for (int k = 0; rc == 0 && k < rf->n_final_steps; k++)
            rf->final_step_s[k] = last[o->final_first_step + k];
    }
    free(sh.step_s);
    busy_of_run_free(&sh.busy);
    busy_of_run_free(&first);
    return rc;
}

void run_failures_take_final_steps(struct run_failures *rf, double **step_s, int *n)
{
    *step_s = rf->final_step_s;
    *n = rf->final_step_s ? rf->n_final_steps : 0;
    rf->final_step_s = NULL;
    rf->n_final_steps = 0;
}

double run_failures_end_s(const struct run_failures *rf, const struct sim_result *res)
{
    return rf->is_timeline ? rf->outcome.total_s : res->makespan_s;
}

/* After a shrink, the figures of the steps as the timeline ran them: each
 * worker's busy time in the surviving work, its time after its death down
 * (it left the job), and the step percentiles over each step's surviving
 * run; the event loop's run was of the first workers alone. The mean (T /
 * S) and the throughput are the timeline's already. */
static void shrunk_figures(const struct run_failures *rf, int steps, struct report *r)
{
    const struct failure_busy *b = &rf->busy;
    double end_s = rf->outcome.total_s;
    for (int w = 0; w < r->n_per_rank; w++) {
        struct rank_time *t = &r->per_rank[w];
        t->compute_s = b->compute_s[w];
        t->comm_s = b->comm_s[w];
        t->down_s = b->down_from_s[w] < end_s ? end_s - b->down_from_s[w] : 0;
        t->steps = b->steps[w];
    }
    analysis_reshare(r, end_s);
    if (steps < 1) return;
    /* the percentiles rearrange their array: the busy record stays */
    double *d = malloc((size_t)steps * sizeof *d);
    if (!d) return;   /* out of memory: the event loop's percentiles stay */
    memcpy(d, b->step_s, (size_t)steps * sizeof *d);
    r->step_time_s.p50 = analysis_percentile(d, (size_t)steps, 50);
    r->step_time_s.p99 = analysis_percentile(d, (size_t)steps, 99);
    free(d);
}

void run_failures_report(const struct run_failures *rf, const struct sim_result *res,
                         const struct config *cfg, struct report *r)
{
    r->failure.policy = failure_policy_names[rf->policy];
    if (!rf->is_timeline) {
        /* continue: the dead workers' time is down; nothing is redone in the
         * job's time (a dead worker's item goes to another) */
        r->failure.happened = res->failed || cfg->mtbf_hours > 0;
        r->failure.has_first = res->failed;
        r->failure.rank = res->failed_rank;
        r->failure.time_s = res->failure_time_s;
        r->failure.n_failures = res->n_failures;
        r->failure.goodput = 1;
        return;
    }
    const struct failure_outcome *o = &rf->outcome;
    r->failure.happened = o->n_failures > 0 || cfg->mtbf_hours > 0;
    r->failure.has_first = o->n_failures > 0;
    r->failure.rank = o->first_rank;
    r->failure.time_s = o->n_failures > 0 ? o->first_time_s : 0;
    r->failure.n_failures = o->n_failures;
    r->failure.detect_s = o->detect_s;
    r->failure.relaunch_s = o->relaunch_s;
    r->failure.redone_s = o->redone_s;
    r->failure.lost_s = failure_lost_s(o);
    r->failure.steps_redone = o->steps_redone;
    r->failure.checkpoint_s = o->checkpoint_s;
    r->failure.goodput = failure_goodput(o);
    if (rf->has_busy && o->n_failures > 0) shrunk_figures(rf, (int)cfg->steps, r);
}

void run_failures_release(struct run_failures *rf)
{
    free(rf->step_end_s);
    rf->step_end_s = NULL;
    free(rf->final_step_s);
    rf->final_step_s = NULL;
    free(rf->busy.compute_s);
    free(rf->busy.comm_s);
    free(rf->busy.down_from_s);
    free(rf->busy.steps);
    free(rf->busy.step_s);
    rf->busy = (struct failure_busy){0};
    rf->has_busy = false;
}
