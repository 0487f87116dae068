#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_numerics.h"

/* The synchronous sequence is numerics_sync_run(ns): a function of ns alone.
 * Its key below compares every field of struct numerics_setup (the model by
 * its expanded spec, the data set by being the one held); a field added to
 * the struct fails this assert until the key compares it too. */
_Static_assert(sizeof(struct numerics_setup) ==
                   (2 * sizeof(void *) + sizeof(uint64_t) + 4 * sizeof(int) + 3 * sizeof(float) +
                    7) / 8 * 8,   /* padded to the uint64_t's alignment */
               "struct numerics_setup changed: compare the new field in same_sync_inputs");

struct run_numerics {
    /* the data set, and data_load's arguments that made it */
    bool has_data;
    char data_spec[CONFIG_PATH_BYTES];
    uint64_t data_seed;
    struct data data;
    /* the synchronous sequence, and the setup it was computed from (its
     * data is `data` above: a new data set drops the sequence) */
    bool has_sync;
    char sync_model[sizeof ((struct workload *)0)->canonical];
    struct numerics_setup sync_setup;   /* wl and data not kept: see sync_model, data */
    struct sync_numerics sync;
};

struct run_numerics *run_numerics_create(struct err *e)
{
    return XCALLOC(e, 1, sizeof(struct run_numerics));
}

static void drop_sync(struct run_numerics *n)
{
    sync_numerics_release(&n->sync);
    n->has_sync = false;
}

void run_numerics_free(struct run_numerics *n)
{
    if (!n) return;
    data_release(&n->data);
    drop_sync(n);
    free(n);
}

bool run_wants_numerics(const struct config *cfg)
{
    return cfg->numerics || cfg->target_accuracy > 0;
}

static int load_data(struct run_numerics *n, const struct config *cfg,
                     const struct workload *wl, struct err *e)
{
    uint64_t seed = (uint64_t)cfg->seed;
    if (!n->has_data || strcmp(n->data_spec, cfg->data) || n->data_seed != seed) {
        data_release(&n->data);
        drop_sync(n);
        n->has_data = false;
        TRY(data_load(cfg->data, seed, &n->data, e));
        snprintf(n->data_spec, sizeof n->data_spec, "%s", cfg->data);
        n->data_seed = seed;
        n->has_data = true;
    }
    return data_check_model(&n->data, wl->layers[0].in, (int)wl->n_classes, e);
}

int run_numerics_load(struct run_numerics *n, const struct config *cfg,
                      const struct workload *wl, struct err *e)
{
    return load_data(n, cfg, wl, e);
}

/* Evaluations: as asked, or about 20 over the run when a target accuracy
 * needs a time, else only at the end. */
static int eval_every(const struct config *cfg)
{
    if (cfg->eval_every > 0) return (int)cfg->eval_every;
    if (cfg->target_accuracy > 0) return cfg->steps >= 20 ? (int)(cfg->steps / 20) : 1;
    return 0;
}

static bool same_sync_inputs(const struct run_numerics *n, const struct numerics_setup *ns)
{
    const struct numerics_setup *k = &n->sync_setup;
    return n->has_sync && ns->data == &n->data && !strcmp(n->sync_model, ns->wl->canonical) &&
           k->seed == ns->seed && k->steps == ns->steps && k->batch == ns->batch &&
           k->lr == ns->lr && k->momentum == ns->momentum &&
           k->weight_decay == ns->weight_decay && k->eval_every == ns->eval_every &&
           k->grad_delay == ns->grad_delay;
}

static int sync_sequence(struct run_numerics *n, const struct numerics_setup *ns, struct err *e)
{
    if (same_sync_inputs(n, ns)) return 0;
    drop_sync(n);
    TRY(numerics_sync_run(ns, &n->sync, e));
    n->sync_setup = *ns;
    n->sync_setup.wl = NULL;
    n->sync_setup.data = NULL;
    snprintf(n->sync_model, sizeof n->sync_model, "%s", ns->wl->canonical);
    n->has_sync = true;
    return 0;
}

static int simulate_with(struct run_numerics *n, const struct config *cfg,
                         const struct workload *wl, struct sim_setup *setup, struct analysis *a,
                         struct trace *t, struct sim_result *res, struct report *r,
                         struct err *e)
{
    TRY(load_data(n, cfg, wl, e));
    const struct plan *p = setup->plan;
    struct numerics_setup ns = {
        .wl = wl, .data = &n->data, .seed = (uint64_t)cfg->seed, .steps = setup->steps,
        .batch = p->batch, .lr = (float)cfg->lr, .momentum = (float)cfg->momentum,
        .weight_decay = (float)cfg->weight_decay, .eval_every = eval_every(cfg),
        .grad_delay = p->n_grad_slots - 1};
    int rc = 0;
    if (policy_infos[p->policy].is_exact) {
        TRY(sync_sequence(n, &ns, e));
        /* the caller's step ends when it wants them too (run_failures) */
        double *callers = setup->step_end_s;
        double *own = callers ? NULL : XCALLOC(e, (size_t)setup->steps + 1, sizeof *own);
        double *ends = callers ? callers : own;
        if (!ends) return ERR_NOMEM;
        setup->step_end_s = ends;
        rc = simulate(setup, a, t, res, e);
        setup->step_end_s = callers;
        if (rc == 0) rc = numerics_sync_report(&n->sync, ends, r, e);
        free(own);
    } else {
        struct numerics *num = NULL;
        TRY(numerics_create(&ns, p, &num, e));
        setup->hooks = numerics_hooks(num);
        rc = simulate(setup, a, t, res, e);
        setup->hooks = NULL;
        if (rc < 0 && !e->msg[0]) *e = *numerics_error(num);
        if (rc == 0) rc = numerics_report(num, res->makespan_s, r, e);
        numerics_free(num);
    }
    return rc;
}

int run_simulate_numerics(struct run_numerics *shared, const struct config *cfg,
                          const struct workload *wl, struct sim_setup *setup,
                          struct analysis *a, struct trace *t, struct sim_result *res,
                          struct report *r, struct err *e)
{
    if (!wl->is_mlp)
        return err_set(e, ERR_INPUT, "--numerics needs an mlp: model (--model %s is sizes only, "
                       "for timing)", cfg->model);
    struct run_numerics *own = NULL;
    if (!shared && !(shared = own = run_numerics_create(e))) return ERR_NOMEM;
    int rc = simulate_with(shared, cfg, wl, setup, a, t, res, r, e);
    run_numerics_free(own);
    TRY(rc);
    report_set_time_to_accuracy(r, cfg->target_accuracy);
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
