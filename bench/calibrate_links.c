/* The links timed as nccl-tests times them (untimed warm-up, barrier,
 * timed calls; the median), on any communicator: calibrate_links.h. */
#define _POSIX_C_SOURCE 200809L   /* nanosleep */
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "../real/mpi_check.h"
#include "calibrate_links.h"

/* Timed calls of a size: many for small messages, where one is a few
 * microseconds; fewer for large ones, each a few milliseconds. */
static int iters_for(int64_t bytes)
{
    int64_t n = ((int64_t)64 << 20) / (bytes > 0 ? bytes : 1);
    return n < CALIB_MIN_CALLS ? CALIB_MIN_CALLS : n > 200 ? 200 : (int)n;
}

/* comm's rank root's value of *x to every rank of comm, waiting asleep: a
 * rank that polled would take a core from the ranks being timed. */
static int quiet_bcast(double *x, int root, MPI_Comm comm, struct err *e)
{
    MPI_Request req;
    MPI_TRY(e, MPI_Ibcast(x, 1, MPI_DOUBLE, root, comm, &req));
    for (int done = 0;;) {
        MPI_TRY(e, MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        if (done) return 0;
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
}

/* One way between comm ranks a and b: half the median round trip, as a
 * saw it, on every rank of comm. The pair keeps step on a communicator of
 * its own (pair: a is its rank 0, b its 1; MPI_COMM_NULL elsewhere), and
 * the other ranks sleep meanwhile: ranks polling in a barrier would take
 * the cores the pair is timed on when ranks outnumber cores. */
static int time_pingpong(MPI_Comm comm, int a, MPI_Comm pair, char *buf, int64_t bytes,
                         int iters, double *s, struct err *e)
{
    double t[200 + CALIB_WARMUP_CALLS];
    int n = (int)bytes, me = -1;
    if (pair != MPI_COMM_NULL) MPI_TRY(e, MPI_Comm_rank(pair, &me));
    for (int i = 0; me >= 0 && i < iters + CALIB_WARMUP_CALLS; i++) {
        MPI_TRY(e, MPI_Barrier(pair));
        double t0 = MPI_Wtime();
        if (me == 0) {
            MPI_TRY(e, MPI_Send(buf, n, MPI_BYTE, 1, 0, pair));
            MPI_TRY(e, MPI_Recv(buf, n, MPI_BYTE, 1, 0, pair, MPI_STATUS_IGNORE));
        } else {
            MPI_TRY(e, MPI_Recv(buf, n, MPI_BYTE, 0, 0, pair, MPI_STATUS_IGNORE));
            MPI_TRY(e, MPI_Send(buf, n, MPI_BYTE, 0, 0, pair));
        }
        if (i >= CALIB_WARMUP_CALLS) t[i - CALIB_WARMUP_CALLS] = (MPI_Wtime() - t0) / 2;
    }
    double mine = me >= 0 ? calib_median(t, iters) : 0;
    TRY(quiet_bcast(&mine, a, comm, e));
    *s = mine;
    return 0;
}

/* The median call on each rank of ar_comm, the slowest rank's (the
 * collective is done when its last member is), as comm rank a's ar_comm
 * saw it, on every rank of comm. Called as real/worker.c runs an
 * ALLREDUCE: nonblocking, then tested, yielding the core between tests. */
static int time_allreduce(MPI_Comm comm, int a, MPI_Comm ar_comm, float *buf, int64_t bytes,
                          int iters, double *s, struct err *e)
{
    double t[200 + CALIB_WARMUP_CALLS];
    int n = (int)(bytes / (int64_t)sizeof(float));
    double slowest = 0;
    for (int i = 0; ar_comm != MPI_COMM_NULL && i < iters + CALIB_WARMUP_CALLS; i++) {
        MPI_TRY(e, MPI_Barrier(ar_comm));
        double t0 = MPI_Wtime();
        MPI_Request req;
        MPI_TRY(e, MPI_Iallreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, ar_comm, &req));
        for (int done = 0;;) {
            MPI_TRY(e, MPI_Test(&req, &done, MPI_STATUS_IGNORE));
            if (done) break;
            sched_yield();
        }
        if (i >= CALIB_WARMUP_CALLS) t[i - CALIB_WARMUP_CALLS] = MPI_Wtime() - t0;
    }
    if (ar_comm != MPI_COMM_NULL) {
        double mine = calib_median(t, iters);
        MPI_TRY(e, MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, ar_comm));
    }
    TRY(quiet_bcast(&slowest, a, comm, e));
    *s = slowest;
    return 0;
}

