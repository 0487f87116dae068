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
 * event on its link's stream, which test polls. The compute stream goes on
 * meanwhile: a bucket's all-reduce runs while backward computes the layers
 * below it. Links are created in one global order (groups in plan order,
 * then pairs sorted), so blocking inits cannot wait on each other in a
 * cycle; several links' kernels running at once on a GPU is what NCCL
 * calls concurrent communicators: fine while they fit on the GPU together
 * (a handful of pipeline neighbours and groups do). */
#include <nccl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../nn/cuda_check.h"
#include "../nn/cuda_device.h"
#include "comm_backends.h"
#include "comm_world.h"
#include "mpi_check.h"

struct link {
    ncclComm_t comm;            /* NULL until made */
    cudaStream_t stream;
    cudaEvent_t ready;          /* recorded on the compute stream before each operation */
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
    const char *last = ncclGetLastError(NULL);
    return err_set(e, ERR_RUN, "%s failed: %s%s%s (%s:%d)", call, ncclGetErrorString(rc),
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

/* ---- set-up -------------------------------------------------------------------------- */

static int link_make(struct link *l, int n_ranks, int index, ncclUniqueId id, struct err *e)
{
    CUDA_TRY(e, cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking));
    CUDA_TRY(e, cudaEventCreateWithFlags(&l->ready, cudaEventDisableTiming));
    NCCL_TRY(e, ncclCommInitRank(&l->comm, n_ranks, id, index));
    return 0;
}

static void link_free(struct link *l)
{
    if (l->comm) ncclCommDestroy(l->comm);
    if (l->ready) cudaEventDestroy(l->ready);
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

static int open_groups(struct comm *c, struct nccl_state *s, struct err *e)
{
    for (int g = 0; g < s->n_groups; g++) {
        if (c->groups[g] == MPI_COMM_NULL) continue;
        int index = 0, size = 0;
        MPI_TRY(e, MPI_Comm_rank(c->groups[g], &index));
        MPI_TRY(e, MPI_Comm_size(c->groups[g], &size));
        ncclUniqueId id;
        if (index == 0) NCCL_TRY(e, ncclGetUniqueId(&id));
        MPI_TRY(e, MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, c->groups[g]));
        TRY_CTX(e, link_make(&s->groups[g], size, index, id, e), "group %d", g);
    }
    return 0;
}

static int open_pairs(struct comm *c, struct nccl_state *s, struct err *e)
{
    for (int k = 0; k < s->n_pairs; k++) {
        struct pair *q = &s->pairs[k];
        if (q->src != c->rank && q->dst != c->rank) continue;
        ncclUniqueId id;
        if (q->src == c->rank) {
            NCCL_TRY(e, ncclGetUniqueId(&id));
            MPI_TRY(e, MPI_Send(&id, (int)sizeof id, MPI_BYTE, q->dst, k, c->world));
        } else {
            MPI_TRY(e, MPI_Recv(&id, (int)sizeof id, MPI_BYTE, q->src, k, c->world,
                                MPI_STATUS_IGNORE));
        }
        /* src is rank 0 of the link, dst rank 1 */
        int index = q->src == c->rank ? 0 : 1;
        q->link.peer = 1 - index;
        TRY_CTX(e, link_make(&q->link, 2, index, id, e), "messages %d -> %d", q->src, q->dst);
    }
    return 0;
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

static int nccl_open(struct comm *c, const struct plan *p, struct err *e)
{
    TRY(comm_world_open(c, p, e));
    struct nccl_state *s = XCALLOC(e, 1, sizeof *s);
    if (!s) return ERR_NOMEM;
    c->nccl = s;
    s->n_groups = c->n_groups;
    if (!(s->groups = XCALLOC(e, (size_t)s->n_groups + 1, sizeof *s->groups))) return ERR_NOMEM;
    TRY(find_pairs(s, p, e));
    /* only ranks with NCCL links need a GPU: servers have none */
    bool has_links = false;
    for (int g = 0; g < s->n_groups; g++) has_links |= c->groups[g] != MPI_COMM_NULL;
    for (int k = 0; k < s->n_pairs; k++)
        has_links |= s->pairs[k].src == c->rank || s->pairs[k].dst == c->rank;
    if (has_links && (!c->dev || c->dev->is_host_memory))
        return err_set(e, ERR_INPUT, "--comm nccl on rank %d, whose device (%s) is host memory: "
                       "NCCL needs --device cuda", c->rank, c->dev ? c->dev->name : "none");
    /* every rank checks every pair, so that all stop here alike, before
     * any blocking init could wait for a rank that stopped */
    for (int k = 0; k < s->n_pairs; k++) {
        if (s->pairs[k].src == s->pairs[k].dst)
            return err_set(e, ERR_RUN, "rank %d sends to itself: the plan is not valid",
                           s->pairs[k].src);
        TRY(check_order(c->ix, s->pairs[k].src, s->pairs[k].dst, e));
    }
    TRY(open_groups(c, s, e));
    return open_pairs(c, s, e);
}

/* ---- operations ------------------------------------------------------------------------ */

/* Before an operation on l: wait for the compute stream's queued work. */
static int after_compute(struct link *l, struct err *e)
{
    CUDA_TRY(e, cudaEventRecord(l->ready, (cudaStream_t)dev_cuda_stream()));
    CUDA_TRY(e, cudaStreamWaitEvent(l->stream, l->ready, 0));
    return 0;
}

static int record(cudaEvent_t done, struct link *l, struct err *e)
{
    CUDA_TRY(e, cudaEventRecord(done, l->stream));
    return 0;
}

/* After it: its completion event, which test and wait poll. */
static int issued(struct link *l, struct comm_req *r, struct err *e)
{
    cudaEvent_t done = NULL;
    CUDA_TRY(e, cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    if (record(done, l, e) < 0) {
        cudaEventDestroy(done);
        return e->code;
    }
    r->done = done;
    r->link = l;
    r->is_active = true;
    return 0;
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
    NCCL_TRY(e, ncclSend(buf, bytes, ncclUint8, l->peer, l->comm, l->stream));
    return issued(l, r, e);
}

static int nccl_irecv(struct comm *c, void *buf, size_t bytes, int peer, uint32_t tag,
                      struct comm_req *r, struct err *e)
{
    (void)tag;
    struct link *l = pair_link(c, peer, c->rank, e);
    if (!l) return e->code;
    TRY(after_compute(l, e));
    NCCL_TRY(e, ncclRecv(buf, bytes, ncclUint8, l->peer, l->comm, l->stream));
    return issued(l, r, e);
}

static int nccl_iallreduce_sum(struct comm *c, float *buf, size_t n, int group,
                               struct comm_req *r, struct err *e)
{
    struct nccl_state *s = c->nccl;
    if (group < 0 || group >= s->n_groups || !s->groups[group].comm)
        return err_set(e, ERR_RUN, "ALLREDUCE on group %d, which rank %d is not a member of",
                       group, c->rank);
    struct link *l = &s->groups[group];
    TRY(after_compute(l, e));
    NCCL_TRY(e, ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, l->comm, l->stream));
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

/* plan_shard's layout (core/plan.h): member k owns [kq, (k+1)q), q = n / size,
 * and the last member also the tail [size q, n). NCCL's reduce-scatter and
 * all-gather take equal shards, in place when member k's is at buf + kq:
 * they do the first size q elements, and a reduce to (a broadcast from) the
 * last member does the tail, all in one NCCL group. */

/* This member's place in group's communicator and the shards of n:
 * size members, me among them, q elements each and the tail [size q, n)
 * for the last; *l's stream made to wait for the compute before. */
struct shard_of {
    int size, me;
    size_t q, tail;
};

static int shard_begin(struct comm *c, size_t n, int group, const char *what, struct link **l,
                       struct shard_of *sh, struct err *e)
{
    if (!(*l = group_link(c, group, what, e))) return e->code;
    NCCL_TRY(e, ncclCommCount((*l)->comm, &sh->size));
    NCCL_TRY(e, ncclCommUserRank((*l)->comm, &sh->me));
    sh->q = n / (size_t)sh->size;
    sh->tail = n - sh->q * (size_t)sh->size;
    return after_compute(*l, e);
}

static int nccl_ireduce_scatter_sum(struct comm *c, float *buf, size_t n, int group,
                                    struct comm_req *r, struct err *e)
{
    struct shard_of sh;
    struct link *l = NULL;
    TRY(shard_begin(c, n, group, "REDUCE_SCATTER", &l, &sh, e));
    const size_t q = sh.q, tail = sh.tail;
    const int size = sh.size, me = sh.me;
    NCCL_TRY(e, ncclGroupStart());
    if (q) NCCL_TRY(e, ncclReduceScatter(buf, buf + q * (size_t)me, q, ncclFloat, ncclSum, l->comm,
                                         l->stream));
    if (tail) NCCL_TRY(e, ncclReduce(buf + q * (size_t)size, buf + q * (size_t)size, tail,
                                     ncclFloat, ncclSum, size - 1, l->comm, l->stream));
    NCCL_TRY(e, ncclGroupEnd());
    return issued(l, r, e);
}

static int nccl_iall_gather(struct comm *c, float *buf, size_t n, int group, struct comm_req *r,
                            struct err *e)
{
    struct shard_of sh;
    struct link *l = NULL;
    TRY(shard_begin(c, n, group, "ALL_GATHER", &l, &sh, e));
    const size_t q = sh.q, tail = sh.tail;
    const int size = sh.size, me = sh.me;
    NCCL_TRY(e, ncclGroupStart());
    if (q) NCCL_TRY(e, ncclAllGather(buf + q * (size_t)me, buf, q, ncclFloat, l->comm, l->stream));
    if (tail) NCCL_TRY(e, ncclBroadcast(buf + q * (size_t)size, buf + q * (size_t)size, tail,
                                        ncclFloat, size - 1, l->comm, l->stream));
    NCCL_TRY(e, ncclGroupEnd());
    return issued(l, r, e);
}

static int nccl_test(struct comm *c, struct comm_req *r, bool *done, struct err *e)
{
    (void)c;
    *done = true;
    if (!r->is_active) return 0;
    cudaError_t rc = cudaEventQuery((cudaEvent_t)r->done);
    if (rc == cudaErrorNotReady) {
        /* a peer that failed leaves this waiting: NCCL says so here */
        ncclResult_t async = ncclSuccess;
        struct link *l = r->link;
        NCCL_TRY(e, ncclCommGetAsyncError(l->comm, &async));
        if (async != ncclSuccess && async != ncclInProgress)
            return nccl_fail(e, async, "an NCCL operation (ncclCommGetAsyncError)", __FILE__,
                             __LINE__);
        *done = false;
        return 0;
    }
    cudaEventDestroy((cudaEvent_t)r->done);
    r->done = NULL;
    r->is_active = false;
    if (rc != cudaSuccess)
        return cuda_check_fail(e, rc, "cudaEventQuery of an NCCL operation", __FILE__, __LINE__);
    return 0;
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
    .open = nccl_open,
    .close = nccl_close,
    .isend = nccl_isend,
    .irecv = nccl_irecv,
    .iallreduce_sum = nccl_iallreduce_sum,
    .ireduce_scatter_sum = nccl_ireduce_scatter_sum,
    .iall_gather = nccl_iall_gather,
    .test = nccl_test,
    .wait = nccl_wait,
};
