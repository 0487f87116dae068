/* The mpi communicator: host buffers, MPI_Isend/Irecv for the plan's
 * messages and MPI_Iallreduce for its buckets, one MPI communicator per plan
 * group so that collectives of different groups never mix.
 *
 * Device buffers (a cuda rank's): each request goes through a host copy
 * from a pool of them (real/stage.h): a SEND or ALLREDUCE copies the device
 * buffer out when it starts, a RECV or ALLREDUCE copies the result in when
 * it completes. Costs: two PCIe copies per all-reduce, from pageable
 * memory; what lets ranks share one GPU, and the baseline NCCL is held
 * against.
 *
 * Progress: MPI moves a nonblocking operation forward only inside MPI calls
 * (OpenMPI has no progress thread by default). The executor tests its
 * running requests between ops, so a bucket all-reduce advances at every
 * layer boundary of the backward it overlaps. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

static int mpi_fail(struct err *e, int rc, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
    return err_set(e, ERR_RUN, "%s failed: %s", call, msg);
}

#define MPI_TRY(e, call)                                 \
    do {                                                 \
        int mpi_rc_ = (call);                            \
        if (mpi_rc_ != MPI_SUCCESS) return mpi_fail(e, mpi_rc_, #call); \
    } while (0)

static int mpi_open(struct comm *c, const struct plan *p, struct err *e)
{
    /* Errors come back as codes, to be reported with the op that met them,
     * rather than aborting the job from inside MPI. */
    MPI_TRY(e, MPI_Comm_dup(MPI_COMM_WORLD, &c->world));
    c->is_open = true;
    MPI_TRY(e, MPI_Comm_set_errhandler(c->world, MPI_ERRORS_RETURN));
    MPI_TRY(e, MPI_Comm_rank(c->world, &c->rank));
    MPI_TRY(e, MPI_Comm_size(c->world, &c->n_ranks));
    int *ub = NULL, flag = 0;
    MPI_TRY(e, MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    c->tag_ub = flag && ub ? *ub : 32767;   /* 32767: the least the standard allows */

    c->n_groups = (int)p->groups.len;
    c->groups = XCALLOC(e, (size_t)c->n_groups + 1, sizeof *c->groups);
    if (!c->groups) return ERR_NOMEM;
    MPI_Group world_group;
    MPI_TRY(e, MPI_Comm_group(c->world, &world_group));
    for (int g = 0; g < c->n_groups; g++) {
        const struct plan_group *pg = &p->groups.items[g];
        c->groups[g] = MPI_COMM_NULL;
        bool is_member = false;
        for (int i = 0; i < pg->n_ranks; i++) is_member |= pg->ranks[i] == c->rank;
        if (!is_member) continue;
        /* Collective over the members only: groups are created in plan
         * order, and the group index as tag keeps concurrent creations apart. */
        MPI_Group sub;
        int rc = MPI_Group_incl(world_group, pg->n_ranks, pg->ranks, &sub);
        if (rc == MPI_SUCCESS) rc = MPI_Comm_create_group(c->world, sub, g, &c->groups[g]);
        MPI_Group_free(&sub);
        if (rc != MPI_SUCCESS) {
            MPI_Group_free(&world_group);
            return mpi_fail(e, rc, "MPI_Comm_create_group");
        }
        MPI_Comm_set_errhandler(c->groups[g], MPI_ERRORS_RETURN);
    }
    MPI_Group_free(&world_group);
    return 0;
}

static void mpi_close(struct comm *c)
{
    for (int g = 0; g < c->n_groups && c->groups; g++)
        if (c->groups[g] != MPI_COMM_NULL) MPI_Comm_free(&c->groups[g]);
    free(c->groups);
    c->groups = NULL;
    if (c->is_open) MPI_Comm_free(&c->world);
    c->is_open = false;
    for (size_t i = 0; i < c->stages.len; i++) {
        stage_release(&c->stages.items[i]->s);
        free(c->stages.items[i]);
    }
    vec_free(&c->stages);
}

/* ---- host copies of device buffers --------------------------------------- */

static bool is_staged(const struct comm *c)
{
    return c->dev && !c->dev->is_host_memory;
}

