/* Plans into Chakra traces: see core/chakra_write.h and docs/chakra.md.
 *
 * Attribute types follow what ASTRA-sim's feeder reads (core/chakra.h).
 * strata's own attributes (strata_*) carry what Chakra has no field for
 * (the op kind among compute kinds, layers, microbatch, stream, exact FLOPs,
 * the groups, the servers' policy), so that strata reads its own traces back
 * into the very plan it wrote; other tools ignore attributes they do not
 * know. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "chakra.h"
#include "chakra_write.h"
#include "fileio.h"
#include "pb_wire.h"
#include "plan_json.h"

/* Field numbers of the schema (third_party/chakra/et_def.proto). */
enum {
    META_VERSION = 1, META_ATTR = 2,
    NODE_ID = 1, NODE_NAME = 2, NODE_TYPE = 3, NODE_CTRL_DEPS = 4, NODE_DATA_DEPS = 5,
    NODE_ATTR = 10,
    ATTR_NAME = 1, ATTR_INT32 = 7, ATTR_INT64_LIST = 10, ATTR_INT64 = 9, ATTR_UINT64 = 13,
    ATTR_DOUBLE = 3, ATTR_BOOL = 27, ATTR_STRING = 29,
    LIST_VALUES = 1,
};

/* One attribute: name, then the value `put` writes (a oneof member). */
static void attr_begin(struct pb_buf *a, const char *name)
{
    *a = (struct pb_buf){0};
    pb_put_string(a, ATTR_NAME, name);
}

static void attr_end(struct pb_buf *msg, uint32_t field, struct pb_buf *a)
{
    pb_put_message(msg, field, a);
    pb_buf_free(a);
}

/* put_TYPE_attr(msg, field, name, v): an attribute whose value is v in the
 * oneof member `member`, as a message `field` of msg (a node's or the
 * metadata's attribute). int32 values go out as varints of their int64, as
 * protobuf writes them. */
#define ATTR_PUTTER(fn, type, put, member)                                          \
    static void fn(struct pb_buf *msg, uint32_t field, const char *name, type v)    \
    {                                                                               \
        struct pb_buf a;                                                            \
        attr_begin(&a, name);                                                       \
        put(&a, member, v);                                                         \
        attr_end(msg, field, &a);                                                   \
    }
ATTR_PUTTER(put_int64_attr, int64_t, pb_put_int64, ATTR_INT64)
ATTR_PUTTER(put_int32_attr, int32_t, pb_put_int64, ATTR_INT32)
ATTR_PUTTER(put_uint64_attr, uint64_t, pb_put_uint64, ATTR_UINT64)
ATTR_PUTTER(put_double_attr, double, pb_put_double, ATTR_DOUBLE)
ATTR_PUTTER(put_bool_attr, bool, pb_put_bool, ATTR_BOOL)
ATTR_PUTTER(put_string_attr, const char *, pb_put_string, ATTR_STRING)
#undef ATTR_PUTTER

/* Packed repeated varints (proto3's default for repeated scalars), from
 * int64s or from ints (a plan's deps and group members). */
static void put_packed(struct pb_buf *msg, uint32_t field, const int64_t *v, size_t n)
{
    struct pb_buf packed = {0};
    for (size_t i = 0; i < n; i++) pb_put_varint(&packed, (uint64_t)v[i]);
    pb_put_message(msg, field, &packed);
    pb_buf_free(&packed);
}

static void put_packed_ints(struct pb_buf *msg, uint32_t field, const int *v, size_t n)
{
    struct pb_buf packed = {0};
    for (size_t i = 0; i < n; i++) pb_put_varint(&packed, (uint64_t)(int64_t)v[i]);
    pb_put_message(msg, field, &packed);
    pb_buf_free(&packed);
}

static void put_int_list_attr(struct pb_buf *msg, uint32_t field, const char *name,
                              const int *v, size_t n)
{
    struct pb_buf a, list = {0};
    attr_begin(&a, name);
    put_packed_ints(&list, LIST_VALUES, v, n);
    pb_put_message(&a, ATTR_INT64_LIST, &list);
    pb_buf_free(&list);
    attr_end(msg, field, &a);
}

