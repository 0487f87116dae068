/* Failures predicted against measured (validate_failure.h). */
#include "validate_failure.h"

#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../core/plan_memory.h"
#include "validate_metrics.h"

int validate_failure_policies(const struct config *cfg, const struct workload *wl,
                              const struct strategy *st, int np, enum failure_policy *out, int *n,
                              struct err *e)
{
    *n = 0;
    struct config one = *cfg;
    one.positional = NULL;
    one.n_positional = 0;
    one.devices = np;
    struct plan *p = NULL;
    TRY(strategy_build(st, &one, wl, &p, e));
    int rc = 0;
    if (config_is_set(cfg, "on-failure") && strcmp(cfg->on_failure, "auto")) {
        rc = failure_policy_resolve(cfg->on_failure, p, &out[0], e);
        if (rc == 0) *n = 1;
    } else {
        static const char *const all[] = {"restart", "shrink", "continue"};
        for (int k = 0; k < 3; k++)
            if (failure_policy_resolve(all[k], p, &out[*n], NULL) == 0) (*n)++;
    }
    plan_free(p);
    return rc;
}

static struct validate_lost lost_of(const struct report *r)
{
    return (struct validate_lost){.lost_s = r->failure.lost_s, .detect_s = r->failure.detect_s,
                                  .relaunch_s = r->failure.relaunch_s,
                                  .redone_s = r->failure.redone_s,
                                  .steps_redone = r->failure.steps_redone};
}

/* The median over the runs of the part at `offset` of struct validate_lost. */
static double median_part(const struct validate_lost *runs, int n, size_t offset, double *scratch)
{
    for (int k = 0; k < n; k++) scratch[k] = *(const double *)((const char *)&runs[k] + offset);
    return validate_quantile(scratch, n, 0.5);
}

int validate_failure_compare(const struct report *predicted, const struct report *const *measured,
                             int n, struct validate_failure *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    out->error = NAN;
    if (!predicted->failure.happened)
        return err_set(e, ERR_RUN, "the simulated %s run had no failure: --fail's step is past "
                       "its end?", predicted->strategy);
    for (int k = 0; k < n; k++)
        if (!measured[k]->failure.happened)
            return err_set(e, ERR_RUN, "real run %d of %s had no failure: --fail's step is past "
                           "its end?", k + 1, measured[k]->strategy);
    for (int k = FAILURE_RESTART; k <= FAILURE_CONTINUE; k++)
        if (predicted->failure.policy && !strcmp(predicted->failure.policy, failure_policy_names[k]))
            out->policy = (enum failure_policy)k;
    out->predicted = lost_of(predicted);
    struct validate_lost *runs = XCALLOC(e, (size_t)n, sizeof *runs);
    double *scratch = XCALLOC(e, (size_t)n, sizeof *scratch);
    out->measured_runs_lost_s = XCALLOC(e, (size_t)n, sizeof *out->measured_runs_lost_s);
    if (!runs || !scratch || !out->measured_runs_lost_s) {
        free(runs);
        free(scratch);
        validate_failure_release(out);
        return ERR_NOMEM;
    }
    for (int k = 0; k < n; k++) {
        runs[k] = lost_of(measured[k]);
        out->measured_runs_lost_s[k] = runs[k].lost_s;
    }
    out->n_measured_runs = n;
    struct validate_lost *m = &out->measured;
    m->lost_s = median_part(runs, n, offsetof(struct validate_lost, lost_s), scratch);
    m->detect_s = median_part(runs, n, offsetof(struct validate_lost, detect_s), scratch);
    m->relaunch_s = median_part(runs, n, offsetof(struct validate_lost, relaunch_s), scratch);
    m->redone_s = median_part(runs, n, offsetof(struct validate_lost, redone_s), scratch);
    m->steps_redone = median_part(runs, n, offsetof(struct validate_lost, steps_redone), scratch);
    if (m->lost_s > 0) out->error = out->predicted.lost_s / m->lost_s - 1;
    free(runs);
    free(scratch);
    return 0;
}

void validate_failure_release(struct validate_failure *f)
{
    free(f->measured_runs_lost_s);
    f->measured_runs_lost_s = NULL;
    f->n_measured_runs = 0;
}

int validate_failure_simulate(const struct config *cfg, const struct strategy *st,
                              const struct workload *wl, struct sim_run *out, struct err *e)
{
    TRY(run_simulate(cfg, st, wl, 0, NULL, out, e));
    const char *policy = out->report.failure.policy;
    if (!cfg->fail[0] || !policy || strcmp(policy, failure_policy_names[FAILURE_CONTINUE]))
        return 0;
    run_release(out);
    struct config as_real = *cfg;
    snprintf(as_real.on_failure, sizeof as_real.on_failure, "%s",
             failure_policy_names[FAILURE_SHRINK]);
    TRY_CTX(e, run_simulate(&as_real, st, wl, 0, NULL, out, e),
            "--on-failure continue, predicted as the real relaunch of the survivors");
    out->report.failure.policy = failure_policy_names[FAILURE_CONTINUE];
    snprintf(out->cfg.on_failure, sizeof out->cfg.on_failure, "%s", cfg->on_failure);
    return 0;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double validate_failure_step_s(const struct sim_run *sim)
{
    const int n = sim->n_final_steps;
    if (!sim->final_step_s || n < 1) return NAN;
    const char *policy = sim->report.failure.policy;
    const bool is_restart = policy && !strcmp(policy, failure_policy_names[FAILURE_RESTART]);
    const long long every = is_restart ? sim->cfg.checkpoint_every : sim->cfg.commit_every;
    struct plan_memory mem;
    plan_memory_max(sim->plan, &mem);
    const double save_s =
        cluster_failure_costs(&sim->cluster, mem.params + mem.optimizer).checkpoint_s;
    double *d = malloc((size_t)n * sizeof *d);
    if (!d) return NAN;
    /* a save after step k - 1 (k steps done) holds up step k: the real
     * report's step k runs from step k - 1's end; the job's first step
     * starts at its aligned start, after the loading */
    for (int j = 0; j < n; j++) {
        long long k = sim->final_first_step + j;
        d[j] = sim->final_step_s[j] + (j > 0 && every > 0 && k % every == 0 ? save_s : 0);
    }
    qsort(d, (size_t)n, sizeof *d, by_value);
    double p50 = d[(n + 1) / 2 - 1];   /* nearest rank: the ceil(n / 2)-th smallest */
    free(d);
    return p50;
}
