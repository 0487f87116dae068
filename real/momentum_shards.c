/* ZeRO-1's sharded momentum: see momentum_shards.h. */
#include <stdlib.h>

#include "momentum_shards.h"

int momentum_shards_init(struct real_ctx *ctx, struct err *e)
{
    const struct plan *p = ctx->p;
    struct mlp *m = ctx->m;
    ctx->n_momentum = m->n_params;
    ctx->momentum_at = NULL;
    if (p->ranks[ctx->rank].is_server) return 0;
    const struct plan_rank *pr = &p->ranks[ctx->rank];
    int64_t total = 0;
    int n_updates = 0;
    for (size_t i = 0; i < pr->ops.len; i++) {
        const struct op *o = &pr->ops.items[i];
        if (o->kind != OP_UPDATE) continue;
        if (o->group < 0) return 0;   /* a whole-block UPDATE: the model's block serves */
        int64_t lo, hi;
        plan_shard(mlp_param_count(m, o->lo, o->hi), p->groups.items[o->group].n_ranks,
                   plan_group_member(p, o->group, ctx->rank), &lo, &hi);
        total += hi - lo;
        n_updates++;
    }
    if (n_updates == 0) return 0;
    int64_t *at = XCALLOC(e, pr->ops.len, sizeof *at);
    float *block = at ? ctx->dev->alloc((size_t)(total > 0 ? total : 1) * sizeof(float), e) : NULL;
    if (!block) {
        free(at);
        return ERR_NOMEM;
    }
    ctx->dev->fill(block, (size_t)total, 0);
    int64_t next = 0;
    for (size_t i = 0; i < pr->ops.len; i++) {
        const struct op *o = &pr->ops.items[i];
        at[i] = -1;
        if (o->kind != OP_UPDATE) continue;
        int64_t lo, hi;
        plan_shard(mlp_param_count(m, o->lo, o->hi), p->groups.items[o->group].n_ranks,
                   plan_group_member(p, o->group, ctx->rank), &lo, &hi);
        at[i] = next;
        next += hi - lo;
    }
    ctx->dev->free(m->momentum);
    m->momentum = block;
    ctx->n_momentum = total;
    ctx->momentum_at = at;
    return 0;
}

void momentum_shards_release(struct real_ctx *ctx)
{
    free(ctx->momentum_at);
    ctx->momentum_at = NULL;
}
