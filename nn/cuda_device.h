/* What the cuda device (nn/device_cuda.cu) lends to code that must speak
 * CUDA itself: the nccl comm (real/comm_nccl.c) orders its streams after
 * the compute stream, and checks that no two ranks share a GPU. Plain C
 * with no CUDA header, so that tests can include it too. Only in builds
 * with the CUDA toolkit (STRATA_HAVE_CUDA). */
#ifndef STRATA_NN_CUDA_DEVICE_H
#define STRATA_NN_CUDA_DEVICE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* GPUs this process can see; 0 when there is none or no driver. Creates no
 * context. */
int dev_cuda_count(void);

/* The compute stream every device function queues its work on, as a
 * cudaStream_t; NULL (the legacy default stream) before init. */
void *dev_cuda_stream(void);

/* The PCI bus id of the GPU init chose ("0000:1b:00.0"), in buf; "" before
 * init. Ranks compare them to find GPUs they share. */
void dev_cuda_bus_id(char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif
