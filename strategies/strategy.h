/* A strategy compiles one training step into a plan (core/plan.h). Each
 * family lives in one file and exports its build and plan_size functions
 * (families.h); registry.c's table says what each strategy is: its name,
 * summary, options, policy and those functions. Adding a strategy is one
 * file and one entry there; nothing in sim/ or real/ changes. */
#ifndef STRATA_STRATEGY_H
#define STRATA_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/budget.h"
#include "../core/config.h"
#include "../core/err.h"
#include "../core/plan.h"
#include "../core/workload.h"

struct strategy;
typedef int strategy_build_fn(const struct strategy *s, const struct config *c,
                              const struct workload *wl, struct plan **out, struct err *e);
typedef void strategy_plan_size_fn(const struct config *c, const struct workload *wl,
                                   struct budget_plan *out);

struct strategy {
    const char *name;           /* "mirrored": what --strategy takes */
    const char *summary;        /* one line for --help, `schedule` and tables */
    const char *options;        /* options it reads beyond devices/batch/model: "bucket-mb";
                                 * ask strategy_reads() rather than searching it */
    enum server_policy policy;  /* POLICY_NONE unless it uses parameter servers */
    /* Builds the plan of one step for c and wl, named s->name; ERR_INPUT
     * with a message that names the option when the scenario does not fit
     * (e.g. more stages than layers). On success *out is a plan the caller
     * frees. */
    strategy_build_fn *build;
    /* Bounds the plan build() makes for c and wl without building it: its
     * ranks and ops a step, at most (what --max-memory's estimate counts,
     * core/budget.h), in time of the layers, not of the ranks or the
     * microbatches; an upper bound also for options build() refuses. NULL:
     * strategy_plan_size's bound for any plan. */
    strategy_plan_size_fn *plan_size;
};

/* The registry, in the order tables list them (registry.c). */
extern const struct strategy strategy_registry[];
extern const size_t strategy_count;

/* The baseline that speedup is measured against (docs/metrics.md): training
 * on one device with no servers, which every strategy becomes on one device;
 * mirrored's plan on one rank is exactly that. */
const struct strategy *strategy_baseline(void);

/* Does s read option `name` (one of its options, by whole name)? What a
 * sweep asks to know whether varying an option changes s's runs. */
bool strategy_reads(const struct strategy *s, const char *name);
/* Does any of the n_list strategies of list read option `name`? */
bool strategy_any_reads(const struct strategy *const *list, size_t n_list, const char *name);
/* "ps-sync, ps-async, ps-ssp": the strategies that read `option`, in buf
 * ("" when none does: --devices, --batch ... shape every strategy). */
void strategy_names_reading(const char *option, char *buf, size_t n);

/* The options c sets (from argv or a file) that other strategies read and
 * s does not, as a note for a single strategy's run: "--staleness 3 (only
 * ps-ssp reads it)", several joined by "; ", in buf; "" when none. A
 * command of several strategies sets options for some of them: it says
 * only those that none of its strategies reads (strategy_list_unread_note). */
void strategy_unread_note(const struct strategy *s, const struct config *c, char *buf,
                          size_t n);

/* The same for the n_list strategies of a compare or sweep: the options
 * that none of them reads, "" when each is read by one. */
void strategy_list_unread_note(const struct strategy *const *list, size_t n_list,
                               const struct config *c, char *buf, size_t n);

/* Does s run parameter servers, extra ranks beside the devices that compute
 * (its policy's has_servers)? */
bool strategy_has_servers(const struct strategy *s);

/* The strategy called name, or NULL with ERR_INPUT naming the choices. */
const struct strategy *strategy_find(const char *name, struct err *e);

/* Parses --strategies: "all" or a comma list of names, no repeats. Fills
 * out[0..*n) (capacity strategy_count). */
int strategy_parse_list(const char *spec, const struct strategy **out, size_t *n,
                        struct err *e);

/* s's bound on its plan for c and wl (s->plan_size; without one, the
 * bound of a plan of any strategy's shape: ranks x (4 x --microbatches x
 * --chunks + 2 x layers + 8) ops). */
void strategy_plan_size(const struct strategy *s, const struct config *c,
                        const struct workload *wl, struct budget_plan *out);

/* The largest of the bounds of list[0..n) (each field's maximum), and of
 * the one-device baseline a comparison runs beside them: the plan of a
 * command that runs them one after another. */
void strategy_plan_size_max(const struct strategy *const *list, size_t n,
                            const struct config *c, const struct workload *wl,
                            struct budget_plan *out);

/* strategy_plan_size_max of the strategies spec names (--strategies: "all"
 * or a list); of every strategy when spec does not parse (its parse then
 * reports the error). */
void strategy_plan_size_spec(const char *spec, const struct config *c,
                             const struct workload *wl, struct budget_plan *out);

/* s->build plus the checks all strategies share (the plan's sticky build
 * error). The plan is *not* validated here: see core/plan_check.h. */
int strategy_build(const struct strategy *s, const struct config *c,
                   const struct workload *wl, struct plan **out, struct err *e);

#endif
