/* One analysis for every trace, simulated or real: spans in, report out.
 * It keeps O(ranks + steps) state, not the spans, so a million-span run is
 * analysed in one pass.
 *
 * Definitions (docs/metrics.md says the same for users; T = the makespan,
 * when the job's last op ended; S = the job's steps; n = its workers):
 *   job's work  S steps of the global batch. Synchronous plans: each worker
 *             runs S steps. Asynchronous ones (ps-async, ps-ssp): the
 *             executor shares S x n worker steps out among the workers as
 *             they become free, so a fast worker runs more (per_rank steps)
 *   complete step  a worker step with a span for every op of its program
 *   compute   time a worker's compute stream is busy
 *   comm      time its comm stream is busy while its compute stream is not
 *             (communication that overlaps computation is hidden, as DDP hides it)
 *   down      after its death (analysis_set_down), to T: it computes nothing
 *   done      asynchronous: after its last step, when no work was left: not
 *             counted at all (its device is free for other jobs)
 *   idle      the rest of its time: waiting for data, peers, servers, the pipeline
 *   breakdown the sums of these over workers, divided by the sum of the
 *             workers' time less done (compute + comm + down + idle = 1)
 *   bubble    idle share of compute, 1 - compute / T, averaged over the
 *             workers that hold a stage (run only some of the layers): pipeline
 *             and model ranks; 0 for data parallelism, whose replicas wait but
 *             have no bubble (GPipe, 1F1B: (p-1)/(m+p-1) with equal stages on
 *             the ideal cluster)
 *   step time mean = T / S. The job's step s ends (synchronous) when the last
 *             worker has ended its step s, (asynchronous) with the (s+1) n-th
 *             complete worker step; the last step ends at T. p50 and p99 are
 *             nearest-rank percentiles of those S durations, each from the
 *             end of the step before (the first from 0)
 *   samples applied  the layer-0 samples of complete worker steps, less those
 *             of a step whose push a server dropped (backup)
 *   throughput samples applied / T
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

/* A hint that a span of `rank` comes soon: starts fetching the state
 * analysis_add will touch for it into the cache (a run of 10^5 ranks
 * finds it cold otherwise). Changes nothing; any rank is accepted. */
void analysis_prefetch(const struct analysis *a, int rank);

/* The second stage of that hint, nearer the span, once the rank's state is
 * in the cache (analysis_prefetch): the place in its list of `stream`
 * where the span will go, the line the append then writes. Changes
 * nothing; any rank and stream are accepted. */
void analysis_prefetch_slot(const struct analysis *a, int rank, int stream);

/* Worker `rank` died at from_s: its time from then to the end is down, not
 * idle. 0, or ERR_INPUT for a rank that is not a worker or a bad time. */
int analysis_set_down(struct analysis *a, int rank, double from_s);

/* Worker w's busy time so far, compute and communication not hidden under
 * it, and its complete steps, its last step closed: call it once the run's
 * spans are all in (what analysis_finish reports as per_rank, before
 * knowing the makespan). 0, or ERR_INPUT for a rank that is not a worker,
 * ERR_NOMEM. */
int analysis_worker_busy(struct analysis *a, int w, double *compute_s, double *comm_s,
                         int64_t *steps);

/* r's shares again from its per_rank compute_s, comm_s and down_s, every
 * worker's time the whole makespan_s (a run whose workers changed, as
 * shrink's, whose time the caller accounts): each rank's idle_s and the
 * breakdown (compute + comm + down + idle = 1). */
void analysis_reshare(struct report *r, double makespan_s);

/* Nearest-rank percentile pct of x[0..n), n > 0 (rearranges x): the
 * ceil(pct n / 100)-th smallest, a value that happened. */
double analysis_percentile(double *x, size_t n, int pct);

/* Fills r's timing, breakdown, bubble, staleness, memory (plan_memory_max)
 * per_rank and samples_applied fields for a run that ended at makespan_s. r's mode,
 * strategy, devices and config are the caller's. */
int analysis_finish(struct analysis *a, double makespan_s, struct report *r, struct err *e);

#endif
