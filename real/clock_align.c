/* The ranks' common zero by ping-pong with rank 0 (clock_align.h). */
#include "clock_align.h"

#include "mpi_check.h"

/* Round trips a rank measures, of which the shortest is kept: ten ride
 * out a rank descheduled in a few of them on a loaded machine, and cost
 * microseconds each on one host, ~0.1 ms across hosts over TCP. */
enum { PINGS = 10, CLOCK_TAG = 7301 };

/* Rank 0: answers each other rank's pings with its clock, rank by rank. */
static int answer_pings(MPI_Comm comm, int n_ranks, double (*clock_s)(void), struct err *e)
{
    for (int r = 1; r < n_ranks; r++)
        for (int k = 0; k < PINGS; k++) {
            char ping;
            MPI_TRY(e, MPI_Recv(&ping, 1, MPI_CHAR, r, CLOCK_TAG, comm, MPI_STATUS_IGNORE));
            double now_s = clock_s();
            MPI_TRY(e, MPI_Send(&now_s, 1, MPI_DOUBLE, r, CLOCK_TAG, comm));
        }
    return 0;
}

/* Another rank: rank 0's clock minus its own, from the shortest round
 * trip (rank 0 read its clock somewhere inside it: the middle is off by
 * at most half of it). The first ping waits for rank 0 to reach this
 * rank; it is the longest and is never the one kept. */
static int measure_offset(MPI_Comm comm, double (*clock_s)(void), double *offset_s,
                          double *error_s, struct err *e)
{
    double best_rtt_s = -1;
    for (int k = 0; k < PINGS; k++) {
        char ping = 0;
        double root_s, sent_s = clock_s();
        MPI_TRY(e, MPI_Send(&ping, 1, MPI_CHAR, 0, CLOCK_TAG, comm));
        MPI_TRY(e, MPI_Recv(&root_s, 1, MPI_DOUBLE, 0, CLOCK_TAG, comm, MPI_STATUS_IGNORE));
        double back_s = clock_s(), rtt_s = back_s - sent_s;
        if (best_rtt_s < 0 || rtt_s < best_rtt_s) {
            best_rtt_s = rtt_s;
            *offset_s = root_s - (sent_s + back_s) / 2;
        }
    }
    *error_s = best_rtt_s / 2;
    return 0;
}

int clock_align(MPI_Comm comm, double (*clock_s)(void), struct clock_zero *z, struct err *e)
{
    int rank, n_ranks;
    MPI_TRY(e, MPI_Comm_rank(comm, &rank));
    MPI_TRY(e, MPI_Comm_size(comm, &n_ranks));
    double offset_s = 0, error_s = 0;   /* rank 0's clock - this rank's */
    if (rank == 0) TRY(answer_pings(comm, n_ranks, clock_s, e));
    else TRY(measure_offset(comm, clock_s, &offset_s, &error_s, e));
    /* The zero is read after the pings, so that they are not in the run's
     * time, and by rank 0 alone: a rank descheduled on leaving the barrier
     * reads no clock there, and when rank 0 is, every zero moves with it. */
    MPI_TRY(e, MPI_Barrier(comm));
    double root_zero_s = rank == 0 ? clock_s() : 0;
    MPI_TRY(e, MPI_Bcast(&root_zero_s, 1, MPI_DOUBLE, 0, comm));
    z->t0_s = root_zero_s - offset_s;
    z->error_s = error_s;
    return 0;
}
