/* The order a spread sweep runs its tasks in: the longest first (Graham's
 * "longest processing time" rule), so that the last task to end is a short
 * one and no worker idles while another finishes a long point alone. With
 * tasks in print order a devices sweep ends on its largest value, its
 * costliest points, and on 2 workers the last of them ran alone.
 *
 * A task's cost is known before it runs only as an estimate: the bound on
 * the events its simulation handles that core/budget computes from the
 * options (ranks x ops a step x steps), which is what a simulated point's
 * time grows with. It ignores how a strategy's plan differs from another's
 * at the same size, so ties keep print order.
 *
 * A value's tasks stay together (the values costliest first, then within a
 * value its tasks costliest first): with numerics, what a value's
 * synchronous strategies share is computed once a value in each process
 * (bench/run_numerics.h), so a worker taking one value's tasks in a row
 * computes it once. Printing is not affected: results go into their slots,
 * and the sweep is printed from the slots. */
#include <stdio.h>
#include <stdlib.h>

#include "../core/budget.h"
#include "sweep_tasks.h"

/* The value task t runs at, -1 for the one baseline all values share. */
static int value_of(const struct sweep *s, int t)
{
    if (t < s->n_baselines) return s->n_baselines > 1 ? t : -1;
    return s->points[sweep_task_point(s, t)].value;
}

double sweep_task_cost(const struct sweep *s, const struct config *cfg,
                       const struct workload *wl, int t)
{
    const struct sweep_axis *ax = &s->axis;
    const char *strategy, *value;
    sweep_task_name(s, t, &strategy, &value);
    int v = value_of(s, t) < 0 ? 0 : value_of(s, t);
    struct config c;
    struct err ignored = {0};
    /* The values were all checked before the sweep runs (sweep_axis_parse):
     * a config that cannot be made here is a point that fails at once. */
    if (sweep_point_config(ax, cfg, v, &c, &ignored) < 0) return 0;
    /* the task's strategy's plan, ps-* strategies' servers counted; a
     * baseline is mirrored, on one device in a devices sweep */
    snprintf(c.strategy, sizeof c.strategy, "%s", strategy ? strategy : "mirrored");
    if (!strategy && ax->is_devices) c.devices = 1;
    const struct strategy *st = strategy ? strategy_find(strategy, &ignored) : NULL;
    struct budget_plan plan;
    strategy_plan_size(st ? st : strategy_baseline(), &c, wl, &plan);
    struct budget b;
    budget_estimate(&c, wl, 0, &plan, &b);
    return b.events;
}

struct ranked {
    int task;
    int value;           /* the value it runs at; -1: the baseline every value shares */
    double value_cost;   /* the costliest task at that value */
    double cost;
};

/* The costlier value first, then the costlier task; equal ones in task
 * order (qsort is not stable). */
static int costlier_first(const void *pa, const void *pb)
{
    const struct ranked *a = pa, *b = pb;
    if (a->value_cost != b->value_cost) return a->value_cost > b->value_cost ? -1 : 1;
    if (a->value != b->value) return a->value < b->value ? -1 : 1;
    if (a->cost != b->cost) return a->cost > b->cost ? -1 : 1;
    return (a->task > b->task) - (a->task < b->task);
}

int sweep_task_order(const struct sweep *s, const struct config *cfg, const struct workload *wl,
                     int *order, struct err *e)
{
    int total = sweep_n_tasks(s);
    struct ranked *r = XCALLOC(e, (size_t)total, sizeof *r);
    if (!r) return ERR_NOMEM;
    double value_cost[SWEEP_MAX_VALUES] = {0}, shared_cost = 0;
    for (int t = 1; t < total; t++) {
        r[t] = (struct ranked){t, value_of(s, t), 0, sweep_task_cost(s, cfg, wl, t)};
        double *most = r[t].value < 0 ? &shared_cost : &value_cost[r[t].value];
        if (r[t].cost > *most) *most = r[t].cost;
    }
    for (int t = 1; t < total; t++)
        r[t].value_cost = r[t].value < 0 ? shared_cost : value_cost[r[t].value];
    qsort(r + 1, (size_t)(total - 1), sizeof *r, costlier_first);
    order[0] = 0;   /* task 0 first, wherever it runs: its failure ends the sweep */
    for (int i = 1; i < total; i++) order[i] = r[i].task;
    free(r);
    return 0;
}
