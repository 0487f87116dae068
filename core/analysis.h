/* One analysis for every trace, simulated or real: spans in, report out.
 * It keeps O(ranks + steps) state, not the spans, so a million-span run is
 * analysed in one pass.
 *
 * Definitions (per worker rank, over the run's makespan T):
 *   compute   time its compute stream is busy
 *   comm      time its comm stream is busy while its compute stream is not
 *             (communication that overlaps computation is hidden, as DDP hides it)
 *   idle      T - compute - comm: waiting for data, peers, servers, the pipeline
 *   breakdown the sums of these over workers, divided by workers x T (sum 1)
 *   bubble    idle share of compute, 1 - compute / T, averaged over the
 *             workers that hold a stage (run only some of the layers): pipeline
 *             and model ranks; 0 for data parallelism, whose replicas wait but
 *             have no bubble (GPipe, 1F1B: (p-1)/(m+p-1) with equal stages on
 *             the ideal cluster)
 *   step time for each worker and step, the end of its last op of that step
 *             minus the end of its last op of the step before (0 for step 0)
 *   throughput steps x batch / T
 *   staleness histogram of version_applied - version_read over applied PUSHes */
#ifndef STRATA_ANALYSIS_H
#define STRATA_ANALYSIS_H

#include "err.h"
#include "plan.h"
#include "report.h"
#include "trace.h"

struct analysis;

/* For a run of `steps` steps of plan p (borrowed; outlives the analysis). */
struct analysis *analysis_create(const struct plan *p, int steps, struct err *e);
void analysis_free(struct analysis *a);

/* Spans of one rank must come in nondecreasing step order (each executor
 * records an op when it ends, and a rank finishes step s before s+1);
 * ranks may interleave freely. 0 or a negative code. */
int analysis_add(struct analysis *a, const struct span *s);

/* Fills r's timing, breakdown, bubble, staleness, memory (plan_memory_max)
 * and per_rank fields for a run that ended at makespan_s. r's mode,
 * strategy, devices and config are the caller's. */
int analysis_finish(struct analysis *a, double makespan_s, struct report *r, struct err *e);

#endif
