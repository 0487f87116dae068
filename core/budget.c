#include <math.h>
#include <stdio.h>
#include <string.h>

#include "budget.h"

/* The plan a simulation builds and runs, in bytes per op (the op, its
 * dependencies, the executor's per-op state, the event queue's and the
 * trace's share) and per rank (its program's vectors, the executor's and
 * the analysis' per-rank state, a server's slot per worker), over the ops
 * the strategy bounds (core/budget.h struct budget_plan). Measured as peak
 * RSS (/usr/bin/time -f %M, strata sim --max-memory 30) over the plan's op
 * count: pipeline-1f1b and -zb on 4 stages x 16384 microbatches
 * (fmnist-deep, 10 steps) and on 2000 stages x 64 (a 2000-layer
 * transformer, 3 steps) peak at 280-291 B an op; on 100,000 devices of
 * gpt2-small (10 steps), mirrored and pipelined-steps (18 ops a rank) at
 * 5.9 KB a rank, mirrored-zero1 (33) at 10.6 KB, ps-sync and ps-async (4,
 * and a server) at 2.2-2.4 KB; model on 2000 stages (7) at 2.3 KB beyond
 * the process's own 12 MB. A fit through them is ~310 B an op and ~400 B a
 * rank, ~1.1 KB with servers; the figures here are ~1.5x that, since a
 * plan's vectors grow by doubling and a rank's ops may sit just past a
 * power of two: the estimate is 1.4-2x the peaks measured. */
#define BUDGET_BYTES_PER_OP 448.0
#define BUDGET_BYTES_PER_RANK 1536.0
/* Bytes a simulation keeps per rank and step (step times, the analysis'
 * per-step records): ps-async on 4 ranks for 400k steps grew 18 MB, ~11 B. */
#define BUDGET_BYTES_PER_RANK_STEP 32.0
/* A replica's parameters, gradients, momentum and one buffer, fp32. */
#define BUDGET_PARAM_COPIES 4.0
/* A real rank before its model: the process, MPI's buffers, the device
 * library (OpenBLAS or oneDNN) and its threads. */
#define BUDGET_BYTES_PER_REAL_RANK (64.0 * 1024 * 1024)
/* Training samples an epoch has when --epochs sets the steps: the largest
 * set strata ships with (Fashion-MNIST, 60,000). */
#define BUDGET_EPOCH_SAMPLES 60000.0

static double gib(double bytes)
{
    return bytes / (1024.0 * 1024 * 1024);
}

/* bytes in GiB, the unit of --max-memory, with the digits that tell it from
 * a limit as small as 0.001: one decimal read "0.0 GiB ... more than
 * --max-memory 0.001" for a 3 MiB run. */
static void gib_text(char *buf, size_t n, double bytes)
{
    double g = gib(bytes);
    snprintf(buf, n, g >= 0.95 ? "%.1f" : "%.2g", g);
}

static void set_part(struct budget_part *p, double bytes, const char *option, const char *fmt,
                     double a, double b, double c)
{
    p->bytes = bytes;
    p->option = option;
    snprintf(p->why, sizeof p->why, fmt, a, b, c);
}

