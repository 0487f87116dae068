/* nn/gemm.c: every SGEMM library this build has (OpenBLAS always, oneDNN in
 * builds made with it), each against a naive loop in double, on the MLP's
 * own shapes and all four transposes; and the two against each other where
 * both are built. The bound is the classic one for a dot product of k terms
 * in float (Higham, Accuracy and Stability, 3.1): |error| <= k eps sum|terms|;
 * we allow (k + 2) eps sum|terms| for alpha and beta's roundings, and print
 * the largest ratio seen. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../nn/device.h"
#include "../nn/gemm.h"
#include "helpers.h"

/* A (m, k) as op(A): stored (k, m) when ta; the same for B. */
struct gemm_case {
    bool ta, tb;
    int m, n, k;
};

/* C = alpha op(A) op(B) + beta C0 in double, with the bound of each element
 * (the sum of the absolute values of its terms). */
static void naive(const struct gemm_case *g, float alpha, const float *a, const float *b,
                  float beta, const float *c0, double *ref, double *mag)
{
    int lda = g->ta ? g->m : g->k, ldb = g->tb ? g->k : g->n;
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            double s = 0, abs_sum = 0;
            for (int p = 0; p < g->k; p++) {
                double x = g->ta ? a[(size_t)p * lda + i] : a[(size_t)i * lda + p];
                double y = g->tb ? b[(size_t)j * ldb + p] : b[(size_t)p * ldb + j];
                s += x * y;
                abs_sum += fabs(x * y);
            }
            double c = beta != 0 ? beta * (double)c0[(size_t)i * g->n + j] : 0;
            ref[(size_t)i * g->n + j] = alpha * s + c;
            mag[(size_t)i * g->n + j] = fabs(alpha) * abs_sum + fabs(c);
        }
}

static float *random_floats(size_t n, uint64_t *rng)
{
    float *x = malloc(n * sizeof *x);
    cr_assert_not_null(x);
    for (size_t i = 0; i < n; i++) x[i] = (float)(2 * test_rng_uniform(rng) - 1);
    return x;
}

/* The largest |C - ref| / ((k + 2) eps mag) of lib on g; > 1 fails. beta 0
 * starts C as NaN: the contract says C is not read then. */
static double worst_ratio(const struct gemm_lib *lib, const struct gemm_case *g, float alpha,
                          float beta, uint64_t *rng)
{
    size_t mk = (size_t)g->m * g->k, kn = (size_t)g->k * g->n, mn = (size_t)g->m * g->n;
    float *a = random_floats(mk, rng), *b = random_floats(kn, rng), *c0 = random_floats(mn, rng);
    float *c = malloc(mn * sizeof *c);
    double *ref = malloc(mn * sizeof *ref), *mag = malloc(mn * sizeof *mag);
    cr_assert(c && ref && mag);
    if (beta == 0)
        for (size_t i = 0; i < mn; i++) c0[i] = NAN;
    memcpy(c, c0, mn * sizeof *c);
    naive(g, alpha, a, b, beta, c0, ref, mag);
    int status = lib->sgemm(g->ta, g->tb, g->m, g->n, g->k, alpha, a, g->ta ? g->m : g->k, b,
                            g->tb ? g->k : g->n, beta, c, g->n);
    cr_assert_eq(status, 0, "%s sgemm: %s", lib->name, lib->status_name(status));
    double worst = 0;
    for (size_t i = 0; i < mn; i++) {
        double bound = (g->k + 2) * (double)FLT_EPSILON * mag[i] + DBL_MIN;
        double r = isfinite(c[i]) ? fabs(c[i] - ref[i]) / bound : INFINITY;
        worst = r > worst ? r : worst;
    }
    free(a);
    free(b);
    free(c0);
    free(c);
    free(ref);
    free(mag);
    return worst;
}

/* The shapes mlp:784-256-128-10 runs at batch 64 (forward, weight gradient
 * and input gradient of each layer), and odd sizes that no kernel's
 * blocking divides. */
static const struct gemm_case cases[] = {
    {false, false, 64, 256, 784}, {true, false, 784, 256, 64},  {false, false, 64, 128, 256},
    {true, false, 256, 128, 64},  {false, true, 64, 256, 128},  {false, false, 64, 10, 128},
    {true, false, 128, 10, 64},   {false, true, 64, 128, 10},   {true, true, 17, 33, 5},
    {false, true, 1, 7, 300},     {true, true, 31, 1, 19},      {false, false, 3, 5, 1},
};
#define N_CASES (sizeof cases / sizeof cases[0])

