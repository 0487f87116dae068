/* The common zero of every rank's clock in a real run.
 *
 * A span's times are seconds since the run's aligned start, and replay
 * compares one rank's with another's (when a server received a push, when
 * it answered a pull). A barrier alone aligns the ranks only to within how
 * late each left it: on a loaded machine a rank descheduled just after the
 * barrier starts its clock milliseconds late, and every span it records
 * is that much early against the others'. CI measured a 3 ms ps-sync run
 * replayed 52% long from it, with every duration as measured.
 *
 * So every rank measures its clock's offset to rank 0's by ping-pong
 * (Cristian's method: rank 0 answers each ping with its clock; of a few
 * round trips the shortest is the one least disturbed, and it bounds the
 * error by half its length), then, after a barrier, rank 0 reads its clock
 * once and every rank takes as its zero the moment of its own clock that
 * rank 0's reading names. On one host the error is microseconds whatever
 * the load; across hosts, half the shortest round trip. */
#ifndef STRATA_REAL_CLOCK_ALIGN_H
#define STRATA_REAL_CLOCK_ALIGN_H

#include <mpi.h>

#include "../core/err.h"

struct clock_zero {
    double t0_s;      /* the common zero, on this rank's clock */
    double error_s;   /* bound on how far this rank's zero is from rank 0's (0 on rank 0) */
};

/* Collective over comm, which must have nothing else in flight: z for this
 * rank on its clock_s (MPI_Wtime in a run; tests/test_clock_align.c gives
 * each rank a clock of its own). The ranks leave it together, as they
 * leave a barrier. ERR_RUN naming the MPI call that failed. */
int clock_align(MPI_Comm comm, double (*clock_s)(void), struct clock_zero *z, struct err *e);

#endif
