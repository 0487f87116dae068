/* Private to simulate.c and sim_index.c: the simulator's state, and the
 * tables that compile a prepared plan for the executor.
 *
 * The plan's relations come from its index (core/plan_index.h, made by
 * plan_prepare); sim_index.c adds what only the simulator needs, over the
 * same global op id g = off[rank] + index (the fixed fields of struct xop,
 * costs, links, servers and slots); simulate.c runs the events and only
 * follows them. */
#ifndef STRATA_SIM_INTERNAL_H
#define STRATA_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/jitter.h"
#include "../core/plan_index.h"
#include "../core/ps_policy.h"
#include "../core/vec.h"
#include "des.h"
#include "held_pulls.h"
#include "simulate.h"

/* What scheduling reads and writes of op g, in half a cache line: an op's
 * end touches little else, which is what keeps large runs (10^5 ops and
 * more, well beyond L2) fast and a million ranks within memory. With 10^5
 * ranks every line an end touches is cold (a wave of ends passes every
 * rank before it comes back), so two ops a line halve the misses of a
 * rank's neighbouring ops (a backward and its all-reduce). At 64 bytes an
 * op, most of the event loop's own samples on mirrored with 100,000
 * devices sat at its software prefetches (perf annotate), which stall when
 * too many misses are in flight already. What only transfers need is in struct xcomm; what only a
 * kept trace span needs (microbatch, layers, peer, flops) is read from the
 * plan's op; a compute op's cost is one of a few shared values (cost_s[]).
 * Its count of unmet conditions is in struct sim's pending[], 4 bytes an
 * op: the ends that only count a condition down then touch no op line. */
enum { FOLD_INTO_NEXT = 1, FOLD_TAIL = 2 };

struct xop {
    int32_t rank;
    int32_t next;          /* the next op on its stream, or -1 */
    int32_t dep_first;     /* ops naming it as a dep: dependents[dep_first .. + n_dependents) */
    int32_t n_dependents;
    int32_t aux;           /* compute: its cost, cost_s[aux]; ALLREDUCE, REDUCE_SCATTER,
                            * ALL_GATHER: its collective; SEND, RECV, PUSH, PULL: its
                            * struct xcomm */
    int8_t kind;           /* enum op_kind */
    int8_t stream;
    int8_t lag;            /* ALLREDUCE, UPDATE: the plan op's lag (core/plan.h), <= PLAN_MAX_LAG */
    /* A fold (simulate.c, start_folded): FOLD_INTO_NEXT, compute whose end
     * alone makes the next op on its stream, compute too, ready, with
     * nothing else waiting on it; FOLD_TAIL, such a next op. A run of such
     * ops and the op after the last is timed when the run starts and ends
     * as one event, the last op's. */
    uint8_t fold;
    double start_s;        /* the current step's */
};

_Static_assert(sizeof(struct xop) == 32, "struct xop is half a cache line");

/* A SEND, RECV, PUSH or PULL's own state. */
struct xcomm {
    int64_t bytes;         /* moved */
    int64_t ver_read, ver_applied;   /* PUSH, PULL */
    int64_t arrived;       /* RECV: SEND data instances arrived so far (a step count) */
    double send_start_s;   /* RECV: when the latest matching SEND started */
    int32_t j;             /* PUSH/PULL: index among its worker's pushes/pulls to the server */
    int32_t recv_comm;     /* SEND: its RECV's xcomm, which it writes without
                            * touching the RECV's xop (another rank's line) */
    int32_t peer_op;       /* SEND: its RECV; PUSH/PULL: its slot */
    int32_t link;          /* SEND, PUSH, PULL: the link it crosses */
    bool is_waiting;       /* RECV: posted, its data not there yet */
};

/* One (server, worker that pushes to it) pair. */
struct slot {
    int32_t server;        /* index into servers */
    int32_t rank;          /* the worker */
    int32_t w;             /* the worker's index at that server */
    int32_t n_push;        /* the worker's pushes to the server in one step */
    int64_t version_read;  /* version the worker last pulled from the server */
};

struct server {
    bool is_used;          /* some worker pushes to it */
    struct ps_server ps;
    struct held_pulls held; /* PULL ops the policy does not let be answered yet */
    /* The server works through what arrives in order, one thing at a time,
     * as a real server rank does: each push costs it an update of its shard
     * (update_cost_s; a synchronous round thus costs the sum of its pushes),
     * and a pull's answer leaves once the updates before it are done. */
    double update_cost_s;  /* UPDATE of the shard on the server's rank */
    int n_push;            /* rounds a step: its workers' pushes to it a step (the last
                            * worker's; the policy's rounds need them equal) */
    double busy_until_s;
    int64_t n_updates;     /* applied so far: replay's given update times are per update */
};

