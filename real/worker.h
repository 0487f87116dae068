/* Private to real/: a worker rank running its program of the plan, step by
 * step (real/worker.c). real.c drives it. */
#ifndef STRATA_REAL_WORKER_H
#define STRATA_REAL_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/err.h"
#include "real_ctx.h"

struct worker;
int worker_create(struct real_ctx *ctx, struct worker **out, struct err *e);
void worker_free(struct worker *w);
/* Runs step `step` of the rank's program; appends its spans and loss to ctx.
 * Asynchronous plans: `work` is the job's work item the step computes
 * (ps_wire.h); synchronous ones ignore it. */
int worker_step(struct worker *w, int64_t step, int64_t work, struct err *e);
/* Asynchronous: the item the first server gave for the next step, -1 when
 * the job's work is all given out (this worker is done); else -1. */
int64_t worker_next_work(const struct worker *w);
/* The job step of the checkpoint to join after this step, -1 none: every
 * --checkpoint-every steps (synchronous), or when the first server says
 * (asynchronous, real/ps_wire.h). job_done: the job's steps done. */
int64_t worker_checkpoint_due(const struct worker *w, int64_t job_done);
/* Collective: the checkpoint after the job's steps before next_step
 * (real/checkpoint.h); tells the servers to join it. */
int worker_checkpoint(struct worker *w, int64_t next_step, struct err *e);
/* Is this the first data-parallel replica's rank computing the loss? */
bool worker_is_first_loss(const struct worker *w);
/* Tells every server this worker pushes to that it is done. */
int worker_finish(struct worker *w, struct err *e);
/* The step's training loss this worker computed (0/0 when it computes no
 * loss). */
void worker_last_loss(const struct worker *w, double *loss_sum, int64_t *n_samples);

#endif
