/* What a run will take, estimated from its options before anything is
 * built: the memory of the simulator's plan, of its per-step records and of
 * the arithmetic, and of a real run's ranks. A run over --max-memory is
 * refused with the figure and the option that drives it, so nothing the
 * option table allows (1048576 devices, 1048575 microbatches, 10^9 steps,
 * 65536 ranks) can exhaust the machine.
 *
 * The figures are upper bounds from the shape of plans (BUDGET_* in
 * budget.c, measured on strata's own runs), not a model of the allocator:
 * a run under the budget may still take less, never much more. */
#ifndef STRATA_BUDGET_H
#define STRATA_BUDGET_H

#include <stdbool.h>

#include "config.h"
#include "err.h"
#include "workload.h"

/* The plan a simulation builds, bounded before it is built: what its
 * strategy says of it (strategies/strategy.h strategy_plan_size), or for a
 * command of several strategies the largest of theirs. */
struct budget_plan {
    double ranks;         /* workers and servers */
    double ops;           /* ops of all ranks in one step, at most */
    double micro_ops;     /* those of them that --microbatches multiplies */
};

/* One part of the estimate: bytes, and the option that drives them. */
struct budget_part {
    double bytes;
    const char *option;   /* "microbatches", "devices", "steps", "model", "np", "eval-every" */
    bool is_raised;       /* a larger value of option takes less ("eval-every") */
    char why[200];        /* "4 ranks x 4194312 ops a step x 384 B" */
};

enum {
    BUDGET_PLAN,
    BUDGET_STEPS,
    BUDGET_NUMERICS,
    BUDGET_REAL,
    BUDGET_EVAL_POINTS,   /* a real run's parameters kept at --eval-every's points, on rank 0 */
    BUDGET_N_PARTS
};

struct budget {
    struct budget_part parts[BUDGET_N_PARTS];   /* 0 bytes where it does not apply */
    double total_bytes;
    /* Events a simulation handles, at most (ranks x ops a step x steps); 0
     * for a run that simulates nothing. They cost time, not memory, but
     * --max-memory is the one limit on a run's size a user sets, so it
     * allows BUDGET_EVENTS_PER_GIB of them a GiB. */
    double events;
    const char *events_option;   /* "steps", "epochs", "microbatches", "devices" */
    char events_why[200];
};

/* About 200 s of simulation at the ~5 million events a second measured on
 * this machine (mirrored, 64 ranks): 4 GiB, the default, allows ~14 min. */
#define BUDGET_EVENTS_PER_GIB 1e9

/* The estimate of a run of c on w by a command of `groups` (the simulator's
 * parts when it simulates or builds plans, the real part when it launches
 * ranks: OPTG_LAUNCH and --mode real, or a command without --mode), whose
 * plan is at most `plan` (what the strategies it runs bound). */
void budget_estimate(const struct config *c, const struct workload *w, unsigned groups,
                     const struct budget_plan *plan, struct budget *out);

/* 0 when the estimate fits c->max_memory_gib, memory and events; else
 * ERR_INPUT saying the figure, the part that drives it, its option, and
 * --max-memory. */
int budget_check(const struct config *c, const struct workload *w, unsigned groups,
                 const struct budget_plan *plan, struct err *e);

#endif