struct sim {
    const struct sim_setup *s;
    const struct plan *p;
    const struct cluster *cl;
    struct analysis *a;
    struct trace *t;
    struct err *e;
    int rc;                 /* first error inside the event loop */

    struct plan_index *ix;  /* the plan's, owned; the arrays below borrow from it */
    int n_ranks, n_ops, n_links;
    const int *off;         /* [n_ranks + 1] */
    struct xop *x;          /* [n_ops], 64-byte aligned */
    struct xcomm *xc;       /* [n_xcomm], by the transfer's xop.aux */
    double *cost_s;         /* [n_costs]: compute ops' times before stragglers, by xop.aux */
    int n_costs;
    int32_t *pending0;      /* [n_ops]: stream and dep conditions at a step start */
    int32_t *pending;       /* [n_ops]: of those, not met yet in the current step */
    int n_xcomm;
    const int *dependents;
    const int *roots;       /* ops with no condition, by rank: roots[root_first[r] ..) */
    const int *root_first;  /* [n_ranks + 1] */

    int n_coll;
    const int *coll_first;  /* collective c: members coll_ops[coll_first[c] ..) */
    const int *coll_ops;
    double *coll_cost_s;
    int *coll_arrived;
    /* When collective c last started (its last member arrived): its members'
     * spans start then. Kept here rather than in each member's line, which
     * would be one more cold line a member when 10^5 ranks arrive at once. */
    double *coll_start_s;

    struct server *servers; /* [n_servers] */
    struct slot *slots;

    VEC(int32_t) touched;   /* scratch: the servers a retiring worker pushes to */

    int64_t *step;          /* [n_ranks] */
    int *n_done;            /* ops of the current step ended */
    bool *is_dead;
    int n_working;          /* ranks with ops */
    /* Runs of compute may fold (simulate.c, start_folded): no transfers,
     * servers, hooks, given durations, time-sharing or failures. */
    bool can_fold;
    int32_t *fold_head;     /* [n_ranks]: the first op of the rank's fold in flight, or -1 */

    /* Time-sharing as it happens (a calibrated profile's timeshare table):
     * a compute op takes its node's measured slowdown for the ranks busy
     * there when it starts, itself included, in place of the fullest-node
     * stretch cost_compute_s assumes. Busy: computing. A worker waiting for
     * a peer yields its core (real/worker.c), and a server rank waiting for
     * the next message was measured not to slow the workers' compute
     * (validate, 2 workers and a server on 2 cores: their compute was no
     * slower than mirrored's 2 ranks'). */
    bool is_timeshared;
    int *node_busy;         /* [nodes] */
    VEC(int32_t) start_q;   /* compute ops starting at the current instant */

    /* Asynchronous plans share the job's work out (core/ps_policy.h,
     * is_async): work item k is replica k % n_workers of job step
     * k / n_workers; a worker takes the next item when it starts a step, and
     * is done when none is left. A dead worker's unfinished item goes back
     * (work_free) for the others. */
    bool is_async;
    int64_t work_total;     /* steps x n_workers */
    int64_t work_next;      /* the next item never given out */
    VEC(int64_t) work_free; /* items given back, taken first */
    int64_t *work;          /* [n_ranks]: the item each worker is on, -1 none */
    int64_t work_completed; /* items whose worker step has ended */
    bool *is_done;          /* [n_ranks]: no work was left for it */

    /* steps every working rank has completed */
    int64_t n_complete;
    int n_past;             /* working ranks whose step > n_complete */
    bool is_stopped;

    /* Failures (continue): workers die at --fail's moment and at --mtbf's
     * draws, one at a time, until none is left. */
    struct failure_draws *draws;   /* --mtbf's stream; NULL = none */
    bool is_spec_fired;     /* --fail has happened */
    int n_dead;             /* workers dead */

    struct des q;
    struct network *net;
    struct straggler *strag;
    struct jitter *jit;     /* the cluster's op-time spread; NULL = none */
    VEC(int32_t) now_q;     /* ops ending at the current instant */
    size_t now_head;
    double now_s, makespan_s;
    uint64_t n_events;
    uint64_t n_scanned;     /* see struct sim_result */
    uint64_t n_net_touched; /* network_touched of networks discarded in this run */
    struct sim_result *res;
};

/* Allocates every array of m sized by its plan (m->s, p, ix, cl, e set) and
 * fills the tables from the index: off, x, dependents, roots, collectives,
 * servers and slots; step, n_done and is_dead come zeroed. On failure m
 * holds what was made so far, for sim_index_release. */
int sim_index_init(struct sim *m);

/* Frees what sim_index_init made (and the servers' held pulls the run
 * grew) and m->ix; safe on a partly built or zeroed m. */
void sim_index_release(struct sim *m);

#endif