void budget_estimate(const struct config *c, const struct workload *w, unsigned groups,
                     const struct budget_plan *plan, struct budget *out)
{
    memset(out, 0, sizeof *out);
    double params = 0;
    for (int i = 0; i < w->n_layers; i++) params += (double)w->layers[i].params;
    /* Servers are ranks of ps-* strategies only; commands of several
     * strategies may run one. */
    bool has_servers = !strncmp(c->strategy, "ps-", 3) || (groups & OPTG_COMPARE);
    double servers = has_servers ? (double)c->servers : 0;
    /* The plan: its ranks, and its ops a step spread over them (rounded up,
     * so that ranks x ops a step is at least the plan's ops); each op costs
     * BUDGET_BYTES_PER_OP plus its share of its rank's BUDGET_BYTES_PER_RANK. */
    double ranks = plan->ranks > 1 ? plan->ranks : 1;
    double ops = ceil(plan->ops / ranks);
    if (ops < 1) ops = 1;
    double plan_bytes = ranks * (ops * BUDGET_BYTES_PER_OP + BUDGET_BYTES_PER_RANK);
    double op_bytes = ceil(plan_bytes / (ranks * ops));
    /* the plan's size is ranks x ops: microbatches drive it when they
     * multiply most of the ops and the ops outnumber the ranks */
    bool drives_micro = plan->micro_ops > plan->ops / 2 && ops > ranks;
    double steps = c->epochs > 0
                       ? (double)c->epochs * (BUDGET_EPOCH_SAMPLES / (double)c->batch + 1)
                       : (double)c->steps;
    bool is_sim = !(groups & OPTG_LAUNCH) || (groups & OPTG_COMPARE);
    bool is_real = (groups & OPTG_LAUNCH) &&
                   (!(groups & OPTG_COMPARE) || (groups & OPTG_VALIDATE) ||
                    !strcmp(c->mode, "real"));
    if (is_sim) {
        set_part(&out->parts[BUDGET_PLAN], ranks * ops * op_bytes,
                 drives_micro ? "microbatches" : "devices",
                 "%.0f ranks x %.0f ops a step x %.0f B", ranks, ops, op_bytes);
        set_part(&out->parts[BUDGET_STEPS], ranks * steps * BUDGET_BYTES_PER_RANK_STEP,
                 c->epochs > 0 ? "epochs" : "steps", "%.0f ranks x %.0f steps x %.0f B", ranks,
                 steps, BUDGET_BYTES_PER_RANK_STEP);
        out->events = ranks * ops * steps;
        /* blamed on the largest of the three factors */
        out->events_option = steps >= ranks && steps >= ops ? (c->epochs > 0 ? "epochs" : "steps")
                             : drives_micro                 ? "microbatches"
                                                            : "devices";
        snprintf(out->events_why, sizeof out->events_why,
                 "%.0f ranks x %.0f ops a step x %.0f steps", ranks, ops, steps);
        if (c->numerics)
            set_part(&out->parts[BUDGET_NUMERICS],
                     ranks * params * BUDGET_PARAM_COPIES * w->elem_bytes, "model",
                     "%.0f ranks x %.0f parameters x %.0f copies", ranks, params,
                     BUDGET_PARAM_COPIES);
    }
    if (is_real) {
        double np = (double)(c->np ? c->np : c->devices) + servers;
        set_part(&out->parts[BUDGET_REAL],
                 np * (BUDGET_BYTES_PER_REAL_RANK + params * BUDGET_PARAM_COPIES * w->elem_bytes),
                 c->np ? "np" : "devices", "%.0f ranks x (64 MiB + %.0f parameters x %.0f copies)",
                 np, params, BUDGET_PARAM_COPIES);
        /* rank 0 evaluates after training, on a copy kept at each point
         * (real/eval_snapshots.h) */
        double points = c->eval_every > 0 ? floor((steps - 1) / (double)c->eval_every) : 0;
        if (points > 0) {
            set_part(&out->parts[BUDGET_EVAL_POINTS], points * params * w->elem_bytes,
                     "eval-every", "%.0f evaluation points x %.0f parameters x %.0f B", points,
                     params, w->elem_bytes);
            out->parts[BUDGET_EVAL_POINTS].is_raised = true;
        }
    }
    for (int i = 0; i < BUDGET_N_PARTS; i++) out->total_bytes += out->parts[i].bytes;
}

int budget_check(const struct config *c, const struct workload *w, unsigned groups,
                 const struct budget_plan *plan, struct err *e)
{
    struct budget b;
    budget_estimate(c, w, groups, plan, &b);
    double limit = c->max_memory_gib * 1024 * 1024 * 1024;
    if (b.total_bytes <= limit) {
        double max_events = c->max_memory_gib * BUDGET_EVENTS_PER_GIB;
        if (b.events <= max_events) return 0;
        char value[64];
        config_format(c, config_find(b.events_option), value, sizeof value);
        return err_set(e, ERR_INPUT,
                       "the simulation would handle up to %.3g events, more than --max-memory "
                       "%g (GiB) allows (%.0e events a GiB, a few minutes of simulation); "
                       "from --%s %s: %s. Lower --%s, or raise --max-memory to wait for it",
                       b.events, c->max_memory_gib, BUDGET_EVENTS_PER_GIB, b.events_option,
                       value, b.events_why, b.events_option);
    }
    const struct budget_part *big = &b.parts[0];
    for (int i = 1; i < BUDGET_N_PARTS; i++)
        if (b.parts[i].bytes > big->bytes) big = &b.parts[i];
    char value[64], total[32], part[32];
    config_format(c, config_find(big->option), value, sizeof value);
    gib_text(total, sizeof total, b.total_bytes);
    gib_text(part, sizeof part, big->bytes);
    return err_set(e, ERR_INPUT,
                   "the run would take about %s GiB of memory, more than --max-memory %g "
                   "(GiB) allows; most of it from --%s %s: %s = %s GiB. %s --%s, or raise "
                   "--max-memory if the machine has the memory",
                   total, c->max_memory_gib, big->option, value, big->why, part,
                   big->is_raised ? "Raise" : "Lower", big->option);
}
