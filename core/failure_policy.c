/* --on-failure: the names, the default and what each policy needs of a plan. */
#include <string.h>

#include "failure_policy.h"
#include "ps_policy.h"

const char *const failure_policy_names[] = {
    [FAILURE_RESTART] = "restart",
    [FAILURE_SHRINK] = "shrink",
    [FAILURE_CONTINUE] = "continue",
};

int failure_policy_resolve(const char *text, const struct plan *p, enum failure_policy *out,
                           struct err *e)
{
    const bool is_async = policy_is_async(p->policy);
    if (!text || !*text || !strcmp(text, "auto")) {
        *out = is_async ? FAILURE_CONTINUE : FAILURE_RESTART;
        return 0;
    }
    int found = -1;
    for (int k = 0; k < (int)(sizeof failure_policy_names / sizeof *failure_policy_names); k++)
        if (!strcmp(text, failure_policy_names[k])) found = k;
    if (found < 0)
        return err_set(e, ERR_INPUT,
                       "--on-failure: '%s' is not a policy (auto, restart, shrink, continue)", text);
    if (found == FAILURE_CONTINUE && !is_async)
        return err_set(e, ERR_INPUT,
                       "--on-failure continue: %s cannot carry on without a rank: %s needs every "
                       "member each step; use restart or shrink",
                       p->strategy, p->n_servers ? "a synchronous round" : "its all-reduce or stage");
    if (found == FAILURE_SHRINK && !p->data_parallel)
        return err_set(e, ERR_INPUT,
                       "--on-failure shrink: %s splits the model (or its optimizer state) over "
                       "its ranks, and a lost part has no stand-in; use restart",
                       p->strategy);
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
    return err_set(e, ERR_INPUT,
                   "--fail: rank %d is a parameter server of the %s plan (its workers are 0 to "
                   "%d), and --on-failure %s goes on without a dead worker: a server alone holds "
                   "its shard, so only restart can follow its death",
                   rank, p->strategy, p->n_workers - 1, failure_policy_names[policy]);
}
