/* A simulated sweep's tasks in forked worker processes (strata sweep -j N),
 * through bench/jobs.h: each worker runs tasks of the order (costliest
 * first, sweep_order.c: the tasks that end last are short ones, so the
 * workers end together) and sends each result as a message (sweep_wire.c),
 * which this process puts into its task's slot. Task 0 runs here while the
 * workers start on the others: it is the baseline whose sim the header
 * reads, and a devices sweep's baseline that did not run is the fatal
 * error that ends the sweep (sweep_check_baseline). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "sweep_tasks.h"

struct sweep_jobs {
    struct sweep *s;
    const struct config *cfg;
    const struct workload *wl;
    struct run_numerics *numerics;
    sweep_progress_fn progress;
    void *ctx;
};

static int run(void *ctx, int t, struct err *e)
{
    struct sweep_jobs *j = ctx;
    return sweep_task_run(j->s, j->cfg, j->wl, j->numerics, t, e);
}

static int run_here(void *ctx, int t, struct err *e)
{
    struct sweep_jobs *j = ctx;
    TRY(run(ctx, t, e));
    return t == 0 ? sweep_check_baseline(j->s, e) : 0;
}

static int put(void *ctx, int t, const struct err *fatal, jobs_bytes *out, struct err *e)
{
    struct sweep_jobs *j = ctx;
    return sweep_wire_put(out, t, sweep_task_slot(j->s, t), fatal, e);
}

static int get(void *ctx, const char *msg, size_t n, int *t, struct err *fatal, struct err *e)
{
    struct sweep_jobs *j = ctx;
    size_t used = 0;
    TRY(sweep_wire_get(msg, n, j->s, &used, t, fatal, e));
    if (used != n) return err_set(e, ERR_RUN, "a sweep worker's message is malformed");
    return 0;
}

static void progress(void *ctx, int t, int n_done)
{
    struct sweep_jobs *j = ctx;
    const char *strategy, *value;
    sweep_task_name(j->s, t, &strategy, &value);
    j->progress(j->ctx, strategy, value, n_done, sweep_n_tasks(j->s));
}

/* "ps-ssp at devices=8", "the one-device baseline" for messages. */
static void describe(void *ctx, int t, char *buf, size_t n)
{
    const struct sweep *s = ((struct sweep_jobs *)ctx)->s;
    const char *strategy, *value;
    sweep_task_name(s, t, &strategy, &value);
    snprintf(buf, n, "%s%s%s%.60s", strategy ? strategy : "the one-device baseline",
             value ? " at " : "", value ? s->axis.opt->name : "", value ? "=" : "");
    if (value) snprintf(buf + strlen(buf), n - strlen(buf), "%.60s", value);
}

int sweep_jobs_run(struct sweep *s, const struct config *cfg, const struct workload *wl,
                   struct run_numerics *numerics, int n_jobs, sweep_progress_fn progress_fn,
                   void *ctx, struct err *e)
{
    int total = sweep_n_tasks(s);
    int *order = XCALLOC(e, (size_t)total, sizeof *order);
    if (!order || sweep_task_order(s, cfg, wl, order, e) < 0) {
        free(order);
        return ERR_NOMEM;
    }
    struct sweep_jobs j = {s, cfg, wl, numerics, progress_fn, ctx};
    const struct jobs_tasks jt = {
        .what = "sweep", .n_tasks = total, .order = order, .ctx = &j, .run = run, .put = put,
        .get = get, .run_here = run_here, .progress = progress_fn ? progress : NULL,
        .describe = describe,
    };
    int rc = jobs_run(&jt, n_jobs, e);
    free(order);
    return rc;
}