static uint64_t node_type_of(enum op_kind k)
{
    switch (op_infos[k].cls) {
    case OPC_COMPUTE: return CHAKRA_COMP_NODE;
    case OPC_COLLECTIVE: return CHAKRA_COMM_COLL_NODE;
    case OPC_P2P:
    case OPC_SERVER: return op_infos[k].dir && !strcmp(op_infos[k].dir, "to")
                                ? CHAKRA_COMM_SEND_NODE
                                : CHAKRA_COMM_RECV_NODE;
    }
    return CHAKRA_INVALID_NODE;
}

static int64_t coll_type_of(enum op_kind k)
{
    return k == OP_REDUCE_SCATTER ? CHAKRA_REDUCE_SCATTER
           : k == OP_ALL_GATHER   ? CHAKRA_ALL_GATHER
                                  : CHAKRA_ALL_REDUCE;
}

/* Where a message goes: comm_src, comm_dst, comm_tag, comm_size. */
static void put_p2p(struct pb_buf *node, int src, int dst, uint32_t tag, int64_t bytes)
{
    put_int32_attr(node, NODE_ATTR, "comm_src", src);
    put_int32_attr(node, NODE_ATTR, "comm_dst", dst);
    put_int32_attr(node, NODE_ATTR, "comm_tag", (int32_t)tag);   /* the schema's int32: same bits */
    put_int64_attr(node, NODE_ATTR, "comm_size", bytes);
}

/* Op i of worker rank r as one Node message. */
static void put_op_node(struct pb_buf *out, const struct plan *p, int r, int i,
                        int64_t prev_on_stream)
{
    const struct op *op = &p->ranks[r].ops.items[i];
    const struct op_info *info = &op_infos[op->kind];
    struct pb_buf node = {0};
    char name[96];
    int n = snprintf(name, sizeof name, "%s [%d,%d)", info->name, op->lo, op->hi);
    if (op->mb >= 0) snprintf(name + n, sizeof name - (size_t)n, " mb %d", op->mb);
    pb_put_uint64(&node, NODE_ID, (uint64_t)i);
    pb_put_string(&node, NODE_NAME, name);
    pb_put_uint64(&node, NODE_TYPE, node_type_of(op->kind));
    /* ctrl_deps: the stream's order, which Chakra has no other way to say */
    if (prev_on_stream >= 0) put_packed(&node, NODE_CTRL_DEPS, &prev_on_stream, 1);
    if (op->n_deps > 0)
        put_packed_ints(&node, NODE_DATA_DEPS, plan_deps(p, r, i), (size_t)op->n_deps);

    switch (info->cls) {
    case OPC_COMPUTE:
        put_int64_attr(&node, NODE_ATTR, "num_ops", (int64_t)llround(op->flops));
        put_uint64_attr(&node, NODE_ATTR, "tensor_size", (uint64_t)op->bytes);
        break;
    case OPC_P2P:
    case OPC_SERVER: {
        bool is_to = node_type_of(op->kind) == CHAKRA_COMM_SEND_NODE;
        put_p2p(&node, is_to ? r : op->peer, is_to ? op->peer : r, op->tag, op->bytes);
        if (info->cls == OPC_SERVER) {
            char comment[160];
            snprintf(comment, sizeof comment, "parameter-server %s: %s layers [%d,%d) %s "
                     "server rank %d (policy %s)", op->kind == OP_PUSH ? "push" : "pull",
                     op->kind == OP_PUSH ? "gradients of" : "parameters of", op->lo, op->hi,
                     op->kind == OP_PUSH ? "to" : "from", op->peer, policy_infos[p->policy].name);
            put_string_attr(&node, NODE_ATTR, "comment", comment);
        }
        break;
    }
    case OPC_COLLECTIVE: {
        char pg[32];
        snprintf(pg, sizeof pg, "strata_group_%d", op->group);
        put_int64_attr(&node, NODE_ATTR, "comm_type", coll_type_of(op->kind));
        put_int64_attr(&node, NODE_ATTR, "comm_size", op->bytes);
        put_string_attr(&node, NODE_ATTR, "pg_name", pg);
        break;
    }
    }
    /* strata's own: what makes the round trip exact */
    put_string_attr(&node, NODE_ATTR, "strata_kind", info->name);
    put_int64_attr(&node, NODE_ATTR, "strata_stream", op->stream);
    put_int_list_attr(&node, NODE_ATTR, "strata_layers", (const int[]){op->lo, op->hi}, 2);
    put_int64_attr(&node, NODE_ATTR, "strata_mb", op->mb);
    put_int64_attr(&node, NODE_ATTR, "strata_n_samples", op->n_samples);
    put_int64_attr(&node, NODE_ATTR, "strata_group", op->group);
    put_double_attr(&node, NODE_ATTR, "strata_flops", op->flops);
    put_int64_attr(&node, NODE_ATTR, "strata_bytes", op->bytes);
    if (op->lag) put_int64_attr(&node, NODE_ATTR, "strata_lag", op->lag);   /* steps in flight */
    pb_put_delimited(out, &node);
    pb_buf_free(&node);
}

