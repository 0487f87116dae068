/* Plan construction: the builder API strategies use. Checking lives in
 * plan_check.c; the builders only refuse what would corrupt the plan itself
 * (ranks out of range, deps that are not earlier ops). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

const struct op_info op_infos[OP_N_KINDS] = {
#define PLAN_OP_INFO(name, stream, cls, dir, letters, label, colour, meaning) \
    {#name, stream, cls, dir, letters, label, colour, meaning},
    PLAN_OPS(PLAN_OP_INFO)
#undef PLAN_OP_INFO
};

struct plan *plan_create(const char *strategy, const struct workload *wl, int n_workers,
                         int n_servers, int batch, int n_microbatches, struct err *e)
{
    if (n_workers < 1 || n_servers < 0 || n_workers > (1 << 24) || n_servers > (1 << 24)) {
        err_set(e, ERR_INPUT, "a plan needs 1 to 2^24 workers and 0 to 2^24 servers (got %d, %d)",
                n_workers, n_servers);
        return NULL;
    }
    struct plan *p = XCALLOC(e, 1, sizeof *p);
    if (!p) return NULL;
    snprintf(p->strategy, sizeof p->strategy, "%s", strategy);
    p->wl = wl;
    p->n_workers = n_workers;
    p->n_servers = n_servers;
    p->n_ranks = n_workers + n_servers;
    p->batch = batch;
    p->n_microbatches = n_microbatches;
    p->n_grad_slots = 1;
    p->ranks = XCALLOC(e, (size_t)p->n_ranks, sizeof *p->ranks);
    if (!p->ranks) goto fail;
    for (int r = n_workers; r < p->n_ranks; r++) p->ranks[r].is_server = true;
    return p;
fail:
    plan_free(p);
    return NULL;
}

void plan_free(struct plan *p)
{
    if (!p) return;
    for (int r = 0; p->ranks && r < p->n_ranks; r++) {
        vec_free(&p->ranks[r].ops);
        vec_free(&p->ranks[r].deps);
    }
    free(p->ranks);
    for (size_t g = 0; g < p->groups.len; g++) free(p->groups.items[g].ranks);
    vec_free(&p->groups);
    free(p);
}

/* Records the first builder failure; later ones keep the first message. */
static int build_fail(struct plan *p, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int build_fail(struct plan *p, int rc, const char *fmt, ...)
{
    if (p->build_rc == 0) {
        p->build_rc = rc;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->build_msg, sizeof p->build_msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int plan_build_status(const struct plan *p, struct err *e)
{
    if (p->build_rc == 0) return 0;
    return err_set(e, p->build_rc, "building the %s plan: %s", p->strategy, p->build_msg);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int plan_add_group(struct plan *p, const int *ranks, int n_ranks)
{
    if (p->build_rc) return -1;
    if (n_ranks < 1) return build_fail(p, ERR_RUN, "a group needs at least one rank");
    struct plan_group g = {n_ranks, malloc((size_t)n_ranks * sizeof(int))};
    if (!g.ranks) return build_fail(p, ERR_NOMEM, "out of memory for a group of %d", n_ranks);
    memcpy(g.ranks, ranks, (size_t)n_ranks * sizeof(int));
    qsort(g.ranks, (size_t)n_ranks, sizeof(int), cmp_int);
    for (int i = 0; i < n_ranks; i++)
        if (g.ranks[i] < 0 || g.ranks[i] >= p->n_ranks || (i && g.ranks[i] == g.ranks[i - 1])) {
            int bad = g.ranks[i];
            free(g.ranks);
            return build_fail(p, ERR_RUN, "group member %d is out of range or repeated", bad);
        }
    if (vec_push(&p->groups, g) < 0) {
        free(g.ranks);
        return build_fail(p, ERR_NOMEM, "out of memory adding a group");
    }
    return (int)p->groups.len - 1;
}

int plan_add(struct plan *p, int rank, struct op op, const int *deps, int n_deps)
{
    if (p->build_rc) return -1;
    if (rank < 0 || rank >= p->n_ranks)
        return build_fail(p, ERR_RUN, "%s on rank %d, which is not in 0..%d",
                          op_infos[op.kind].name, rank, p->n_ranks - 1);
    struct plan_rank *pr = &p->ranks[rank];
    int index = (int)pr->ops.len;
    op.dep_first = (int)pr->deps.len;
    op.n_deps = 0;
    for (int i = 0; i < n_deps; i++) {
        if (deps[i] < 0) continue;
        if (deps[i] >= index)
            return build_fail(p, ERR_RUN, "rank %d op %d (%s) depends on op %d, not an earlier op",
                              rank, index, op_infos[op.kind].name, deps[i]);
        if (vec_push(&pr->deps, deps[i]) < 0)
            return build_fail(p, ERR_NOMEM, "out of memory adding deps");
        op.n_deps++;
    }
    if (vec_push(&pr->ops, op) < 0) return build_fail(p, ERR_NOMEM, "out of memory adding an op");
    return index;
}

static struct op blank_op(enum op_kind kind)
{
    return (struct op){.kind = kind, .stream = op_infos[kind].stream, .mb = -1, .peer = -1,
                       .group = -1};
}

/* Layer ranges are checked here only as far as the workload lookups below
 * need; everything else about them is the checker's job. */
static bool layers_ok(struct plan *p, int lo, int hi, const char *what)
{
    if (lo >= 0 && lo < hi && hi <= p->wl->n_layers) return true;
    build_fail(p, ERR_RUN, "%s of layers [%d,%d) outside the model's %d layers", what, lo, hi,
               p->wl->n_layers);
    return false;
}

/* Memory traffic of a compute op, for the roofline of the cost model:
 * forward reads the weights and the input and writes the outputs; backward
 * reads weights and saved activations and writes weight and input
 * gradients; SGD with momentum reads w, g, v and writes w, v. */
/* per_sample * n_samples, or -1 (with the sticky error) past 2^62 bytes:
 * workloads keep per-sample sizes below 2^53, batches can still overflow. */
static int64_t scaled_bytes(struct plan *p, int64_t per_sample, int n_samples)
{
    if (n_samples < 0 || (double)per_sample * n_samples > 4.6e18) {
        build_fail(p, ERR_INPUT, "%d samples of %lld bytes each exceed 2^62 bytes in one op",
                   n_samples, (long long)per_sample);
        return -1;
    }
    return per_sample * n_samples;
}

static int64_t activation_bytes(const struct workload *wl, int lo, int hi)
{
    int64_t sum = workload_boundary_bytes(wl, lo);
    for (int i = lo; i < hi; i++) sum += wl->layers[i].out_bytes_per_sample;
    return sum;
}

/* FLOPs per sample of kind over [lo,hi): a backward split in two gives W
 * the forward's FLOPs (dW = x^T dy is the forward's GEMM transposed; db
 * sums what the bias added) and B the rest (dx = dy W^T, none for layer 0
 * of an mlp, whose input gradient no one needs). */
static double pass_flops(const struct workload *wl, enum op_kind kind, int lo, int hi)
{
    double fwd = workload_fwd_flops(wl, lo, hi), bwd = workload_bwd_flops(wl, lo, hi);
    double weight = fwd < bwd ? fwd : bwd;
    switch (kind) {
    case OP_FORWARD: return fwd;
    case OP_BACKWARD_INPUT: return bwd - weight;
    case OP_BACKWARD_WEIGHT: return weight;
    default: return bwd;
    }
}

/* FORWARD, BACKWARD or a half of it, of layers [lo,hi): backward also reads
 * what forward saved, and touches the weights twice (reads them, writes
 * their gradients); each half touches them once (B reads W, W writes dW),
 * and W reads the saved inputs and output gradients, not the outputs. */
static int plan_pass(struct plan *p, enum op_kind kind, int rank, int lo, int hi, int mb,
                     int n_samples, const int *deps, int n_deps)
{
    bool is_backward = kind != OP_FORWARD;
    if (p->build_rc || !layers_ok(p, lo, hi, op_infos[kind].name)) return -1;
    struct op op = blank_op(kind);
    op.lo = lo, op.hi = hi, op.mb = mb, op.n_samples = n_samples;
    op.flops = pass_flops(p->wl, kind, lo, hi) * n_samples;
    int64_t per_sample = kind == OP_BACKWARD_WEIGHT ? 0 : activation_bytes(p->wl, lo, hi);
    for (int i = lo; is_backward && i < hi; i++)
        per_sample += p->wl->layers[i].saved_bytes_per_sample;
    int64_t act = scaled_bytes(p, per_sample, n_samples);
    if (act < 0) return -1;
    op.bytes = (kind == OP_BACKWARD ? 2 : 1) * workload_param_bytes(p->wl, lo, hi) + act;
    return plan_add(p, rank, op, deps, n_deps);
}

int plan_forward(struct plan *p, int rank, int lo, int hi, int mb, int n_samples,
                 const int *deps, int n_deps)
{
    return plan_pass(p, OP_FORWARD, rank, lo, hi, mb, n_samples, deps, n_deps);
}

int plan_backward(struct plan *p, int rank, int lo, int hi, int mb, int n_samples,
                  const int *deps, int n_deps)
{
    return plan_pass(p, OP_BACKWARD, rank, lo, hi, mb, n_samples, deps, n_deps);
}

int plan_backward_input(struct plan *p, int rank, int lo, int hi, int mb, int n_samples,
                        const int *deps, int n_deps)
{
    return plan_pass(p, OP_BACKWARD_INPUT, rank, lo, hi, mb, n_samples, deps, n_deps);
}

int plan_backward_weight(struct plan *p, int rank, int lo, int hi, int mb, int n_samples,
                         const int *deps, int n_deps)
{
    return plan_pass(p, OP_BACKWARD_WEIGHT, rank, lo, hi, mb, n_samples, deps, n_deps);
}

struct op plan_update_op(const struct workload *wl, int lo, int hi)
{
    struct op op = blank_op(OP_UPDATE);
    op.lo = lo, op.hi = hi;
    int64_t params = workload_params(wl, lo, hi);
    op.flops = 4.0 * (double)params;   /* v = mu v + g (+ wd w); w -= lr v */
    op.bytes = 5 * params * wl->elem_bytes;
    return op;
}

int plan_update(struct plan *p, int rank, int lo, int hi, const int *deps, int n_deps)
{
    if (p->build_rc || !layers_ok(p, lo, hi, "UPDATE")) return -1;
    return plan_add(p, rank, plan_update_op(p->wl, lo, hi), deps, n_deps);
}

int plan_set_lag(struct plan *p, int rank, int i, int lag)
{
    if (p->build_rc) return -1;
    if (rank < 0 || rank >= p->n_ranks || i < 0 || (size_t)i >= p->ranks[rank].ops.len)
        return build_fail(p, ERR_INPUT, "plan_set_lag: rank %d has no op %d", rank, i);
    struct op *op = &p->ranks[rank].ops.items[i];
    /* only the ops that touch a step's gradients can be lagged: a lagged
     * FORWARD or BACKWARD would mean nothing */
    if ((op->kind != OP_ALLREDUCE && op->kind != OP_UPDATE) || lag < 0 || lag > PLAN_MAX_LAG)
        return build_fail(p, ERR_INPUT, "plan_set_lag: a lag of %d on a %s (ALLREDUCE or "
                          "UPDATE, 0 to %d)", lag, op_infos[op->kind].name, PLAN_MAX_LAG);
    op->lag = lag;
    if (lag + 1 > p->n_grad_slots) p->n_grad_slots = lag + 1;
    return i;
}

static int p2p(struct plan *p, enum op_kind kind, int rank, int peer, enum tag_kind tk,
               int boundary, int mb, int n_samples, const int *deps, int n_deps)
{
    if (p->build_rc) return -1;
    if (boundary < 0 || boundary > p->wl->n_layers || boundary > PLAN_MAX_BOUNDARY || mb < 0 ||
        mb > PLAN_MAX_MB)
        return build_fail(p, ERR_RUN, "%s with boundary %d, microbatch %d out of range",
                          op_infos[kind].name, boundary, mb);
    struct op op = blank_op(kind);
    op.peer = peer, op.mb = mb, op.n_samples = n_samples;
    op.lo = op.hi = boundary;
    op.tag = plan_tag(tk, boundary, mb);
    op.bytes = scaled_bytes(p, workload_boundary_bytes(p->wl, boundary), n_samples);
    if (op.bytes < 0) return -1;
    return plan_add(p, rank, op, deps, n_deps);
}

int plan_send(struct plan *p, int rank, int peer, enum tag_kind kind, int boundary, int mb,
              int n_samples, const int *deps, int n_deps)
{
    return p2p(p, OP_SEND, rank, peer, kind, boundary, mb, n_samples, deps, n_deps);
}

int plan_recv(struct plan *p, int rank, int peer, enum tag_kind kind, int boundary, int mb,
              int n_samples, const int *deps, int n_deps)
{
    return p2p(p, OP_RECV, rank, peer, kind, boundary, mb, n_samples, deps, n_deps);
}

static int param_op(struct plan *p, enum op_kind kind, int rank, int peer, int group, int lo,
                    int hi, const int *deps, int n_deps)
{
    if (p->build_rc || !layers_ok(p, lo, hi, op_infos[kind].name)) return -1;
    struct op op = blank_op(kind);
    op.peer = peer, op.group = group, op.lo = lo, op.hi = hi;
    op.bytes = workload_param_bytes(p->wl, lo, hi);
    return plan_add(p, rank, op, deps, n_deps);
}

int plan_allreduce(struct plan *p, int rank, int group, int lo, int hi, const int *deps,
                   int n_deps)
{
    return param_op(p, OP_ALLREDUCE, rank, -1, group, lo, hi, deps, n_deps);
}

int plan_reduce_scatter(struct plan *p, int rank, int group, int lo, int hi, const int *deps,
                        int n_deps)
{
    return param_op(p, OP_REDUCE_SCATTER, rank, -1, group, lo, hi, deps, n_deps);
}

int plan_all_gather(struct plan *p, int rank, int group, int lo, int hi, const int *deps,
                    int n_deps)
{
    return param_op(p, OP_ALL_GATHER, rank, -1, group, lo, hi, deps, n_deps);
}

int plan_group_member(const struct plan *p, int group, int rank)
{
    if (group < 0 || (size_t)group >= p->groups.len) return -1;
    const struct plan_group *G = &p->groups.items[group];
    /* by bisection over the ascending ranks: ZeRO-1's sharded updates ask
     * this for every rank of a 10^5-rank group, which a scan made quadratic
     * (86% of mirrored-zero1's run at 100,000 devices) */
    int lo = 0, hi = G->n_ranks;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (G->ranks[mid] < rank) lo = mid + 1;
        else hi = mid;
    }
    return lo < G->n_ranks && G->ranks[lo] == rank ? lo : -1;
}

int plan_update_shard(struct plan *p, int rank, int group, int lo, int hi, const int *deps,
                      int n_deps)
{
    if (p->build_rc || !layers_ok(p, lo, hi, "UPDATE")) return -1;
    int k = plan_group_member(p, group, rank);
    if (k < 0)
        return build_fail(p, ERR_RUN, "shard UPDATE on rank %d of group %d, which it is not in",
                          rank, group);
    int64_t params = workload_params(p->wl, lo, hi), first, last;
    plan_shard(params, p->groups.items[group].n_ranks, k, &first, &last);
    struct op op = blank_op(OP_UPDATE);
    op.lo = lo, op.hi = hi, op.group = group;
    op.flops = 4.0 * (double)(last - first);   /* as plan_update_op, on the shard */
    op.bytes = 5 * (last - first) * p->wl->elem_bytes;
    return plan_add(p, rank, op, deps, n_deps);
}

int plan_push(struct plan *p, int rank, int server, int lo, int hi, const int *deps, int n_deps)
{
    return param_op(p, OP_PUSH, rank, server, -1, lo, hi, deps, n_deps);
}

int plan_pull(struct plan *p, int rank, int server, int lo, int hi, const int *deps, int n_deps)
{
    return param_op(p, OP_PULL, rank, server, -1, lo, hi, deps, n_deps);
}

int64_t plan_comm_bytes(const struct plan *p)
{
    int64_t sum = 0;
    for (int r = 0; r < p->n_ranks; r++)
        for (size_t i = 0; i < p->ranks[r].ops.len; i++) {
            const struct op *op = &p->ranks[r].ops.items[i];
            /* bytes handed to communication: a SEND once (not its RECV), a
             * collective's buffer once per member, each push and pull */
            if (op->kind == OP_SEND || plan_is_collective(op->kind) || op->kind == OP_PUSH ||
                op->kind == OP_PULL)
                sum += op->bytes;
        }
    return sum;
}

int64_t plan_n_ops(const struct plan *p)
{
    int64_t n = 0;
    for (int r = 0; r < p->n_ranks; r++) n += (int64_t)p->ranks[r].ops.len;
    return n;
}