/* A free host copy from the pool (first fit: as many as requests in flight). */
static struct comm_stage *stage_take(struct comm *c, struct err *e)
{
    for (size_t i = 0; i < c->stages.len; i++)
        if (!c->stages.items[i]->is_busy) {
            c->stages.items[i]->is_busy = true;
            return c->stages.items[i];
        }
    struct comm_stage *st = XCALLOC(e, 1, sizeof *st);
    if (!st) return NULL;
    if (vec_push(&c->stages, st) < 0) {
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
    r->stage = NULL;
    r->dev_dst = NULL;
    if (!is_staged(c)) return buf;
    struct comm_stage *st = stage_take(c, e);
    if (!st) return NULL;
    void *h = is_out ? (void *)stage_out(c->dev, &st->s, buf, bytes, e)
                     : stage_in(c->dev, &st->s, buf, bytes, e);
    if (!h) {
        st->is_busy = false;
        return NULL;
    }
    r->stage = st;
    r->dev_dst = is_in ? buf : NULL;
    r->bytes = bytes;
    return h;
}

/* r has completed: its result to the device, its host copy to the pool. */
static void unstage(struct comm *c, struct comm_req *r)
{
    if (!r->stage) return;
    if (r->dev_dst) stage_in_done(c->dev, &r->stage->s, r->dev_dst, r->bytes);
    r->stage->is_busy = false;
    r->stage = NULL;
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

static int mpi_iallreduce_sum(struct comm *c, float *buf, size_t n, int group,
                              struct comm_req *r, struct err *e)
{
    if (group < 0 || group >= c->n_groups || c->groups[group] == MPI_COMM_NULL)
        return err_set(e, ERR_RUN, "ALLREDUCE on group %d, which rank %d is not a member of",
                       group, c->rank);
    TRY(check_count(n, "an ALLREDUCE", e));
    float *h = staged(c, buf, n * sizeof *buf, true, true, r, e);
    if (!h) return e->code;
    MPI_TRY(e, MPI_Iallreduce(MPI_IN_PLACE, h, (int)n, MPI_FLOAT, MPI_SUM, c->groups[group],
                              &r->mpi));
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

static const struct comm_ops comm_mpi = {
    .name = "mpi",
    .open = mpi_open,
    .close = mpi_close,
    .isend = mpi_isend,
    .irecv = mpi_irecv,
    .iallreduce_sum = mpi_iallreduce_sum,
    .test = mpi_test,
    .wait = mpi_wait,
};

/* ---- the registry ------------------------------------------------------- */

#ifdef STRATA_HAVE_NCCL
#define COMM_NAMES "mpi, nccl"
#else
#define COMM_NAMES "mpi"
#endif

const struct comm_ops *comm_find(const char *name, struct err *e)
{
    if (!strcmp(name, "mpi")) return &comm_mpi;
#ifdef STRATA_HAVE_NCCL
    if (!strcmp(name, "nccl")) return &comm_nccl;
#endif
    err_set(e, ERR_INPUT, "--comm: '%s' is not available (this build has: %s)", name,
            COMM_NAMES);
    return NULL;
}

const struct comm_ops *comm_choose(const char *name, const struct device *mine,
                                   const struct device *workers, struct err *e)
{
    bool is_auto = !strcmp(name, "auto");
    if (!is_auto && strcmp(name, "nccl")) return comm_find(name, e);
#ifdef STRATA_HAVE_NCCL
    if (workers->is_host_memory) {
        if (is_auto) return &comm_mpi;
        err_set(e, ERR_INPUT, "--comm nccl moves device memory: it needs --device cuda, not %s",
                workers->name);
        return NULL;
    }
    int shared = -1, other = -1;
    char bus[32];
    if (comm_nccl_shared_gpu(mine, &shared, &other, bus, sizeof bus, e) < 0) return NULL;
    if (shared < 0) return &comm_nccl;
    if (is_auto) return &comm_mpi;   /* NCCL refuses a GPU shared by ranks */
    err_set(e, ERR_INPUT, "--comm nccl: ranks %d and %d share the GPU at %s, which NCCL "
            "refuses; use --comm mpi (it stages through host memory) or one rank per GPU",
            shared, other, bus);
    return NULL;
#else
    (void)mine;
    (void)workers;
    if (is_auto) return &comm_mpi;
    return comm_find(name, e);
#endif
}
