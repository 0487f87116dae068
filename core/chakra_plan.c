/* Chakra traces into a plan: see core/chakra_plan.h and docs/chakra.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra_plan.h"
#include "plan_check.h"

static int64_t meta_int(const struct chakra_file *f, const char *name, int64_t def)
{
    return chakra_attr_int(&f->attrs, name, def);
}

/* --- nodes into ops ----------------------------------------------------------- */

/* A node's integer attribute, or def. */
static int64_t node_int(const struct chakra_node *n, const char *name, int64_t def)
{
    return chakra_attr_int(&n->attrs, name, def);
}

static bool node_has(const struct chakra_node *n, const char *name)
{
    return chakra_attr_find(&n->attrs, name) != NULL;
}

/* Node ids into positions in the file: sorted (id, position) pairs. */
struct id_pos {
    uint64_t id;
    size_t pos;
};

static int cmp_id(const void *a, const void *b)
{
    const struct id_pos *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int index_ids(const struct chakra_file *f, const char *path, struct id_pos **out,
                     struct err *e)
{
    size_t n = f->nodes.len;
    struct id_pos *ix = malloc((n ? n : 1) * sizeof *ix);
    if (!ix) return err_set(e, ERR_NOMEM, "out of memory indexing %s", path);
    for (size_t i = 0; i < n; i++) ix[i] = (struct id_pos){f->nodes.items[i].id, i};
    qsort(ix, n, sizeof *ix, cmp_id);
    for (size_t i = 1; i < n; i++)
        if (ix[i].id == ix[i - 1].id) {
            uint64_t id = ix[i].id;
            free(ix);
            return err_set(e, ERR_INPUT, "%s: two nodes have id %llu", path,
                           (unsigned long long)id);
        }
    *out = ix;
    return 0;
}

static long find_pos(const struct id_pos *ix, size_t n, int64_t id)
{
    struct id_pos key = {(uint64_t)id, 0};
    const struct id_pos *hit = bsearch(&key, ix, n, sizeof *ix, cmp_id);
    return hit ? (long)hit->pos : -1;
}

/* One rank's reading: positions in dependency order, each node's op
 * index (-1: left out) and, for a left-out node, the ops it waited for. */
typedef VEC(int) int_vec;
struct rank_read {
    const struct chakra_file *f;
    const char *path;
    struct id_pos *ids;
    size_t *order;        /* [n]: positions, deps first */
    int *op_of;           /* [n] */
    int_vec *inherited;   /* [n]: a left-out node's deps, as ops */
};

static void rank_read_free(struct rank_read *rr, size_t n)
{
    free(rr->ids);
    free(rr->order);
    free(rr->op_of);
    if (rr->inherited)
        for (size_t i = 0; i < n; i++) vec_free(&rr->inherited[i]);
    free(rr->inherited);
}

/* The deps of node i, ctrl_deps then data_deps, as positions. */
static int dep_pos(const struct rank_read *rr, size_t i, size_t k, long *pos, struct err *e)
{
    const struct chakra_node *n = &rr->f->nodes.items[i];
    int64_t id = k < n->ctrl_deps.len ? n->ctrl_deps.items[k]
                                      : n->data_deps.items[k - n->ctrl_deps.len];
    *pos = find_pos(rr->ids, rr->f->nodes.len, id);
    if (*pos < 0)
        return err_set(e, ERR_INPUT, "%s: node %llu depends on node %llu, which is not in the "
                       "file", rr->path, (unsigned long long)n->id, (unsigned long long)id);
    return 0;
}

static size_t n_deps_of(const struct chakra_node *n)
{
    return n->ctrl_deps.len + n->data_deps.len;
}

/* Dependency order, by an iterative depth-first search from each node in
 * file order: a file already in order (strata's, Chakra's converters')
 * keeps it. A cycle is ERR_INPUT. O(nodes + deps). */
static int order_nodes(struct rank_read *rr, struct err *e)
{
    size_t n = rr->f->nodes.len, done = 0;
    unsigned char *state = calloc(n ? n : 1, 1);   /* 0 new, 1 on the path, 2 placed */
    size_t *stack = malloc((n ? n : 1) * sizeof *stack), *next = calloc(n ? n : 1, sizeof *next);
    int rc = state && stack && next ? 0 : err_set(e, ERR_NOMEM, "out of memory ordering %s",
                                                  rr->path);
    for (size_t root = 0; rc == 0 && root < n; root++) {
        if (state[root]) continue;
        size_t top = 0;
        stack[top++] = root;
        state[root] = 1;
        while (rc == 0 && top > 0) {
            size_t i = stack[top - 1];
            if (next[i] == n_deps_of(&rr->f->nodes.items[i])) {
                state[i] = 2;
                rr->order[done++] = i;
                top--;
                continue;
            }
            long d;
            if ((rc = dep_pos(rr, i, next[i]++, &d, e)) < 0) break;
            if (state[d] == 1)
                rc = err_set(e, ERR_INPUT, "%s: node %llu depends on itself through its "
                             "dependencies (a cycle)", rr->path,
                             (unsigned long long)rr->f->nodes.items[d].id);
            else if (state[d] == 0) {
                state[d] = 1;
                stack[top++] = (size_t)d;
            }
        }
    }
    free(state);
    free(stack);
    free(next);
    return rc;
}

static int add_unique(int_vec *v, int x)
{
    for (size_t i = 0; i < v->len; i++)
        if (v->items[i] == x) return 0;
    return vec_push(v, x);
}

/* Node i's deps as op indices: kept nodes' ops, and for left-out ones what
 * they waited for. Strata's traces use data_deps only (their ctrl_deps
 * repeat the stream order that the plan keeps anyway). */
static int resolve_deps(const struct rank_read *rr, size_t i, bool is_strata, int_vec *out,
                        struct err *e)
{
    const struct chakra_node *n = &rr->f->nodes.items[i];
    out->len = 0;
    for (size_t k = is_strata ? n->ctrl_deps.len : 0; k < n_deps_of(n); k++) {
        long d;
        TRY(dep_pos(rr, i, k, &d, e));
        if (rr->op_of[d] >= 0) {
            if (add_unique(out, rr->op_of[d]) < 0) return err_set(e, ERR_NOMEM, "out of memory");
            continue;
        }
        const int_vec *via = &rr->inherited[d];
        for (size_t j = 0; j < via->len; j++)
            if (add_unique(out, via->items[j]) < 0) return err_set(e, ERR_NOMEM, "out of memory");
    }
    return 0;
}

static int count_left_out(chakra_left_outs *lo, const char *what, struct err *e)
{
    if (!lo) return 0;
    for (size_t i = 0; i < lo->len; i++)
        if (!strcmp(lo->items[i].what, what)) {
            lo->items[i].count++;
            return 0;
        }
    struct chakra_left_out x = {.count = 1};
    snprintf(x.what, sizeof x.what, "%s", what);
    return vec_push(lo, x) < 0 ? err_set(e, ERR_NOMEM, "out of memory") : 0;
}

static enum op_kind kind_named(const char *name)
{
    for (int k = 0; k < OP_N_KINDS; k++)
        if (!strcmp(op_infos[k].name, name)) return (enum op_kind)k;
    return OP_N_KINDS;
}

/* A strata node back into its op, exactly. */
static int strata_op(const struct rank_read *rr, const struct chakra_node *n, int n_ranks,
                     int batch, int n_mb, struct op *op, struct err *e)
{
    const struct chakra_attr *kind = chakra_attr_find(&n->attrs, "strata_kind");
    const struct chakra_attr *layers = chakra_attr_find(&n->attrs, "strata_layers");
    const struct chakra_attr *flops = chakra_attr_find(&n->attrs, "strata_flops");
    if (!kind || kind->kind != CHAKRA_ATTR_STRING || kind_named(kind->s) == OP_N_KINDS ||
        !layers || layers->kind != CHAKRA_ATTR_INT_LIST || layers->list.len != 2 || !flops ||
        flops->kind != CHAKRA_ATTR_DOUBLE)
        return err_set(e, ERR_INPUT, "%s: node %llu lacks strata's attributes (strata_kind, "
                       "strata_layers, strata_flops) though the metadata says strata wrote it",
                       rr->path, (unsigned long long)n->id);
    *op = (struct op){
        .kind = kind_named(kind->s),
        .stream = (int)node_int(n, "strata_stream", 0),
        .lo = (int)layers->list.items[0],
        .hi = (int)layers->list.items[1],
        .mb = (int)node_int(n, "strata_mb", -1),
        .n_samples = (int)node_int(n, "strata_n_samples", 0),
        .peer = -1,
        .group = (int)node_int(n, "strata_group", -1),
        .bytes = node_int(n, "strata_bytes", 0),
        .flops = flops->d,
    };
    enum op_class cls = op_infos[op->kind].cls;
    if (cls == OPC_P2P || cls == OPC_SERVER) {
        bool is_send = n->type == CHAKRA_COMM_SEND_NODE;
        op->peer = (int)node_int(n, is_send ? "comm_dst" : "comm_src", -1);
        op->tag = (uint32_t)node_int(n, "comm_tag", 0);
    }
    if (op->stream < 0 || op->stream >= PLAN_N_STREAMS || (op->peer >= n_ranks))
        return err_set(e, ERR_INPUT, "%s: node %llu: stream %d or peer %d out of range", rr->path,
                       (unsigned long long)n->id, op->stream, op->peer);
    /* what plan_check leaves to the builders, which a file cannot be
     * trusted with: the arithmetic (--numerics) slices the batch by these */
    bool is_compute = op_infos[op->kind].cls == OPC_COMPUTE;
    if (op->n_samples < 0 || op->n_samples > batch || op->mb < -1 ||
        (is_compute && op->mb >= n_mb) || op->mb > PLAN_MAX_MB || op->bytes < 0 ||
        !(op->flops >= 0 && op->flops < 1e300))
        return err_set(e, ERR_INPUT, "%s: node %llu (%s): samples %d, microbatch %d, bytes %lld "
                       "or FLOPs %g out of range (batch %d in %d microbatches)", rr->path,
                       (unsigned long long)n->id, op_infos[op->kind].name, op->n_samples, op->mb,
                       (long long)op->bytes, op->flops, batch, n_mb);
    return 0;
}

/* Another tool's node as an op, or why it is left out (*left != NULL). */
static int foreign_op(const struct rank_read *rr, const struct chakra_node *n, int r,
                      int n_ranks, int n_layers, int *all_group, struct plan *p, struct op *op,
                      const char **left, char *left_buf, size_t left_n, struct err *e)
{
    *left = NULL;
    *op = (struct op){.lo = 0, .hi = n_layers, .mb = -1, .peer = -1, .group = -1};
    const char *type = chakra_node_type_name(n->type);
    switch (n->type) {
    case CHAKRA_COMP_NODE:
        op->kind = OP_FORWARD;
        op->stream = STREAM_COMPUTE;
        op->flops = (double)node_int(n, "num_ops", 0);
        op->bytes = node_int(n, "tensor_size", 0);
        op->time_s = (double)n->duration_micros * 1e-6;
        if (op->flops < 0 || op->bytes < 0)
            return err_set(e, ERR_INPUT, "%s: COMP_NODE %llu: num_ops %g or tensor_size %lld "
                           "is negative", rr->path, (unsigned long long)n->id, op->flops,
                           (long long)op->bytes);
        return 0;
    case CHAKRA_COMM_SEND_NODE:
    case CHAKRA_COMM_RECV_NODE: {
        bool is_send = n->type == CHAKRA_COMM_SEND_NODE;
        const char *who = is_send ? "comm_dst" : "comm_src";
        if (!node_has(n, who))
            return err_set(e, ERR_INPUT, "%s: %s %llu has no %s", rr->path, type,
                           (unsigned long long)n->id, who);
        int64_t peer = node_int(n, who, -1);
        if (peer < 0 || peer >= n_ranks || peer == r)
            return err_set(e, ERR_INPUT, "%s: %s %llu: %s %lld is not another rank of the "
                           "trace (0 to %d)", rr->path, type, (unsigned long long)n->id, who,
                           (long long)peer, n_ranks - 1);
        /* a plan's tag names a layer boundary and a microbatch; a trace's
         * is any number the pair agreed on: kept as the microbatch */
        int64_t tag = node_int(n, "comm_tag", 0);
        if (tag < 0 || tag > PLAN_MAX_MB)
            return err_set(e, ERR_INPUT, "%s: %s %llu: comm_tag %lld is outside the 0 to %d "
                           "strata models", rr->path, type, (unsigned long long)n->id,
                           (long long)tag, PLAN_MAX_MB);
        op->kind = is_send ? OP_SEND : OP_RECV;
        op->stream = STREAM_COMM;
        op->peer = (int)peer;
        op->lo = op->hi = 0;   /* the boundary of the tag */
        op->mb = (int)tag;
        op->tag = plan_tag(TAG_ACT, 0, (int)tag);
        op->bytes = node_int(n, "comm_size", node_int(n, "tensor_size", 0));
        break;
    }
    case CHAKRA_COMM_COLL_NODE: {
        int64_t ct = node_int(n, "comm_type", -1);
        enum op_kind k = ct == CHAKRA_ALL_REDUCE       ? OP_ALLREDUCE
                         : ct == CHAKRA_REDUCE_SCATTER ? OP_REDUCE_SCATTER
                         : ct == CHAKRA_ALL_GATHER     ? OP_ALL_GATHER
                                                       : OP_N_KINDS;
        if (k == OP_N_KINDS) {
            const char *cn = chakra_coll_type_name(ct);
            if (cn) snprintf(left_buf, left_n, "COMM_COLL_NODE %s", cn);
            else snprintf(left_buf, left_n, "COMM_COLL_NODE comm_type %lld", (long long)ct);
            *left = left_buf;
            return 0;
        }
        if (*all_group < 0) {   /* no group membership in the schema: every rank */
            int *ranks = malloc((size_t)n_ranks * sizeof *ranks);
            if (!ranks) return err_set(e, ERR_NOMEM, "out of memory");
            for (int i = 0; i < n_ranks; i++) ranks[i] = i;
            *all_group = plan_add_group(p, ranks, n_ranks);
            free(ranks);
        }
        op->kind = k;
        op->stream = STREAM_COMM;
        op->group = *all_group;
        op->bytes = node_int(n, "comm_size", 0);
        break;
    }
    default:
        if (type) snprintf(left_buf, left_n, "%s", type);
        else snprintf(left_buf, left_n, "node type %llu", (unsigned long long)n->type);
        *left = left_buf;
        return 0;
    }
    if (op->bytes < 0)
        return err_set(e, ERR_INPUT, "%s: %s %llu: comm_size %lld is negative", rr->path, type,
                       (unsigned long long)n->id, (long long)op->bytes);
    return 0;
}

static int read_rank(const struct chakra_trace *t, int r, struct plan *p, int *all_group,
                     chakra_left_outs *left_out, struct err *e)
{
    const struct chakra_file *f = &t->files[r];
    size_t n = f->nodes.len;
    char path[CONFIG_PATH_BYTES + 300];
    chakra_trace_path(t, r, path, sizeof path);
    struct rank_read rr = {.f = f, .path = path};
    int_vec deps = {0};
    int rc = index_ids(f, path, &rr.ids, e);
    if (rc == 0) {
        rr.order = malloc((n ? n : 1) * sizeof *rr.order);
        rr.op_of = malloc((n ? n : 1) * sizeof *rr.op_of);
        rr.inherited = calloc(n ? n : 1, sizeof *rr.inherited);
        if (!rr.order || !rr.op_of || !rr.inherited)
            rc = err_set(e, ERR_NOMEM, "out of memory reading %s", path);
    }
    if (rc == 0) rc = order_nodes(&rr, e);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        size_t i = rr.order[k];
        const struct chakra_node *node = &f->nodes.items[i];
        struct op op;
        const char *left = NULL;
        char left_buf[64];
        rc = t->is_strata ? strata_op(&rr, node, p->n_ranks, p->batch, p->n_microbatches, &op, e)
                          : foreign_op(&rr, node, r, p->n_ranks, p->wl->n_layers, all_group, p,
                                       &op, &left, left_buf, sizeof left_buf, e);
        if (rc == 0) rc = resolve_deps(&rr, i, t->is_strata, &deps, e);
        if (rc < 0) break;
        rr.op_of[i] = -1;
        if (left) {
            rc = count_left_out(left_out, left, e);
            for (size_t j = 0; rc == 0 && j < deps.len; j++)
                if (vec_push(&rr.inherited[i], deps.items[j]) < 0)
                    rc = err_set(e, ERR_NOMEM, "out of memory");
            continue;
        }
        rr.op_of[i] = plan_add(p, r, op, deps.items, (int)deps.len);
        /* pipelined-steps: the op works on an earlier step's gradients;
         * plan_set_lag also sizes the plan's gradient blocks */
        int64_t lag = t->is_strata ? node_int(node, "strata_lag", 0) : 0;
        if (rr.op_of[i] >= 0 && (lag < 0 || lag > PLAN_MAX_LAG))
            rc = err_set(e, ERR_INPUT, "%s: node %llu: strata_lag %lld is outside 0 to %d", path,
                         (unsigned long long)node->id, (long long)lag, PLAN_MAX_LAG);
        else if (rr.op_of[i] >= 0 && lag > 0)
            plan_set_lag(p, r, rr.op_of[i], (int)lag);
        if (rc < 0 || rr.op_of[i] < 0) break;   /* else the plan's sticky error says why */
    }
    vec_free(&deps);
    rank_read_free(&rr, n);
    return rc;
}