Test(gemm, every_library_matches_a_naive_loop_within_the_dot_product_bound)
{
    test_cpu(0);   /* one thread in every library, as the device runs them */
    cr_assert_geq(gemm_count(), 1);
    cr_expect_eq(gemm_at(0), gemm_default(), "the default is listed first");
    cr_expect_null(gemm_at(gemm_count()));
    uint64_t rng = 13;
    for (int li = 0; li < gemm_count(); li++) {
        const struct gemm_lib *lib = gemm_at(li);
        double worst = 0;
        for (size_t i = 0; i < N_CASES; i++) {
            /* beta 0 (forward, input gradient) and 1 (weight gradients add up) */
            double r0 = worst_ratio(lib, &cases[i], 1.0f, 0.0f, &rng);
            double r1 = worst_ratio(lib, &cases[i], 0.5f, 1.0f, &rng);
            double r = r0 > r1 ? r0 : r1;
            cr_expect_leq(r, 1.0, "%s on %c%c %dx%dx%d: error %.3g of the bound", lib->name,
                          cases[i].ta ? 'T' : 'N', cases[i].tb ? 'T' : 'N', cases[i].m,
                          cases[i].n, cases[i].k, r);
            worst = r > worst ? r : worst;
        }
        char desc[96];
        lib->describe(desc, sizeof desc);
        cr_log_info("%s: largest error %.3g of the bound (k + 2) eps sum|terms|", desc, worst);
    }
}

Test(gemm, libraries_say_their_version_and_run_one_thread_by_default)
{
    test_cpu(0);
    for (int li = 0; li < gemm_count(); li++) {
        const struct gemm_lib *lib = gemm_at(li);
        char desc[96];
        lib->describe(desc, sizeof desc);
        cr_expect_eq(strncmp(desc, lib->name, strlen(lib->name)), 0, "describe: %s", desc);
        cr_expect_not_null(strchr(desc, ','), "version, then kernels: %s", desc);
        if (!getenv("OPENBLAS_NUM_THREADS") && !getenv("OMP_NUM_THREADS"))
            cr_expect_eq(lib->threads(), 1, "%s: %d threads", lib->name, lib->threads());
    }
    /* the device's line names the default library */
    const struct device *d = test_cpu(0);
    char line[256];
    d->describe(line, sizeof line);
    cr_expect_not_null(strstr(line, gemm_default()->name), "describe: %s", line);
}

#ifdef STRATA_HAVE_DNNL
/* Both built: the device runs oneDNN, and it agrees with OpenBLAS on the
 * first layer's forward to the same bound (each within it of the exact
 * product, so within twice it of each other). */
Test(gemm, onednn_is_the_default_when_built_and_agrees_with_openblas)
{
    test_cpu(0);
    cr_expect_str_eq(gemm_default()->name, "oneDNN");
    const struct gemm_lib *blas = NULL;
    for (int li = 0; li < gemm_count(); li++)
        if (!strcmp(gemm_at(li)->name, "OpenBLAS")) blas = gemm_at(li);
    cr_assert_not_null(blas, "OpenBLAS is in every build");
    const int m = 64, n = 256, k = 784;
    uint64_t rng = 7;
    float *a = random_floats((size_t)m * k, &rng), *b = random_floats((size_t)k * n, &rng);
    float *c1 = calloc((size_t)m * n, sizeof *c1), *c2 = calloc((size_t)m * n, sizeof *c2);
    cr_assert(c1 && c2);
    cr_assert_eq(gemm_default()->sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c1, n), 0);
    cr_assert_eq(blas->sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c2, n), 0);
    double worst = 0;
    for (int i = 0; i < m * n; i++) {
        /* sum|terms| <= k for terms in [-1, 1] */
        double r = fabs((double)c1[i] - c2[i]) / (2.0 * (k + 2) * FLT_EPSILON * k);
        worst = r > worst ? r : worst;
    }
    cr_expect_leq(worst, 1.0, "oneDNN vs OpenBLAS: %.3g of the bound", worst);
    cr_log_info("oneDNN vs OpenBLAS on 64x256x784: largest difference %.3g of the bound", worst);
    free(a);
    free(b);
    free(c1);
    free(c2);
}
#endif
