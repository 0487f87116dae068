/* The plan: strata's instruction set. A strategy compiles one training step
 * into a plan, an ordered program of operations for every rank; sim/ and
 * real/ each interpret it with one switch over op kinds.
 *
 * Semantics that every executor and the checker share:
 *  - Each op runs on a stream of its rank (STREAM_COMPUTE, STREAM_COMM). Ops
 *    of one stream run in program order, like a CUDA stream; an op also waits
 *    for its explicit deps, which are earlier ops of the same rank.
 *  - SEND is eager: it does not wait for its RECV to be posted. A RECV waits
 *    for the SEND with the same (sender, receiver, tag).
 *  - ALLREDUCE, REDUCE_SCATTER and ALL_GATHER are collectives over a group:
 *    one starts when the last member reaches it. Members reach a group's
 *    collectives in the same order, with the same kind and layers.
 *  - Shards (ZeRO-1): the parameters (and gradients, momentum) of layers
 *    [lo,hi) are one contiguous block of count elements; member k of a group
 *    of n owns plan_shard(count, n, k). A REDUCE_SCATTER leaves member k the
 *    sum of its shard only, an UPDATE with a group steps that shard only,
 *    and an ALL_GATHER hands every member every shard.
 *  - PUSH/PULL talk to a parameter-server rank. Servers have no program: they
 *    are agents of the executor running plan->policy. Under POLICY_SYNC the
 *    j-th PULL of a worker from a server waits until the j-th PUSH to that
 *    server of every worker that pushes to it has been applied (under
 *    POLICY_BACKUP, the first n - policy_arg of them to end, n the number of
 *    those workers: n_workers when every worker pushes to every server).
 *    Those workers push a server the same layers the same number of times;
 *    a PULL with no j-th push to wait for (more pulls from a server than
 *    pushes to it) is a defect, which plan_check reports. Under POLICY_ASYNC
 *    and POLICY_SSP (bound policy_arg) a PULL waits as the policy says across
 *    steps, and within one step only for the worker's own PUSH.
 *  - A plan is one step. A rank starts step s+1 when all its ops of step s
 *    have finished.
 *  - Steps in flight (pipelined-steps): a rank keeps n_grad_slots gradient
 *    blocks, step s's backward writing block s mod n_grad_slots. An op with
 *    lag L > 0 (an ALLREDUCE or UPDATE) works on the gradients of step s - L,
 *    so that step's exchange overlaps this step's compute without the step
 *    boundary ever being crossed: the smallest extension that lets a step's
 *    forward run before the previous step's update. In steps s < L it has
 *    no gradients to work on and ends at once, doing nothing. A lagged
 *    UPDATE's span records the versions (the rank's applied updates, one a
 *    step) its gradients read, max(0, s - 2L), and were applied to, s - L:
 *    their difference is the staleness, at most L.
 *
 * Limits: layer boundaries < 2048 and microbatches < 2^20 (see plan_tag). */
#ifndef STRATA_PLAN_H
#define STRATA_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "ps_policy.h"   /* enum server_policy: a plan's servers run one */
#include "vec.h"
#include "workload.h"

enum { STREAM_COMPUTE = 0, STREAM_COMM = 1, PLAN_N_STREAMS = 2 };

enum op_class {
    OPC_COMPUTE,     /* runs on the device: FLOPs and memory traffic */
    OPC_P2P,         /* point to point between two workers */
    OPC_COLLECTIVE,  /* all members of a group together */
    OPC_SERVER,      /* between a worker and a parameter server */
};

/* ORDER OP: the one list of op kinds, and everything said of a kind:
 *   X(name, default stream, class, dir, letters, label, colour, meaning)
 * dir: which way the data goes between the rank and its peer ("to", "from"),
 * NULL for ops without a peer; letters: the kind in the text timeline, a
 * second letter for odd microbatches where a kind repeats per microbatch on
 * one stream (so consecutive ones stay apart); label: its name in prose;
 * colour: its boxes in the Gantt plot (compute warm-cold pairs apart from
 * communication); meaning: one line, for `strata schedule` and docs. */
