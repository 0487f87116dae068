/* This process as one rank of an MPI job: what a command that runs inside
 * the job (strata real, strata calibrate under mpirun) needs of MPI itself,
 * so that cli/ parses and prints and never calls MPI. Starting the job from
 * outside is real/launch.h. */
#ifndef STRATA_REAL_JOB_H
#define STRATA_REAL_JOB_H

#include "../core/err.h"

/* MPI_Init, with leak tracking off around it in sanitizer builds (OpenMPI
 * allocates there for the life of the process: core/untracked.h), then this
 * rank's index in MPI_COMM_WORLD and the world's size. ERR_RUN naming the
 * call that failed. */
int job_init(int *rank, int *n_ranks, struct err *e);

/* MPI_Finalize, leak tracking off as for job_init. */
void job_finalize(void);

/* Collective: the most CPUs any rank of the job may run on (its affinity
 * mask, real/launch.h launch_cpus_allowed), measured rather than taken from
 * --bind, so that a job the user started is reported truly too; -1 when
 * some rank cannot tell. */
int job_cpus_most(int *most, struct err *e);

#endif
