/* Private to real/: the comm backends, for the registry (real/comm.c)
 * that lists them. Each backend stands on real/comm_world.h, never on
 * another backend. */
#ifndef STRATA_REAL_COMM_BACKENDS_H
#define STRATA_REAL_COMM_BACKENDS_H

#include <stddef.h>

#include "../core/err.h"
#include "../nn/device.h"
#include "comm.h"

extern const struct comm_ops comm_mpi;    /* real/comm_mpi.c */

#ifdef STRATA_HAVE_NCCL
extern const struct comm_ops comm_nccl;   /* real/comm_nccl.c */
/* Collective over MPI_COMM_WORLD: opens NCCL on every rank (real/nccl_lib.h);
 * 0 when every rank could, else the lowest failing rank's ERR_INPUT. */
int comm_nccl_load(struct err *e);
/* Collective over MPI_COMM_WORLD: *shared = -1 when no two ranks on a
 * machine use one GPU, else the lower rank of a pair that does (*other the
 * higher); ranks whose device is host memory have no GPU. */
int comm_nccl_shared_gpu(const struct device *mine, int *shared, int *other, char *bus_id,
                         size_t n, struct err *e);
#endif

#endif
