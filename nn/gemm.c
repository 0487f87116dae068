/* The registry of gemm libraries (nn/gemm.h): the one table that knows
 * which were built. */
#include "backends.h"

/* The default first: oneDNN when built with it (see gemm.h for why). */
static const struct gemm_lib *const libs[] = {
#ifdef STRATA_HAVE_DNNL
    &gemm_dnnl,
#endif
    &gemm_openblas,
};

const struct gemm_lib *gemm_default(void)
{
    return libs[0];
}

int gemm_count(void)
{
    return (int)(sizeof libs / sizeof libs[0]);
}

const struct gemm_lib *gemm_at(int i)
{
    return i >= 0 && i < gemm_count() ? libs[i] : NULL;
}
