/* What a real run needs from its options, checked before any process
 * starts, so that bad input costs one clear message and no MPI job. */
#include <stdio.h>
#include <string.h>

#include "../core/plan_check.h"
#include "../core/straggler.h"
#include "../strategies/strategy.h"
#include "real.h"

/* Launch options read only beside another, refused alone: they were taken
 * and dropped without a word. --checkpoint-dir is where --checkpoint-every's
 * checkpoints go, and with --hostfile where the commits go (real/supervise.c
 * choose_dirs); --supervisor-address is where --hostfile's ranks send their
 * heartbeats (ranks on this host reach it locally). */
int real_check_launch_pairs(const struct config *cfg, struct err *e)
{
    if (cfg->checkpoint_dir[0] && cfg->checkpoint_every <= 0 && !cfg->hostfile[0])
        return err_set(e, ERR_INPUT, "--checkpoint-dir %s: nothing is written there without "
                       "--checkpoint-every N (or, with --hostfile, the failure policy's "
                       "commits); give --checkpoint-every, or leave --checkpoint-dir out",
                       cfg->checkpoint_dir);
    if (cfg->supervisor_address[0] && !cfg->hostfile[0])
        return err_set(e, ERR_INPUT, "--supervisor-address %s: read only with --hostfile (the "
                       "ranks on this host reach the supervisor locally); give --hostfile, or "
                       "leave --supervisor-address out", cfg->supervisor_address);
    return 0;
}

static int check_options(struct config *cfg, const struct workload *wl, struct err *e)
{
    if (!wl->is_mlp)
        return err_set(e, ERR_INPUT,
                       "--model %s is described by sizes only; real runs train an mlp: model "
                       "(e.g. --model mlp:784-256-128-10), which `strata sim` can also time",
                       cfg->model);
    if (config_is_set(cfg, "np")) {
        if (config_is_set(cfg, "devices") && cfg->devices != cfg->np)
            return err_set(e, ERR_INPUT, "--np %lld and --devices %lld disagree: give one of them "
                           "(--np is the real runs' name for --devices)", cfg->np, cfg->devices);
        if (cfg->np < 1)
            return err_set(e, ERR_INPUT, "--np: 0 is not allowed here (1 or more processes)");
        cfg->devices = cfg->np;
    }
    if (config_is_set(cfg, "epochs") && config_is_set(cfg, "steps") && cfg->epochs > 0)
        return err_set(e, ERR_INPUT, "--epochs %lld and --steps %lld: give one of them (an epoch "
                       "is a pass over the training set)", cfg->epochs, cfg->steps);
    return real_check_launch_pairs(cfg, e);
}

/* Strategies speak of --devices; a user who typed --np reads "--np". */
static void name_np(const struct config *cfg, struct err *e)
{
    if (!config_is_set(cfg, "np")) return;
    char *at = strstr(e->msg, "--devices");
    if (!at) return;
    char rest[ERR_MSG_BYTES];
    snprintf(rest, sizeof rest, "%s", at + strlen("--devices"));
    snprintf(at, sizeof e->msg - (size_t)(at - e->msg), "--np%s", rest);
}

int real_prepare(struct config *cfg, const struct workload *wl, struct plan **out,
                 struct plan_index **ix, struct err *e)
{
    *out = NULL;
    if (ix) *ix = NULL;
    TRY(check_options(cfg, wl, e));
    const struct strategy *st = strategy_find(cfg->strategy, e);
    if (!st) return e->code;
    struct plan *p = NULL;
    int built = strategy_build(st, cfg, wl, &p, e);
    if (built < 0) {
        name_np(cfg, e);
        return built;
    }
    /* the report says the chunks it ran with, where the builder lowered the default */
    if (p->lowered_chunks > 0) cfg->chunks = p->lowered_chunks;
    struct straggler_spec strag;
    int rc = straggler_parse(cfg->straggler, &strag, e);
    if (rc == 0) rc = straggler_check_ranks(&strag, p->n_workers, p->n_ranks, p->strategy, e);
    struct plan_verdict v;
    if (rc == 0) rc = plan_prepare(p, &v, ix, e);
    if (rc == 0 && !v.is_valid)
        rc = err_set(e, ERR_RUN, "the plan of %s is not valid (%s); `strata schedule` shows it",
                     st->name, v.n_defects ? v.defects[0].msg : "no detail");
    if (rc < 0) {
        plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}
