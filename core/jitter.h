/* Op-time jitter: the run-to-run spread of a machine's compute ops, as
 * `strata calibrate` measures it, drawn in the simulator so that a
 * calibrated simulation is not lock-step (issue 11: real ps-async gave the
 * staleness histogram [32, 206, 348, 10, 4], the lock-step simulation
 * [1, 1, 598]).
 *
 * Each compute op's time is multiplied by a ratio r ~ LogNormal(-s^2/2, s),
 * s the sigma of its kind (FORWARD, BACKWARD, UPDATE). E[r] = 1: the mean
 * op time, and so the mean step time of a run without waiting, is the
 * profile's; only the spread is added. Why log-normal: op times are
 * positive and their noise is multiplicative (clock, cache and scheduling
 * effects scale with the op), and one sigma per kind is what a profile can
 * carry and a person can read; bench/calibrate.c says how it is fitted.
 *
 * Random streams: one GSL MT19937 per rank, seeded from (run seed, rank)
 * as core/straggler's are but from another seed sequence, so jitter and a
 * --straggler model draw independently and turning one on leaves the
 * other's draws as they were. A kind whose sigma is 0 draws nothing. */
#ifndef STRATA_JITTER_H
#define STRATA_JITTER_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "plan.h"

/* The largest sigma a profile may carry: at 2 the median op takes e^-2 =
 * 0.14 of the mean, already far beyond any machine measured. */
#define JITTER_MAX_SIGMA 2.0

struct jitter_spec {
    double forward_sigma;    /* of ln(time / mean time); 0 = no spread */
    double backward_sigma;
    double update_sigma;
};

/* Any sigma > 0. */
bool jitter_is_set(const struct jitter_spec *s);

struct jitter;

/* Streams for n_ranks ranks. ERR_INPUT for n_ranks < 1 or a sigma outside
 * [0, JITTER_MAX_SIGMA] (naming the profile key jitter_<kind>_sigma). */
struct jitter *jitter_create(const struct jitter_spec *s, uint64_t seed, int n_ranks,
                             struct err *e);
void jitter_free(struct jitter *j);

/* base_s times rank's next ratio for an op of this kind; base_s itself for
 * a kind that is not compute or has sigma 0, and for j NULL. */
double jitter_compute_s(struct jitter *j, int rank, enum op_kind kind, double base_s);

#endif
