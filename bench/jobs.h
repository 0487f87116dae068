/* Private to bench/: numbered tasks run in forked worker processes, each
 * task's result sent back as bytes down its worker's pipe into the slot a
 * run in one process fills (bench/jobs.c). `strata sweep -j` (sweep_jobs.c)
 * and `strata compare -j` (compare_jobs.c) run their tasks through it; each
 * says how a task runs and how its result becomes bytes and back.
 *
 * Each worker is a fork of this process, so it holds the command's state as
 * it was; it takes the next task of the order from a counter in shared
 * memory (so a fast worker takes more). The first task of the order runs
 * here, in this process, while the workers run the others. A task's fatal
 * error (its run returns < 0) stops the tasks above it; those below still
 * run, and the lowest task's fatal error is the one returned, as a run in
 * one process (task order, stopping at the first fatal one) meets it. */
#ifndef STRATA_BENCH_JOBS_H
#define STRATA_BENCH_JOBS_H

#include <stddef.h>

#include "../core/err.h"
#include "../core/vec.h"

typedef VEC(char) jobs_bytes;

struct jobs_tasks {
    const char *what;   /* "sweep", "compare": the command messages name */
    int n_tasks;
    const int *order;   /* [n_tasks]: every task once; order[0] runs in this process */
    void *ctx;          /* every callback's first argument */
    /* In a worker: runs task t into its slot; < 0 a fatal error in e. */
    int (*run)(void *ctx, int t, struct err *e);
    /* In a worker: appends task t's message to out: its slot, or, when
     * fatal is not NULL, that error. ERR_NOMEM. */
    int (*put)(void *ctx, int t, const struct err *fatal, jobs_bytes *out, struct err *e);
    /* Here: one message, msg[0..n), into its task's slot; its task in *t,
     * a fatal error it carries in *fatal. ERR_RUN when it is malformed. */
    int (*get)(void *ctx, const char *msg, size_t n, int *t, struct err *fatal, struct err *e);
    /* Here: runs task order[0] (and whatever checks its result); < 0 fatal. */
    int (*run_here)(void *ctx, int t, struct err *e);
    /* Here, or NULL: task t starts here (order[0]) or came back from a
     * worker; n_done tasks came back before it. */
    void (*progress)(void *ctx, int t, int n_done);
    /* Task t in words for messages: "ps-ssp at devices=8". */
    void (*describe)(void *ctx, int t, char *buf, size_t n);
};

/* Runs every task: order[0] here, meanwhile the others in n_jobs forked
 * workers (at most n_tasks - 1). Returns the lowest task's fatal error, a
 * worker's death (naming the task it held) or a failed pipe, fork or poll;
 * every worker is waited for and every pipe closed, whatever happens. */
int jobs_run(const struct jobs_tasks *jt, int n_jobs, struct err *e);

#endif
