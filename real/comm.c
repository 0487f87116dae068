/* The comm registry (real/comm.h): the one place that knows which backends
 * this build has, and chooses among them. */
#include <string.h>

#include "comm_backends.h"
#ifdef STRATA_HAVE_NCCL
#include "nccl_lib.h"
#endif

/* This build's comms. A backend that is not built is simply not listed. */
static const struct comm_ops *const comms[] = {
    &comm_mpi,
#ifdef STRATA_HAVE_NCCL
    &comm_nccl,
#endif
};
#define N_COMMS (sizeof comms / sizeof comms[0])

#ifdef STRATA_HAVE_NCCL
#define COMM_NAMES "mpi, nccl"
#else
#define COMM_NAMES "mpi"
#endif

const struct comm_ops *comm_find(const char *name, struct err *e)
{
    for (size_t i = 0; i < N_COMMS; i++)
        if (!strcmp(comms[i]->name, name)) return comms[i];
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
    /* NCCL is loaded on demand (real/nccl_lib.h): where it is missing,
     * auto falls back to mpi and nccl says what is missing */
    if (comm_nccl_load(e) < 0) {
        if (!is_auto) return NULL;
        memset(e, 0, sizeof *e);
        return &comm_mpi;
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

int comm_check(const char *name, struct err *e)
{
    if (!strcmp(name, "auto")) return 0;
    if (!comm_find(name, e)) return e->code;
#ifdef STRATA_HAVE_NCCL
    if (!strcmp(name, "nccl")) return nccl_lib_open(e);
#endif
    return 0;
}
