/* Where a replay's compute durations come from (bench/replay.h): a table of
 * the measured ones, per rank, step and op of the trace's plan; the same
 * table with every op made typical (--without-stragglers); or, for a plan
 * the trace did not run (--strategy, --scale), measured seconds per FLOP of
 * each layer, from which any op's time follows. */
#ifndef STRATA_BENCH_REPLAY_DURATIONS_H
#define STRATA_BENCH_REPLAY_DURATIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/err.h"
#include "../core/plan.h"
#include "../core/trace.h"
#include "../core/vec.h"

/* dur_s[r][step * n_ops[r] + op]: a compute op's seconds, -1 where the trace
 * has none (the cost model's then). */
struct replay_table {
    int n_ranks;
    int *n_steps;          /* [n_ranks] */
    int *n_ops;            /* [n_ranks] */
    double **dur_s;        /* [n_ranks][n_steps * n_ops] */
};

/* The compute spans of spans[0..n) into t, checked against p: each span's
 * rank, op index, kind and layers must be p's, its step below max_steps (a
 * trace of another plan is ERR_INPUT naming `name`, the span and what
 * differs). A server's update spans (op -1: replay_updates) are checked
 * and left out. */
int replay_table_from_spans(const struct span *spans, size_t n, const struct plan *p,
                            int64_t max_steps, const char *name, struct replay_table *t,
                            struct err *e);

/* The trace t was made of (spans[0..n) of p, for a job of `steps` steps)
 * holds each op of each worker once in every step the worker ran, and, when
 * p's workers are synchronous, every one of the job's steps: what the
 * writer writes (core/trace.h). A span repeated, or one missing, is
 * ERR_INPUT naming `name`, the rank, step and op: a replay would otherwise
 * take the later of two spans, or give a missing op the run's mean rate,
 * and report a cut or edited trace's error as the simulator's. */
int replay_check_complete(const struct span *spans, size_t n, const struct plan *p,
                          int64_t steps, const struct replay_table *t, const char *name,
                          struct err *e);

/* out = in with every op's duration made typical. A consistently slow rank
 * (its pace, the median over its ops of its duration over the op's lower
 * median across the ranks, at least STRAGGLER_SLOW_RATIO, as
 * core/straggler_detect.h judges) keeps its own durations divided by its
 * pace. Every other rank's op takes the lower median of the same op (kind,
 * layers, microbatch) in the same step over the ranks that run it and are
 * not slow, or, when one rank alone runs it, the lower median of that
 * rank's op over the steps. Lower (for two values the smaller): a
 * straggler is slow, so of two ranks the typical one is the faster. */
int replay_table_typical(const struct replay_table *in, const struct plan *p,
                         struct replay_table *out, struct err *e);

/* out = measured, but rank r's durations from typical. */
int replay_table_one_typical(const struct replay_table *measured,
                             const struct replay_table *typical, int r,
                             struct replay_table *out, struct err *e);

/* comm: shaped like `shape` (a table replay_table_from_spans made of the
 * same spans of p, which checked them), each communication op's measured
 * duration (its span's end - start, from the moment its data could move:
 * core/trace.h); a worker's PUSH, until its server's span of receiving it
 * ended (op -1 PUSH, step = the push's round); -1 where the trace has
 * none. For --measured-comm. */
int replay_comm_from_spans(const struct span *spans, size_t n, const struct plan *p,
                           const struct replay_table *shape, struct replay_table *comm,
                           struct err *e);

/* A real run's parameter-server updates as measured (real/ps_server.c's
 * UPDATE spans, op -1, step = the update's index at its server):
 * secs[r] holds server rank r's in the order it applied them. Empty for a
 * trace without them (simulated, or older), where the model's stay. */
struct replay_updates {
    int n_ranks;
    VEC(double) *secs;     /* [n_ranks]; workers' empty */
    double *median_s;      /* [n_ranks]: for updates beyond the measured; -1 none */
    bool has_any;
};

/* The server update spans of spans[0..n) (already checked against p by
 * replay_table_from_spans) into u. 0 or ERR_NOMEM. */
int replay_updates_from_spans(const struct span *spans, size_t n, const struct plan *p,
                              struct replay_updates *u, struct err *e);

/* Server rank r's k-th update's seconds: measured, the server's median
 * beyond them, -1 when it has none. */
double replay_updates_get(const struct replay_updates *u, int rank, int64_t k);

void replay_updates_free(struct replay_updates *u);

/* The entry, or -1 when there is none. */
double replay_table_get(const struct replay_table *t, int rank, int64_t step, int op);

void replay_table_free(struct replay_table *t);

/* Measured seconds per FLOP of each layer, per kind of compute (forward,
 * backward with its zero-bubble halves, update): every op of the table gives
 * each of its layers its own duration / FLOPs as one sample. Sorted. */
enum { RATE_FORWARD, RATE_BACKWARD, RATE_UPDATE, RATE_N_CLASSES };
struct replay_rates {
    int n_layers;
    VEC(double) *by_layer;          /* [RATE_N_CLASSES * n_layers] */
    VEC(double) pooled[RATE_N_CLASSES];   /* every layer's, for a layer with none */
};

int replay_rates_build(const struct replay_table *t, const struct plan *p,
                       struct replay_rates *r, struct err *e);

/* op's time (a compute op of a plan of the same workload wl): for each of
 * its layers, its share of op's FLOPs (by the layer's FLOPs or, for
 * UPDATE, parameters) at the layer's rate quantile u in [0, 1) (u < 0: the
 * lower median). -1 when no rate applies (the cost model's then). */
double replay_rates_op_s(const struct replay_rates *r, const struct workload *wl,
                         const struct op *op, double u);

void replay_rates_free(struct replay_rates *r);

#endif
