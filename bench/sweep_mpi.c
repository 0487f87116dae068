/* A sweep's tasks over the ranks of the MPI job this process is one of
 * (mpirun -np R strata sweep ...): rank r runs tasks r, r + R, r + 2R, ...
 * (so rank 0 runs task 0, the baseline the header reads), one at a time:
 * mpirun gives each rank its core. The other ranks' results travel to rank
 * 0 as messages (sweep_wire.c), gathered once at the end, and rank 0's sweep
 * is then the one a run in one process makes. As with forked workers, the
 * fatal error of the lowest task wins; a rank stops at its first. */
#include <limits.h>
#include <stdlib.h>

#include <mpi.h>

#include "../real/mpi_check.h"
#include "sweep_tasks.h"

/* This rank's tasks: rank 0's stay in their slots, the others' are appended
 * to out. A fatal error (or task 0's failed baseline) ends them, at *at. */
static int run_mine(struct sweep *s, const struct config *cfg, const struct workload *wl,
                    struct run_numerics *numerics, int rank, int n_ranks,
                    sweep_progress_fn progress, void *ctx, sweep_bytes *out, int *at,
                    struct err *fatal, struct err *e)
{
    int total = sweep_n_tasks(s);
    for (int t = rank; t < total; t += n_ranks) {
        const char *strategy, *value;
        sweep_task_name(s, t, &strategy, &value);
        if (progress) progress(ctx, strategy, value, t, total);
        int rc = sweep_task_run(s, cfg, wl, numerics, t, fatal);
        if (rc == 0 && t == 0) rc = sweep_check_baseline(s, fatal);
        if (rc < 0) *at = t;
        if (rank > 0) TRY(sweep_wire_put(out, t, sweep_task_slot(s, t), rc < 0 ? fatal : NULL, e));
        if (rc < 0) return 0;
    }
    return 0;
}

/* Rank 0: every other rank's messages, buf[0..n), into their slots. */
static int take_messages(struct sweep *s, const char *buf, size_t n, int n_ranks, int *at,
                         struct err *fatal, struct err *e)
{
    int total = sweep_n_tasks(s), expected = total - (total + n_ranks - 1) / n_ranks, got = 0;
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
static int gather(struct sweep *s, int rank, int n_ranks, const sweep_bytes *out, int *at,
                  struct err *fatal, struct err *e)
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
    if (rank == 0 && rc == 0) rc = take_messages(s, all, (size_t)sum, n_ranks, at, fatal, e);
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
    int at = sweep_n_tasks(s) + 1;
    int rc = run_mine(s, cfg, wl, numerics, rank, n_ranks, progress, ctx, &out, &at, &fatal, e);
    if (rc < 0) vec_free(&out);   /* a message may be half written: send none (rank 0 says so) */
    /* Every rank gathers, whatever happened to it: one that left would hang
     * the others. */
    struct err gather_e = {0};
    int rc_gather = gather(s, rank, n_ranks, &out, &at, &fatal, &gather_e);
    vec_free(&out);
    if (rc < 0) return rc;
    if (rc_gather < 0) return err_set(e, rc_gather, "%s", gather_e.msg);
    if (rank == 0 && at <= sweep_n_tasks(s)) return err_set(e, fatal.code, "%s", fatal.msg);
    return 0;
}
