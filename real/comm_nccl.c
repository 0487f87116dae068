/* The nccl communicator: device buffers, ncclAllReduce for the plan's
 * buckets and ncclSend/ncclRecv for its messages, as nccl-tests and llm.c
 * start it: MPI first (real/comm_world.c makes the world and group
 * communicators, as for the mpi comm), then for every NCCL communicator
 * its lowest rank makes the unique id and MPI carries it to the others,
 * which all call ncclCommInitRank.
 *
 * Communicators ("links"), each with its own stream:
 *   - one per plan group, for its all-reduces;
 *   - one per ordered pair of ranks (src -> dst) that the plan sends
 *     between, for the messages of that direction only.
 * NCCL matches a communicator's operations by order, not by tag, and runs
 * them in issue order on the GPU. Separate links keep a send that waits for
 * its receiver from holding up other traffic (a pipeline's activations one
 * way and gradients the other would otherwise deadlock once a message no
 * longer fits NCCL's buffers); open checks that each direction's messages
 * are received in the order they are sent, which the mpi comm does not
 * need (it matches tags).
 *
 * Ordering against compute: an operation waits (cudaStreamWaitEvent) for
 * an event recorded on the device's compute stream when it is issued, so
 * it reads what the compute queued before it wrote; its completion is an
 * event on its link's stream (reused from the link's spares), which test
 * polls without leaving "not ready" as a CUDA error (nn/cuda_poll.h). The compute stream goes on
 * meanwhile: a bucket's all-reduce runs while backward computes the layers
 * below it. Links are created in one global order (groups in plan order,
 * then pairs sorted), so blocking inits cannot wait on each other in a
 * cycle; several links' kernels running at once on a GPU is what NCCL
 * calls concurrent communicators: fine while they fit on the GPU together
 * (a handful of pipeline neighbours and groups do). Open warms every
 * link up in that order too (one tiny operation each), so no link makes
 * its connections in the middle of a step.
 *
 * NCCL itself is dlopen'ed at open (real/nccl_lib.h): every call goes
 * through nccl_lib. */
#include <nccl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/vec.h"

#include "../nn/cuda_check.h"
#include "../nn/cuda_device.h"
#include "../nn/cuda_poll.h"
#include "comm_backends.h"
#include "comm_world.h"
#include "mpi_check.h"
#include "nccl_lib.h"

struct link {
    bool is_member;             /* this rank has a place in it */
    int index, size;            /* this rank's place in it, of how many */
    ncclUniqueId id;            /* made by index 0, carried to the others over MPI */
    ncclComm_t comm;            /* NULL until made */
    cudaStream_t stream;
    cudaEvent_t ready;          /* recorded on the compute stream before each operation */
    VEC(cudaEvent_t) spare;     /* completion events of finished operations, for reuse */
    int peer;                   /* pairs: the other rank's index in comm */
};

struct pair {
    int src, dst;               /* world ranks: messages src -> dst */
    struct link link;           /* made only on src and dst */
};

struct nccl_state {
    int n_groups;
    struct link *groups;        /* [n_groups]: comm NULL where not a member */
    int n_pairs;
    struct pair *pairs;         /* every ordered pair the plan sends between, sorted */
};

/* ---- checks ------------------------------------------------------------------ */

static int nccl_fail(struct err *e, ncclResult_t rc, const char *call, const char *file,
                     int line)
{
    const char *last = nccl_lib.GetLastError(NULL);
    return err_set(e, ERR_RUN, "%s failed: %s%s%s (%s:%d)", call, nccl_lib.GetErrorString(rc),
                   last && *last ? ": " : "", last ? last : "", file, line);
}

/* NCCL's counterpart of CUDA_TRY (nn/cuda_check.h) and MPI_TRY
 * (real/mpi_check.h): the failure, the call, NCCL's last words, file and line. */
#define NCCL_TRY(e, call) TRY_CALL(e, ncclResult_t, ncclSuccess, nccl_fail, call)

/* ---- which GPUs the ranks use --------------------------------------------------- */

struct gpu_of_rank {
    char host[64];
    char bus[32];               /* "" for a rank without a GPU */
};

/* Every rank's host and GPU, on every rank: all[n_ranks]. */
static int gather_gpus(const struct gpu_of_rank *me, struct gpu_of_rank *all, struct err *e)
{
    MPI_TRY(e, MPI_Allgather(me, (int)sizeof *me, MPI_BYTE, all, (int)sizeof *me, MPI_BYTE,
                             MPI_COMM_WORLD));
    return 0;
}

