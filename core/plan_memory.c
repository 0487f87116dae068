/* The memory a plan needs per device, read off each rank's program (see
 * plan_memory.h for what each figure counts). Nothing is allocated: both
 * walks below are over the program and the workload's layers. */
#include <string.h>

#include "plan_memory.h"

/* Does some FORWARD of rank r cover layer l? */
static bool forwards_layer(const struct plan_rank *pr, int l)
{
    for (size_t i = 0; i < pr->ops.len; i++) {
        const struct op *op = &pr->ops.items[i];
        if (op->kind == OP_FORWARD && op->lo <= l && l < op->hi) return true;
    }
    return false;
}

/* Parameters of the layers rank r runs forward on, each layer once (a
 * pipeline stage forwards its layers once per microbatch). Only layers
 * inside the span of its forwards are looked at; a stage's first forward
 * covers all of them, so this is O(ops + layers) for most plans, and
 * O(ops x layers) for a rank whose forwards leave holes: an interleaved
 * pipeline's device, whose chunks are p stages apart. */
static int64_t forward_params(const struct plan *p, const struct plan_rank *pr)
{
    int lo = p->wl->n_layers, hi = 0;
    for (size_t i = 0; i < pr->ops.len; i++) {
        const struct op *op = &pr->ops.items[i];
        if (op->kind != OP_FORWARD || op->lo >= op->hi) continue;
        if (op->lo < lo) lo = op->lo;
        if (op->hi > hi) hi = op->hi;
    }
    if (lo < 0) lo = 0;
    if (hi > p->wl->n_layers) hi = p->wl->n_layers;
    int64_t params = 0;
    for (int l = lo; l < hi; l++)
        if (forwards_layer(pr, l)) params += p->wl->layers[l].params;
    return params;
}

/* Saved activations of n samples through layers [lo, hi). */
static int64_t saved_bytes(const struct workload *wl, int lo, int hi, int n_samples)
{
    int64_t per_sample = 0;
    for (int l = lo < 0 ? 0 : lo; l < hi && l < wl->n_layers; l++)
        per_sample += wl->layers[l].saved_bytes_per_sample;
    return per_sample * n_samples;
}

/* Parameters of rank's shard of a shard UPDATE's layers (core/plan.h plan_shard). */
static int64_t update_shard_params(const struct plan *p, int rank, const struct op *op)
{
    int k = plan_group_member(p, op->group, rank);
    if (k < 0) return 0;
    int64_t lo, hi;
    plan_shard(workload_params(p->wl, op->lo, op->hi), p->groups.items[op->group].n_ranks, k, &lo,
               &hi);
    return hi - lo;
}

void plan_memory_rank(const struct plan *p, int rank, struct plan_memory *m)
{
    memset(m, 0, sizeof *m);
    if (rank < 0 || rank >= p->n_ranks || p->ranks[rank].is_server) return;
    const struct plan_rank *pr = &p->ranks[rank];

    m->params = forward_params(p, pr) * p->wl->elem_bytes;
    /* steps in flight (core/plan.h): one gradient block per step whose
     * gradients are still being exchanged, and this step's */
    m->grads = m->params * p->n_grad_slots;

    /* In program order: a FORWARD saves its activations until the BACKWARD
     * of the same microbatch and layers frees them; split in two, until its
     * weight half (BACKWARD_WEIGHT), which still reads each layer's input.
     * (The output gradients the input half keeps for it are left out: the
     * weight half usually follows soon.) Executors may reorder
     * ops of different streams, never those of the compute stream, where
     * both live, so program order is the order they happen in. */
    bool is_updating_all = false;
    int64_t held = 0, shard_params = 0;
    for (size_t i = 0; i < pr->ops.len; i++) {
        const struct op *op = &pr->ops.items[i];
        if (op->kind == OP_FORWARD) {
            held += saved_bytes(p->wl, op->lo, op->hi, op->n_samples);
            if (held > m->activations) m->activations = held;
        } else if (op->kind == OP_BACKWARD || op->kind == OP_BACKWARD_WEIGHT) {
            held -= saved_bytes(p->wl, op->lo, op->hi, op->n_samples);
        } else if (op->kind == OP_UPDATE && op->group < 0) {
            is_updating_all = true;
        } else if (op->kind == OP_UPDATE) {
            shard_params += update_shard_params(p, rank, op);
        }
    }
    /* SGD momentum: one value per parameter the rank steps: all of its
     * layers', or (ZeRO-1) only those of its shards */
    m->optimizer = is_updating_all ? m->params : shard_params * p->wl->elem_bytes;
    m->peak = m->params + m->grads + m->optimizer + m->activations;
}

void plan_memory_max(const struct plan *p, struct plan_memory *m)
{
    memset(m, 0, sizeof *m);
    bool is_first = true;
    for (int r = 0; r < p->n_workers; r++) {
        struct plan_memory mr;
        plan_memory_rank(p, r, &mr);
        if (is_first || mr.peak > m->peak) *m = mr;   /* ties: the lowest rank */
        is_first = false;
    }
}
