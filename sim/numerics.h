/* Numerics in the simulator: the real arithmetic of a simulated run, so that
 * convergence is measured against simulated time, not assumed.
 *
 * Two paths, chosen by what can change the mathematics:
 *
 *   synchronous (policy none or sync: mirrored, ps-sync, model, pipelines)
 *       every strategy computes one device's step on the global batch (the
 *       real-run tests prove it), so the step sequence is computed once, on
 *       one device (numerics_sync_run), and each strategy's simulation only
 *       says when each step ended;
 *   asynchronous (async, ssp, backup)
 *       the order of events changes the arithmetic, so it is done at the
 *       simulator's virtual moments (struct sim_hooks): a worker computes its
 *       gradient when its step starts, from the parameters it last pulled; a
 *       server applies a push when it arrives (a sync round's pushes added in
 *       worker order when the round closes; a dropped backup push really
 *       dropped); a pull copies the server's parameters as they are when it
 *       is answered. This is core/ps_policy's decision, as in real runs.
 *
 * Memory: the asynchronous path keeps a whole model (parameters, gradients,
 * momentum) per worker, because each holds parameters of its own version:
 * workers x 12 bytes x parameters, refused above NUMERICS_MAX_BYTES. */
#ifndef STRATA_SIM_NUMERICS_H
#define STRATA_SIM_NUMERICS_H

#include <stdint.h>

#include "../core/err.h"
#include "../core/plan.h"
#include "../core/report.h"
#include "../core/workload.h"
#include "../nn/data.h"
#include "simulate.h"

#define NUMERICS_MAX_BYTES (4LL << 30)

struct numerics_setup {
    const struct workload *wl;      /* an mlp: workload */
    const struct data *data;        /* borrowed */
    uint64_t seed;
    int steps;
    int batch;                      /* global */
    float lr, momentum, weight_decay;
    int eval_every;                 /* steps between test evaluations; 0 = at the end only */
    int grad_delay;                 /* steps a step's gradients wait before they are applied
                                     * (pipelined-steps: the plan's n_grad_slots - 1); the
                                     * last grad_delay steps' are never applied */
};

/* The synchronous step sequence on one device. */
struct sync_numerics {
    int steps;
    double *loss;                   /* [steps]: mean training loss of step s's batch */
    struct accuracy_point *accuracy;   /* [n_accuracy]: at eval steps and the end (time_s 0) */
    int n_accuracy;
    double final_loss;              /* test loss at the end */
};

int numerics_sync_run(const struct numerics_setup *s, struct sync_numerics *out, struct err *e);
void sync_numerics_release(struct sync_numerics *n);

/* Fills r's loss_curve, accuracy_curve and final from a synchronous
 * sequence and the simulated step ends (step_end_s[steps]). */
int numerics_sync_report(const struct sync_numerics *n, const double *step_end_s,
                         struct report *r, struct err *e);

struct numerics;

/* For an asynchronous plan p. ERR_INPUT when the workers' copies exceed
 * NUMERICS_MAX_BYTES (the message says how much they need). */
int numerics_create(const struct numerics_setup *s, const struct plan *p, struct numerics **out,
                    struct err *e);
void numerics_free(struct numerics *n);
/* The hooks to give the simulator (valid while n lives). */
const struct sim_hooks *numerics_hooks(struct numerics *n);
/* The error a hook met (its code is what simulate returned). */
const struct err *numerics_error(const struct numerics *n);
/* After the simulation ended at makespan_s: the final evaluation, and r's
 * loss_curve, accuracy_curve and final. */
int numerics_report(struct numerics *n, double makespan_s, struct report *r, struct err *e);

#endif
