#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_numerics.h"

/* What one command's runs share: keyed by the options that shape them. */
static struct {
    char data_key[CONFIG_PATH_BYTES + 32];
    struct data data;
    char sync_key[CONFIG_PATH_BYTES + 512];
    struct sync_numerics sync;
} shared;

bool run_wants_numerics(const struct config *cfg)
{
    return cfg->numerics || cfg->target_accuracy > 0;
}

void run_numerics_release(void)
{
    data_release(&shared.data);
    sync_numerics_release(&shared.sync);
    shared.data_key[0] = shared.sync_key[0] = '\0';
}

static int load_data(const struct config *cfg, const struct workload *wl, struct err *e)
{
    char key[sizeof shared.data_key];
    snprintf(key, sizeof key, "%s|%lld", cfg->data, cfg->seed);
    if (!strcmp(key, shared.data_key)) return 0;
    data_release(&shared.data);
    shared.data_key[0] = '\0';
    TRY(data_load(cfg->data, (uint64_t)cfg->seed, &shared.data, e));
    TRY(data_check_model(&shared.data, wl->layers[0].in, (int)wl->n_classes, e));
    snprintf(shared.data_key, sizeof shared.data_key, "%s", key);
    return 0;
}

/* Evaluations: as asked, or about 20 over the run when a target accuracy
 * needs a time, else only at the end. */
static int eval_every(const struct config *cfg)
{
    if (cfg->eval_every > 0) return (int)cfg->eval_every;
    if (cfg->target_accuracy > 0) return cfg->steps >= 20 ? (int)(cfg->steps / 20) : 1;
    return 0;
}

static int sync_sequence(const struct numerics_setup *ns, const struct config *cfg,
                         struct err *e)
{
    char key[sizeof shared.sync_key];
    snprintf(key, sizeof key, "%s|%s|%lld|%d|%d|%.9g|%.9g|%.9g|%d", cfg->model, cfg->data,
             cfg->seed, ns->steps, ns->batch, ns->lr, ns->momentum, ns->weight_decay,
             ns->eval_every);
    if (!strcmp(key, shared.sync_key)) return 0;
    sync_numerics_release(&shared.sync);
    shared.sync_key[0] = '\0';
    TRY(numerics_sync_run(ns, &shared.sync, e));
    snprintf(shared.sync_key, sizeof shared.sync_key, "%s", key);
    return 0;
}

int run_simulate_numerics(const struct config *cfg, const struct workload *wl,
                          struct sim_setup *setup, struct analysis *a, struct trace *t,
                          struct sim_result *res, struct report *r, struct err *e)
{
    if (!wl->is_mlp)
        return err_set(e, ERR_INPUT, "--numerics needs an mlp: model (--model %s is sizes only, "
                       "for timing)", cfg->model);
    TRY(load_data(cfg, wl, e));
    const struct plan *p = setup->plan;
    struct numerics_setup ns = {
        .wl = wl, .data = &shared.data, .seed = (uint64_t)cfg->seed, .steps = setup->steps,
        .batch = p->batch, .lr = (float)cfg->lr, .momentum = (float)cfg->momentum,
        .weight_decay = (float)cfg->weight_decay, .eval_every = eval_every(cfg)};
    int rc = 0;
    if (policy_infos[p->policy].is_exact) {
        TRY(sync_sequence(&ns, cfg, e));
        double *ends = XCALLOC(e, (size_t)setup->steps + 1, sizeof *ends);
        if (!ends) return ERR_NOMEM;
        setup->step_end_s = ends;
        rc = simulate(setup, a, t, res, e);
        setup->step_end_s = NULL;
        if (rc == 0) rc = numerics_sync_report(&shared.sync, ends, r, e);
        free(ends);
    } else {
        struct numerics *n = NULL;
        TRY(numerics_create(&ns, p, &n, e));
        setup->hooks = numerics_hooks(n);
        rc = simulate(setup, a, t, res, e);
        setup->hooks = NULL;
        if (rc < 0 && !e->msg[0]) *e = *numerics_error(n);
        if (rc == 0) rc = numerics_report(n, res->makespan_s, r, e);
        numerics_free(n);
    }
    TRY(rc);
    if (cfg->target_accuracy > 0) {
        double t_s = numerics_time_to(r, cfg->target_accuracy);
        r->has_time_to_accuracy = t_s >= 0;
        r->time_to_accuracy_s = t_s;
    }
    return 0;
}

double run_numerics_estimate_s(const struct config *cfg, const struct workload *wl)
{
    if (!wl->is_mlp) return INFINITY;
    double fwd = 0;
    for (int l = 0; l < wl->n_layers; l++) fwd += wl->layers[l].fwd_flops_per_sample;
    /* the synchronous sequence once, and each asynchronous strategy (ps-async,
     * ps-ssp) its own: forward and backward, 3 x forward */
    double train = 3.0 * fwd * (double)cfg->batch * (double)cfg->steps * 3.0;
    int evals = eval_every(cfg) > 0 ? (int)(cfg->steps / eval_every(cfg)) + 1 : 1;
    double test = fwd * 10000.0 * evals * 3.0;   /* Fashion-MNIST's 10,000 test images */
    return (train + test) / 30e9 + 0.5;
}
