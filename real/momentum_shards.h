/* ZeRO-1's momentum for real (core/plan.h "Shards"): a rank whose every
 * UPDATE steps only its shard of a group keeps the momentum of those shards
 * alone, back to back in program order, instead of the model's whole block:
 * the (N-1)/N saving the plan's memory model counts (core/plan_memory.c).
 * Any other rank keeps the whole block, addressed by parameter offset. */
#ifndef STRATA_MOMENTUM_SHARDS_H
#define STRATA_MOMENTUM_SHARDS_H

#include <stdint.h>

#include "../core/err.h"
#include "real_ctx.h"

/* Lays out ctx->rank's momentum: when every UPDATE of its program is a
 * shard UPDATE, replaces ctx->m->momentum (n_params floats) with a zeroed
 * block of its shards' floats, ctx->n_momentum of them, and fills
 * ctx->momentum_at[i] for each of them; otherwise leaves the model's block,
 * n_momentum = n_params. Call before any step or checkpoint restore. */
int momentum_shards_init(struct real_ctx *ctx, struct err *e);

/* Frees momentum_at (the block itself is the model's: mlp_free frees it). */
void momentum_shards_release(struct real_ctx *ctx);

/* Where the momentum of shard UPDATE op i (of ctx->rank) starts in
 * ctx->m->momentum; lo is the shard's first element within [o->lo, o->hi)'s
 * block, as plan_shard gives it. */
static inline float *momentum_of_shard(const struct real_ctx *ctx, int i, int64_t block_at,
                                       int64_t lo)
{
    return ctx->momentum_at ? ctx->m->momentum + ctx->momentum_at[i]
                            : ctx->m->momentum + block_at + lo;
}

#endif
