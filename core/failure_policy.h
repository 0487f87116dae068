/* What a job does when one of its ranks dies (--on-failure), one vocabulary
 * for the simulator and real runs, after the systems that do each:
 *
 *   restart   every rank goes back to the last checkpoint (--checkpoint-every;
 *             the start when none) and the job runs again with all its
 *             ranks, as torchrun relaunches every worker: time lost =
 *             detection + relaunch + loading + the work since the checkpoint.
 *   shrink    the survivors go back to their last in-memory commit
 *             (--commit-every) and go on with one worker fewer, the global
 *             batch split over them, as Horovod elastic does. Only plans
 *             whose workers are replicas (plan.data_parallel) can: a stage of
 *             a pipeline or of model parallelism has no stand-in, a shard of
 *             ZeRO-1's momentum no copy, and the gradients pipelined-steps
 *             holds in flight on a worker gone would be lost.
 *   continue  the parameter servers retire the dead worker and the others
 *             take its share of the remaining work, as TensorFlow's parameter
 *             servers do. Only asynchronous policies can: an all-reduce or a
 *             synchronous round needs every member.
 *
 * "auto" is continue for asynchronous parameter servers of two or more
 * workers, restart otherwise. */
#ifndef STRATA_FAILURE_POLICY_H
#define STRATA_FAILURE_POLICY_H

#include "err.h"
#include "plan.h"

enum failure_policy { FAILURE_RESTART, FAILURE_SHRINK, FAILURE_CONTINUE };

/* "restart", "shrink", "continue", indexed by the enum. */
extern const char *const failure_policy_names[];

/* --on-failure's text ("auto" or a policy's name; NULL or "" = auto) made
 * concrete for plan p. ERR_INPUT naming --on-failure, the value and why
 * when the policy cannot apply to p (continue on a synchronous plan, shrink
 * on stages, either on a one-worker job, which has no survivor). */
int failure_policy_resolve(const char *text, const struct plan *p, enum failure_policy *out,
                           struct err *e);

/* Whether policy can follow the death of rank (--fail R) in plan p: shrink
 * and continue go on without a dead worker, but a parameter server alone
 * holds its shard of the parameters, so its death can only be restarted.
 * ERR_INPUT naming --fail, the rank, the policy and what can. */
int failure_policy_check_rank(enum failure_policy policy, const struct plan *p, int rank,
                              struct err *e);

#endif