/* Collective over comm; rc is this rank's outcome of a step. As
 * mpi_check_agree, on any communicator: the lowest failing rank's code. */
static int agree(MPI_Comm comm, int rc, struct err *e)
{
    if (comm == MPI_COMM_WORLD) return mpi_check_agree(rc, e);
    int worst = rc;
    MPI_TRY(e, MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, comm));
    if (worst < 0 && rc == 0) err_set(e, worst, "calibrate: another rank failed");
    return worst;
}

int calib_links_measure(MPI_Comm comm, int a, int b, MPI_Comm ar_comm, int64_t max_bytes,
                        struct calib_comm *out, struct err *e)
{
    int n = 0;
    for (int64_t bytes = 8; bytes < max_bytes && n < CALIB_MAX_SIZES - 1; bytes *= 4)
        out->sizes[n++].bytes = bytes;
    out->sizes[n++].bytes = max_bytes;
    out->n_sizes = n;
    double ar_ranks = 0;
    if (ar_comm != MPI_COMM_NULL) {
        int size = 0;
        MPI_TRY(e, MPI_Comm_size(ar_comm, &size));
        ar_ranks = size;
    }
    TRY(quiet_bcast(&ar_ranks, a, comm, e));
    out->n_ranks = (int)ar_ranks;
    int rank = 0;
    MPI_TRY(e, MPI_Comm_rank(comm, &rank));
    MPI_Comm pair = MPI_COMM_NULL;
    MPI_TRY(e, MPI_Comm_split(comm, rank == a || rank == b ? 0 : MPI_UNDEFINED,
                              rank == a ? 0 : 1, &pair));
    /* zeros: the all-reduce's sums stay 0 however often it runs */
    char *buf = calloc((size_t)max_bytes, 1);
    /* every rank has its buffer, or all stop: the timing is collective */
    int rc = agree(comm, buf ? 0 : err_set(e, ERR_NOMEM, "calibrate: no memory for a "
                                          "%lld-byte message buffer", (long long)max_bytes),
                   e);
    for (int i = 0; rc == 0 && i < n; i++) {
        struct calib_size *z = &out->sizes[i];
        z->iters = iters_for(z->bytes);
        rc = time_pingpong(comm, a, pair, buf, z->bytes, z->iters, &z->pingpong_s, e);
        if (rc == 0)
            rc = time_allreduce(comm, a, ar_comm, (float *)(void *)buf, z->bytes, z->iters,
                                &z->allreduce_s, e);
    }
    free(buf);
    if (pair != MPI_COMM_NULL) MPI_Comm_free(&pair);
    return agree(comm, rc, e);
}

int calib_links_fit(struct calib_comm *c, struct err *e)
{
    int64_t bytes[CALIB_MAX_SIZES];
    double t[CALIB_MAX_SIZES], ar[CALIB_MAX_SIZES];
    for (int i = 0; i < c->n_sizes; i++) {
        bytes[i] = c->sizes[i].bytes;
        t[i] = c->sizes[i].pingpong_s;
        ar[i] = c->sizes[i].allreduce_s;
    }
    TRY(calib_fit_link(bytes, t, c->n_sizes, &c->latency_s, &c->bw_bytes_per_s, e));
    c->fit_worst = 0;
    for (int i = 0; i < c->n_sizes; i++) {
        double fit = c->latency_s + (double)bytes[i] / c->bw_bytes_per_s;
        double off = fabs(fit / t[i] - 1);
        if (off > c->fit_worst) c->fit_worst = off;
    }
    c->gamma_s_per_byte = calib_fit_gamma(bytes, ar, c->n_sizes, c->n_ranks, c->latency_s,
                                          c->bw_bytes_per_s);
    return 0;
}