/* A server's UPDATE node: its shard's optimizer step, after deps. */
static void put_server_update(struct pb_buf *out, const struct plan *p, int s, uint64_t id,
                              const int64_t *deps, size_t n_deps)
{
    struct op upd = plan_update_op(p->wl, p->ranks[s].shard_lo, p->ranks[s].shard_hi);
    struct pb_buf u = {0};
    pb_put_uint64(&u, NODE_ID, id);
    pb_put_string(&u, NODE_NAME, "server UPDATE");
    pb_put_uint64(&u, NODE_TYPE, CHAKRA_COMP_NODE);
    if (n_deps) put_packed(&u, NODE_DATA_DEPS, deps, n_deps);
    put_int64_attr(&u, NODE_ATTR, "num_ops", (int64_t)llround(upd.flops));
    put_uint64_attr(&u, NODE_ATTR, "tensor_size", (uint64_t)upd.bytes);
    pb_put_delimited(out, &u);
    pb_buf_free(&u);
}

/* A server's RECV of a push or SEND of a pull by worker w. */
static void put_server_p2p(struct pb_buf *out, const struct plan *p, int s, int w,
                           const struct op *op, uint64_t id, int64_t dep)
{
    bool is_push = op->kind == OP_PUSH;
    struct pb_buf node = {0};
    char name[96], comment[160];
    snprintf(name, sizeof name, "server %s [%d,%d) worker %d",
             is_push ? "RECV push" : "SEND pull", op->lo, op->hi, w);
    snprintf(comment, sizeof comment, "parameter-server %s worker %d (policy %s)",
             is_push ? "push: gradients from" : "pull: parameters to", w,
             policy_infos[p->policy].name);
    pb_put_uint64(&node, NODE_ID, id);
    pb_put_string(&node, NODE_NAME, name);
    pb_put_uint64(&node, NODE_TYPE, is_push ? CHAKRA_COMM_RECV_NODE : CHAKRA_COMM_SEND_NODE);
    if (dep >= 0) put_packed(&node, NODE_DATA_DEPS, &dep, 1);
    put_p2p(&node, is_push ? w : s, is_push ? s : w, op->tag, op->bytes);
    put_string_attr(&node, NODE_ATTR, "comment", comment);
    pb_put_delimited(out, &node);
    pb_buf_free(&node);
}

/* A server's program, for tools that have no server agents (ASTRA-sim):
 * a RECV per push it gets, the update, a SEND per pull. Sync and backup
 * update once after all the pushes; async and SSP once a push, as each
 * arrives. strata reads servers back as agents running the policy of the
 * metadata, not from these nodes. O(ops of all workers). */
static int put_server(struct pb_buf *out, const struct plan *p, int s, struct err *e)
{
    bool has_rounds = policy_infos[p->policy].has_rounds;
    VEC(int64_t) recvs = {0};
    uint64_t id = 0;
    int64_t last_update = -1;
    for (int pass = 0; pass < 2; pass++)   /* the pushes, then the pulls */
        for (int w = 0; w < p->n_workers; w++)
            for (size_t i = 0; i < p->ranks[w].ops.len; i++) {
                const struct op *op = &p->ranks[w].ops.items[i];
                if (op->peer != s || op->kind != (pass == 0 ? OP_PUSH : OP_PULL)) continue;
                if (pass == 1 && has_rounds && last_update < 0 && recvs.len) {
                    last_update = (int64_t)id;
                    put_server_update(out, p, s, id++, recvs.items, recvs.len);
                }
                int64_t recv_id = (int64_t)id;
                put_server_p2p(out, p, s, w, op, id++, pass == 0 ? -1 : last_update);
                if (pass == 1) continue;
                if (vec_push(&recvs, recv_id) < 0) {
                    vec_free(&recvs);
                    return err_set(e, ERR_NOMEM, "out of memory writing a Chakra trace");
                }
                if (has_rounds) continue;
                last_update = (int64_t)id;
                put_server_update(out, p, s, id++, &recv_id, 1);
            }
    vec_free(&recvs);
    return 0;
}