int comm_nccl_shared_gpu(const struct device *mine, int *shared, int *other, char *bus_id,
                         size_t n, struct err *e)
{
    *shared = *other = -1;
    if (n) bus_id[0] = '\0';
    struct gpu_of_rank me = {{0}, {0}};
    gethostname(me.host, sizeof me.host - 1);
    if (mine && !mine->is_host_memory) dev_cuda_bus_id(me.bus, sizeof me.bus);
    int n_ranks = 0;
    MPI_TRY(e, MPI_Comm_size(MPI_COMM_WORLD, &n_ranks));
    struct gpu_of_rank *all = XCALLOC(e, (size_t)n_ranks, sizeof *all);
    if (!all) return ERR_NOMEM;
    int rc = gather_gpus(&me, all, e);
    /* O(ranks^2): fine for the ranks of one job's GPUs */
    for (int a = 0; rc == 0 && a < n_ranks && *shared < 0; a++)
        for (int b = a + 1; b < n_ranks && *shared < 0; b++)
            if (all[a].bus[0] && !strcmp(all[a].bus, all[b].bus) &&
                !strcmp(all[a].host, all[b].host)) {
                *shared = a;
                *other = b;
                snprintf(bus_id, n, "%s on %s", all[a].bus, all[a].host);
            }
    free(all);
    return rc;
}

int comm_nccl_load(struct err *e)
{
    return mpi_check_agree(nccl_lib_open(e), e);
}

/* ---- set-up -------------------------------------------------------------------------- */

/* Open runs in phases, each ended by mpi_check_agree, so that a rank that
 * fails (no GPU memory for a stream, no network for a unique id) stops
 * every rank with its message instead of leaving them in a blocking MPI
 * call or in ncclCommInitRank waiting for it:
 *   1. MPI's communicators (comm_world), NCCL loaded, local checks: the
 *      plan's pairs and their order, a GPU where needed;
 *   2. unique ids, made by each link's index 0;
 *   3. ids carried over MPI; streams and events made;
 *   4. ncclCommInitRank, link by link in one global order;
 *   5. warm-up: one tiny operation per link, in the same order.
 * A failure inside NCCL's own init (4) is NCCL's to report to every member
 * of that communicator (its bootstrap times out); the others then meet the
 * agreement. */

static void link_free(struct link *l)
{
    if (l->comm) nccl_lib.CommDestroy(l->comm);
    if (l->ready) cudaEventDestroy(l->ready);
    for (size_t i = 0; i < l->spare.len; i++) cudaEventDestroy(l->spare.items[i]);
    vec_free(&l->spare);
    if (l->stream) cudaStreamDestroy(l->stream);
    memset(l, 0, sizeof *l);
}

static int by_pair(const void *pa, const void *pb)
{
    const struct pair *a = pa, *b = pb;
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    return a->dst < b->dst ? -1 : a->dst > b->dst;
}

/* Every ordered pair some SEND of the plan goes along, sorted, unique. */
static int find_pairs(struct nccl_state *s, const struct plan *p, struct err *e)
{
    size_t n_sends = 0;
    for (int r = 0; r < p->n_ranks; r++)
        for (size_t i = 0; i < p->ranks[r].ops.len; i++)
            n_sends += p->ranks[r].ops.items[i].kind == OP_SEND;
    s->pairs = XCALLOC(e, n_sends + 1, sizeof *s->pairs);
    if (!s->pairs) return ERR_NOMEM;
    int n = 0;
    for (int r = 0; r < p->n_ranks; r++)
        for (size_t i = 0; i < p->ranks[r].ops.len; i++)
            if (p->ranks[r].ops.items[i].kind == OP_SEND)
                s->pairs[n++] = (struct pair){.src = r, .dst = p->ranks[r].ops.items[i].peer};
    qsort(s->pairs, (size_t)n, sizeof *s->pairs, by_pair);
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (kept == 0 || by_pair(&s->pairs[kept - 1], &s->pairs[i]) != 0) s->pairs[kept++] = s->pairs[i];
    s->n_pairs = kept;
    return 0;
}

