/* The mpi communicator: host buffers, MPI_Isend/Irecv for the plan's
 * messages, MPI_Iallreduce for its buckets and MPI_Ireduce_scatter /
 * MPI_Iallgatherv for ZeRO-1's shards (the v forms: the last shard also
 * holds the remainder, core/plan.h plan_shard), one MPI communicator per plan
 * group so that collectives of different groups never mix.
 *
 * Device buffers (a cuda rank's): each request goes through a host copy
 * from a pool of them (real/host_copy.h): a SEND or ALLREDUCE copies the device
 * buffer out when it starts, a RECV or ALLREDUCE copies the result in when
 * it completes. Costs: two PCIe copies per all-reduce, from pageable
 * memory; what lets ranks share one GPU, and the baseline NCCL is held
 * against.
 *
 * Progress: MPI moves a nonblocking operation forward only inside MPI calls
 * (OpenMPI has no progress thread by default). The executor tests its
 * running requests between ops, so a bucket all-reduce advances at every
 * layer boundary of the backward it overlaps.
 *
 * The all-reduce's algorithm: Open MPI runs MPI_Iallreduce in its libnbc
 * component, which for an in-place sum (ours) and for fewer than 4 ranks
 * always picks the binomial tree: every rank sends the whole buffer to rank
 * 0, which alone sums it and sends it back; the others wait. The
 * reduce-scatter + all-gather (Rabenseifner's) sums a 1/p share on each
 * rank. Measured on 2 ranks of this 2-core machine, 36.8 M floats (the
 * gradients of mlp:784-4096-4096-4096-10), in one job alternating the two
 * (MPI_T), best of 5: binomial 2014 ms, reduce-scatter + all-gather 777 ms,
 * ring 835 ms, under a load average of 24 from other work; equal sums. So
 * the mpi comm asks libnbc for it, unless the user chose one (`mpirun --mca
 * coll_libnbc_iallreduce_algorithm N` or its OMPI_MCA_ variable). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/untracked.h"
#include "comm_backends.h"
#include "comm_world.h"
#include "mpi_check.h"

#define LIBNBC_ALLREDUCE_VAR "coll_libnbc_iallreduce_algorithm"
#define LIBNBC_REDSCAT_ALLGATHER 3   /* its values: 0 its own choice, 1 ring, 2 binomial, 3 this */

/* Open MPI's libnbc to reduce-scatter + all-gather its MPI_Iallreduce's,
 * through the MPI tool interface's control variable, which libnbc reads at
 * each call; nothing when the user set it, or under another MPI (no such
 * variable). Any failure leaves MPI's own choice, which is correct, only
 * slower. */
static void choose_allreduce_algorithm(void)
{
    if (getenv("OMPI_MCA_" LIBNBC_ALLREDUCE_VAR)) return;   /* mpirun --mca sets it too */
    int provided = 0, index = 0, count = 0, value = -1, object = 0;
    UNTRACKED_BEGIN();
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS) {
        MPI_T_cvar_handle h;
        if (MPI_T_cvar_get_index(LIBNBC_ALLREDUCE_VAR, &index) == MPI_SUCCESS &&
            MPI_T_cvar_handle_alloc(index, &object, &h, &count) == MPI_SUCCESS) {
            /* 0: libnbc's own choice, not a user's (a parameter file may set it) */
            if (count == 1 && MPI_T_cvar_read(h, &value) == MPI_SUCCESS && value == 0) {
                value = LIBNBC_REDSCAT_ALLGATHER;
                MPI_T_cvar_write(h, &value);
            }
            MPI_T_cvar_handle_free(&h);
        }
        /* before MPI_Finalize: Open MPI 4.1 crashes in an MPI_T_finalize after it */
        MPI_T_finalize();
    }
    UNTRACKED_END();
}

/* The communicators the mpi comm sends on, and its pool of host copies. */
static int mpi_open(struct comm *c, const struct plan *p, struct err *e)
{
    choose_allreduce_algorithm();
    return comm_world_open(c, p, e);
}

static void mpi_close(struct comm *c)
{
    comm_world_close(c);
    for (size_t i = 0; i < c->copies.len; i++) {
        host_copy_release(&c->copies.items[i]->copy);
        free(c->copies.items[i]);
    }
    vec_free(&c->copies);
}

/* ---- host copies of device buffers --------------------------------------- */

static bool is_staged(const struct comm *c)
{
    return c->dev && !c->dev->is_host_memory;
}

