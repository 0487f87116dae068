/* strata compare's runs: the baseline, then every strategy of the list,
 * simulated or executed, and the speedup of each over the baseline. */
#include <stdio.h>
#include <stdlib.h>

#include "compare.h"
#include "real_job.h"

/* Room for n results: the reports, speedups and notes arrays. */
static int alloc_results(struct compare *c, int n, struct err *e)
{
    size_t k = n > 0 ? (size_t)n : 1;
    c->reports = calloc(k, sizeof *c->reports);
    c->speedup = calloc(k, sizeof *c->speedup);
    c->notes = calloc(k, sizeof *c->notes);
    if (!c->reports || !c->speedup || !c->notes)
        return err_set(e, ERR_NOMEM, "out of memory");
    return 0;
}

/* A strategy that did not run: why, and whether the scenario did not fit it
 * (ERR_INPUT) or its run failed. */
static void note(struct compare *c, const char *strategy, int rc, const struct err *why)
{
    snprintf(c->notes[c->n_notes++], sizeof c->notes[0], "%s: %s", strategy, why->msg);
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
            out->n++;
            continue;
        }
        run_release(run);
        free(run);
        note(out, list[i]->name, rc, &one);
    }
    return 0;
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
        note(out, list[i]->name, rc, &one);
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
    *c = (struct compare){0};
}