#define PLAN_OPS(X)                                                                        \
    X(FORWARD, STREAM_COMPUTE, OPC_COMPUTE, NULL, "Ff", "forward", "#4e79a7",              \
      "forward pass of layers [lo,hi) on microbatch mb")                                   \
    X(BACKWARD, STREAM_COMPUTE, OPC_COMPUTE, NULL, "Bb", "backward", "#f28e2b",            \
      "backward pass of layers [lo,hi) on microbatch mb; accumulates weight gradients")   \
    X(SEND, STREAM_COMM, OPC_P2P, "to", "S", "send", "#76b7b2",                            \
      "activations (act@B: at layer boundary B) or their gradients (grad@B) of mb to peer") \
    X(RECV, STREAM_COMM, OPC_P2P, "from", "R", "recv", "#b07aa1",                          \
      "the data of the matching SEND from peer")                                           \
    X(ALLREDUCE, STREAM_COMM, OPC_COLLECTIVE, NULL, "A", "all-reduce", "#e15759",          \
      "sum the gradients of layers [lo,hi) over the ranks of group (one bucket)")          \
    X(PUSH, STREAM_COMM, OPC_SERVER, "to", "P", "push", "#edc948",                         \
      "gradients of layers [lo,hi) to parameter server peer")                              \
    X(PULL, STREAM_COMM, OPC_SERVER, "from", "L", "pull", "#9c755f",                       \
      "parameters of layers [lo,hi) from server peer, once its policy allows")             \
    X(UPDATE, STREAM_COMPUTE, OPC_COMPUTE, NULL, "U", "update", "#59a14f",                 \
      "optimizer step on the local parameters of [lo,hi) (with a group: its shard only)")     \
    X(BACKWARD_INPUT, STREAM_COMPUTE, OPC_COMPUTE, NULL, "Ii", "backward (input)",          \
      "#ff9d9a",                                                                           \
      "zero-bubble's B: backward of [lo,hi) on mb for the input gradient only; keeps "     \
      "what BACKWARD_WEIGHT needs")                                                        \
    X(BACKWARD_WEIGHT, STREAM_COMPUTE, OPC_COMPUTE, NULL, "Ww", "backward (weights)",       \
      "#b6992d",                                                                           \
      "zero-bubble's W: weight gradients of [lo,hi) on mb from what BACKWARD_INPUT kept; " \
      "accumulates them")                                                               \
    X(REDUCE_SCATTER, STREAM_COMM, OPC_COLLECTIVE, NULL, "C", "reduce-scatter", "#ff9da7", \
      "sum the gradients of [lo,hi) over group; each member keeps its shard of the sum")   \
    X(ALL_GATHER, STREAM_COMM, OPC_COLLECTIVE, NULL, "G", "all-gather", "#bab0ac",         \
      "parameters of [lo,hi): each member's shard to every member of group")

enum op_kind {
#define PLAN_OP_ENUM(name, stream, cls, dir, letters, label, colour, meaning) OP_##name,
    PLAN_OPS(PLAN_OP_ENUM)
#undef PLAN_OP_ENUM
    OP_N_KINDS
};

struct op_info {
    const char *name;      /* "FORWARD" */
    int stream;            /* default stream */
    enum op_class cls;
    const char *dir;       /* "to", "from": the data's way to or from peer; NULL without a peer */
    const char *letters;   /* "Ff": the letter for even microbatches, then for odd ones, if any */
    const char *label;     /* "all-reduce": the kind in prose */
    const char *colour;    /* "#e15759": its colour in plots */
    const char *meaning;   /* one line, for `strata schedule` and docs */
};

/* Indexed by enum op_kind; generated from PLAN_OPS so it cannot drift. */
extern const struct op_info op_infos[OP_N_KINDS];

/* SEND/RECV tags: what crosses which layer boundary for which microbatch. */
enum tag_kind { TAG_ACT = 0, TAG_GRAD = 1 };

static inline uint32_t plan_tag(enum tag_kind kind, int boundary, int mb)
{
    return ((uint32_t)kind << 31) | ((uint32_t)boundary << 20) | (uint32_t)mb;
}
static inline enum tag_kind plan_tag_kind(uint32_t tag) { return (enum tag_kind)(tag >> 31); }
static inline int plan_tag_boundary(uint32_t tag) { return (int)((tag >> 20) & 0x7ff); }
static inline int plan_tag_mb(uint32_t tag) { return (int)(tag & 0xfffff); }

#define PLAN_MAX_BOUNDARY 0x7ff
#define PLAN_MAX_MB 0xfffff
#define PLAN_MAX_LAG 63   /* pipelined-steps' --inflight 64: gradient blocks a rank can hold */

