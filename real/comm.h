/* Communication of the real executor: the plan's SEND, RECV and
 * collectives (ALLREDUCE, REDUCE_SCATTER, ALL_GATHER) through one small table of functions, chosen at start-up like a device
 * (nn/device.h). The executor never asks which one it runs on.
 *
 *   mpi   MPI point-to-point and nonblocking all-reduce (real/comm_mpi.c);
 *         buffers of a device whose memory is not the host's (cuda) go
 *         through host copies (real/host_copy.h): how several ranks share one
 *         GPU, which NCCL refuses
 *   nccl  device buffers, NCCL (real/comm_nccl.c; builds with NCCL only):
 *         each communicator's work on its own stream, after the compute
 *         stream's (CUDA events), so bucket all-reduces overlap backward
 *
 * Both stand on the MPI communicators of real/comm_world.h; only the
 * registry (real/comm.c, comm_find and comm_choose below) knows them both.
 *
 * Everything is nonblocking: a call starts the operation and fills a
 * request; test or wait completes it. Buffers stay untouched by the caller
 * until then, as MPI requires. Buffers are the device's (c->dev), and a
 * call may read them only after the device's queued work: both backends
 * copy or wait in the device's stream order.
 *
 * Parameter-server traffic (PUSH, PULL) does not go through this table:
 * servers are CPU ranks speaking MPI (real/ps_wire.h), whatever the
 * workers' device. */
#ifndef STRATA_REAL_COMM_H
#define STRATA_REAL_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "../core/err.h"
#include "../core/plan.h"
#include "../core/plan_index.h"
#include "../core/vec.h"
#include "../nn/device.h"
#include "host_copy.h"

/* mpi: a host copy for one request at a time, from the comm's pool */
struct comm_host_copy {
    struct host_copy copy;
    bool is_busy;
};

struct comm_req {
    bool is_active;            /* started and not yet completed */
    MPI_Request mpi;
    struct comm_host_copy *copy; /* mpi, staged: the host copy in flight, or NULL */
    void *dev_dst;             /* mpi, staged RECV/ALLREDUCE: where it goes on completion */
    size_t bytes;
    int *counts;               /* mpi, REDUCE_SCATTER/ALL_GATHER: per-member counts, then
                                * displacements (MPI reads them until completion) */
    void *shard_src, *shard_dst; /* mpi, REDUCE_SCATTER: where MPI leaves the member's
                                * shard (the start of the buffer it was given), and
                                * where it goes on completion */
    size_t shard_bytes;
    void *done;                /* nccl: cudaEvent_t recorded after the operation */
    void *link;                /* nccl: the communicator it went on */
};

struct comm {
    const struct comm_ops *ops;
    const struct device *dev;  /* this rank's device, whose buffers the calls take; set
                                * before open (NULL: host memory) */
    const struct plan_index *ix;   /* the plan's index (core/plan_index.h); set before open */
    bool is_open;              /* open succeeded as far as world: close frees it */
    int rank, n_ranks;
    MPI_Comm world;            /* this run's duplicate of MPI_COMM_WORLD for SEND/RECV */
    int n_groups;
    MPI_Comm *groups;          /* [n_groups]: the plan's groups; MPI_COMM_NULL where not a member */
    int tag_ub;                /* the largest tag MPI allows (MPI_TAG_UB) */
    VEC(struct comm_host_copy *) copies;  /* mpi on a non-host device: host copies, reused */
    void *nccl;                /* nccl: its communicators and streams (real/comm_nccl.c) */
};

struct comm_ops {
    const char *name;          /* "mpi": what --comm takes and reports record */
    /* Collective over MPI_COMM_WORLD: sets c up for plan p's groups. */
    int (*open)(struct comm *c, const struct plan *p, struct err *e);
    void (*close)(struct comm *c);   /* accepts a zeroed comm */
    /* The plan's SEND and RECV: bytes to or from rank peer, matched by the
     * plan tag (core/plan.h plan_tag). */
    int (*isend)(struct comm *c, const void *buf, size_t bytes, int peer, uint32_t tag,
                 struct comm_req *r, struct err *e);
    int (*irecv)(struct comm *c, void *buf, size_t bytes, int peer, uint32_t tag,
                 struct comm_req *r, struct err *e);
    /* buf[0..n) = its sum over the members of plan group `group`, in place. */
    int (*iallreduce_sum)(struct comm *c, float *buf, size_t n, int group, struct comm_req *r,
                          struct err *e);
    /* ZeRO-1's collectives on buf[0..n) of plan group `group`, whose member
     * k owns the shard plan_shard(n, members, k) (core/plan.h):
     * reduce_scatter leaves this member's shard of buf holding its sum over
     * the members (the rest of buf undefined); all_gather fills every shard
     * of buf with its owner's values. In place, like iallreduce_sum. */
    int (*ireduce_scatter_sum)(struct comm *c, float *buf, size_t n, int group,
                               struct comm_req *r, struct err *e);
    int (*iall_gather)(struct comm *c, float *buf, size_t n, int group, struct comm_req *r,
                       struct err *e);
    /* *done: whether r completed (it is then inactive); an inactive r is done. */
    int (*test)(struct comm *c, struct comm_req *r, bool *done, struct err *e);
    int (*wait)(struct comm *c, struct comm_req *r, struct err *e);
};

/* A backend's table: its name, then COMM_OPS(prefix), which fills every
 * function from the backend's own prefix_op (mpi_open, ...), so that one it
 * lacks is a compile error rather than a NULL (as nn/device.h's
 * DEVICE_OPS). A field added above is added here too. */
#define COMM_OPS(prefix)                                                                     \
    .open = prefix##_open, .close = prefix##_close,                                          \
    .isend = prefix##_isend, .irecv = prefix##_irecv,                                        \
    .iallreduce_sum = prefix##_iallreduce_sum,                                               \
    .ireduce_scatter_sum = prefix##_ireduce_scatter_sum,                                     \
    .iall_gather = prefix##_iall_gather,                                                     \
    .test = prefix##_test, .wait = prefix##_wait

/* The registry (real/comm.c), which alone knows the backends. */

/* "mpi", or "nccl" in builds with NCCL; anything else is ERR_INPUT naming
 * what this build has. */
const struct comm_ops *comm_find(const char *name, struct err *e);

/* What a launcher checks before it starts ranks, on its own (no MPI):
 * that name is auto or a comm of this build, and for nccl that NCCL loads
 * here (real/nccl_lib.h). 0 or ERR_INPUT saying what is missing. */
int comm_check(const char *name, struct err *e);

/* The comm for --comm name (auto, mpi, nccl), the same on every rank:
 * collective over MPI_COMM_WORLD, after every rank's dev->init. mine is
 * this rank's device, workers the workers' (servers compute on the cpu
 * whatever the workers do). nccl needs a build with NCCL, workers whose
 * memory is not the host's, and no two ranks on one GPU (ERR_INPUT saying
 * which) and NCCL loadable on every rank (else ERR_INPUT naming the
 * library); auto is nccl when all that holds, else mpi. */
const struct comm_ops *comm_choose(const char *name, const struct device *mine,
                                   const struct device *workers, struct err *e);

#endif
