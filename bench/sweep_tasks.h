/* Private to bench/: a sweep's runs as numbered tasks, so that one process
 * (sweep.c), forked workers (sweep_jobs.c) or the ranks of an MPI job
 * (sweep_mpi.c) can each run some of them, and the results travel back as
 * bytes (sweep_wire.c) into the same slots a run in one process fills.
 *
 * Task t < n_baselines is baseline t; the others are the points, value-major
 * (the strategies of one value one after another: what numerics share is
 * computed once a value). Task 0 always runs in the process that prints:
 * it is the devices sweep's baseline, whose failure ends the sweep, and the
 * header reads its cluster. */
#ifndef STRATA_BENCH_SWEEP_TASKS_H
#define STRATA_BENCH_SWEEP_TASKS_H

#include <stddef.h>

#include "jobs.h"
#include "sweep.h"

typedef jobs_bytes sweep_bytes;

/* The baselines and the points. */
int sweep_n_tasks(const struct sweep *s);

/* The index of task t's point, t >= n_baselines: tasks are value-major,
 * the points strategy-major. */
int sweep_task_point(const struct sweep *s, int t);

/* Where task t's result goes. */
struct sweep_run *sweep_task_slot(struct sweep *s, int t);

/* Task t for progress lines: its strategy (NULL: a baseline) and value
 * (NULL: the baseline every value shares). */
void sweep_task_name(const struct sweep *s, int t, const char **strategy, const char **value);

/* Runs task t into its slot. Fails only as sweep_run does: a point's config
 * cannot be made, or out of memory; a failed run is the slot's rc and note. */
int sweep_task_run(struct sweep *s, const struct config *cfg, const struct workload *wl,
                   struct run_numerics *numerics, int t, struct err *e);

/* The error that ends a sweep when task 0, a devices sweep's baseline, did
 * not run; 0 otherwise. */
int sweep_check_baseline(const struct sweep *s, struct err *e);

/* --- The order tasks run in when spread (sweep_order.c) -----------------------
 * Task 0 first, then the others costliest first (longest processing time
 * first), ties in task order; the printed order is the slots', whatever
 * order the tasks ran in. */

/* Task t's estimated cost: the bound on its simulation's events that
 * core/budget computes from its options (ranks x ops a step x steps). */
double sweep_task_cost(const struct sweep *s, const struct config *cfg,
                       const struct workload *wl, int t);

/* order[0..sweep_n_tasks(s)): every task once, in that order. ERR_NOMEM. */
int sweep_task_order(const struct sweep *s, const struct config *cfg, const struct workload *wl,
                     int *order, struct err *e);

/* --- The wire: one task's result as bytes (sweep_wire.c) ------------------------
 * A message holds task t's run (rc, note, devices, batch, exceeds_memory,
 * the plan's note and its report as the JSON report_to_json writes, which
 * report_doc_parse reads back to the same bytes), or, when fatal is
 * non-zero, the error that ended the worker's tasks at t (fatal and its
 * message). Processes of one build exchange them: the header's size checks
 * catch a stranger. compare -j (compare_jobs.c) sends its runs as the same
 * messages. */

/* Appends task t's message to out. ERR_NOMEM. */
int sweep_wire_put(sweep_bytes *out, int t, const struct sweep_run *r, const struct err *fatal,
                   struct err *e);

/* Where a message of task t goes: NULL when t is not a task. */
typedef struct sweep_run *(*sweep_wire_slot_fn)(void *ctx, int t);

/* Reads one message from buf[0..n): its length in *used, its task in *t.
 * A result goes into slot(ctx, t) (read as a real-mode report document:
 * run.real, run.report its first report); a fatal error into *fatal.
 * ERR_RUN when the bytes are not a whole message of this build. */
int sweep_wire_read(const char *buf, size_t n, sweep_wire_slot_fn slot, void *ctx, size_t *used,
                    int *t, struct err *fatal, struct err *e);

/* sweep_wire_read into s's slot of the message's task. */
int sweep_wire_get(const char *buf, size_t n, struct sweep *s, size_t *used, int *t,
                   struct err *fatal, struct err *e);

/* Every task: task 0 in this process, meanwhile the others in n_jobs
 * forked workers, costliest first (sweep_jobs.c). A fatal error of a task
 * (task 0's failed baseline included: sweep_check_baseline) comes back in e:
 * the lowest task's, as in one process. */
int sweep_jobs_run(struct sweep *s, const struct config *cfg, const struct workload *wl,
                   struct run_numerics *numerics, int n_jobs, sweep_progress_fn progress,
                   void *ctx, struct err *e);

/* The tasks dealt to this rank (sweep_mpi.c: costliest first, each to the
 * rank with the least estimated work so far; task 0 to rank 0), the results
 * gathered on rank 0. Collective over MPI_COMM_WORLD. */
int sweep_mpi_run(struct sweep *s, const struct config *cfg, const struct workload *wl,
                  struct run_numerics *numerics, int rank, int n_ranks,
                  sweep_progress_fn progress, void *ctx, struct err *e);

#endif
