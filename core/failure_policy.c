/* --on-failure: the names, the default and what each policy needs of a plan. */
#include <string.h>

#include "failure_policy.h"
#include "ps_policy.h"
#include "text_append.h"

const char *const failure_policy_names[] = {
    [FAILURE_RESTART] = "restart",
    [FAILURE_SHRINK] = "shrink",
    [FAILURE_CONTINUE] = "continue",
};

/* Why p's workers are not replicas that fewer workers could stand in for
 * (!p->data_parallel), read from the plan itself so that it holds for
 * every builder and for Chakra traces: gradients in flight (an op with a
 * lag: pipelined-steps), an optimizer state in shards (a grouped UPDATE:
 * ZeRO-1), or the layers split (a worker whose forwards do not cover the
 * whole model: stages). O(ops). */
static const char *why_not_replicas(const struct plan *p)
{
    if (p->n_grad_slots > 1)
        return "keeps each step's gradients in flight on every worker until they are applied "
               "steps later, and those of a worker gone would be lost";
    bool is_split = false;
    for (int r = 0; r < p->n_workers; r++) {
        int lo = p->wl->n_layers, hi = 0;
        for (size_t i = 0; i < p->ranks[r].ops.len; i++) {
            const struct op *op = &p->ranks[r].ops.items[i];
            if (op->kind == OP_UPDATE && op->group >= 0)
                return "shards its optimizer state (the momentum) over its ranks, and a lost "
                       "shard has no copy";
            if (op->kind == OP_FORWARD) {
                if (op->lo < lo) lo = op->lo;
                if (op->hi > hi) hi = op->hi;
            }
        }
        is_split |= lo > 0 || hi < p->wl->n_layers;
    }
    if (is_split) return "splits the model over its ranks, and a lost part has no stand-in";
    return "is not marked data-parallel (its workers are not known to be replicas of each "
           "other)";
}

int failure_policy_resolve(const char *text, const struct plan *p, enum failure_policy *out,
                           struct err *e)
{
    const bool is_async = policy_is_async(p->policy);
    /* continue goes on with the workers left: one alone leaves none */
    if (!text || !*text || !strcmp(text, "auto")) {
        *out = is_async && p->n_workers >= 2 ? FAILURE_CONTINUE : FAILURE_RESTART;
        return 0;
    }
    int found = -1;
    for (int k = 0; k < (int)(sizeof failure_policy_names / sizeof *failure_policy_names); k++)
        if (!strcmp(text, failure_policy_names[k])) found = k;
    if (found < 0)
        return err_set(e, ERR_INPUT,
                       "--on-failure: '%s' is not a policy (auto, restart, shrink, continue)", text);
    /* shrink's conditions, below: a suggestion names only what p accepts */
    const bool can_shrink = p->data_parallel && p->n_workers >= 2;
    if (found == FAILURE_CONTINUE && !is_async) {
        /* each plan's own reason, as shrink's refusal gives */
        char why[256];
        if (p->n_servers)
            snprintf(why, sizeof why, "its synchronous round needs every worker's push");
        else if (p->data_parallel)
            snprintf(why, sizeof why, "its all-reduce needs every member each step");
        else
            snprintf(why, sizeof why, "it %s", why_not_replicas(p));
        return err_set(e, ERR_INPUT,
                       "--on-failure continue: %s cannot carry on without a rank: %s; use "
                       "restart%s",
                       p->strategy, why, can_shrink ? " or shrink" : "");
    }
    /* a run ran and failed (exit 1) where the input said it would */
    if (found == FAILURE_CONTINUE && p->n_workers < 2)
        return err_set(e, ERR_INPUT,
                       "--on-failure continue: %s has one worker, so no survivor to carry on "
                       "with; use restart",
                       p->strategy);
    if (found == FAILURE_SHRINK && !p->data_parallel)
        return err_set(e, ERR_INPUT, "--on-failure shrink: %s %s; use restart%s", p->strategy,
                       why_not_replicas(p), is_async ? " or continue" : "");
    if (found == FAILURE_SHRINK && p->n_workers < 2)
        return err_set(e, ERR_INPUT,
                       "--on-failure shrink: %s has one worker, so no survivor to go on with; use "
                       "restart",
                       p->strategy);
    *out = (enum failure_policy)found;
    return 0;
}

int failure_policy_check_rank(enum failure_policy policy, const struct plan *p, int rank,
                              struct err *e)
{
    if (policy == FAILURE_RESTART || rank < p->n_workers) return 0;
    char ranks[32];
    return err_set(e, ERR_INPUT,
                   "--fail: rank %d is a parameter server of the %s plan (its workers: %s), "
                   "and --on-failure %s goes on without a dead worker: a server alone holds "
                   "its shard, so only restart can follow its death",
                   rank, p->strategy, text_ranks_upto(ranks, sizeof ranks, p->n_workers - 1),
                   failure_policy_names[policy]);
}