static int cmp_left_out(const void *a, const void *b)
{
    return strcmp(((const struct chakra_left_out *)a)->what,
                  ((const struct chakra_left_out *)b)->what);
}

/* The plan's shape from a strata trace's metadata: servers' policy and
 * shards, the groups. */
static int strata_shape(const struct chakra_trace *t, struct plan *p, struct err *e)
{
    const struct chakra_file *f0 = &t->files[0];
    char path[CONFIG_PATH_BYTES + 300];   /* rank 0's file, whose metadata says the shape */
    chakra_trace_path(t, 0, path, sizeof path);
    const struct chakra_attr *pol = chakra_attr_find(&f0->attrs, "strata_policy");
    int policy = POLICY_N_KINDS;
    for (int k = 0; pol && pol->kind == CHAKRA_ATTR_STRING && k < POLICY_N_KINDS; k++)
        if (!strcmp(policy_infos[k].name, pol->s)) policy = k;
    if (policy == POLICY_N_KINDS)
        return err_set(e, ERR_INPUT, "--workload: %s: metadata strata_policy '%s' is not a "
                       "server policy of this strata", path, pol && pol->s ? pol->s : "");
    p->policy = (enum server_policy)policy;
    p->policy_arg = (int)meta_int(f0, "strata_policy_arg", 0);
    p->data_parallel = meta_int(f0, "strata_data_parallel", 0) != 0;
    const struct chakra_attr *note = chakra_attr_find(&f0->attrs, "strata_note");
    if (note && note->kind == CHAKRA_ATTR_STRING)
        snprintf(p->note, sizeof p->note, "%s", note->s);
    for (size_t i = 0; i < f0->attrs.len; i++) {
        const struct chakra_attr *g = &f0->attrs.items[i];
        if (strcmp(g->name, "strata_group") || g->kind != CHAKRA_ATTR_INT_LIST) continue;
        int ranks_n = (int)g->list.len;
        int *ranks = malloc((size_t)(ranks_n ? ranks_n : 1) * sizeof *ranks);
        if (!ranks) return err_set(e, ERR_NOMEM, "out of memory");
        bool is_ok = ranks_n > 0;
        for (int k = 0; k < ranks_n; k++) {
            is_ok = is_ok && g->list.items[k] >= 0 && g->list.items[k] < p->n_ranks;
            ranks[k] = (int)g->list.items[k];
        }
        if (is_ok) plan_add_group(p, ranks, ranks_n);
        free(ranks);
        if (!is_ok)
            return err_set(e, ERR_INPUT, "--workload: %s: a metadata strata_group names a rank "
                           "outside 0 to %d", path, p->n_ranks - 1);
    }
    for (int r = p->n_workers; r < p->n_ranks; r++) {
        const struct chakra_attr *s = chakra_attr_find(&t->files[r].attrs, "strata_shard");
        if (!s || s->kind != CHAKRA_ATTR_INT_LIST || s->list.len != 2) {
            chakra_trace_path(t, r, path, sizeof path);
            return err_set(e, ERR_INPUT, "--workload: %s: server rank %d's metadata has no "
                           "strata_shard (two integers, its layers lo and hi)", path, r);
        }
        p->ranks[r].shard_lo = (int)s->list.items[0];
        p->ranks[r].shard_hi = (int)s->list.items[1];
    }
    return 0;
}

