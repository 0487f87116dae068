/* Private to nn/: the gemm libraries, for the registry (nn/gemm.c) that
 * lists them. */
#ifndef STRATA_NN_GEMM_LIBS_H
#define STRATA_NN_GEMM_LIBS_H

#include "gemm.h"

extern const struct gemm_lib gemm_openblas;   /* nn/gemm_openblas.c */
#ifdef STRATA_HAVE_DNNL
extern const struct gemm_lib gemm_dnnl;       /* nn/gemm_dnnl.c */
#endif

#endif
