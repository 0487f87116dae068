/* Interleaved 1F1B (Narayanan et al., SC 2021; Megatron-LM's
 * virtual-pipeline schedule): the layers are cut into V x p chunks, virtual
 * stages s = 0 .. Vp-1, and device d holds the V chunks s = d, d+p, ...,
 * d+(V-1)p, so a microbatch goes round the devices V times. Each device
 * starts working V times sooner in the microbatch's trip, so the bubble
 * shrinks V-fold: (p-1)/(V m + p-1) of the step with equal chunks, for V
 * times 1F1B's point-to-point messages. */
#include <stdio.h>
#include <stdlib.h>

#include "families.h"
#include "partition.h"

struct interleaved {
    int p, v, m;      /* devices, chunks per device, microbatches */
    int batch;        /* samples per step, all through every chunk */
    int *bounds;      /* [v p + 1]: virtual stage s holds [bounds[s], bounds[s+1]), on device s % p */
    int *fwd_op;      /* [v m]: the current device's FORWARD of chunk c, mb j at [c m + j] */
};

/* Megatron-LM's order of a device's V m forward units: groups of p
 * microbatches go through chunk 0, then the same group through chunk 1,
 * and so on; backward units go through the chunks in reverse. Unit k is
 * chunk (k / p) % V (V-1 minus that backward) of microbatch
 * (k / (p V)) p + k % p. */
static void unit_of(const struct interleaved *il, int k, bool is_backward, int *chunk, int *mb)
{
    int c = (k / il->p) % il->v;
    *chunk = is_backward ? il->v - 1 - c : c;
    *mb = k / (il->p * il->v) * il->p + k % il->p;
}

/* Device d, chunk c, microbatch mb: RECV the input from the device of the
 * virtual stage before (unless the first), FORWARD, SEND the output to the
 * next one's (unless the last). Tags carry the layer boundary, which names
 * the virtual stages' meeting point whichever devices they sit on. */
static void chunk_forward(struct plan *p, struct interleaved *il, int d, int c, int mb)
{
    int s = c * il->p + d, last = il->v * il->p - 1;
    int lo = il->bounds[s], hi = il->bounds[s + 1];
    int n = partition_share(il->batch, il->m, mb);
    int in = s > 0 ? plan_recv(p, d, (s - 1) % il->p, TAG_ACT, lo, mb, n, NO_DEPS) : -1;
    int fwd = plan_forward(p, d, lo, hi, mb, n, DEPS(in));
    if (s < last) plan_send(p, d, (s + 1) % il->p, TAG_ACT, hi, mb, n, DEPS(fwd));
    il->fwd_op[c * il->m + mb] = fwd;
}

/* The same unit backward: gradients come from the next virtual stage's
 * device and go to the previous one's. Returns the BACKWARD. */
static int chunk_backward(struct plan *p, struct interleaved *il, int d, int c, int mb)
{
    int s = c * il->p + d, last = il->v * il->p - 1;
    int lo = il->bounds[s], hi = il->bounds[s + 1];
    int n = partition_share(il->batch, il->m, mb);
    int grad = s < last ? plan_recv(p, d, (s + 1) % il->p, TAG_GRAD, hi, mb, n, NO_DEPS) : -1;
    int bwd = plan_backward(p, d, lo, hi, mb, n, DEPS(grad, il->fwd_op[c * il->m + mb]));
    if (s > 0) plan_send(p, d, (s - 1) % il->p, TAG_GRAD, lo, mb, n, DEPS(bwd));
    return bwd;
}

/* Device d: a warm-up of 2(p-d-1) + (V-1)p forward units (Megatron-LM's:
 * the last device's first backward needs the first group of microbatches
 * through all V-1 chunks before its last, and each device nearer the front
 * runs two units more while gradients come back), then one forward and one
 * backward unit, then the remaining backwards; with V = 1 this is 1F1B and
 * its warm-up p-d-1. Then each chunk's UPDATE. The unit-cost run of every
 * test size checks that no device waits in a cycle (plan_check). */
static void schedule_device(struct plan *p, struct interleaved *il, int d)
{
    const int total = il->v * il->m;
    int warmup = il->v == 1 ? il->p - d - 1 : 2 * (il->p - d - 1) + (il->v - 1) * il->p;
    if (warmup > total) warmup = total;
    int c, mb, bwd = -1;
    for (int k = 0; k < warmup; k++) {
        unit_of(il, k, false, &c, &mb);
        chunk_forward(p, il, d, c, mb);
    }
    for (int k = 0; k < total; k++) {
        if (warmup + k < total) {   /* steady state: one forward unit, one backward */
            unit_of(il, warmup + k, false, &c, &mb);
            chunk_forward(p, il, d, c, mb);
        }
        unit_of(il, k, true, &c, &mb);
        bwd = chunk_backward(p, il, d, c, mb);
    }
    for (c = 0; c < il->v; c++) {
        int s = c * il->p + d;
        plan_update(p, d, il->bounds[s], il->bounds[s + 1], DEPS(bwd));
    }
}

