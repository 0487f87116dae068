/* Communication of the real executor: the plan's SEND, RECV and ALLREDUCE
 * through one small table of functions, chosen at start-up like a device
 * (nn/device.h). The executor never asks which one it runs on.
 *
 *   mpi   host buffers, MPI point-to-point and nonblocking all-reduce
 *         (real/comm_mpi.c)
 *   nccl  device buffers, NCCL (comes with the GPU issue)
 *
 * Everything is nonblocking: a call starts the operation and fills a
 * request; test or wait completes it. Buffers stay untouched by the caller
 * until then, as MPI requires.
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

struct comm_req {
    bool is_active;            /* started and not yet completed */
    MPI_Request mpi;
};

struct comm {
    const struct comm_ops *ops;
    bool is_open;              /* open succeeded as far as world: close frees it */
    int rank, n_ranks;
    MPI_Comm world;            /* this run's duplicate of MPI_COMM_WORLD for SEND/RECV */
    int n_groups;
    MPI_Comm *groups;          /* [n_groups]: the plan's groups; MPI_COMM_NULL where not a member */
    int tag_ub;                /* the largest tag MPI allows (MPI_TAG_UB) */
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
    /* *done: whether r completed (it is then inactive); an inactive r is done. */
    int (*test)(struct comm *c, struct comm_req *r, bool *done, struct err *e);
    int (*wait)(struct comm *c, struct comm_req *r, struct err *e);
};

/* "mpi"; anything else is ERR_INPUT naming what this build has. */
const struct comm_ops *comm_find(const char *name, struct err *e);

#endif
