/* NCCL, opened with dlopen when a run asks for it, as the cuda device opens
 * cuBLAS (nn/device_cuda.cu): a binary built with NCCL then starts on a
 * machine without libnccl.so.2 and says what is missing only when --comm
 * nccl (or auto on GPUs) wants it. real/comm_nccl.c calls NCCL through
 * nccl_lib.Fn only; nccl.h gives the types, the library the code.
 *
 * Which library: $STRATA_NCCL_LIB when set (a path or a name: a bundle
 * points it at its own copy), else the build's soname (STRATA_NCCL, CMake:
 * libnccl.so.2), then "libnccl.so"; each through the loader's usual search
 * ($LD_LIBRARY_PATH, its cache, the run path). Builds with NCCL only. */
#ifndef STRATA_REAL_NCCL_LIB_H
#define STRATA_REAL_NCCL_LIB_H

#include <nccl.h>

#include "../core/err.h"

/* The functions strata uses; all set once nccl_lib_open succeeded. */
struct nccl_lib {
    void *handle;               /* dlopen's; NULL until open */
    char path[256];             /* the name that opened */
    __typeof__(&ncclGetVersion) GetVersion;
    __typeof__(&ncclGetErrorString) GetErrorString;
    __typeof__(&ncclGetLastError) GetLastError;
    __typeof__(&ncclGetUniqueId) GetUniqueId;
    __typeof__(&ncclCommInitRank) CommInitRank;
    __typeof__(&ncclCommDestroy) CommDestroy;
    __typeof__(&ncclCommAbort) CommAbort;
    __typeof__(&ncclCommGetAsyncError) CommGetAsyncError;
    __typeof__(&ncclCommCount) CommCount;
    __typeof__(&ncclCommUserRank) CommUserRank;
    __typeof__(&ncclGroupStart) GroupStart;
    __typeof__(&ncclGroupEnd) GroupEnd;
    __typeof__(&ncclSend) Send;
    __typeof__(&ncclRecv) Recv;
    __typeof__(&ncclAllReduce) AllReduce;
    __typeof__(&ncclReduceScatter) ReduceScatter;
    __typeof__(&ncclReduce) Reduce;
    __typeof__(&ncclAllGather) AllGather;
    __typeof__(&ncclBroadcast) Broadcast;
};

/* The process's NCCL: read-only outside nccl_lib.c. */
extern struct nccl_lib nccl_lib;

/* Opens NCCL once (later calls return 0 at once). ERR_INPUT naming the
 * library tried, dlopen's words and the fix (install NCCL, or point
 * STRATA_NCCL_LIB or LD_LIBRARY_PATH at it, or use --comm mpi), or naming a
 * missing function (a library older than the one built against). */
int nccl_lib_open(struct err *e);

/* "NCCL 2.28.9 (libnccl.so.2)" in buf when open, else "NCCL (not loaded)". */
void nccl_lib_describe(char *buf, size_t n);

#endif
