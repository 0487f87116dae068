/* The strategies each family file exports; registry.c lists them. */
#ifndef STRATA_FAMILIES_H
#define STRATA_FAMILIES_H

#include "strategy.h"

extern const struct strategy strategy_mirrored;        /* mirrored.c */
extern const struct strategy strategy_mirrored_zero1;  /* mirrored_zero1.c */
extern const struct strategy strategy_ps_sync;         /* ps.c */
extern const struct strategy strategy_ps_async;
extern const struct strategy strategy_ps_ssp;
extern const struct strategy strategy_model;           /* model.c */
extern const struct strategy strategy_pipeline_gpipe;  /* pipeline.c */
extern const struct strategy strategy_pipeline_1f1b;
extern const struct strategy strategy_pipeline_interleaved;   /* pipeline_interleaved.c */
extern const struct strategy strategy_pipeline_zb;            /* pipeline_zb.c */
extern const struct strategy strategy_pipelined_steps;        /* pipelined_steps.c */

/* mirrored's plan named name, its all-reduces and update lagged lag steps
 * (core/plan.h lag): lag 0 is mirrored, lag K-1 pipelined-steps with K
 * steps in flight. mirrored.c. */
int mirrored_build_plan(const struct config *c, const struct workload *wl, const char *name,
                        int lag, struct plan **out, struct err *e);

/* mirrored's plan_size, whatever its lag: a forward, a backward and an
 * all-reduce per bucket and the update a worker (3 ops on one device).
 * mirrored.c. */
void mirrored_plan_size(const struct config *c, const struct workload *wl,
                        struct budget_plan *out);

#endif
