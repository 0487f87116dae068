/* strata compare's runs: the baseline, then every strategy of the list,
 * simulated or executed, and the speedup of each over the baseline.
 *
 * Simulated strategies may run in forked workers (compare -j N, through
 * jobs.h): task 0 is the baseline, run here meanwhile; task i + 1 is
 * list[i], run in a worker and sent back as a sweep_wire message (its rc,
 * note, plan note, memory verdict and report as exact JSON), then put in
 * place in list order. Every number printed or written comes from the
 * reports, which read back bit for bit, and each run draws from the run's
 * seed alone: the comparison is -j 1's, whichever process ran what. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/budget.h"
#include "../core/plan.h"
#include "compare.h"
#include "jobs.h"
#include "real_job.h"
#include "sweep_tasks.h"

/* Room for n results: the reports, speedups and notes arrays. */
static int alloc_results(struct compare *c, int n, struct err *e)
{
    size_t k = n > 0 ? (size_t)n : 1;
    c->reports = calloc(k, sizeof *c->reports);
    c->speedup = calloc(k, sizeof *c->speedup);
    c->notes = calloc(k, sizeof *c->notes);
    c->plan_notes = calloc(k, sizeof *c->plan_notes);
    c->exceeds_memory = calloc(k, sizeof *c->exceeds_memory);
    if (!c->reports || !c->speedup || !c->notes || !c->plan_notes || !c->exceeds_memory)
        return err_set(e, ERR_NOMEM, "out of memory");
    return 0;
}

/* A strategy that did not run: why, and whether the scenario did not fit it
 * (ERR_INPUT) or its run failed. */
static void note(struct compare *c, const char *strategy, int rc, const char *why)
{
    snprintf(c->notes[c->n_notes++], sizeof c->notes[0], "%s: %s", strategy, why);
    if (rc == ERR_INPUT) c->n_unfit++;
    else c->n_failed++;
}

int compare_run_sim(const struct config *cfg, const struct workload *wl,
                    const struct strategy *const *list, int n, int keep_steps,
                    struct run_numerics *numerics, compare_progress_fn progress, void *ctx,
                    struct compare *out, struct err *e)
{
    *out = (struct compare){0};
    TRY(run_baseline(cfg, wl, numerics, &out->sim_base, e));
    out->base = &out->sim_base.report;
    TRY(alloc_results(out, n, e));
    out->sim_runs = calloc(n > 0 ? (size_t)n : 1, sizeof *out->sim_runs);
    if (!out->sim_runs) return err_set(e, ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (progress) progress(ctx, list[i]->name, i, n);
        struct sim_run *run = calloc(1, sizeof *run);
        if (!run) return err_set(e, ERR_NOMEM, "out of memory");
        struct err one = {0};
        int rc = run_simulate(cfg, list[i], wl, keep_steps, numerics, run, &one);
        if (rc == 0) {
            out->sim_runs[out->n] = run;
            out->reports[out->n] = &run->report;
            out->speedup[out->n] = run_speedup(run, &out->sim_base);
            snprintf(out->plan_notes[out->n], sizeof out->plan_notes[0], "%s", run->plan->note);
            out->exceeds_memory[out->n] = run_exceeds_memory(run);
            out->n++;
            continue;
        }
        run_release(run);
        free(run);
        config_err_locate(cfg, &one);   /* the scenario file's line, as a run's own errors */
        note(out, list[i]->name, rc, one.msg);
    }
    return 0;
}

/* --- Simulated strategies in workers ----------------------------------------- */

_Static_assert(sizeof ((struct plan *)0)->note == sizeof ((struct compare *)0)->plan_notes[0],
               "a plan's note fits compare's");
_Static_assert(sizeof ((struct plan *)0)->note == sizeof ((struct sweep_run *)0)->plan_note,
               "a plan's note fits the wire's");

struct compare_jobs {
    const struct config *cfg;
    const struct workload *wl;
    const struct strategy *const *list;
    int n;
    struct run_numerics *numerics;
    struct compare *out;
    struct sweep_run *runs;   /* [n + 1]: task t's result; runs[0] unused (the baseline is
                               * out->sim_base) */
    compare_progress_fn progress;
    void *ctx;
};

/* In a worker: strategy t - 1 simulated into its slot, keeping no spans.
 * A run that fails is the slot's rc and note, as compare_run_sim notes it. */
