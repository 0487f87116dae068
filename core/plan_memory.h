/* The memory a plan needs per device, from its program alone:
 *   params      parameters of the layers the rank computes (elem_bytes each)
 *   grads       one gradient per parameter
 *   optimizer   SGD momentum: one value per parameter, on ranks that UPDATE
 *               (parameter-server workers keep none: the servers do); a shard
 *               UPDATE (ZeRO-1) keeps the momentum of its shard only, 1/N of
 *               the layers' in a group of N
 *   activations the largest sum, over the program in order, of the saved
 *               activations of microbatches whose FORWARD has run and whose
 *               BACKWARD (or BACKWARD_WEIGHT, its weight half) has not: GPipe
 *               holds all M microbatches on a stage, 1F1B at most the number
 *               of stages
 *   peak        their sum */
#ifndef STRATA_PLAN_MEMORY_H
#define STRATA_PLAN_MEMORY_H

#include <stdint.h>

#include "plan.h"

struct plan_memory {
    int64_t params, grads, optimizer, activations, peak;
};

/* Memory of one worker rank (zeros for servers). */
void plan_memory_rank(const struct plan *p, int rank, struct plan_memory *m);

/* The worker rank with the largest peak: what one device must hold. */
void plan_memory_max(const struct plan *p, struct plan_memory *m);

#endif
