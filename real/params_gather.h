/* Private to real/: who holds the current parameters of each layer, and
 * gathering them on rank 0 for evaluation and --save-params
 * (real/params_gather.c). */
#ifndef STRATA_REAL_PARAMS_GATHER_H
#define STRATA_REAL_PARAMS_GATHER_H

#include <stdbool.h>

#include "../core/err.h"
#include "../core/plan.h"
#include "real_ctx.h"

/* Rank that holds the current parameters of layer l: at the end
 * (is_final), a server holding it; otherwise, and where no server does, the
 * lowest worker that UPDATEs or PULLs it. */
int params_owner(const struct plan *p, int layer, bool is_final);
/* Collective over the owners and rank 0: rank 0's model receives every
 * layer it does not own. */
int params_gather(struct real_ctx *ctx, bool is_final, struct err *e);

#endif
