/* The plan executor in virtual time. It runs a plan for `steps` steps on a
 * cluster: each rank's streams in program order, deps, SEND -> RECV
 * through the network's shared links, collectives that start when their last
 * member arrives, parameter-server agents running core/ps_policy, stragglers
 * and a failure. Every executed op becomes a span for the analysis and, if
 * asked, the kept trace. One switch over op kinds; no strategy is named.
 *
 * Failures: when rank R dies at T, an asynchronous parameter-server run
 * (async, ssp) carries on with the other workers: what the servers accepted
 * stays; R's unfinished work is lost. Any other run restarts every rank at T
 * from the last checkpoint (--checkpoint-every steps; step 0 when none),
 * redoing the steps since: the time lost is T minus the time that checkpoint
 * was complete. */
#ifndef STRATA_SIMULATE_H
#define STRATA_SIMULATE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/analysis.h"
#include "../core/err.h"
#include "../core/plan.h"
#include "../core/straggler.h"
#include "../core/trace.h"
#include "cluster.h"

struct sim_setup {
    const struct plan *plan;
    const struct cluster *cluster;        /* laid out for the plan's ranks */
    int steps;
    uint64_t seed;
    const struct straggler_spec *straggler;   /* NULL = none */
    struct failure_spec failure;
    int checkpoint_every;                 /* 0 = never */
};

struct sim_result {
    double makespan_s;         /* when the last op of the last step ended */
    uint64_t n_events;         /* events processed: the speed benchmark's unit */
    bool failed;               /* a failure happened during the run */
    int failed_rank;
    double failure_time_s;
    double lost_s;             /* synchronous restart: time of the work redone */
    int steps_redone;
};

/* Runs the setup; spans go to a (may be NULL) and t (may be NULL). */
int simulate(const struct sim_setup *s, struct analysis *a, struct trace *t,
             struct sim_result *res, struct err *e);

#endif