/* A free host copy from the pool (first fit: as many as requests in flight). */
static struct comm_host_copy *copy_take(struct comm *c, struct err *e)
{
    for (size_t i = 0; i < c->copies.len; i++)
        if (!c->copies.items[i]->is_busy) {
            c->copies.items[i]->is_busy = true;
            return c->copies.items[i];
        }
    struct comm_host_copy *st = XCALLOC(e, 1, sizeof *st);
    if (!st) return NULL;
    if (vec_push(&c->copies, st) < 0) {
        free(st);
        err_set(e, ERR_NOMEM, "out of memory");
        return NULL;
    }
    st->is_busy = true;
    return st;
}

/* The buffer MPI is given for `bytes` at buf: buf itself on host memory;
 * else a host copy, holding buf's contents when is_out, and copied back to
 * buf on completion when is_in. */
static void *staged(struct comm *c, void *buf, size_t bytes, bool is_out, bool is_in,
                    struct comm_req *r, struct err *e)
{
    r->copy = NULL;
    r->dev_dst = NULL;
    if (!is_staged(c)) return buf;
    struct comm_host_copy *st = copy_take(c, e);
    if (!st) return NULL;
    void *h = is_out ? (void *)host_copy_out(c->dev, &st->copy, buf, bytes, e)
                     : host_copy_in(c->dev, &st->copy, buf, bytes, e);
    if (!h) {
        st->is_busy = false;
        return NULL;
    }
    r->copy = st;
    r->dev_dst = is_in ? buf : NULL;
    r->bytes = bytes;
    return h;
}

/* r has completed: a reduce-scatter's shard to its place, its result to
 * the device, its host copy to the pool. */
static void unstage(struct comm *c, struct comm_req *r)
{
    free(r->counts);
    r->counts = NULL;
    if (r->shard_dst) {
        /* MPI left the shard at the start of the buffer it was given */
        if (r->copy) c->dev->copy(r->shard_dst, r->shard_src, r->shard_bytes, DEV_H2D);
        else memmove(r->shard_dst, r->shard_src, r->shard_bytes);
        r->shard_src = r->shard_dst = NULL;
    }
    if (!r->copy) return;
    if (r->dev_dst) host_copy_in_done(c->dev, &r->copy->copy, r->dev_dst, r->bytes);
    r->copy->is_busy = false;
    r->copy = NULL;
    r->dev_dst = NULL;
}

/* A plan tag as an MPI tag: plan tags use bit 31, which MPI tags may not.
 * Microbatch, boundary and kind are packed densely and wrapped at MPI_TAG_UB;
 * two messages between the same pair could share a tag only 2^19 microbatches
 * apart under OpenMPI's bound of 2^31 - 1, and MPI delivers messages of one
 * (sender, tag) in order anyway. */
static int mpi_tag(const struct comm *c, uint32_t tag)
{
    uint64_t dense = ((uint64_t)plan_tag_mb(tag) * (PLAN_MAX_BOUNDARY + 1) +
                      (uint64_t)plan_tag_boundary(tag)) * 2 + (uint64_t)plan_tag_kind(tag);
    return (int)(dense % ((uint64_t)c->tag_ub + 1));
}

static int check_count(size_t n, const char *what, struct err *e)
{
    if (n > INT_MAX)
        return err_set(e, ERR_RUN, "%s of %zu elements exceeds MPI's int count", what, n);
    return 0;
}

static int mpi_isend(struct comm *c, const void *buf, size_t bytes, int peer, uint32_t tag,
                     struct comm_req *r, struct err *e)
{
    TRY(check_count(bytes, "a SEND", e));
    const void *h = staged(c, (void *)buf, bytes, true, false, r, e);
    if (!h) return e->code;
    MPI_TRY(e, MPI_Isend(h, (int)bytes, MPI_BYTE, peer, mpi_tag(c, tag), c->world, &r->mpi));
    r->is_active = true;
    return 0;
}

static int mpi_irecv(struct comm *c, void *buf, size_t bytes, int peer, uint32_t tag,
                     struct comm_req *r, struct err *e)
{
    TRY(check_count(bytes, "a RECV", e));
    void *h = staged(c, buf, bytes, false, true, r, e);
    if (!h) return e->code;
    MPI_TRY(e, MPI_Irecv(h, (int)bytes, MPI_BYTE, peer, mpi_tag(c, tag), c->world, &r->mpi));
    r->is_active = true;
    return 0;
}

/* Group g's communicator, or an error naming the collective (what) when
 * this rank is not one of its members. */
static int member_comm(const struct comm *c, int group, const char *what, MPI_Comm *comm,
                       struct err *e)
{
    if (group < 0 || group >= c->n_groups || c->groups[group] == MPI_COMM_NULL)
        return err_set(e, ERR_RUN, "%s on group %d, which rank %d is not a member of", what,
                       group, c->rank);
    *comm = c->groups[group];
    return 0;
}