/* NCCL pairs a link's sends and receives by order: dst must post its RECVs
 * from src in the order src sends them. The plan's index pairs each SEND
 * with its RECV (and every RECV has one), so the RECVs of src's SENDs to
 * dst, taken in program order, must come in program order too. */
static int check_order(const struct plan_index *ix, int src, int dst, struct err *e)
{
    int last = -1;
    for (int g = ix->off[src]; g < ix->off[src + 1]; g++) {
        const struct op *o = plan_index_op(ix, g);
        if (o->kind != OP_SEND || o->peer != dst) continue;
        int recv = ix->partner[g];
        if (recv < last)
            return err_set(e, ERR_INPUT, "--comm nccl: rank %d receives the messages of rank %d "
                           "in another order than they are sent (op %d of rank %d is received "
                           "by op %d of rank %d, after a later one), and NCCL matches them by "
                           "order; use --comm mpi",
                           dst, src, g - ix->off[src], src, recv - ix->off[dst], dst);
        last = recv;
    }
    return 0;
}

/* The links in their one global order (groups in plan order, then pairs
 * sorted): every phase walks them so, and blocking calls on several links
 * cannot wait on each other in a cycle. NULL past the last. */
static struct link *link_at(struct nccl_state *s, int k)
{
    if (k < s->n_groups) return &s->groups[k];
    k -= s->n_groups;
    return k < s->n_pairs ? &s->pairs[k].link : NULL;
}

/* Phase 1: the state, the pairs, this rank's places, and the checks. */
static int plan_links(struct comm *c, struct nccl_state *s, const struct plan *p, struct err *e)
{
    s->n_groups = c->n_groups;
    if (!(s->groups = XCALLOC(e, (size_t)s->n_groups + 1, sizeof *s->groups))) return ERR_NOMEM;
    TRY(find_pairs(s, p, e));
    bool has_links = false;
    for (int g = 0; g < s->n_groups; g++) {
        struct link *l = &s->groups[g];
        if (c->groups[g] == MPI_COMM_NULL) continue;
        l->is_member = has_links = true;
        MPI_TRY(e, MPI_Comm_rank(c->groups[g], &l->index));
        MPI_TRY(e, MPI_Comm_size(c->groups[g], &l->size));
    }
    for (int k = 0; k < s->n_pairs; k++) {
        struct pair *q = &s->pairs[k];
        if (q->src == q->dst)
            return err_set(e, ERR_RUN, "rank %d sends to itself: the plan is not valid", q->src);
        /* every rank checks every pair, so that all stop here alike */
        TRY(check_order(c->ix, q->src, q->dst, e));
        if (q->src != c->rank && q->dst != c->rank) continue;
        /* src is index 0 of the link, dst index 1 */
        q->link = (struct link){.is_member = true, .index = q->src == c->rank ? 0 : 1, .size = 2};
        q->link.peer = 1 - q->link.index;
        has_links = true;
    }
    /* only ranks with NCCL links need a GPU: servers have none */
    if (has_links && (!c->dev || c->dev->is_host_memory))
        return err_set(e, ERR_INPUT, "--comm nccl on rank %d, whose device (%s) is host memory: "
                       "NCCL needs --device cuda", c->rank, c->dev ? c->dev->name : "none");
    return 0;
}

/* Phase 2: the ids this rank makes, with nothing sent yet. */
static int make_ids(struct nccl_state *s, struct err *e)
{
    for (int k = 0; link_at(s, k); k++) {
        struct link *l = link_at(s, k);
        if (l->is_member && l->index == 0) NCCL_TRY(e, nccl_lib.GetUniqueId(&l->id));
    }
    return 0;
}

/* Phase 3: the ids to the other members (a group's by broadcast, a pair's
 * src -> dst with the pair's number as tag), then streams and events. */
static int share_ids(struct comm *c, struct nccl_state *s, struct err *e)
{
    for (int g = 0; g < s->n_groups; g++)
        if (s->groups[g].is_member)
            MPI_TRY(e, MPI_Bcast(&s->groups[g].id, (int)sizeof(ncclUniqueId), MPI_BYTE, 0,
                                 c->groups[g]));
    for (int k = 0; k < s->n_pairs; k++) {
        struct pair *q = &s->pairs[k];
        if (q->src == c->rank)
            MPI_TRY(e, MPI_Send(&q->link.id, (int)sizeof q->link.id, MPI_BYTE, q->dst, k,
                                c->world));
        else if (q->dst == c->rank)
            MPI_TRY(e, MPI_Recv(&q->link.id, (int)sizeof q->link.id, MPI_BYTE, q->src, k,
                                c->world, MPI_STATUS_IGNORE));
    }
    for (int k = 0; link_at(s, k); k++) {
        struct link *l = link_at(s, k);
        if (!l->is_member) continue;
        CUDA_TRY(e, cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking));
        CUDA_TRY(e, cudaEventCreateWithFlags(&l->ready, cudaEventDisableTiming));
    }
    return 0;
}

