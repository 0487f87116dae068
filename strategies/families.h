/* What each family file exports: how its strategies build their plans and
 * bound them (struct strategy's build and plan_size). registry.c's table
 * says which strategy uses which. A family builds several strategies from
 * one function where they differ only in their name or policy: a build
 * reads both from the strategy it is given. */
#ifndef STRATA_FAMILIES_H
#define STRATA_FAMILIES_H

#include "strategy.h"

strategy_build_fn mirrored_build;               /* mirrored.c */
strategy_plan_size_fn mirrored_plan_size;
strategy_build_fn pipelined_steps_build;        /* pipelined_steps.c */
strategy_build_fn mirrored_zero1_build;         /* mirrored_zero1.c */
strategy_plan_size_fn mirrored_zero1_plan_size;
strategy_build_fn ps_sync_build;                /* ps.c */
strategy_build_fn ps_async_build;
strategy_build_fn ps_ssp_build;
strategy_plan_size_fn ps_plan_size;
strategy_build_fn model_build;                  /* model.c */
strategy_plan_size_fn model_plan_size;
strategy_build_fn pipeline_gpipe_build;         /* pipeline.c */
strategy_build_fn pipeline_1f1b_build;
strategy_plan_size_fn pipeline_plan_size;
strategy_build_fn pipeline_interleaved_build;   /* pipeline_interleaved.c */
strategy_plan_size_fn pipeline_interleaved_plan_size;
strategy_build_fn pipeline_zb_build;            /* pipeline_zb.c */
strategy_plan_size_fn pipeline_zb_plan_size;

/* mirrored's plan named name, its all-reduces and update lagged lag steps
 * (core/plan.h lag): lag 0 is mirrored, lag K-1 pipelined-steps with K
 * steps in flight. mirrored.c. */
int mirrored_build_plan(const struct config *c, const struct workload *wl, const char *name,
                        int lag, struct plan **out, struct err *e);

#endif
