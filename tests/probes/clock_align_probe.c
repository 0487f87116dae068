/* For tests/test_clock_align.c, under mpirun: the ranks align their clocks
 * (real/clock_align.h), each on a clock of its own, MPI_Wtime + 1000 s x
 * its rank, so that an error in the offsets shows (on one machine
 * MPI_Wtime alone is the same clock on every rank). Rank DELAYED sleeps
 * DELAY_MS in its 2nd and 5th clock reads (descheduled in the middle of a
 * round trip, as on a loaded machine) and, on rank 0, in its 21st: with 3
 * ranks the read of the zero just after the barrier, after answering 2
 * ranks' 10 pings. Each rank prints its zero on CLOCK_MONOTONIC, which
 * every process of a machine shares:
 *
 *   rank R zero_s Z error_s E read_s G
 *
 * (G: how far the reading of Z itself may be off.)
 * Usage: clock_align_probe DELAYED DELAY_MS */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../real/clock_align.h"

static int rank, delayed = -1, n_reads;
static long delay_ms;

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double own_clock_s(void) { return MPI_Wtime() + 1000.0 * rank; }

/* own_clock_s, late in the reads named above */
static double aligning_clock_s(void)
{
    n_reads++;
    if (rank == delayed && (n_reads == 2 || n_reads == 5 || n_reads == 21))
        nanosleep(&(struct timespec){delay_ms / 1000, delay_ms % 1000 * 1000000}, NULL);
    return own_clock_s();
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: clock_align_probe DELAYED DELAY_MS\n");
        return 2;
    }
    delayed = atoi(argv[1]);
    delay_ms = atol(argv[2]);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    struct clock_zero z;
    struct err e = {0};
    int rc = clock_align(MPI_COMM_WORLD, aligning_clock_s, &z, &e);
    if (rc == 0) {
        /* The zero on CLOCK_MONOTONIC: own_clock_s read between two reads
         * of it, of 100 tries the closest pair (a rank descheduled between
         * two reads on a loaded machine would move a single pair by ms). */
        double best_gap_s = -1, zero_s = 0;
        for (int k = 0; k < 100; k++) {
            double before_s = monotonic_s(), own_s = own_clock_s(), after_s = monotonic_s();
            if (best_gap_s < 0 || after_s - before_s < best_gap_s) {
                best_gap_s = after_s - before_s;
                zero_s = (before_s + after_s) / 2 - (own_s - z.t0_s);
            }
        }
        printf("rank %d zero_s %.9f error_s %.9f read_s %.9f\n", rank, zero_s, z.error_s,
               best_gap_s / 2);
    } else {
        fprintf(stderr, "rank %d: %s\n", rank, e.msg);
    }
    MPI_Finalize();
    return rc == 0 ? 0 : 1;
}
