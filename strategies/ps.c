/* Parameter servers: --devices workers each compute their share of the
 * batch on a full replica; --servers extra ranks hold the parameters, cut
 * into shards of whole layers balanced by parameter count. A worker pushes
 * each shard's gradients as soon as the backward of those layers is done
 * and pulls fresh parameters at the end of the step. Servers run no
 * program: the executor's server agents apply the pushes under the plan's
 * policy, which is all that tells the three strategies apart. */
#include <limits.h>
#include <stdlib.h>

#include "families.h"
#include "partition.h"

static int build_ps(const struct config *c, const struct workload *wl, const char *name,
                    enum server_policy policy, int policy_arg, struct plan **out, struct err *e)
{
    int n, batch;
    TRY(partition_check_devices_batch(c, &n, &batch, e));
    TRY(partition_check_data_parallel(n, batch, e));
    if (c->servers < 1)
        return err_set(e, ERR_INPUT, "--servers: %lld is not allowed (1 to the model's %d layers)",
                       c->servers, wl->n_layers);
    if (c->servers > wl->n_layers)
        return err_set(e, ERR_INPUT,
                       "--servers %lld exceeds the model's %d layers: each server holds whole "
                       "layers",
                       c->servers, wl->n_layers);
    const int n_servers = (int)c->servers, n_layers = wl->n_layers;

    int *shard = XCALLOC(e, (size_t)n_servers + 1, sizeof *shard);   /* server s: [shard[s], shard[s+1]) */
    int *push = XCALLOC(e, (size_t)n_servers, sizeof *push);
    struct plan *p = NULL;
    if (!shard || !push || partition_shards(wl, n_servers, shard, e) < 0) goto fail;
    p = plan_create(name, wl, n, n_servers, batch, 1, e);
    if (!p) goto fail;
    p->data_parallel = true;
    p->policy = policy;
    p->policy_arg = policy_arg;
    for (int s = 0; s < n_servers; s++) {
        p->ranks[n + s].shard_lo = shard[s];
        p->ranks[n + s].shard_hi = shard[s + 1];
    }

    for (int r = 0; r < n; r++) {
        int samples = partition_share(batch, n, r);
        int prev = plan_forward(p, r, 0, n_layers, 0, samples, NO_DEPS);
        /* last shard first, as backward produces its gradients: each push
         * overlaps the backward of the shards below it */
        for (int s = n_servers - 1; s >= 0; s--) {
            prev = plan_backward(p, r, shard[s], shard[s + 1], 0, samples, DEPS(prev));
            push[s] = plan_push(p, r, n + s, shard[s], shard[s + 1], DEPS(prev));
        }
        /* first shard first, as the next step's forward needs them; the
         * step ends with fresh parameters, so workers never UPDATE */
        for (int s = 0; s < n_servers; s++)
            plan_pull(p, r, n + s, shard[s], shard[s + 1], DEPS(push[s]));
    }
    free(shard);
    free(push);
    *out = p;
    return 0;
fail:
    free(shard);
    free(push);
    plan_free(p);
    return ERR_NOMEM;
}

/* Synchronous: the server averages every worker's push before answering
 * pulls; with --backup-workers B it uses the first N-B pushes of a step and
 * drops the stragglers' (Chen et al., 2016, "Revisiting Distributed
 * Synchronous SGD"). */
int ps_sync_build(const struct strategy *s, const struct config *c, const struct workload *wl,
                  struct plan **out, struct err *e)
{
    int n, batch;
    TRY(partition_check_devices_batch(c, &n, &batch, e));
    if (c->backup_workers < 0)
        return err_set(e, ERR_INPUT, "--backup-workers: %lld is not allowed (0 to --devices - 1)",
                       c->backup_workers);
    if (c->backup_workers >= n)
        return err_set(e, ERR_INPUT,
                       "--backup-workers %lld must be less than --devices %d: a step needs at "
                       "least one worker's push",
                       c->backup_workers, n);
    if (c->backup_workers > 0)
        return build_ps(c, wl, s->name, POLICY_BACKUP, (int)c->backup_workers, out, e);
    return build_ps(c, wl, s->name, POLICY_SYNC, 0, out, e);
}

/* Asynchronous (Hogwild-style, Dean et al., 2012): pushes are applied on
 * arrival and pulls never wait, so gradients may be stale. */
int ps_async_build(const struct strategy *s, const struct config *c, const struct workload *wl,
                   struct plan **out, struct err *e)
{
    return build_ps(c, wl, s->name, POLICY_ASYNC, 0, out, e);
}

/* Stale-synchronous parallel (Ho et al., 2013): asynchronous, but a worker
 * more than --staleness K steps ahead of the slowest waits at its pull. */
int ps_ssp_build(const struct strategy *s, const struct config *c, const struct workload *wl,
                 struct plan **out, struct err *e)
{
    if (c->staleness < 0 || c->staleness > INT_MAX)
        return err_set(e, ERR_INPUT, "--staleness: %lld is not allowed (0 to %d)",
                       c->staleness, INT_MAX);
    return build_ps(c, wl, s->name, POLICY_SSP, (int)c->staleness, out, e);
}

/* A worker: a forward, then a backward, a push and a pull per server; the
 * servers are ranks with no ops (their per-worker state is their rank's
 * share of the estimate, core/budget.c). */
void ps_plan_size(const struct config *c, const struct workload *wl,
                  struct budget_plan *out)
{
    (void)wl;
    double n = (double)c->devices, servers = c->servers > 1 ? (double)c->servers : 1;
    *out = (struct budget_plan){.ranks = n + servers, .ops = n * (1 + 3 * servers)};
}
