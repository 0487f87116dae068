/* A sweep's tasks over the ranks of the MPI job this process is one of
 * (mpirun -np R strata sweep ...). Every rank deals the tasks the same way,
 * from the same options: costliest first (sweep_order.c), each to the rank
 * with the least estimated work so far, task 0 (the baseline the header
 * reads) to rank 0; a rank runs its tasks one at a time, in that order
 * (mpirun gives each rank its core). The other ranks' results travel to
 * rank 0 as messages (sweep_wire.c), gathered once at the end, and rank 0's
 * sweep is then the one a run in one process makes. As with forked
 * workers, the fatal error of the lowest task wins: a rank whose task t
 * fails fatally runs no task above t but still those below it, so every
 * task below the lowest fatal one has run. */
#include <limits.h>
#include <stdlib.h>

#include <mpi.h>

#include "../real/mpi_check.h"
#include "sweep_tasks.h"

/* The rank each task goes to, owner[t]: the tasks in order, each to the
 * rank with the least estimated work so far (the lowest such rank), task 0
 * to rank 0. */
static void deal(const struct sweep *s, const struct config *cfg, const struct workload *wl,
                 const int *order, int n_ranks, double *load, int *owner)
{
    for (int i = 0; i < sweep_n_tasks(s); i++) {
        int t = order[i], least = 0;
        for (int r = 1; t != 0 && r < n_ranks; r++)   /* O(ranks) a task: a sweep's few points */
            if (load[r] < load[least]) least = r;
        owner[t] = least;
        /* a task of no estimated cost still counts, so that they spread */
        load[least] += sweep_task_cost(s, cfg, wl, t) + 1;
    }
}

/* This rank's tasks: rank 0's stay in their slots, the others' are appended
 * to out. A fatal error (or task 0's failed baseline) at t, kept in *at and
 * fatal when it is this rank's lowest, skips the tasks above t. */
static int run_mine(struct sweep *s, const struct config *cfg, const struct workload *wl,
                    struct run_numerics *numerics, int rank, const int *order,
                    const int *owner, sweep_progress_fn progress, void *ctx, sweep_bytes *out,
                    int *at, struct err *fatal, struct err *e)
{
    int total = sweep_n_tasks(s);
    for (int i = 0, done = 0; i < total; i++) {
        int t = order[i];
        if (owner[t] != rank || t > *at) continue;
        const char *strategy, *value;
        sweep_task_name(s, t, &strategy, &value);
        if (progress) progress(ctx, strategy, value, done++, total);
        struct err f = {0};
        int rc = sweep_task_run(s, cfg, wl, numerics, t, &f);
        if (rc == 0 && t == 0) rc = sweep_check_baseline(s, &f);
        if (rc < 0) {
            *at = t;   /* lower than any before: those above it were skipped */
            *fatal = f;
        }
        if (rank > 0) TRY(sweep_wire_put(out, t, sweep_task_slot(s, t), rc < 0 ? &f : NULL, e));
    }
    return 0;
}

/* Rank 0: every other rank's messages, buf[0..n), into their slots. */
static int take_messages(struct sweep *s, const char *buf, size_t n, int expected, int *at,
                         struct err *fatal, struct err *e)
{
    int total = sweep_n_tasks(s), got = 0;
    for (; n; got++) {
        size_t used = 0;
        int t = 0;
        struct err f = {0};
        TRY(sweep_wire_get(buf, n, s, &used, &t, &f, e));
        if (f.code && t < *at) {
            *at = t;
            *fatal = f;
        }
        buf += used;
        n -= used;
    }
    if (got < expected && *at > total)
        return err_set(e, ERR_RUN, "the other ranks sent %d of their %d runs' results", got,
                       expected);
    return 0;
}