static int job_run(void *ctx, int t, struct err *e)
{
    struct compare_jobs *j = ctx;
    struct sweep_run *r = &j->runs[t];
    if (!(r->sim = XCALLOC(e, 1, sizeof *r->sim))) return ERR_NOMEM;
    struct err one = {0};
    r->rc = run_simulate(j->cfg, j->list[t - 1], j->wl, 0, j->numerics, r->sim, &one);
    r->devices = j->cfg->devices;
    r->batch = j->cfg->batch;
    if (r->rc == 0) {
        r->report = &r->sim->report;
        r->exceeds_memory = run_exceeds_memory(r->sim);
        snprintf(r->plan_note, sizeof r->plan_note, "%s", r->sim->plan->note);
    } else {
        config_err_locate(j->cfg, &one);   /* the scenario file's line, as a run's own errors */
        snprintf(r->note, sizeof r->note, "%s", one.msg);
    }
    return 0;
}

/* In a worker: task t's message; the run is let go once it is bytes, so a
 * worker holds one run at a time. */
static int job_put(void *ctx, int t, const struct err *fatal, jobs_bytes *out, struct err *e)
{
    struct compare_jobs *j = ctx;
    struct sweep_run *r = &j->runs[t];
    int rc = sweep_wire_put(out, t, r, fatal, e);
    if (r->sim) {
        run_release(r->sim);
        free(r->sim);
    }
    *r = (struct sweep_run){0};
    return rc;
}

static struct sweep_run *job_slot(void *ctx, int t)
{
    struct compare_jobs *j = ctx;
    return t >= 1 && t <= j->n ? &j->runs[t] : NULL;
}

static int job_get(void *ctx, const char *msg, size_t n, int *t, struct err *fatal,
                   struct err *e)
{
    size_t used = 0;
    TRY(sweep_wire_read(msg, n, job_slot, ctx, &used, t, fatal, e));
    if (used != n) return err_set(e, ERR_RUN, "a compare worker's message is malformed");
    return 0;
}

/* Here: the baseline, which every speedup needs and whose failure ends the
 * comparison. */
static int job_run_here(void *ctx, int t, struct err *e)
{
    struct compare_jobs *j = ctx;
    (void)t;
    return run_baseline(j->cfg, j->wl, j->numerics, &j->out->sim_base, e);
}

static void job_progress(void *ctx, int t, int n_done)
{
    struct compare_jobs *j = ctx;
    if (t > 0) j->progress(j->ctx, j->list[t - 1]->name, n_done - 1, j->n);
}

static void job_describe(void *ctx, int t, char *buf, size_t n)
{
    struct compare_jobs *j = ctx;
    snprintf(buf, n, "%s", t > 0 ? j->list[t - 1]->name : "the one-device baseline");
}

/* The baseline first (it runs here), then the strategies costliest first
 * (the bound on their events, core/budget), ties in list order: the last
 * to end are short ones, so the workers end together. */
static void job_order(const struct compare_jobs *j, int *order)
{
    double *cost = calloc((size_t)j->n + 1, sizeof *cost);
    order[0] = 0;
    for (int t = 1; t <= j->n; t++) {
        order[t] = t;
        if (!cost) continue;   /* out of memory: list order, as good a result */
        struct config c = *j->cfg;
        snprintf(c.strategy, sizeof c.strategy, "%s", j->list[t - 1]->name);
        struct budget_plan plan;   /* this strategy's plan: its ops a step tell the costs apart */
        strategy_plan_size(j->list[t - 1], &c, j->wl, &plan);
        struct budget b;
        budget_estimate(&c, j->wl, 0, &plan, &b);
        cost[t] = b.events;
    }
    for (int i = 2; cost && i <= j->n; i++)   /* insertion sort: stable, and n is small */
        for (int k = i; k > 1 && cost[order[k]] > cost[order[k - 1]]; k--) {
            int was = order[k];
            order[k] = order[k - 1];
            order[k - 1] = was;
        }
    free(cost);
}

/* The results that came back, in list order, as compare_run_sim puts its
 * runs: a run in reports and speedup, one that did not run in notes. */
