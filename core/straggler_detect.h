/* Straggler detection: which ranks of a measured run were consistently
 * slower than the others at the same work (issue 18, item 3).
 *
 * A rank's pace on one compute op is its duration over the median duration
 * of the same op (kind, layers, microbatch) in the same step on the other
 * ranks that run it. Data-parallel replicas all run every op; pipeline and
 * model stages run different layers, so a stage has a peer only in another
 * replica of the pipeline (hybrid --dp): a rank with no peer is not judged
 * (its ratios are NaN). Comparing the same op, not time per FLOP, keeps
 * GEMM shapes that run at different efficiencies out of the judgement.
 *
 * A rank is a straggler when it is consistently slow: its median ratio is at
 * least STRAGGLER_SLOW_RATIO and so is the median of its ratios in at least
 * STRAGGLER_SHARE_OF_STEPS of the steps compared (`strata help metrics`).
 *
 * Real reports carry the summary ("stragglers" in the report JSON, absent
 * in simulated reports and in reports written before it existed). */
#ifndef STRATA_STRAGGLER_DETECT_H
#define STRATA_STRAGGLER_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "json_doc.h"
#include "trace.h"

#define STRAGGLER_SLOW_RATIO 1.3
#define STRAGGLER_SHARE_OF_STEPS 0.75

/* One rank's compute pace against the other ranks. */
struct rank_pace {
    int rank;
    double median_ratio;      /* over its compared ops; NaN: no op had a peer */
    double p99_ratio;         /* nearest-rank 99th percentile of the same ratios */
    int64_t steps_compared;   /* steps with at least one op compared */
    int64_t steps_slow;       /* of those, steps whose median ratio >= STRAGGLER_SLOW_RATIO */
    bool is_straggler;
};

/* The pace of every rank with compute spans among spans[0..n) (any order),
 * ascending by rank, into a new array *out of *n_out (caller frees; NULL
 * and 0 when no span is a compute op). 0 or ERR_NOMEM. */
int straggler_detect(const struct span *spans, size_t n, struct rank_pace **out, int *n_out,
                     struct err *e);

/* { "slow_ratio": 1.3, "share_of_steps": 0.75, "ranks": [ {...}, ... ] },
 * or NULL on out of memory. */
cJSON *straggler_to_json(const struct rank_pace *paces, int n);

/* The inverse: *out (caller frees) and *n_out from v, a report's
 * "stragglers" member. ERR_INPUT naming the field, ERR_NOMEM. */
int straggler_from_json(const cJSON *v, const struct json_at *at, struct rank_pace **out,
                        int *n_out);

/* The median of d[0..n) (ascending, n >= 2) without d[p]: what one rank's
 * op is held against, the other ranks' at the same op and step (the
 * ratio this module and replay's --without-stragglers both use). */
double straggler_median_of_others(const double *d, size_t n, size_t p);

/* The block under a real run's table, prefixed by `label` when not NULL:
 * "stragglers: rank 1 (compute 2.00x the median of the others, 19/20
 * steps)" or "stragglers: none", then each rank's median and p99 pace.
 * Nothing for n == 0 (no summary). */
void straggler_print(FILE *out, const char *label, const struct rank_pace *paces, int n);

#endif