/* Phase 4: the communicators, in the global order. */
static int init_link(struct link *l, struct err *e)
{
    NCCL_TRY(e, nccl_lib.CommInitRank(&l->comm, l->size, l->id, l->index));
    return 0;
}

/* "group 3" or "messages 1 -> 2": link k, for messages */
static void link_name(const struct nccl_state *s, int k, char *buf, size_t n)
{
    if (k < s->n_groups)
        snprintf(buf, n, "group %d", k);
    else
        snprintf(buf, n, "messages %d -> %d", s->pairs[k - s->n_groups].src,
                 s->pairs[k - s->n_groups].dst);
}

static int init_links(struct nccl_state *s, struct err *e)
{
    for (int k = 0; link_at(s, k); k++) {
        struct link *l = link_at(s, k);
        char name[64];
        link_name(s, k, name, sizeof name);
        if (l->is_member) TRY_CTX(e, init_link(l, e), "%s", name);
    }
    return 0;
}

/* Phase 5: NCCL connects a communicator's peers on its first operation.
 * Left to the run, that first operation would be an eager SEND or a
 * bucket's all-reduce issued while other communicators' kernels are in
 * flight, the situation NCCL's documentation warns can deadlock. So each
 * link does one operation now, alone on the GPU and in the global order
 * (a 1-float all-reduce per group, a 1-byte send per pair), and waits for
 * it before the next: the members of the lowest unfinished link have all
 * finished the links before it, so all reach it. */
static int warm_link(struct link *l, bool is_pair, void *scratch, struct err *e)
{
    if (is_pair && l->index == 0)
        NCCL_TRY(e, nccl_lib.Send(scratch, 1, ncclUint8, l->peer, l->comm, l->stream));
    else if (is_pair)
        NCCL_TRY(e, nccl_lib.Recv(scratch, 1, ncclUint8, l->peer, l->comm, l->stream));
    else
        NCCL_TRY(e, nccl_lib.AllReduce(scratch, scratch, 1, ncclFloat, ncclSum, l->comm,
                                       l->stream));
    CUDA_TRY(e, cudaStreamSynchronize(l->stream));
    return 0;
}

static int warm_links(struct comm *c, struct nccl_state *s, struct err *e)
{
    float *scratch = NULL;
    for (int k = 0; link_at(s, k) && !scratch; k++)
        if (link_at(s, k)->is_member) {
            if (!(scratch = c->dev->alloc(sizeof *scratch, e))) return e->code;
            c->dev->fill(scratch, 1, 0);
            TRY(c->dev->sync(e));
        }
    int rc = 0;
    for (int k = 0; rc == 0 && link_at(s, k); k++) {
        char name[64];
        link_name(s, k, name, sizeof name);
        if (link_at(s, k)->is_member && (rc = warm_link(link_at(s, k), k >= s->n_groups,
                                                        scratch, e)) < 0)
            err_prefix(e, "warming up %s", name);
    }
    if (scratch) c->dev->free(scratch);
    return rc;
}

static void nccl_close(struct comm *c)
{
    struct nccl_state *s = c->nccl;
    if (s) {
        for (int g = 0; s->groups && g < s->n_groups; g++) link_free(&s->groups[g]);
        for (int k = 0; s->pairs && k < s->n_pairs; k++) link_free(&s->pairs[k].link);
        free(s->groups);
        free(s->pairs);
        free(s);
        c->nccl = NULL;
    }
    comm_world_close(c);
}

/* Collective over MPI_COMM_WORLD: every rank passes every agreement, in
 * the same order, whatever it met before (see the phases above). */
