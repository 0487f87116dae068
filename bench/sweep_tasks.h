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

#include "../core/vec.h"
#include "sweep.h"

typedef VEC(char) sweep_bytes;

/* The baselines and the points. */
int sweep_n_tasks(const struct sweep *s);

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

/* --- The wire: one task's result as bytes (sweep_wire.c) ------------------------
 * A message holds task t's run (rc, note, devices, batch, exceeds_memory and
 * its report as the JSON report_to_json writes, which report_doc_parse reads
 * back to the same bytes), or, when fatal is non-zero, the error that ended
 * the worker's tasks at t (fatal and its message). Processes of one build
 * exchange them: the header's size checks catch a stranger. */

/* Appends task t's message to out. ERR_NOMEM. */
int sweep_wire_put(sweep_bytes *out, int t, const struct sweep_run *r, const struct err *fatal,
                   struct err *e);

/* The bytes a message starts with, and from them its whole length (the
 * head included). ERR_RUN when head is not a message of this build. */
size_t sweep_wire_head_bytes(void);
int sweep_wire_length(const char *head, size_t *len, struct err *e);

/* Reads one message from buf[0..n): its length in *used, its task in *t.
 * A result goes into s's slot of that task (read as a real-mode report
 * document: run.real, run.report its first report); a fatal error into
 * *fatal. ERR_RUN when the bytes are not a whole message of this build. */
int sweep_wire_get(const char *buf, size_t n, struct sweep *s, size_t *used, int *t,
                   struct err *fatal, struct err *e);

/* Where the tasks after task 0 run (task 0 has run here already, and
 * sweep_check_baseline passed): n_jobs forked workers (sweep_jobs.c). A
 * fatal error of a task (lowest task first, as in one process) comes back
 * in e. */
int sweep_jobs_run(struct sweep *s, const struct config *cfg, const struct workload *wl,
                   struct run_numerics *numerics, int n_jobs, sweep_progress_fn progress,
                   void *ctx, struct err *e);

/* Every task t with t % n_ranks == rank on this rank, the results gathered
 * on rank 0 (sweep_mpi.c). Collective over MPI_COMM_WORLD. */
int sweep_mpi_run(struct sweep *s, const struct config *cfg, const struct workload *wl,
                  struct run_numerics *numerics, int rank, int n_ranks,
                  sweep_progress_fn progress, void *ctx, struct err *e);

#endif
