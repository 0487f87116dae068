/* MPI calls checked, and ranks agreeing on a failure (real/mpi_check.h). */
#include <limits.h>
#include <stdio.h>

#include "mpi_check.h"

int mpi_check_fail(struct err *e, int rc, const char *call, const char *file, int line)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
    return err_set(e, ERR_RUN, "%s failed: %s (%s:%d)", call, msg, file, line);
}

/* The lowest failing rank's error, broadcast from it; INT_MAX stands for
 * "no failure", so MPI_MIN finds that rank. */
static int agree(int rank, int rc, struct err *e)
{
    int mine = rc < 0 ? rank : INT_MAX, first = INT_MAX;
    MPI_TRY(e, MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first == INT_MAX) return 0;
    MPI_TRY(e, MPI_Bcast(e, (int)sizeof *e, MPI_BYTE, first, MPI_COMM_WORLD));
    if (first != rank) err_prefix(e, "rank %d", first);
    return e->code < 0 ? e->code : ERR_RUN;
}

int mpi_check_agree(int rc, struct err *e)
{
    int rank = 0;
    MPI_TRY(e, MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    return agree(rank, rc, e);
}
