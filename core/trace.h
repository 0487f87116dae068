/* The trace: one span per executed op, recorded the same way by sim/ and
 * real/, so that one analysis (core/analysis.h) serves both.
 *
 * A span covers the op's own work, not the waiting before it: a RECV starts
 * when the data starts to move (sender sent, receiver posted), an ALLREDUCE
 * when its last member arrives, a PULL when the server answers. Time a rank
 * spends waiting for others is therefore idle time in the analysis, which is
 * what stragglers and pipeline bubbles cost. */
#ifndef STRATA_TRACE_H
#define STRATA_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "plan.h"
#include "vec.h"

struct span {
    int32_t rank;
    int16_t stream;           /* STREAM_* */
    int16_t kind;             /* enum op_kind */
    int32_t step;             /* 0-based step of the rank */
    int32_t op;               /* index in the rank's program */
    int32_t mb;               /* microbatch, -1 when none */
    int32_t lo, hi;           /* layers (SEND/RECV: the boundary twice) */
    int32_t peer;             /* SEND/RECV peer, PUSH/PULL server, -1 otherwise */
    double start_s, end_s;    /* seconds since the run began */
    int64_t bytes;
    double flops;
    /* PUSH: the server version its gradient was computed from, and the
     * version it was applied to (-1: dropped, e.g. a backup worker's late
     * push); staleness = applied - read. PULL: read = version received.
     * A lagged UPDATE (core/plan.h "Steps in flight"): the same, in the
     * rank's own updates (plan_lag_versions). Otherwise both -1. */
    int64_t version_read, version_applied;
};

/* Kept spans, for --trace and --timeline. Spans of steps >= keep_steps, and
 * any beyond max_spans, are counted in n_dropped rather than kept, so long
 * runs stay within memory. */
struct trace {
    VEC(struct span) spans;
    int32_t keep_steps;       /* -1 = every step */
    int64_t max_spans;
    int64_t n_dropped;
};

void trace_init(struct trace *t, int32_t keep_steps, int64_t max_spans);

/* Would trace_add keep a span of step `step` now? (It counts it in
 * n_dropped otherwise, whatever else the span holds.) */
static inline bool trace_keeps(const struct trace *t, int32_t step)
{
    return !(t->keep_steps >= 0 && step >= t->keep_steps) &&
           !(t->max_spans >= 0 && (int64_t)t->spans.len >= t->max_spans);
}
void trace_release(struct trace *t);
/* Keeps s if it qualifies; 0 or ERR_NOMEM. */
int trace_add(struct trace *t, const struct span *s);

/* What made a trace, written beside its events so that `strata replay`
 * can build the same plan again (docs/trace-format.md). */
struct config;
struct rank_host;
struct trace_scenario {
    const char *mode;             /* "sim" or "real" */
    const struct config *cfg;     /* the run's options */
    unsigned config_groups;       /* which of them shaped it (a report's config_groups) */
    int64_t steps;                /* steps each compute rank ran */
    const struct rank_host *hosts;   /* a real run's: rank r's host and its cores; NULL */
    int n_hosts;                  /* entries of hosts (its ranks), 0 for none */
    /* a real run's: every rank's clock agrees with rank 0's to within this
     * (real/clock_align.h); written only when has_clock_error */
    bool has_clock_error;
    double clock_error_s;
};

#define TRACE_FORMAT_VERSION 1

/* Writes the kept spans in the Chrome trace-event format (JSON): each rank
 * a process, each stream a thread, each span a complete event ("ph": "X",
 * microseconds) named by its op kind, with its op index in the rank's
 * program, step, layers, microbatch, bytes and versions in "args". With a
 * scenario (may be NULL) the top-level object also holds "strata_trace",
 * "mode", "strategy", "steps", "ranks", "workers", "dropped_spans" and
 * "scenario" (the options, as a report's "config"), and with the ranks'
 * hosts "hosts" (each host's processes and cores), and "clock_error_s". Perfetto and
 * chrome://tracing open it, and ignore the keys they do not know. Atomic. */
int trace_write_chrome(const struct trace *t, const struct plan *p,
                       const struct trace_scenario *sc, const char *path, struct err *e);

#endif
