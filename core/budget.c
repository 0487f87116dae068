#include <stdio.h>
#include <string.h>

#include "budget.h"

/* Bytes per op of the plan a simulation builds and runs: the op, its
 * dependencies, the executor's per-op state and the event queue's share.
 * Measured: pipeline-1f1b with 8 ranks and 16384 microbatches (524k ops)
 * peaks at 180 MB, ~330 B an op; mirrored on 32768 ranks at ~370 B. */
#define BUDGET_BYTES_PER_OP 512.0
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

static void set_part(struct budget_part *p, double bytes, const char *option, const char *fmt,
                     double a, double b, double c)
{
    p->bytes = bytes;
    p->option = option;
    snprintf(p->why, sizeof p->why, fmt, a, b, c);
}

void budget_estimate(const struct config *c, const struct workload *w, unsigned groups,
                     struct budget *out)
{
    memset(out, 0, sizeof *out);
    double params = 0;
    for (int i = 0; i < w->n_layers; i++) params += (double)w->layers[i].params;
    /* Servers are ranks of ps-* strategies only; commands of several
     * strategies may run one. */
    bool has_servers = !strncmp(c->strategy, "ps-", 3) || (groups & OPTG_COMPARE);
    double servers = has_servers ? (double)c->servers : 0;
    double ranks = (double)c->devices + servers;
    /* Ops a rank runs in a step, at most: a forward, a backward, a send
     * and a receive per microbatch (pipelines) and per chunk of layers it
     * holds (pipeline-interleaved's --chunks, also in a compare that may
     * run it: "all" or a list naming it), a collective or a push and a
     * pull per layer (buckets), the update and a few more. */
    bool may_interleave = (groups & OPTG_COMPARE)
                              ? !strcmp(c->strategies, "all") ||
                                    strstr(c->strategies, "pipeline-interleaved") != NULL
                              : !strcmp(c->strategy, "pipeline-interleaved");
    double per_micro = 4.0 * (may_interleave && c->chunks > 1 ? (double)c->chunks : 1);
    double ops = per_micro * (double)c->microbatches + 2.0 * w->n_layers + 8;
    /* the plan's size is ranks x ops: microbatches drive it when they are
     * most of the ops and the ops outnumber the ranks */
    bool drives_micro = per_micro * (double)c->microbatches > 2.0 * w->n_layers + 8 &&
                        ops > ranks;
    double steps = c->epochs > 0
                       ? (double)c->epochs * (BUDGET_EPOCH_SAMPLES / (double)c->batch + 1)
                       : (double)c->steps;
    bool is_sim = !(groups & OPTG_LAUNCH) || (groups & OPTG_COMPARE);
    bool is_real = (groups & OPTG_LAUNCH) &&
                   (!(groups & OPTG_COMPARE) || (groups & OPTG_VALIDATE) ||
                    !strcmp(c->mode, "real"));
    if (is_sim) {
        set_part(&out->parts[BUDGET_PLAN], ranks * ops * BUDGET_BYTES_PER_OP,
                 drives_micro ? "microbatches" : "devices",
                 "%.0f ranks x %.0f ops a step x %.0f B", ranks, ops, BUDGET_BYTES_PER_OP);
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
    }
    for (int i = 0; i < BUDGET_N_PARTS; i++) out->total_bytes += out->parts[i].bytes;
}

int budget_check(const struct config *c, const struct workload *w, unsigned groups,
                 struct err *e)
{
    struct budget b;
    budget_estimate(c, w, groups, &b);
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
    char value[64];
    config_format(c, config_find(big->option), value, sizeof value);
    return err_set(e, ERR_INPUT,
                   "the run would take about %.1f GiB of memory, more than --max-memory %g "
                   "(GiB) allows; most of it from --%s %s: %s = %.1f GiB. Lower --%s, or raise "
                   "--max-memory if the machine has the memory",
                   gib(b.total_bytes), c->max_memory_gib, big->option, value, big->why,
                   gib(big->bytes), big->option);
}