/* --chunks left at its default (not given, and the option table's value)
 * on p devices: that, or as many as the layers allow (1 chunk a device is
 * 1F1B's schedule), so that a comparison on a shallow model still runs it;
 * build_interleaved says so in a note. A value given is kept. */
static long long chunks_of(const struct config *c, const struct workload *wl, int p)
{
    const struct opt_spec *o = config_find("chunks");
    bool is_default = !config_is_set(c, "chunks") && o && c->chunks == atoll(o->def);
    if (is_default && (long long)p * c->chunks > wl->n_layers && wl->n_layers >= p)
        return wl->n_layers / p;
    return c->chunks;
}

/* The options checked for Megatron-LM's schedule. One device has no bubble
 * to fill: it runs the one-device step every strategy runs (the baseline),
 * its layers one chunk and its batch one microbatch. */
static int check_options(const struct config *c, const struct workload *wl,
                         struct interleaved *il, struct err *e)
{
    TRY(partition_check_devices_batch(c, &il->p, &il->batch, e));
    TRY(partition_check_microbatches(c, il->batch, &il->m, e));
    if (il->p == 1) {
        il->v = il->m = 1;
        return 0;
    }
    il->v = (int)chunks_of(c, wl, il->p);
    if (il->p > wl->n_layers)   /* fewer --chunks would not help: say what would */
        return err_set(e, ERR_INPUT,
                       "--devices %d exceeds the model's %d layers: pipeline-interleaved needs a "
                       "layer per chunk, and every device holds one (use a deeper --model)",
                       il->p, wl->n_layers);
    if (il->v < 1 || (long long)il->p * il->v > wl->n_layers)
        return err_set(e, ERR_INPUT,
                       "--devices %d x --chunks %d exceeds the model's %d layers: "
                       "pipeline-interleaved needs a layer per chunk (use fewer --chunks or a "
                       "deeper --model)",
                       il->p, il->v, wl->n_layers);
    if (il->m % il->p)
        return err_set(e, ERR_INPUT,
                       "--microbatches %d is not a multiple of --devices %d: "
                       "pipeline-interleaved sends microbatches round the devices in groups of "
                       "%d (Megatron-LM's schedule; try --microbatches %d)",
                       il->m, il->p, il->p, (il->m / il->p + 1) * il->p);
    return 0;
}

int pipeline_interleaved_build(const struct strategy *s, const struct config *c,
                               const struct workload *wl, struct plan **out, struct err *e)
{
    *out = NULL;
    struct interleaved il = {0};
    TRY(check_options(c, wl, &il, e));
    int rc = ERR_NOMEM;
    int n_stages = il.v * il.p;
    il.bounds = XCALLOC(e, (size_t)n_stages + 1, sizeof *il.bounds);
    il.fwd_op = XCALLOC(e, (size_t)il.v * (size_t)il.m, sizeof *il.fwd_op);
    if (!il.bounds || !il.fwd_op) goto out;
    if ((rc = partition_stages(wl, n_stages, il.bounds, e)) < 0) goto out;
    rc = ERR_NOMEM;
    struct plan *p = plan_create(s->name, wl, il.p, 0, il.batch, il.m, e);
    if (!p) goto out;
    if (il.p > 1 && il.v != c->chunks) {
        p->lowered_chunks = il.v;
        snprintf(p->note, sizeof p->note,
                 "--chunks %d: the default %lld chunks on each of %d devices need %lld layers, "
                 "the model has %d",
                 il.v, c->chunks, il.p, il.p * c->chunks, wl->n_layers);
    }
    for (int d = 0; d < il.p; d++) schedule_device(p, &il, d);
    *out = p;
    rc = 0;
out:
    free(il.bounds);
    free(il.fwd_op);
    return rc;
}

/* Each of --chunks V chunks of a device: 1F1B's 6 ops a microbatch and an
 * update; the first and last virtual stages have 2 a microbatch fewer.
 * One device runs the one-device step, 3 ops. */
void pipeline_interleaved_plan_size(const struct config *c, const struct workload *wl,
                                    struct budget_plan *out)
{
    double p = (double)c->devices;
    long long chunks = c->devices > 1 && c->devices <= wl->n_layers
                           ? chunks_of(c, wl, (int)c->devices)
                           : c->chunks;
    double v = chunks > 1 ? (double)chunks : 1;
    double m = (double)c->microbatches;
    double micro = p > 1 ? p * 6 * v * m - 4 * m : 0;
    *out = (struct budget_plan){
        .ranks = p, .ops = p > 1 ? micro + p * v : 3, .micro_ops = micro};
}
