/* Private to nn/: the backends of nn's two tables, for the registries that
 * list them (nn/device.c: devices; nn/gemm.c: the cpu device's gemm
 * libraries). One header for both, as the registries are alike; a backend
 * that is not built is not declared. */
#ifndef STRATA_NN_BACKENDS_H
#define STRATA_NN_BACKENDS_H

#include "device.h"
#include "gemm.h"

extern const struct device device_cpu;        /* nn/device_cpu.c */
#ifdef STRATA_HAVE_CUDA
extern const struct device device_cuda;       /* nn/device_cuda.cu */
#endif

extern const struct gemm_lib gemm_openblas;   /* nn/gemm_openblas.c */
#ifdef STRATA_HAVE_DNNL
extern const struct gemm_lib gemm_dnnl;       /* nn/gemm_dnnl.c */
#endif

#endif
