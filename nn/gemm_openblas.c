/* OpenBLAS's cblas_sgemm as a gemm_lib (nn/gemm.h): the library in every
 * build. OPENBLAS_CORETYPE in the environment (set on some machines whose
 * CPU older OpenBLAS builds misjudge) picks its kernels; describe names the
 * ones it runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "backends.h"

static void openblas_set_threads(int n_threads)
{
    if (n_threads > 0)
        openblas_set_num_threads(n_threads);
    else if (!getenv("OPENBLAS_NUM_THREADS"))
        openblas_set_num_threads(1);
}

static int openblas_threads(void)
{
    return openblas_get_num_threads();
}

/* "OpenBLAS 0.3.21, Haswell": the version from the build's header (its
 * config string also lists build flags, too long for a report line) and the
 * kernels this CPU runs. */
static void openblas_describe(char *buf, size_t n)
{
    char version[32];
    snprintf(version, sizeof version, "%s", OPENBLAS_VERSION);
    char *v = version;
    while (*v == ' ') v++;
    size_t len = strlen(v);
    while (len && v[len - 1] == ' ') v[--len] = '\0';
    snprintf(buf, n, "%s, %s", v, openblas_get_corename());
}

static int openblas_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                          const float *a, int lda, const float *b, int ldb, float beta,
                          float *c, int ldc)
{
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
    return 0;
}

static const char *openblas_status_name(int status)
{
    (void)status;
    return "no status";   /* never asked: cblas_sgemm reports nothing */
}

const struct gemm_lib gemm_openblas = {
    .name = "OpenBLAS",
    GEMM_LIB_OPS(openblas),
};
