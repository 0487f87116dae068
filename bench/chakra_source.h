/* A run's plan read from Chakra traces (--workload chakra:DIR) rather than
 * built by a strategy: the traces' scenario options go into the run's
 * config, their workload replaces --model's, and a strategy whose build
 * reads the traces stands in for --strategy's, so run_simulate and
 * everything it applies (--cluster, --straggler, --fail, numerics) work on
 * the traced plan unchanged. */
#ifndef STRATA_CHAKRA_SOURCE_H
#define STRATA_CHAKRA_SOURCE_H

#include <stdbool.h>
#include <stdio.h>

#include "../core/chakra_plan.h"
#include "../strategies/strategy.h"

struct chakra_source {
    struct strategy strategy;   /* name: the traces' strategy ("chakra" for other tools');
                                 * build: reads DIR again into the plan */
    char strategy_name[64];
    bool is_strata;             /* strata wrote the traces: the workload is its --model,
                                 * and the one-device baseline is the same as the run's */
    int n_ranks;
    chakra_left_outs left_out;  /* nodes the plan leaves out, by kind */
    VEC(char *) notes;          /* one line each: "3 nodes of type MEM_LOAD_NODE not
                                 * modelled: left out (...)", for stderr and --html */
};

/* Reads cfg->workload ("chakra:DIR"): sets cfg's scenario options from the
 * traces (a strata trace's own; other traces: --devices = their ranks,
 * --model = the spec, --strategy chakra), replaces *wl by the traces'
 * workload, and fills src. ERR_INPUT for a spec that is not chakra:DIR or
 * traces strata cannot read. */
int chakra_source_open(struct config *cfg, struct workload **wl, struct chakra_source *src,
                       struct err *e);
void chakra_source_release(struct chakra_source *src);

/* "warning: " and each of src->notes, a line each, to out; nothing when
 * every node was modelled. */
void chakra_source_print_left_out(FILE *out, const char *prefix,
                                  const struct chakra_source *src);

#endif