/* Gathers every rank's out on rank 0 and reads it there. */
static int gather(struct sweep *s, int rank, int n_ranks, int expected, const sweep_bytes *out,
                  int *at, struct err *fatal, struct err *e)
{
    int mine = out->len > INT_MAX ? -1 : (int)out->len;
    int *counts = NULL, *offsets = NULL;
    char *all = NULL;
    long long sum = 0;
    if (rank == 0) {
        counts = calloc((size_t)n_ranks, sizeof *counts);
        offsets = calloc((size_t)n_ranks, sizeof *offsets);
    }
    int rc = rank == 0 && (!counts || !offsets) ? err_set(e, ERR_NOMEM, "out of memory") : 0;
    int mpi = MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc == 0 && mpi != MPI_SUCCESS) rc = mpi_check_fail(e, mpi, "MPI_Gather", __FILE__, __LINE__);
    for (int r = 0; rank == 0 && rc == 0 && r < n_ranks; r++) {
        if (counts[r] < 0 || sum + counts[r] > INT_MAX)
            rc = err_set(e, ERR_RUN, "the sweep's results do not fit one MPI_Gatherv (2 GiB): "
                         "run fewer points a job");
        offsets[r] = (int)sum;
        sum += counts[r];
    }
    /* Every rank goes on to the Gatherv: a rank that stopped here would hang
     * the others. Rank 0 then receives nothing when it cannot take it. */
    if (rank == 0 && (rc < 0 || !(all = malloc(sum ? (size_t)sum : 1)))) {
        if (rc == 0) rc = err_set(e, ERR_NOMEM, "out of memory gathering the sweep");
        for (int r = 0; r < n_ranks; r++) counts[r] = offsets[r] = 0;
    }
    mpi = MPI_Gatherv(out->items, mine < 0 ? 0 : mine, MPI_CHAR, all, counts, offsets, MPI_CHAR,
                      0, MPI_COMM_WORLD);
    if (rc == 0 && mpi != MPI_SUCCESS)
        rc = mpi_check_fail(e, mpi, "MPI_Gatherv", __FILE__, __LINE__);
    if (rank == 0 && rc == 0) rc = take_messages(s, all, (size_t)sum, expected, at, fatal, e);
    free(all);
    free(counts);
    free(offsets);
    return rc;
}

int sweep_mpi_run(struct sweep *s, const struct config *cfg, const struct workload *wl,
                  struct run_numerics *numerics, int rank, int n_ranks,
                  sweep_progress_fn progress, void *ctx, struct err *e)
{
    sweep_bytes out = {0};
    struct err fatal = {0};
    int total = sweep_n_tasks(s), at = total + 1, expected = 0;
    int *order = calloc((size_t)total, sizeof *order), *owner = calloc((size_t)total, sizeof *owner);
    double *load = calloc((size_t)n_ranks, sizeof *load);
    int rc = order && owner && load ? sweep_task_order(s, cfg, wl, order, e)
                                    : err_set(e, ERR_NOMEM, "out of memory dealing the sweep");
    if (rc == 0) {
        deal(s, cfg, wl, order, n_ranks, load, owner);
        for (int t = 0; t < total; t++) expected += owner[t] != 0;
        rc = run_mine(s, cfg, wl, numerics, rank, order, owner, progress, ctx, &out, &at, &fatal,
                      e);
    }
    free(order);
    free(owner);
    free(load);
    if (rc < 0) vec_free(&out);   /* a message may be half written: send none (rank 0 says so) */
    /* Every rank gathers, whatever happened to it: one that left would hang
     * the others. */
    struct err gather_e = {0};
    int rc_gather = gather(s, rank, n_ranks, expected, &out, &at, &fatal, &gather_e);
    vec_free(&out);
    if (rc < 0) return rc;
    if (rc_gather < 0) return err_set(e, rc_gather, "%s", gather_e.msg);
    if (rank == 0 && at <= sweep_n_tasks(s)) return err_set(e, fatal.code, "%s", fatal.msg);
    return 0;
}
