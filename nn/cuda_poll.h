/* Polling a CUDA event without poisoning the runtime's error state.
 *
 * cudaEventQuery on unfinished work returns cudaErrorNotReady AND leaves
 * it as the runtime's last error, which the next cudaGetLastError
 * returns: the cuda device's launch check (LAUNCHED in nn/device_cuda.cu)
 * and its sync would then report "device not ready" as a failure at the
 * first compute op after an unfinished poll. Not ready is an answer, not
 * an error: the poll clears it (PyTorch's CUDA event query does the same).
 * Any other error is left for the checks to report. Clearing loses no
 * launch error: LAUNCHED reads the last error right after every launch,
 * so none is pending when the comm polls, and sticky errors (a fault)
 * come back from every later call anyway.
 *
 * The runtime's two functions come through a small table so that a test
 * can stand in for them without a GPU (tests/test_gpu_ready.c): on a
 * machine without a driver every event call fails before any event
 * exists, so a real cudaErrorNotReady cannot be made there.
 * Header-only, for C and C++ alike; builds with the CUDA toolkit only. */
#ifndef STRATA_NN_CUDA_POLL_H
#define STRATA_NN_CUDA_POLL_H

#include <cuda_runtime_api.h>

struct cuda_poll_rt {
    cudaError_t (*event_query)(cudaEvent_t ev);   /* cudaEventQuery */
    cudaError_t (*get_last_error)(void);          /* cudaGetLastError: reads and clears */
};

/* cudaSuccess (ev's work is done), cudaErrorNotReady (not yet; the
 * runtime's last error cleared), or another error (left as it is). */
static inline cudaError_t cuda_event_poll_with(const struct cuda_poll_rt *rt, cudaEvent_t ev)
{
    cudaError_t rc = rt->event_query(ev);
    if (rc == cudaErrorNotReady) (void)rt->get_last_error();
    return rc;
}

/* The same on the runtime itself. */
static inline cudaError_t cuda_event_poll(cudaEvent_t ev)
{
    const struct cuda_poll_rt rt = {cudaEventQuery, cudaGetLastError};
    return cuda_event_poll_with(&rt, ev);
}

#endif