int chakra_trace_plan(const struct chakra_trace *t, const struct workload *wl, int batch,
                      struct plan **out, chakra_left_outs *left_out, struct err *e)
{
    *out = NULL;
    int n_workers = t->n_files, n_servers = 0, n_mb = 1;
    if (t->is_strata) {
        const struct chakra_file *f0 = &t->files[0];
        n_workers = (int)meta_int(f0, "strata_workers", -1);
        n_servers = (int)meta_int(f0, "strata_servers", -1);
        batch = (int)meta_int(f0, "strata_batch", -1);
        n_mb = (int)meta_int(f0, "strata_microbatches", -1);
        if (n_workers < 1 || n_servers < 0 || batch < 1 || n_mb < 1 ||
            (long long)n_workers + n_servers != t->n_files) {
            char path[CONFIG_PATH_BYTES + 300];
            chakra_trace_path(t, 0, path, sizeof path);
            return err_set(e, ERR_INPUT, "--workload: %s: the metadata says %d workers and %d "
                           "servers (batch %d, %d microbatches: each 1 or more, servers 0 or "
                           "more) but %s holds %d files", path, n_workers, n_servers, batch,
                           n_mb, t->dir, t->n_files);
        }
    }
    struct plan *p = plan_create(chakra_trace_strategy(t), wl, n_workers, n_servers, batch,
                                 n_mb, e);
    if (!p) return e->code;
    int rc = t->is_strata ? strata_shape(t, p, e) : 0;
    int all_group = -1;
    for (int r = 0; rc == 0 && r < n_workers; r++)
        rc = read_rank(t, r, p, &all_group, left_out, e);
    if (rc == 0 && plan_build_status(p, e) < 0) {   /* the trace is input: exit 2 */
        err_prefix(e, "--workload: %s", t->dir);
        rc = e->code = ERR_INPUT;
    }
    if (rc == 0 && left_out && left_out->len > 1)   /* qsort of NULL is undefined */
        qsort(left_out->items, left_out->len, sizeof *left_out->items, cmp_left_out);
    struct plan_verdict v;
    if (rc == 0) rc = plan_check(p, &v, e);
    char first[CONFIG_PATH_BYTES + 300];   /* the file of the first defect's rank */
    if (rc == 0 && !v.is_valid) {
        if (v.defects[0].rank >= 0 && v.defects[0].rank < t->n_files)
            chakra_trace_path(t, v.defects[0].rank, first, sizeof first);
        else   /* a defect of no one rank: the traces together */
            snprintf(first, sizeof first, "%s", t->dir);
    }
    if (rc == 0 && !v.is_valid)
        rc = err_set(e, ERR_INPUT, "--workload: %s: the traces are not a plan strata can run "
                     "(%d defect%s; the first: rank %d op %d: %s)", first, v.n_defects,
                     v.n_defects == 1 ? "" : "s", v.defects[0].rank, v.defects[0].op,
                     v.defects[0].msg);
    if (rc < 0) {
        plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}