static void put_metadata(struct pb_buf *out, const struct plan *p, const struct config *cfg,
                         int r)
{
    struct pb_buf meta = {0};
    pb_put_string(&meta, META_VERSION, CHAKRA_VERSION);
    put_int64_attr(&meta, META_ATTR, "strata_plan", 1);
    put_string_attr(&meta, META_ATTR, "strata_strategy", p->strategy);
    put_int64_attr(&meta, META_ATTR, "strata_rank", r);
    put_int64_attr(&meta, META_ATTR, "strata_workers", p->n_workers);
    put_int64_attr(&meta, META_ATTR, "strata_servers", p->n_servers);
    put_int64_attr(&meta, META_ATTR, "strata_batch", p->batch);
    put_int64_attr(&meta, META_ATTR, "strata_microbatches", p->n_microbatches);
    put_string_attr(&meta, META_ATTR, "strata_policy", policy_infos[p->policy].name);
    put_int64_attr(&meta, META_ATTR, "strata_policy_arg", p->policy_arg);
    put_bool_attr(&meta, META_ATTR, "strata_data_parallel", p->data_parallel);
    put_bool_attr(&meta, META_ATTR, "strata_is_server", p->ranks[r].is_server);
    if (p->note[0]) put_string_attr(&meta, META_ATTR, "strata_note", p->note);
    put_int_list_attr(&meta, META_ATTR, "strata_shard",
                      (const int[]){p->ranks[r].shard_lo, p->ranks[r].shard_hi}, 2);
    for (size_t g = 0; g < p->groups.len; g++)
        put_int_list_attr(&meta, META_ATTR, "strata_group", p->groups.items[g].ranks,
                          (size_t)p->groups.items[g].n_ranks);
    /* the scenario that built the plan: the report of a run of the
     * imported plan names the same options */
    for (size_t i = 0; i < config_n_options; i++) {
        const struct opt_spec *o = &config_options[i];
        if (!(o->groups & OPTG_SCENARIO)) continue;
        char value[CONFIG_PATH_BYTES], kv[CONFIG_PATH_BYTES + 64];
        config_format(cfg, o, value, sizeof value);
        snprintf(kv, sizeof kv, "%s=%s", o->name, value);
        put_string_attr(&meta, META_ATTR, "strata_option", kv);
    }
    pb_put_delimited(out, &meta);
    pb_buf_free(&meta);
}

int chakra_check_dir(const char *dir, struct err *e)
{
    return file_check_dir_writable(dir, true, e);
}

int chakra_write_plan(const struct plan *p, const struct config *cfg, const char *dir,
                      const char *name, struct err *e)
{
    TRY(chakra_check_dir(dir, e));
    if (mkdir(dir, 0777) < 0 && errno != EEXIST)
        return err_set(e, ERR_INPUT, "cannot make directory '%s': %s", dir, strerror(errno));
    for (int r = 0; r < p->n_ranks; r++) {
        struct pb_buf out = {0};
        put_metadata(&out, p, cfg, r);
        int rc = 0;
        if (p->ranks[r].is_server) {
            rc = put_server(&out, p, r, e);
        } else {
            int64_t last[PLAN_N_STREAMS] = {-1, -1};
            for (size_t i = 0; i < p->ranks[r].ops.len; i++) {
                int stream = p->ranks[r].ops.items[i].stream;
                put_op_node(&out, p, r, (int)i, last[stream]);
                last[stream] = (int64_t)i;
            }
        }
        char path[CONFIG_PATH_BYTES + 96];
        snprintf(path, sizeof path, "%s/%s.%d.et", dir, name, r);
        if (rc == 0) rc = pb_buf_status(&out, e);
        if (rc == 0) rc = file_write_atomic(path, out.data, out.len, e);
        pb_buf_free(&out);
        TRY(rc);
    }
    return 0;
}