static void assemble(struct compare_jobs *j)
{
    struct compare *out = j->out;
    double base = out->sim_base.report.throughput_samples_per_s;
    for (int i = 0; i < j->n; i++) {
        struct sweep_run *r = &j->runs[i + 1];
        if (r->rc != 0 || !r->report) {
            note(out, j->list[i]->name, r->rc, r->note);
            continue;
        }
        out->real_docs[out->n] = r->real;
        r->real = (struct report_doc){0};
        const struct report *rep = &out->real_docs[out->n].reports[0];
        out->reports[out->n] = rep;
        out->speedup[out->n] = base > 0 ? rep->throughput_samples_per_s / base : 0;
        snprintf(out->plan_notes[out->n], sizeof out->plan_notes[0], "%s", r->plan_note);
        out->exceeds_memory[out->n] = r->exceeds_memory;
        out->n++;
    }
}

int compare_default_jobs(void)
{
    return sweep_default_jobs();
}

int compare_run_spread(const struct config *cfg, const struct workload *wl,
                       const struct strategy *const *list, int n, int keep_steps, int n_jobs,
                       struct run_numerics *numerics, compare_progress_fn progress, void *ctx,
                       struct compare *out, struct err *e)
{
    if (n_jobs <= 1 || keep_steps != 0 || n < 2)
        return compare_run_sim(cfg, wl, list, n, keep_steps, numerics, progress, ctx, out, e);
    *out = (struct compare){0};
    TRY(alloc_results(out, n, e));
    if (!(out->real_docs = XCALLOC(e, (size_t)n, sizeof *out->real_docs))) return ERR_NOMEM;
    struct compare_jobs j = {cfg, wl, list, n, numerics, out, NULL, progress, ctx};
    int *order = XCALLOC(e, (size_t)n + 1, sizeof *order);
    j.runs = XCALLOC(e, (size_t)n + 1, sizeof *j.runs);
    int rc = order && j.runs ? 0 : ERR_NOMEM;
    if (rc == 0) {
        job_order(&j, order);
        const struct jobs_tasks jt = {
            .what = "compare", .n_tasks = n + 1, .order = order, .ctx = &j, .run = job_run,
            .put = job_put, .get = job_get, .run_here = job_run_here,
            .progress = progress ? job_progress : NULL, .describe = job_describe,
        };
        rc = jobs_run(&jt, n_jobs, e);
    }
    if (rc == 0) {
        out->base = &out->sim_base.report;
        assemble(&j);
    }
    for (int t = 0; j.runs && t <= n; t++) report_doc_release(&j.runs[t].real);
    free(j.runs);
    free(order);
    return rc;
}

int compare_run_real(const struct config *cfg, const struct workload *wl,
                     const struct strategy *const *list, int n, int np,
                     compare_progress_fn progress, void *ctx, struct compare *out, struct err *e)
{
    *out = (struct compare){0};
    if (progress) progress(ctx, NULL, 0, n);
    struct config base_cfg;
    TRY(run_baseline_config(cfg, &base_cfg, e));
    TRY(real_job_run(&base_cfg, wl, strategy_baseline()->name, 1, NULL, &out->real_base, e));
    out->base = &out->real_base.reports[0];
    TRY(alloc_results(out, n, e));
    out->real_docs = calloc(n > 0 ? (size_t)n : 1, sizeof *out->real_docs);
    if (!out->real_docs) return err_set(e, ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (progress) progress(ctx, list[i]->name, i, n);
        struct err one = {0};
        int rc = real_job_run(cfg, wl, list[i]->name, np, NULL, &out->real_docs[out->n], &one);
        if (rc == 0) {
            const struct report *r = &out->real_docs[out->n].reports[0];
            double b = out->base->throughput_samples_per_s;
            out->reports[out->n] = r;
            out->speedup[out->n] = b > 0 ? r->throughput_samples_per_s / b : 0;
            out->n++;
            continue;
        }
        report_doc_release(&out->real_docs[out->n]);   /* what a failed job left, if anything */
        note(out, list[i]->name, rc, one.msg);
    }
    return 0;
}

void compare_release(struct compare *c)
{
    for (int i = 0; i < c->n; i++) {
        if (c->sim_runs) {
            run_release(c->sim_runs[i]);
            free(c->sim_runs[i]);
        }
        if (c->real_docs) report_doc_release(&c->real_docs[i]);
    }
    free(c->sim_runs);
    free(c->real_docs);
    run_release(&c->sim_base);
    report_doc_release(&c->real_base);
    free(c->reports);
    free(c->speedup);
    free(c->notes);
    free(c->plan_notes);
    free(c->exceeds_memory);
    *c = (struct compare){0};
}
