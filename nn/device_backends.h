/* Private to nn/: the device backends, for the registry (nn/device.c)
 * that lists them. */
#ifndef STRATA_NN_DEVICE_BACKENDS_H
#define STRATA_NN_DEVICE_BACKENDS_H

#include "device.h"

extern const struct device device_cpu;    /* nn/device_cpu.c */
#ifdef STRATA_HAVE_CUDA
extern const struct device device_cuda;   /* nn/device_cuda.cu */
#endif

#endif