static int nccl_open(struct comm *c, const struct plan *p, struct err *e)
{
    struct nccl_state *s = NULL;
    int rc = comm_world_open(c, p, e);
    if (rc == 0 && !(c->nccl = s = XCALLOC(e, 1, sizeof *s))) rc = ERR_NOMEM;
    if (rc == 0) rc = nccl_lib_open(e);
    if (rc == 0) rc = plan_links(c, s, p, e);
    TRY(mpi_check_agree(rc, e));
    TRY(mpi_check_agree(make_ids(s, e), e));
    TRY(mpi_check_agree(share_ids(c, s, e), e));
    TRY(mpi_check_agree(init_links(s, e), e));
    return mpi_check_agree(warm_links(c, s, e), e);
}

/* ---- operations ------------------------------------------------------------------------ */

/* Before an operation on l: wait for the compute stream's queued work. */
static int after_compute(struct link *l, struct err *e)
{
    CUDA_TRY(e, cudaEventRecord(l->ready, (cudaStream_t)dev_cuda_stream()));
    CUDA_TRY(e, cudaStreamWaitEvent(l->stream, l->ready, 0));
    return 0;
}

/* After it: its completion event, which test and wait poll. Events are
 * reused (a link's spares), not made per operation: creating one costs a
 * driver call, and a step issues dozens of operations. */
