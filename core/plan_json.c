#include <stdio.h>

#include "plan_json.h"

void plan_tag_format(uint32_t tag, char *buf, size_t n)
{
    snprintf(buf, n, "%s@%d/mb%d", plan_tag_kind(tag) == TAG_ACT ? "ACT" : "GRAD",
             plan_tag_boundary(tag), plan_tag_mb(tag));
}

const char *plan_stream_name(int stream)
{
    return stream == STREAM_COMPUTE ? "compute" : stream == STREAM_COMM ? "comm" : "?";
}

static cJSON *op_to_json(const struct plan *p, int r, int i)
{
    const struct op *op = &p->ranks[r].ops.items[i];
    enum op_class cls = op_infos[op->kind].cls;
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    cJSON_AddNumberToObject(j, "index", i);
    cJSON_AddStringToObject(j, "op", op_infos[op->kind].name);
    cJSON_AddStringToObject(j, "stream", plan_stream_name(op->stream));
    cJSON_AddNumberToObject(j, "lo", op->lo);
    cJSON_AddNumberToObject(j, "hi", op->hi);
    if (op->mb >= 0) cJSON_AddNumberToObject(j, "mb", op->mb);
    if (op->n_samples) cJSON_AddNumberToObject(j, "samples", op->n_samples);
    if (op->peer >= 0) cJSON_AddNumberToObject(j, "peer", op->peer);
    if (op->group >= 0) cJSON_AddNumberToObject(j, "group", op->group);
    if (op->lag > 0) cJSON_AddNumberToObject(j, "lag", op->lag);
    if (cls == OPC_P2P) {
        char tag[48];
        plan_tag_format(op->tag, tag, sizeof tag);
        cJSON_AddStringToObject(j, "tag", tag);
    }
    cJSON_AddNumberToObject(j, "bytes", (double)op->bytes);
    if (cls == OPC_COMPUTE) cJSON_AddNumberToObject(j, "flops", op->flops);
    cJSON *deps = cJSON_AddArrayToObject(j, "deps");
    const int *d = plan_deps(p, r, i);
    for (int k = 0; deps && k < op->n_deps; k++)
        cJSON_AddItemToArray(deps, cJSON_CreateNumber(d[k]));
    return j;
}

cJSON *plan_to_json(const struct plan *p)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddNumberToObject(root, "strata_plan", PLAN_JSON_VERSION);
    cJSON_AddStringToObject(root, "strategy", p->strategy);
    cJSON_AddStringToObject(root, "model", p->wl->canonical);
    cJSON_AddNumberToObject(root, "workers", p->n_workers);
    cJSON_AddNumberToObject(root, "servers", p->n_servers);
    cJSON_AddNumberToObject(root, "batch", p->batch);
    cJSON_AddNumberToObject(root, "microbatches", p->n_microbatches);
    cJSON_AddStringToObject(root, "policy", policy_infos[p->policy].name);
    cJSON_AddNumberToObject(root, "policy_arg", p->policy_arg);
    if (p->n_grad_slots > 1) cJSON_AddNumberToObject(root, "grad_slots", p->n_grad_slots);
    cJSON *groups = cJSON_AddArrayToObject(root, "groups");
    for (size_t g = 0; groups && g < p->groups.len; g++)
        cJSON_AddItemToArray(groups, cJSON_CreateIntArray(p->groups.items[g].ranks,
                                                          p->groups.items[g].n_ranks));
    cJSON *ranks = cJSON_AddArrayToObject(root, "ranks");
    for (int r = 0; ranks && r < p->n_ranks; r++) {
        const struct plan_rank *pr = &p->ranks[r];
        cJSON *jr = cJSON_CreateObject();
        if (!jr) break;
        cJSON_AddItemToArray(ranks, jr);
        cJSON_AddNumberToObject(jr, "rank", r);
        cJSON_AddStringToObject(jr, "role", pr->is_server ? "server" : "worker");
        if (pr->is_server) {
            int shard[2] = {pr->shard_lo, pr->shard_hi};
            cJSON_AddItemToObject(jr, "shard", cJSON_CreateIntArray(shard, 2));
        }
        cJSON *ops = cJSON_AddArrayToObject(jr, "ops");
        for (size_t i = 0; ops && i < pr->ops.len; i++)
            cJSON_AddItemToArray(ops, op_to_json(p, r, (int)i));
    }
    /* cJSON's Add* calls report failure only through NULL returns; a tree that
     * lost a node to out-of-memory must not be written as if whole. */
    if (!groups || !ranks || cJSON_GetArraySize(ranks) != p->n_ranks) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}
