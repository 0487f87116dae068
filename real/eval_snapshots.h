/* Private to real/: rank 0's copies of the parameters at --eval-every's
 * points, evaluated on the test set after training (real/eval_snapshots.c).
 *
 * Evaluating in the loop stopped the job: a test-set pass on rank 0 (64
 * ms for fmnist-small's 10,000 samples, against a 2.7 ms step on 2 ranks)
 * held every other rank at its next all-reduce, so `--eval-every 1` made
 * mirrored's measured step 5.8 times as long and its idle share 82%, and
 * an asynchronous job's other workers ran ahead of the paused one. The
 * simulator evaluates off its clock; a real run now does too: a point
 * costs a copy of the parameters, and the evaluations run after the last
 * step, each on the parameters training had at its point. */
#ifndef STRATA_REAL_EVAL_SNAPSHOTS_H
#define STRATA_REAL_EVAL_SNAPSHOTS_H

#include <stdint.h>

#include "../core/err.h"
#include "../nn/device.h"
#include "../nn/mlp.h"

struct eval_snapshots {
    float *params;       /* [n * n_params], host memory, in the order taken */
    int64_t *step;       /* [n]: the job steps done when each was taken */
    double *at_s;        /* [n]: when training reached that step, the run's clock */
    int64_t n_params;
    int n, cap;
};

/* Room for n snapshots of n_params parameters, its pages touched, so that
 * taking one on the clock costs a copy and no allocation or page fault;
 * run out of memory here, before training, rather than at a point. */
int eval_snapshots_reserve(struct eval_snapshots *s, int n, int64_t n_params, struct err *e);

/* Keeps a copy of m's parameters (copied down from a GPU's memory) as the
 * point (step, at_s). ERR_NOMEM when it cannot grow. */
int eval_snapshots_take(struct eval_snapshots *s, const struct device *dev, const struct mlp *m,
                        int64_t step, double at_s, struct err *e);

/* Keeps n_params host floats (any alignment: read with memcpy) as the
 * point (step, at_s): one a checkpoint carried over a resume. */
int eval_snapshots_add(struct eval_snapshots *s, const void *params, int64_t n_params, int64_t step,
                       double at_s, struct err *e);

/* Writes snapshot i back into m's parameters. */
int eval_snapshots_load(const struct eval_snapshots *s, int i, const struct device *dev,
                        struct mlp *m, struct err *e);

void eval_snapshots_release(struct eval_snapshots *s);   /* accepts a zeroed one */

#endif
