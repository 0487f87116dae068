/* The one way strata checks CUDA runtime calls, in nn/device_cuda.cu and
 * real/comm_nccl.c alike: CUDA_TRY returns a failure as ERR_RUN naming the
 * call, CUDA's words for the error, and the file and line (nccl-tests'
 * CUDACHECK). Like TRY it returns at once: a function that owns memory or
 * handles calls a helper that owns nothing and frees after it. Only in
 * builds with the CUDA toolkit; C and C++ (.cu) both include it. */
#ifndef STRATA_NN_CUDA_CHECK_H
#define STRATA_NN_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "../core/err.h"
#ifdef __cplusplus
}
#endif

/* ERR_RUN "CALL failed: CUDA's error string (file:line)" in e; returns ERR_RUN. */
static inline int cuda_check_fail(struct err *e, cudaError_t rc, const char *call,
                                  const char *file, int line)
{
    return err_set(e, ERR_RUN, "%s failed: %s (%s:%d)", call, cudaGetErrorString(rc), file,
                   line);
}

#define CUDA_TRY(e, call) TRY_CALL(e, cudaError_t, cudaSuccess, cuda_check_fail, call)

#endif
