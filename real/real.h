/* Real execution: a plan run on MPI ranks, one process per device, with real
 * data, real gradients and real messages. Every rank of the MPI job calls
 * real_run with the same arguments; rank 0 gets the report.
 *
 * Workers run their rank's program (real/worker.c): compute ops on the
 * device (nn/), SEND, RECV and ALLREDUCE through the comm table
 * (real/comm.h), PUSH and PULL to server ranks, which run the simulator's
 * policy code (real/ps_server.c, core/ps_policy). Every op is timed on a
 * clock aligned across ranks at start; rank 0 gathers the spans, the losses
 * and the trained parameters, and turns them into the report a simulation
 * gives (core/analysis), with the loss curve and the test accuracy. */
#ifndef STRATA_REAL_H
#define STRATA_REAL_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/config.h"
#include "../core/err.h"
#include "../core/plan.h"
#include "../core/plan_index.h"
#include "../core/report.h"
#include "../core/trace.h"
#include "../core/workload.h"

/* For tests only: seconds rank 0 sleeps before each --eval-every point's
 * evaluation, as if the test set took that long, so that a test can tell
 * an evaluation on the clock (every step that much longer) from one off
 * it by far more than a loaded machine's noise. Ignored when malformed. */
#define REAL_TEST_EVAL_DELAY_ENV "STRATA_TEST_EVAL_DELAY_S"

/* Option groups that shape a real run: what its report's "config" holds. */
#define REAL_CONFIG_GROUPS \
    (OPTG_SCENARIO | OPTG_STRATEGY | OPTG_RUN | OPTG_TRAIN | OPTG_EXEC | OPTG_DISTURB |     \
     OPTG_LAUNCH)

struct real_result {                /* filled on rank 0 only */
    struct report report;           /* mode "real"; its accuracy_curve: --eval-every and the end */
    struct trace trace;             /* the first keep_steps steps' spans */
    double makespan_s;
    int64_t steps;
    int64_t first_step;             /* 0, or the step this job resumed at (--resume, a
                                     * relaunch): the makespan is its steps' alone */
    char device[160];               /* the device's own description */
    double checkpoint_s;            /* spent writing checkpoints (rank 0's time) */
    int n_checkpoints;              /* checkpoints written (--checkpoint-every) */
    double clock_error_s;           /* the spans' clocks agree to within this (clock_align.h) */
};

struct real_setup {
    const struct config *cfg;       /* lr, momentum, data, device, seed, straggler ... */
    const struct workload *wl;      /* an mlp: workload */
    /* the checked plan's index (real_prepare); ix->p is the plan, one rank
     * per MPI process */
    const struct plan_index *ix;
    int keep_steps;                 /* spans kept in the result's trace; -1 = all */
    bool show_progress;             /* a progress line on stderr */
};

/* Called by every rank of MPI_COMM_WORLD after MPI_Init; collective. The
 * world must have plan->n_ranks processes. On every rank: 0, or an error
 * every rank agrees on (the message is set on the rank that met it and on
 * rank 0). res is filled on rank 0 and zeroed elsewhere. */
int real_run(const struct real_setup *s, struct real_result *res, struct err *e);
void real_result_release(struct real_result *res);

/* Checks the options of a real run (an mlp: model; --np, the real name of
 * --devices; --epochs or --steps, not both) and builds the
 * strategy's plan, checked, and its index when ix is not NULL (free it with
 * plan_index_free before the plan). cfg->devices takes --np. ERR_INPUT
 * naming the option. */
int real_prepare(struct config *cfg, const struct workload *wl, struct plan **out,
                 struct plan_index **ix, struct err *e);

/* The launch options read only beside another (--checkpoint-dir without
 * --checkpoint-every, --supervisor-address without --hostfile): ERR_INPUT
 * naming the one alone. real_prepare checks them; a command of many real
 * jobs calls it once, first, so they are not refused job by job. */
int real_check_launch_pairs(const struct config *cfg, struct err *e);

/* Steps of the run cfg asks for: --epochs E as E full passes over n_train
 * samples at the global batch (the tail of each epoch dropped), else --steps. */
int64_t real_steps(const struct config *cfg, int64_t n_train);

#endif