static int issued(struct link *l, struct comm_req *r, struct err *e)
{
    cudaEvent_t done = NULL;
    if (l->spare.len)
        done = l->spare.items[--l->spare.len];
    else
        CUDA_TRY(e, cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    cudaError_t rc = cudaEventRecord(done, l->stream);
    if (rc != cudaSuccess) {
        cudaEventDestroy(done);
        return cuda_check_fail(e, rc, "cudaEventRecord(done, l->stream)", __FILE__, __LINE__);
    }
    r->done = done;
    r->link = l;
    r->is_active = true;
    return 0;
}

/* r's event back to its link's spares (destroyed when there is no room). */
static void retire(struct comm_req *r)
{
    struct link *l = r->link;
    cudaEvent_t done = (cudaEvent_t)r->done;
    if (vec_push(&l->spare, done) < 0) cudaEventDestroy(done);
    r->done = NULL;
    r->is_active = false;
}

static struct link *pair_link(struct comm *c, int src, int dst, struct err *e)
{
    struct nccl_state *s = c->nccl;
    struct pair key = {.src = src, .dst = dst};
    struct pair *q = bsearch(&key, s->pairs, (size_t)s->n_pairs, sizeof *s->pairs, by_pair);
    if (q && q->link.comm) return &q->link;
    err_set(e, ERR_RUN, "rank %d: a message %d -> %d that the plan does not have", c->rank, src,
            dst);
    return NULL;
}

static int nccl_isend(struct comm *c, const void *buf, size_t bytes, int peer, uint32_t tag,
                      struct comm_req *r, struct err *e)
{
    (void)tag;   /* matched by order: open checked it */
    struct link *l = pair_link(c, c->rank, peer, e);
    if (!l) return e->code;
    TRY(after_compute(l, e));
    NCCL_TRY(e, nccl_lib.Send(buf, bytes, ncclUint8, l->peer, l->comm, l->stream));
    return issued(l, r, e);
}

static int nccl_irecv(struct comm *c, void *buf, size_t bytes, int peer, uint32_t tag,
                      struct comm_req *r, struct err *e)
{
    (void)tag;
    struct link *l = pair_link(c, peer, c->rank, e);
    if (!l) return e->code;
    TRY(after_compute(l, e));
    NCCL_TRY(e, nccl_lib.Recv(buf, bytes, ncclUint8, l->peer, l->comm, l->stream));
    return issued(l, r, e);
}

/* Group `group`'s link, or ERR_RUN naming `what`. */
static struct link *group_link(struct comm *c, int group, const char *what, struct err *e)
{
    struct nccl_state *s = c->nccl;
    if (group >= 0 && group < s->n_groups && s->groups[group].comm) return &s->groups[group];
    err_set(e, ERR_RUN, "%s on group %d, which rank %d is not a member of", what, group, c->rank);
    return NULL;
}

static int nccl_iallreduce_sum(struct comm *c, float *buf, size_t n, int group,
                               struct comm_req *r, struct err *e)
{
    struct link *l = group_link(c, group, "ALLREDUCE", e);
    if (!l) return e->code;
    TRY(after_compute(l, e));
    NCCL_TRY(e, nccl_lib.AllReduce(buf, buf, n, ncclFloat, ncclSum, l->comm, l->stream));
    return issued(l, r, e);
}

/* plan_shard's layout (core/plan.h): member k owns [kq, (k+1)q), q = n / size,
 * and the last member also the tail [size q, n). NCCL's reduce-scatter and
 * all-gather take equal shards, in place when member k's is at buf + kq:
 * they do the first size q elements, and a reduce to (a broadcast from) the
 * last member does the tail, all in one NCCL group. The two collectives
 * differ only in that pair of calls, so one function issues both. */
enum shard_collective {
    SHARD_REDUCE_SCATTER,   /* sums into each member's shard */
    SHARD_ALL_GATHER,       /* copies each owner's shard to every member */
};

static int shard_issue(struct comm *c, float *buf, size_t n, int group,
                       enum shard_collective op, struct comm_req *r, struct err *e)
{
    const bool is_scatter = op == SHARD_REDUCE_SCATTER;
    struct link *l = group_link(c, group, is_scatter ? "REDUCE_SCATTER" : "ALL_GATHER", e);
    if (!l) return e->code;
    int size, me;   /* the group's members, and this one among them */
    NCCL_TRY(e, nccl_lib.CommCount(l->comm, &size));
    NCCL_TRY(e, nccl_lib.CommUserRank(l->comm, &me));
    TRY(after_compute(l, e));
    const size_t q = n / (size_t)size, tail = n - q * (size_t)size;
    float *mine = buf + q * (size_t)me, *tail_at = buf + q * (size_t)size;
    NCCL_TRY(e, nccl_lib.GroupStart());
    if (is_scatter) {
        if (q) NCCL_TRY(e, nccl_lib.ReduceScatter(buf, mine, q, ncclFloat, ncclSum, l->comm,
                                                  l->stream));
        if (tail) NCCL_TRY(e, nccl_lib.Reduce(tail_at, tail_at, tail, ncclFloat, ncclSum,
                                              size - 1, l->comm, l->stream));
    } else {
        if (q) NCCL_TRY(e, nccl_lib.AllGather(mine, buf, q, ncclFloat, l->comm, l->stream));
        if (tail) NCCL_TRY(e, nccl_lib.Broadcast(tail_at, tail_at, tail, ncclFloat, size - 1,
                                                 l->comm, l->stream));
    }
    NCCL_TRY(e, nccl_lib.GroupEnd());
    return issued(l, r, e);
}

static int nccl_ireduce_scatter_sum(struct comm *c, float *buf, size_t n, int group,
                                    struct comm_req *r, struct err *e)
{
    return shard_issue(c, buf, n, group, SHARD_REDUCE_SCATTER, r, e);
}

static int nccl_iall_gather(struct comm *c, float *buf, size_t n, int group, struct comm_req *r,
                            struct err *e)
{
    return shard_issue(c, buf, n, group, SHARD_ALL_GATHER, r, e);
}

static int nccl_test(struct comm *c, struct comm_req *r, bool *done, struct err *e)
{
    (void)c;
    *done = true;
    if (!r->is_active) return 0;
    /* not ready leaves no error behind (nn/cuda_poll.h says why it must not) */
    cudaError_t rc = cuda_event_poll((cudaEvent_t)r->done);
    if (rc == cudaErrorNotReady) {
        /* a peer that failed leaves this waiting: NCCL says so here */
        ncclResult_t async = ncclSuccess;
        struct link *l = r->link;
        NCCL_TRY(e, nccl_lib.CommGetAsyncError(l->comm, &async));
        if (async != ncclSuccess && async != ncclInProgress)
            return nccl_fail(e, async, "an NCCL operation (ncclCommGetAsyncError)", __FILE__,
                             __LINE__);
        *done = false;
        return 0;
    }
    if (rc == cudaSuccess) {
        retire(r);
        return 0;
    }
    cudaEventDestroy((cudaEvent_t)r->done);   /* not one to reuse */
    r->done = NULL;
    r->is_active = false;
    return cuda_check_fail(e, rc, "cudaEventQuery of an NCCL operation", __FILE__, __LINE__);
}

static int nccl_wait(struct comm *c, struct comm_req *r, struct err *e)
{
    for (;;) {
        bool done = false;
        TRY(nccl_test(c, r, &done, e));
        if (done) return 0;
        sched_yield();
    }
}

const struct comm_ops comm_nccl = {
    .name = "nccl",
    COMM_OPS(nccl),
};
