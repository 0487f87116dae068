/* The parameter-server protocol of real runs: what workers and server
 * ranks say to each other over MPI. Servers are CPU ranks running
 * core/ps_policy, the code the simulator's server agents run.
 *
 *   worker -> server   PUSH_HDR  struct ps_msg, then PUSH_DATA: the gradient
 *                                sums of the server's whole shard (floats)
 *   worker -> server   PULL_REQ  struct ps_msg
 *   server -> worker   PULL_HDR  struct ps_reply, then PULL_DATA: the shard's
 *                                parameters, once the policy allows the pull
 *   worker -> server   DONE      struct ps_msg: the worker ran its last step
 *   worker -> server   CHECKPOINT struct ps_msg, round = the next step: the
 *                                worker's steps before it are done; once every
 *                                worker said so the server joins the checkpoint
 *                                (real/checkpoint.h)
 *
 * Asynchronous plans share the job's work out (core/ps_policy.h, is_async):
 * worker w starts with item w; the first server (rank n_workers) hands out
 * the next item in its answer to each worker's last pull of a step, until
 * steps x n_workers items are given; a worker that gets -1 is done, says
 * DONE, and every server retires it (ssp waits for it no more). With
 * --checkpoint-every K, the first server holds the requests for item
 * c x n_workers (c a multiple of K) until every worker asked, so that none
 * is inside a step; then worker w gets item c x n_workers + w and
 * checkpoint_step c: every rank joins the checkpoint of job step c
 * (real/checkpoint.h) before going on.
 *
 * All on one communicator of their own, so they never meet the plan's
 * messages. A server receives from any source with any tag; MPI delivers a
 * sender's messages in the order sent, so a PULL_REQ never overtakes the
 * PUSH it depends on, and PUSH_DATA follows its header. */
#ifndef STRATA_REAL_PS_WIRE_H
#define STRATA_REAL_PS_WIRE_H

#include <stdint.h>

enum ps_tag { PS_PUSH_HDR = 1, PS_PUSH_DATA, PS_PULL_REQ, PS_PULL_HDR, PS_PULL_DATA, PS_DONE,
              PS_CHECKPOINT };

struct ps_msg {
    int64_t round;          /* the policy's round: step x pushes per step + j */
    int64_t wants_work;     /* PULL_REQ, asynchronous plans: 1 = the step's last pull
                             * from the first server, which answers with the
                             * worker's next work item (docs/metrics.md) */
    int64_t version_read;   /* PUSH: the version its gradient was computed from */
    int64_t n_samples;      /* PUSH: samples the gradient sums over */
    int64_t n_floats;       /* PUSH: floats in PUSH_DATA (the shard's parameters) */
};

struct ps_reply {
    int64_t version;          /* the shard's version the parameters are at */
    int64_t version_applied;  /* the worker's latest push: the version it was applied to, -1 dropped */
    double answer_s;          /* when the server answered, on the run's aligned clock */
    int64_t next_work;        /* asked for: the job's next work item (step k / n of
                               * replica k % n), -1 when none is left; else -1 */
    int64_t checkpoint_step;  /* asked for at a checkpoint's boundary: the job step
                               * of the checkpoint to join before that item; else -1 */
};

#endif
