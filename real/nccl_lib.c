/* NCCL through dlopen (real/nccl_lib.h). Not thread-safe: ranks open it
 * from their one thread, before any communicator exists. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_lib.h"

#ifndef STRATA_NCCL
#define STRATA_NCCL "libnccl.so.2"
#endif

struct nccl_lib nccl_lib;

/* Every symbol, by name, and where its pointer goes. */
#define NCCL_SYM(fn) {"nccl" #fn, (void **)&lib->fn}

static int bind_symbols(struct nccl_lib *lib, void *handle, const char *path, struct err *e)
{
    const struct {
        const char *name;
        void **fn;
    } syms[] = {
        NCCL_SYM(GetVersion),   NCCL_SYM(GetErrorString),    NCCL_SYM(GetLastError),
        NCCL_SYM(GetUniqueId),  NCCL_SYM(CommInitRank),      NCCL_SYM(CommDestroy),
        NCCL_SYM(CommAbort),    NCCL_SYM(CommGetAsyncError), NCCL_SYM(CommCount),
        NCCL_SYM(CommUserRank), NCCL_SYM(GroupStart),        NCCL_SYM(GroupEnd),
        NCCL_SYM(Send),         NCCL_SYM(Recv),              NCCL_SYM(AllReduce),
        NCCL_SYM(ReduceScatter), NCCL_SYM(Reduce),           NCCL_SYM(AllGather),
        NCCL_SYM(Broadcast),
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        /* POSIX: a data pointer from dlsym converts to a function pointer */
        if (!(*syms[i].fn = dlsym(handle, syms[i].name)))
            return err_set(e, ERR_INPUT, "--comm nccl: %s has no %s (older than the NCCL %d.%d "
                           "strata was built with?); install NCCL %d.%d or later, or use "
                           "--comm mpi", path, syms[i].name, NCCL_MAJOR, NCCL_MINOR, NCCL_MAJOR,
                           NCCL_MINOR);
    }
    lib->handle = handle;
    snprintf(lib->path, sizeof lib->path, "%s", path);
    return 0;
}

int nccl_lib_open(struct err *e)
{
    if (nccl_lib.handle) return 0;
    const char *env = getenv("STRATA_NCCL_LIB");
    const char *tried[2] = {STRATA_NCCL, "libnccl.so"};
    size_t n_tried = 2;
    if (env && *env) {
        tried[0] = env;   /* asked for: no fallback that would hide a wrong path */
        n_tried = 1;
    }
    char why[512] = "";
    for (size_t i = 0; i < n_tried; i++) {
        void *handle = dlopen(tried[i], RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            if (i == 0) snprintf(why, sizeof why, "%s", dlerror());
            continue;
        }
        struct nccl_lib lib = {0};
        if (bind_symbols(&lib, handle, tried[i], e) < 0) {
            dlclose(handle);
            return e ? e->code : ERR_INPUT;
        }
        nccl_lib = lib;
        return 0;
    }
    return err_set(e, ERR_INPUT, "--comm nccl: cannot load NCCL: dlopen(\"%s\") failed: %s; "
                   "HINT: install NCCL (libnccl.so.2), or point STRATA_NCCL_LIB or "
                   "LD_LIBRARY_PATH at it, or use --comm mpi",
                   tried[0], why);
}

void nccl_lib_describe(char *buf, size_t n)
{
    int version = 0;
    if (!nccl_lib.handle || nccl_lib.GetVersion(&version) != ncclSuccess) {
        snprintf(buf, n, "NCCL (not loaded)");
        return;
    }
    /* NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9 */
    snprintf(buf, n, "NCCL %d.%d.%d (%s)", version / 10000, version / 100 % 100, version % 100,
             nccl_lib.path);
}
