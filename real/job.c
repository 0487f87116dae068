/* This process as one rank of an MPI job (real/job.h). */
#include <mpi.h>

#include "../core/untracked.h"
#include "job.h"
#include "launch.h"
#include "mpi_check.h"

/* MPI_Init's code, taken with leak tracking off. */
static int mpi_init_untracked(void)
{
    int argc = 0;
    char **argv = NULL;
    UNTRACKED_BEGIN();
    int rc = MPI_Init(&argc, &argv);
    UNTRACKED_END();
    return rc;
}

int job_init(int *rank, int *n_ranks, struct err *e)
{
    MPI_TRY(e, mpi_init_untracked());
    MPI_TRY(e, MPI_Comm_rank(MPI_COMM_WORLD, rank));
    MPI_TRY(e, MPI_Comm_size(MPI_COMM_WORLD, n_ranks));
    return 0;
}

void job_finalize(void)
{
    UNTRACKED_BEGIN();
    MPI_Finalize();
    UNTRACKED_END();
}

int job_cpus_most(int *most, struct err *e)
{
    int mine = launch_cpus_allowed(), highest = -1, least = -1;
    MPI_TRY(e, MPI_Allreduce(&mine, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    MPI_TRY(e, MPI_Allreduce(&mine, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    *most = least < 1 ? -1 : highest;
    return 0;
}