struct op {
    enum op_kind kind;
    int stream;         /* STREAM_* */
    int lo, hi;         /* layers [lo,hi) */
    int mb;             /* microbatch; -1 when not per microbatch */
    int n_samples;      /* samples the op works on (compute and p2p); 0 otherwise */
    int peer;           /* SEND/RECV: the other worker; PUSH/PULL: the server; -1 otherwise */
    int group;          /* collectives: index into plan->groups; UPDATE: the group
                         * whose shard of [lo,hi) this rank steps (-1: all of it) */
    uint32_t tag;       /* SEND/RECV: plan_tag(...); 0 otherwise */
    int64_t bytes;      /* comm ops: bytes moved; compute ops: memory bytes touched */
    double flops;       /* compute ops: floating-point operations; 0 otherwise */
    double time_s;      /* compute ops read from a trace: their recorded time, which the
                         * simulator takes instead of the roofline's; 0 otherwise */
    int dep_first;      /* deps are rank->deps.items[dep_first .. dep_first + n_deps) */
    int n_deps;
    int lag;            /* ALLREDUCE, UPDATE: works on the gradients of the step lag steps
                         * back (0: this step's); see "Steps in flight" above */
};

struct plan_rank {
    bool is_server;
    int shard_lo, shard_hi;   /* servers: the layers [lo,hi) whose parameters they hold */
    VEC(struct op) ops;
    VEC(int) deps;            /* op indices of this rank, pointed to by ops */
};

struct plan_group {
    int n_ranks;
    int *ranks;               /* ascending */
};

struct plan {
    char strategy[32];
    const struct workload *wl;   /* borrowed: outlives the plan */
    int n_workers;               /* ranks 0 .. n_workers-1 compute */
    int n_servers;               /* ranks n_workers .. n_ranks-1 are servers */
    int n_ranks;
    int batch;                   /* global samples per step */
    int n_microbatches;          /* per worker and step */
    struct plan_rank *ranks;     /* [n_ranks] */
    VEC(struct plan_group) groups;
    enum server_policy policy;   /* its properties: policy_infos[policy] */
    int policy_arg;              /* policy_infos[policy].arg: SSP's bound K, BACKUP's dropped B */
    int n_grad_slots;            /* gradient blocks per rank: 1 + the largest op lag */
    bool data_parallel;          /* every worker runs the whole model on its share of the
                                  * batch, so the same plan for fewer workers is the job
                                  * without one (--on-failure shrink); false for stages */
    /* What the builder chose that the options did not say (a default it
     * had to lower), for people: compare, sim and schedule print it; "" none */
    char note[160];
    int lowered_chunks;          /* --chunks the builder lowered the default to (in note),
                                  * which the report's config records; 0: as given */
    /* Sticky build error: the first failing builder call records it here and
     * returns -1; later calls do nothing. plan_build_status() reports it. */
    int build_rc;
    char build_msg[ERR_MSG_BYTES];
};

/* A new plan with n_workers + n_servers ranks and no ops; NULL and e set on
 * failure. The workload is borrowed. */
struct plan *plan_create(const char *strategy, const struct workload *wl, int n_workers,
                         int n_servers, int batch, int n_microbatches, struct err *e);
void plan_free(struct plan *p);

/* 0, or the sticky build error copied into e. */
int plan_build_status(const struct plan *p, struct err *e);

/* Adds a group of ranks (copied, sorted); returns its index or -1. */
int plan_add_group(struct plan *p, const int *ranks, int n_ranks);

/* Appends op to rank's program with the given deps (indices of earlier ops of
 * that rank; entries < 0 are skipped, so "no such op yet" needs no branch).
 * op->dep_first/n_deps are filled in. Returns the new op's index, or -1
 * (recording the sticky error) when rank is out of range, a dep is not an
 * earlier op, or memory runs out. The checker validates everything else. */
int plan_add(struct plan *p, int rank, struct op op, const int *deps, int n_deps);

/* Builders: the usual ops with FLOPs and bytes filled in from the workload,
 * so every strategy costs ops the same way. Each returns the op index or -1. */
int plan_forward(struct plan *p, int rank, int lo, int hi, int mb, int n_samples,
                 const int *deps, int n_deps);
int plan_backward(struct plan *p, int rank, int lo, int hi, int mb, int n_samples,
                  const int *deps, int n_deps);
