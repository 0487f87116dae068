/* calibrate's link timing and its fit, on any communicator (internal to
 * bench/calibrate*.c: it speaks MPI, calibrate.h does not). One machine
 * times ranks 0 and 1 of MPI_COMM_WORLD; a job on several hosts times the
 * links inside a node and between nodes apart (calibrate_nodes.c). */
#ifndef STRATA_BENCH_CALIBRATE_LINKS_H
#define STRATA_BENCH_CALIBRATE_LINKS_H

#include <stdint.h>

#include <mpi.h>

#include "../core/err.h"
#include "calibrate.h"

/* Each timed call at least this many times, after this many untimed. */
#define CALIB_MIN_CALLS 11
#define CALIB_WARMUP_CALLS 3

/* Sorts t[0..n) and returns its median. */
double calib_median(double *t, int n);

/* Collective over comm (every rank of it calls): at sizes from 8 B up to
 * max_bytes (x4), a ping-pong between comm ranks a and b (the others wait
 * at its barriers), then an MPI_Iallreduce over ar_comm, which each rank
 * passes as its own (a node's communicator, say; MPI_COMM_NULL on a rank in
 * none: it only waits) and which must hold comm rank a. out gets the sizes'
 * times as rank a saw them (the all-reduce's slowest member of a's
 * ar_comm), and n_ranks the size of a's ar_comm, on every rank of comm. */
int calib_links_measure(MPI_Comm comm, int a, int b, MPI_Comm ar_comm, int64_t max_bytes,
                        struct calib_comm *out, struct err *e);

/* alpha and beta fitted to c's ping-pong times (calib_fit_link), the worst
 * size's error, and gamma to its all-reduce times (calib_fit_gamma). */
int calib_links_fit(struct calib_comm *c, struct err *e);

#endif
