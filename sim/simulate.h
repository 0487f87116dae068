/* The plan executor in virtual time. It runs a plan for `steps` steps on a
 * cluster: each rank's streams in program order, deps, SEND -> RECV
 * through the network's shared links, collectives that start when their last
 * member arrives, parameter-server agents running core/ps_policy, stragglers
 * and failures. Every executed op becomes a span for the analysis and, if
 * asked, the kept trace. One switch over op kinds; no strategy is named.
 *
 * Failures: the event loop carries out --on-failure continue, the policy
 * that changes what happens inside steps: a worker of an asynchronous
 * parameter-server run (async, ssp) dies at --fail's moment (R@Ts at T,
 * R@STEP as R starts its own step STEP) or, with mtbf_s, each worker after
 * an exponential time (sim/failures.h's draws: the job's next failure
 * after Exponential(mtbf_s / live workers), the victim uniform among them);
 * the others carry on: what the servers accepted stays, the dead worker's
 * unfinished item goes back to the job. Restart and shrink stop every rank
 * and go back to a saved step: sim/failures.h replays the steps this loop
 * runs without a failure, so a setup for them has no failure here. */
#ifndef STRATA_SIMULATE_H
#define STRATA_SIMULATE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/analysis.h"
#include "../core/err.h"
#include "../core/plan.h"
#include "../core/ps_policy.h"
#include "../core/straggler.h"
#include "../core/trace.h"
#include "cluster.h"

/* The arithmetic of a numerics run (sim/numerics.h), called at the virtual
 * moments the math happens: a worker computes its step's gradient when the
 * step starts (from the parameters it holds then), a server applies a push
 * when it arrives, a pull copies the server's parameters when it is
 * answered. A worker step takes the samples of one replica of one job step:
 * synchronous plans, replica = the rank in its own step; asynchronous ones,
 * the work item it took (simulate.c). A nonzero return stops the run with
 * that error. NULL members are
 * skipped. Runs with failures take no hooks (simulate refuses them). */
struct sim_hooks {
    void *ctx;
    int (*step_start)(void *ctx, int rank, int64_t job_step, int replica);
    int (*push_arrived)(void *ctx, int rank, int server, int64_t round,
                        const struct ps_push_result *pr);
    int (*pull_answered)(void *ctx, int rank, int server);
    int (*step_done)(void *ctx, int rank, int64_t job_step, int replica, double now_s);
};

/* Replay (bench/replay.h): compute durations given from outside, such as a
 * measured trace. compute_s(ctx, rank, step, op) is the duration of the
 * rank's op (its index in the rank's program) in the rank's step `step`,
 * taken whole: the cost model, the cluster's jitter and --straggler's
 * slowdown are not applied on top (a measured time has them already). A
 * negative return leaves that op to the model. */
struct sim_durations {
    void *ctx;
    double (*compute_s)(void *ctx, int rank, int64_t step, int op);
    /* NULL, or the duration of the k-th update (from 0) server rank `rank`
     * applies: an update then costs the server this, once, when the policy
     * applies (async, ssp) or closes a round (sync, backup), and a push it
     * only gathers costs nothing, as a real server works (real/ps_server.c);
     * the model's per-push shard update otherwise. */
    double (*update_s)(void *ctx, int rank, int64_t k);
    /* NULL, or communication given too (replay --measured-comm): the
     * duration of the comm op `op` of `rank` in its step `step`, in place
     * of the network's transfer: a SEND's message takes its RECV's (the
     * sim asks with the RECV's rank and op, the sender's step), a PUSH and
     * a PULL their own (a PULL's counted from its answer), a collective
     * the longest of its members' (it ends for all at once). Links are not
     * shared by given transfers. A negative return: the network's. */
    double (*comm_s)(void *ctx, int rank, int64_t step, int op);
};

/* Told the steps every rank has ended so far (1 to steps); it must not
 * touch the run. */
typedef void sim_step_fn(void *ctx, int steps_done, int steps);

struct sim_setup {
    const struct plan *plan;
    const struct cluster *cluster;        /* laid out for the plan's ranks */
    int steps;
    uint64_t seed;
    const struct straggler_spec *straggler;   /* NULL = none */
    struct failure_spec failure;          /* continue: an asynchronous worker's */
    double mtbf_s;                        /* continue: per worker, 0 = none */
    const struct sim_hooks *hooks;        /* NULL = timing only */
    const struct sim_durations *durations; /* NULL = every compute op from the model */
    double *step_end_s;                   /* [steps] or NULL: filled with when every rank had
                                           * ended step s (the caller's buffer) */
    /* NULL, or called each time every rank has ended one more step: a
     * command's progress line on a long run (sim_step_fn). */
    sim_step_fn *on_step;
    void *on_step_ctx;
};

struct sim_result {
    double makespan_s;         /* when the last op of the last step ended */
    uint64_t n_events;         /* events processed: the speed benchmark's unit */
    /* Work beyond the events themselves, for the scaling test (each must
     * stay a constant per event as the ranks grow): */
    uint64_t n_scanned;        /* ranks, ops, collective members, held pulls and
                                * servers visited by loops */
    uint64_t n_heap_moves;     /* levels sifted in the event queue's and the
                                * links' heaps, transfers handed back */
    bool failed;               /* a failure happened during the run */
    int failed_rank;           /* the first one's */
    double failure_time_s;
    int n_failures;            /* workers that died while the run went on */
    int64_t max_step_lead;     /* async and ssp servers: the most steps a worker pushed
                                * beyond the slowest live one; -1 with none */
};

/* Runs the setup; spans go to a (may be NULL) and t (may be NULL). */
int simulate(const struct sim_setup *s, struct analysis *a, struct trace *t,
             struct sim_result *res, struct err *e);

#endif
