/* Cutting a step into pieces: samples, stages, shards; and the checks. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/plan.h"
#include "partition.h"

/* Largest worker count a plan holds (plan_create's limit). */
#define MAX_DEVICES (1 << 24)

int partition_share(int total, int parts, int i)
{
    return total / parts + (i < total % parts);
}

/* Cost of layers [lo, hi) from prefix sums. Every comparison below uses this
 * one expression, so the bisection and the cut agree to the last bit. */
static double range_cost(const double *prefix, int lo, int hi)
{
    return prefix[hi] - prefix[lo];
}

/* Fewest ranges of cost <= cap that cover all layers (cap >= every layer). */
static int parts_needed(const double *prefix, int n_layers, double cap)
{
    int parts = 1;
    for (int lo = 0, hi = 1; hi <= n_layers; hi++)
        if (range_cost(prefix, lo, hi) > cap) parts++, lo = hi - 1;
    return parts;
}

/* Non-negative doubles order like their bit patterns read as integers, so a
 * bisection over the bits finds the smallest feasible cap exactly in at most
 * 64 rounds: O(64 n_layers), whatever the number of parts. */
static uint64_t bits_of(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

int partition_layers(const double *cost, int n_layers, int n_parts, int *bounds,
                     struct err *e)
{
    double *prefix = XCALLOC(e, (size_t)n_layers + 1, sizeof *prefix);
    if (!prefix) return ERR_NOMEM;
    for (int i = 0; i < n_layers; i++) prefix[i + 1] = prefix[i] + cost[i];

    /* The optimum lies between the largest single layer and the total. */
    double widest = 0;
    for (int i = 0; i < n_layers; i++)
        if (range_cost(prefix, i, i + 1) > widest) widest = range_cost(prefix, i, i + 1);
    uint64_t lo = bits_of(widest), hi = bits_of(range_cost(prefix, 0, n_layers));
    if (hi < lo) hi = lo;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (parts_needed(prefix, n_layers, double_of(mid)) <= n_parts)
            hi = mid;
        else
            lo = mid + 1;
    }
    double cap = double_of(lo);

    /* Each range takes as many layers as the cap allows while leaving one
     * for each range after it. By induction its end is never before the
     * matching end of any optimal cut, so the last range fits the cap too. */
    bounds[0] = 0;
    for (int i = 0; i < n_parts - 1; i++) {
        int end = bounds[i] + 1;
        int last_allowed = n_layers - (n_parts - 1 - i);
        while (end < last_allowed && range_cost(prefix, bounds[i], end + 1) <= cap) end++;
        bounds[i + 1] = end;
    }
    bounds[n_parts] = n_layers;
    free(prefix);
    return 0;
}

/* Cuts by a per-layer cost computed by `cost_of`. */
static int partition_by(const struct workload *wl, int n_parts, int *bounds,
                        double (*cost_of)(const struct layer *), struct err *e)
{
    double *cost = XCALLOC(e, (size_t)wl->n_layers, sizeof *cost);
    if (!cost) return ERR_NOMEM;
    for (int i = 0; i < wl->n_layers; i++) cost[i] = cost_of(&wl->layers[i]);
    int rc = partition_layers(cost, wl->n_layers, n_parts, bounds, e);
    free(cost);
    return rc;
}

static double stage_cost(const struct layer *l)
{
    return l->fwd_flops_per_sample + l->bwd_flops_per_sample;
}

static double shard_cost(const struct layer *l) { return (double)l->params; }

int partition_stages(const struct workload *wl, int n_stages, int *bounds, struct err *e)
{
    return partition_by(wl, n_stages, bounds, stage_cost, e);
}

int partition_shards(const struct workload *wl, int n_servers, int *bounds, struct err *e)
{
    return partition_by(wl, n_servers, bounds, shard_cost, e);
}

