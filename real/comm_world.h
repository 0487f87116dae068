/* Private to real/: the MPI communicators every comm backend stands on,
 * made once for a plan (real/comm_world.c): this run's duplicate of
 * MPI_COMM_WORLD (c->world, whose rank and size fill c->rank and
 * c->n_ranks), its tag bound, and one communicator per plan group
 * (c->groups). The mpi comm sends on them; the nccl comm carries its unique
 * ids over them. Neither backend knows the other: both know this. */
#ifndef STRATA_REAL_COMM_WORLD_H
#define STRATA_REAL_COMM_WORLD_H

#include "../core/err.h"
#include "../core/plan.h"
#include "comm.h"

/* Collective over MPI_COMM_WORLD. Errors come back as codes from then on
 * (MPI_ERRORS_RETURN), to be reported with the op that met them, rather
 * than aborting the job from inside MPI. */
int comm_world_open(struct comm *c, const struct plan *p, struct err *e);
/* Frees what comm_world_open made; accepts a zeroed or half-opened comm. */
void comm_world_close(struct comm *c);

#endif
