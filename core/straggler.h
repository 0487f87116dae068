/* Stragglers and failures: the disturbances of a run, drawn from the run's
 * seed with GSL, one random stream per rank (seeded from the seed and the
 * rank), so adding a rank leaves the others' draws unchanged and the same
 * seed gives the same run. sim/ applies them to simulated op times, real/
 * delays real ops by them: both meet the same disturbances.
 *
 *   none             no disturbance
 *   exp:F            each compute op takes an extra Exponential delay of mean F x its time
 *                    (F from 0 to 1e6)
 *   lognormal:SIGMA  each compute op's time is multiplied by LogNormal(-SIGMA^2/2, SIGMA),
 *                    whose mean is 1: noise without a change of the average (SIGMA from 0
 *                    to 10)
 *   slow:R=X[,R=X]   rank R is always X times slower (X from 1 to 1e6)
 *   pause:P:D        at the start of each step, with probability P, a rank stalls D seconds
 *                    (D from 0 to 1e6)
 * The bounds keep every disturbed time finite (straggler.c says why). */
#ifndef STRATA_STRAGGLER_H
#define STRATA_STRAGGLER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <gsl/gsl_rng.h>

#include "err.h"

enum straggler_kind { STRAG_NONE, STRAG_EXP, STRAG_LOGNORMAL, STRAG_SLOW, STRAG_PAUSE };

#define STRAGGLER_MAX_SLOW 64

struct straggler_spec {
    enum straggler_kind kind;
    double exp_factor;                       /* exp:F */
    double sigma;                            /* lognormal:SIGMA */
    int n_slow;                              /* slow:R=X,... */
    int slow_rank[STRAGGLER_MAX_SLOW];
    double slow_factor[STRAGGLER_MAX_SLOW];
    double pause_p, pause_s;                 /* pause:P:D */
};

/* Parses --straggler; ERR_INPUT naming --straggler, the text and the forms. */
int straggler_parse(const char *text, struct straggler_spec *s, struct err *e);
/* Back to text, e.g. "exp:0.5". */
void straggler_format(const struct straggler_spec *s, char *buf, size_t n);

struct straggler;

/* One random stream per rank: n_ranks MT19937 generators, rank r's seeded
 * from (seed, r) alone (SplitMix64; straggler.c says why). core/jitter
 * draws its streams here too, from another seed. NULL when out of memory,
 * with e naming the rank and `what` the streams ("random", "jitter"). */
gsl_rng **straggler_streams_create(uint64_t seed, int n_ranks, const char *what, struct err *e);
/* Frees rng[0..n_ranks) (NULL entries too) and rng; accepts NULL. */
void straggler_streams_free(gsl_rng **rng, int n_ranks);

/* Per-rank random streams for n_ranks ranks. A slow rank >= n_ranks is an
 * ERR_INPUT naming --straggler. */
struct straggler *straggler_create(const struct straggler_spec *s, uint64_t seed, int n_ranks,
                                   struct err *e);
void straggler_free(struct straggler *g);

/* A slow rank must be one of the plan's n_ranks and a worker (0 to
 * n_workers - 1): a straggler slows compute ops, and the parameter servers
 * after the workers run none, so a slow server would change nothing.
 * ERR_INPUT naming --straggler, the rank and strategy; NULL s passes. */
int straggler_check_ranks(const struct straggler_spec *s, int n_workers, int n_ranks,
                          const char *strategy, struct err *e);

/* The disturbed duration of a compute op of base_s seconds on rank. */
double straggler_compute_s(struct straggler *g, int rank, double base_s);

/* Stall of rank at the start of one of its steps (0 unless pause:P:D). Call
 * once per rank and step, in step order. */
double straggler_pause_s(struct straggler *g, int rank);

/* Rank's stream, as bytes a checkpoint saves and copies back (GSL's
 * gsl_rng_state, *bytes of it): a resumed run draws what the uninterrupted
 * one would have. NULL (and 0) for a rank out of range or g NULL. */
void *straggler_stream_state(struct straggler *g, int rank, size_t *bytes);

/* --fail: one rank dies, as a crashed process would, either as it starts a
 * step (R@STEP) or at a moment of the run (R@Ts). */
struct failure_spec {
    bool is_set;
    int rank;
    int64_t step;      /* >= 0: dies as it starts this step (0-based); -1: at time_s */
    double time_s;     /* seconds into the run, when step is -1 */
};

/* Parses --fail R@STEP or R@Ts ("" = none); ERR_INPUT naming --fail. */
int failure_parse(const char *text, struct failure_spec *f, struct err *e);

/* A failure at a step the run never starts (STEP >= steps) cannot happen:
 * ERR_INPUT naming --fail and --steps, rather than a report of no failure
 * that reads as if the job had survived one. A failure at a time is not
 * judged: the run's length is known only once it has run. */
int failure_check_steps(const struct failure_spec *f, long long steps, struct err *e);

#endif