/* BACKWARD split in two (Qi et al., ICLR 2024): the input gradient (B, what
 * the previous stage waits for) and the weight gradients (W, which can wait).
 * W costs what FORWARD costs (one GEMM of the forward's shape per weight),
 * B the rest of the backward, so B + W = BACKWARD in FLOPs. */
int plan_backward_input(struct plan *p, int rank, int lo, int hi, int mb, int n_samples,
                        const int *deps, int n_deps);
int plan_backward_weight(struct plan *p, int rank, int lo, int hi, int mb, int n_samples,
                         const int *deps, int n_deps);
int plan_update(struct plan *p, int rank, int lo, int hi, const int *deps, int n_deps);
/* The UPDATE op of layers [lo,hi) of wl, its flops and bytes filled, for no
 * rank (a parameter server's update of its shard is costed with it). */
struct op plan_update_op(const struct workload *wl, int lo, int hi);
/* kind TAG_ACT crosses `boundary` forward, TAG_GRAD backward */
int plan_send(struct plan *p, int rank, int peer, enum tag_kind kind, int boundary, int mb,
              int n_samples, const int *deps, int n_deps);
int plan_recv(struct plan *p, int rank, int peer, enum tag_kind kind, int boundary, int mb,
              int n_samples, const int *deps, int n_deps);
int plan_allreduce(struct plan *p, int rank, int group, int lo, int hi, const int *deps,
                   int n_deps);
int plan_push(struct plan *p, int rank, int server, int lo, int hi, const int *deps, int n_deps);
int plan_pull(struct plan *p, int rank, int server, int lo, int hi, const int *deps, int n_deps);

/* Collectives over a group (REDUCE_SCATTER, ALL_GATHER) and the shard
 * UPDATE that sits between them: ZeRO-1's step. The UPDATE is costed by the
 * shard's parameters. */
int plan_reduce_scatter(struct plan *p, int rank, int group, int lo, int hi, const int *deps,
                        int n_deps);
int plan_all_gather(struct plan *p, int rank, int group, int lo, int hi, const int *deps,
                    int n_deps);
int plan_update_shard(struct plan *p, int rank, int group, int lo, int hi, const int *deps,
                      int n_deps);

/* Sets op i of rank's lag (core/plan.h "Steps in flight") and grows
 * n_grad_slots to hold it; returns i, or -1 with the sticky error when op i
 * is not an ALLREDUCE or UPDATE or lag is negative. */
int plan_set_lag(struct plan *p, int rank, int i, int lag);

/* The versions a lagged UPDATE's span records in step `step` (core/plan.h
 * "Steps in flight"); -1, -1 for an op without lag or in a step < lag, where
 * it does nothing. */
static inline void plan_lag_versions(const struct op *op, int64_t step, int64_t *read,
                                     int64_t *applied)
{
    *read = *applied = -1;
    if (op->kind != OP_UPDATE || op->lag <= 0 || step < op->lag) return;
    *applied = step - op->lag;
    *read = step - 2 * (int64_t)op->lag > 0 ? step - 2 * (int64_t)op->lag : 0;
}

/* Is kind a collective over a group? */
static inline bool plan_is_collective(enum op_kind kind)
{
    return kind >= 0 && kind < OP_N_KINDS && op_infos[kind].cls == OPC_COLLECTIVE;
}

/* Member k of n's shard [*lo, *hi) of a block of count elements: equal
 * shards of count / n, the last member also taking the remainder, so that
 * the first n (count / n) elements are an equal split (what NCCL's
 * reduce-scatter and all-gather need) and the tail, under n elements, is the
 * last member's. */
static inline void plan_shard(int64_t count, int n, int k, int64_t *lo, int64_t *hi)
{
    int64_t q = count / n;
    *lo = q * k;
    *hi = k == n - 1 ? count : q * (k + 1);
}

/* Rank's position in group g, or -1 when it is not a member. */
int plan_group_member(const struct plan *p, int group, int rank);

/* DEPS(a, b) expands to the (array, count) pair the builders take. */
#define DEPS(...) (const int[]){__VA_ARGS__}, (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int))
#define NO_DEPS NULL, 0

/* The deps of op i of rank r. */
static inline const int *plan_deps(const struct plan *p, int r, int i)
{
    return p->ranks[r].deps.items + p->ranks[r].ops.items[i].dep_first;
}

/* Totals over all ranks of one step. */
int64_t plan_comm_bytes(const struct plan *p);
int64_t plan_n_ops(const struct plan *p);

#endif