int partition_check_devices_batch(const struct config *c, int *n_devices, int *batch,
                                  struct err *e)
{
    if (c->devices < 1 || c->devices > MAX_DEVICES)
        return err_set(e, ERR_INPUT, "--devices: %lld is not allowed (1 to %d)", c->devices,
                       MAX_DEVICES);
    if (c->batch < 1 || c->batch > INT_MAX)
        return err_set(e, ERR_INPUT, "--batch: %lld is not allowed (1 to %d)", c->batch,
                       INT_MAX);
    *n_devices = (int)c->devices;
    *batch = (int)c->batch;
    return 0;
}

int partition_check_data_parallel(int n_devices, int batch, struct err *e)
{
    if (n_devices > batch)
        return err_set(e, ERR_INPUT,
                       "--devices %d exceeds --batch %d: each device needs at least one sample",
                       n_devices, batch);
    return 0;
}

int partition_check_stages(int n_stages, const struct workload *wl, const char *what,
                           struct err *e)
{
    if (n_stages > wl->n_layers)
        return err_set(e, ERR_INPUT,
                       "--devices %d exceeds the model's %d layers: %s needs a layer per "
                       "stage (use a deeper --model)",
                       n_stages, wl->n_layers, what);
    return 0;
}

int partition_check_microbatches(const struct config *c, int batch, int *n_microbatches,
                                 struct err *e)
{
    /* microbatch numbers live in 20 bits of a SEND/RECV tag (plan_tag) */
    long long most = batch < PLAN_MAX_MB + 1 ? batch : PLAN_MAX_MB + 1;
    if (c->microbatches < 1)
        return err_set(e, ERR_INPUT, "--microbatches: %lld is not allowed (1 to %lld)",
                       c->microbatches, most);
    if (c->microbatches > batch)
        return err_set(e, ERR_INPUT,
                       "--microbatches %lld exceeds --batch %d: each microbatch needs at least "
                       "one sample",
                       c->microbatches, batch);
    if (c->microbatches > most)
        return err_set(e, ERR_INPUT, "--microbatches: %lld is not allowed (1 to %lld)",
                       c->microbatches, most);
    *n_microbatches = (int)c->microbatches;
    return 0;
}

#define BYTES_PER_MIB 1048576.0

int partition_check_bucket_mb(const struct config *c, double *cap_bytes, struct err *e)
{
    if (!isfinite(c->bucket_mb) || c->bucket_mb < 0)
        return err_set(e, ERR_INPUT,
                       "--bucket-mb: %g is not allowed (0 or more MiB; 0 = one all-reduce "
                       "after the backward)",
                       c->bucket_mb);
    *cap_bytes = c->bucket_mb * BYTES_PER_MIB;
    return 0;
}

int partition_bucket_lo_from(const struct workload *wl, int floor, int hi, double cap_bytes)
{
    if (cap_bytes <= 0) return floor;
    int lo = hi - 1;
    double bytes = (double)workload_param_bytes(wl, lo, hi);
    while (lo > floor && bytes < cap_bytes) {
        double next = (double)workload_param_bytes(wl, lo - 1, lo);
        if (next > cap_bytes) break;   /* the big layer gets its own bucket */
        bytes += next;
        lo--;
    }
    return lo;
}

int partition_bucket_lo(const struct workload *wl, int hi, double cap_bytes)
{
    return partition_bucket_lo_from(wl, 0, hi, cap_bytes);
}

int partition_n_buckets(const struct config *c, const struct workload *wl, int floor, int hi)
{
    double cap_bytes = 0;
    struct err ignored = {0};
    if (partition_check_bucket_mb(c, &cap_bytes, &ignored) < 0) return hi - floor;
    int n = 0;
    for (; hi > floor; n++) hi = partition_bucket_lo_from(wl, floor, hi, cap_bytes);
    return n;
}

void partition_bucketed_plan_size(const struct config *c, const struct workload *wl,
                                  double ops_per_bucket, double other_ops,
                                  struct budget_plan *out)
{
    double n = (double)c->devices;
    double per_rank =
        n > 1 ? ops_per_bucket * partition_n_buckets(c, wl, 0, wl->n_layers) + other_ops : 3;
    *out = (struct budget_plan){.ranks = n, .ops = n * per_rank};
}
