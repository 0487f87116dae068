/* The one way real/ and bench/ check MPI calls, and agree on a failure.
 *
 * MPI_TRY returns the failure of an MPI call as ERR_RUN, naming the call,
 * MPI's own words for the code, and the file and line (nccl-tests'
 * MPICHECK). Like TRY it returns at once: a function that owns memory or
 * handles calls a helper that owns nothing and frees after it.
 *
 * A phase that may fail on some ranks only ends in mpi_check_agree, so that
 * every rank stops together with the same message. */
#ifndef STRATA_REAL_MPI_CHECK_H
#define STRATA_REAL_MPI_CHECK_H

#include <mpi.h>

#include "../core/err.h"

#define MPI_TRY(e, call) TRY_CALL(e, int, MPI_SUCCESS, mpi_check_fail, call)

/* ERR_RUN "CALL failed: MPI's error string (file:line)" in e; returns ERR_RUN. */
int mpi_check_fail(struct err *e, int rc, const char *call, const char *file, int line);

/* Collective over MPI_COMM_WORLD, after a phase whose result on this rank
 * is rc: 0 on every rank when every rc is 0; else every rank returns the
 * error of the lowest failing rank, its message copied into e, with
 * "rank N: " before it on the other ranks, so that rank 0 can print what
 * went wrong. ERR_RUN when the agreement itself fails. */
int mpi_check_agree(int rc, struct err *e);

#endif