static int mpi_iallreduce_sum(struct comm *c, float *buf, size_t n, int group,
                              struct comm_req *r, struct err *e)
{
    MPI_Comm comm = MPI_COMM_NULL;
    TRY(member_comm(c, group, "ALLREDUCE", &comm, e));
    TRY(check_count(n, "an ALLREDUCE", e));
    float *h = staged(c, buf, n * sizeof *buf, true, true, r, e);
    if (!h) return e->code;
    MPI_TRY(e, MPI_Iallreduce(MPI_IN_PLACE, h, (int)n, MPI_FLOAT, MPI_SUM, comm, &r->mpi));
    r->is_active = true;
    return 0;
}

/* Group g's communicator, its size and this rank's position, and the
 * members' shard counts then displacements (2 x size ints, the caller's to
 * free, or to hand to r). */
static int shard_layout(struct comm *c, int group, size_t n, const char *what, MPI_Comm *comm,
                        int *size, int *me, int **counts, struct err *e)
{
    TRY(member_comm(c, group, what, comm, e));
    TRY(check_count(n, what, e));
    MPI_TRY(e, MPI_Comm_size(*comm, size));
    MPI_TRY(e, MPI_Comm_rank(*comm, me));
    *counts = XCALLOC(e, 2 * (size_t)*size, sizeof **counts);
    if (!*counts) return ERR_NOMEM;
    for (int k = 0; k < *size; k++) {
        int64_t lo, hi;
        plan_shard((int64_t)n, *size, k, &lo, &hi);
        (*counts)[k] = (int)(hi - lo);
        (*counts)[*size + k] = (int)lo;
    }
    return 0;
}

/* What both sharded collectives do first: group g's layout (shard_layout)
 * and the whole block of n floats staged, copied back into buf after the
 * call only when is_copy_back (a reduce-scatter's shard alone goes back,
 * by unstage). r owns the counts from here; NULL with e filled on failure. */
static float *shard_start(struct comm *c, float *buf, size_t n, int group, const char *what,
                          bool is_copy_back, struct comm_req *r, MPI_Comm *comm, int *size,
                          int *me, struct err *e)
{
    int *counts = NULL;
    if (shard_layout(c, group, n, what, comm, size, me, &counts, e) < 0) return NULL;
    float *h = staged(c, buf, n * sizeof *buf, true, is_copy_back, r, e);
    if (!h) {
        free(counts);
        return NULL;
    }
    r->counts = counts;
    return h;
}

/* In place over the whole block: MPI sums it and leaves this member's
 * shard at the start of the buffer, which unstage moves to the shard. */
static int mpi_ireduce_scatter_sum(struct comm *c, float *buf, size_t n, int group,
                                   struct comm_req *r, struct err *e)
{
    MPI_Comm comm;
    int size, me;
    float *h = shard_start(c, buf, n, group, "a REDUCE_SCATTER", false, r, &comm, &size, &me, e);
    if (!h) return e->code;
    r->shard_dst = buf + r->counts[size + me];
    r->shard_bytes = (size_t)r->counts[me] * sizeof *buf;
    r->shard_src = h;
    MPI_TRY(e, MPI_Ireduce_scatter(MPI_IN_PLACE, h, r->counts, MPI_FLOAT, MPI_SUM, comm,
                                   &r->mpi));
    r->is_active = true;
    return 0;
}

/* In place: each member's shard is already where Allgatherv puts it. */
static int mpi_iall_gather(struct comm *c, float *buf, size_t n, int group, struct comm_req *r,
                           struct err *e)
{
    MPI_Comm comm;
    int size, me;
    float *h = shard_start(c, buf, n, group, "an ALL_GATHER", true, r, &comm, &size, &me, e);
    if (!h) return e->code;
    MPI_TRY(e, MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, h, r->counts,
                               r->counts + size, MPI_FLOAT, comm, &r->mpi));
    r->is_active = true;
    return 0;
}

static int mpi_test(struct comm *c, struct comm_req *r, bool *done, struct err *e)
{
    *done = true;
    if (!r->is_active) return 0;
    int flag = 0;
    MPI_TRY(e, MPI_Test(&r->mpi, &flag, MPI_STATUS_IGNORE));
    *done = flag != 0;
    if (flag) {
        r->is_active = false;
        unstage(c, r);
    }
    return 0;
}

static int mpi_wait(struct comm *c, struct comm_req *r, struct err *e)
{
    if (!r->is_active) return 0;
    MPI_TRY(e, MPI_Wait(&r->mpi, MPI_STATUS_IGNORE));
    r->is_active = false;
    unstage(c, r);
    return 0;
}

const struct comm_ops comm_mpi = {
    .name = "mpi",
    COMM_OPS(mpi),
};
