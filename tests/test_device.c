/* nn/device_cpu.c through the device table: the registry, memory, each
 * operation against a reference worked out here (a naive loop in double, or
 * numbers computed by hand in the comments), and the sgemm speed on the
 * shapes of mlp:784-256-128-10 (logged, never asserted). */
#include <cblas.h>
#include <criterion/criterion.h>

#include "helpers.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../nn/device.h"

/* ---- registry and set-up ----------------------------------------------- */

Test(device, cpu_is_found_by_name_and_says_so)
{
    const struct device *d = test_cpu(0);
    cr_expect_str_eq(d->name, "cpu");
    char line[256];
    d->describe(line, sizeof line);
    cr_log_info("%s", line);
    cr_expect_eq(strncmp(line, "cpu (", 5), 0, "describe: %s", line);
    struct err e = {0};
    cr_expect_eq(d->sync(&e), 0);
}

#ifdef STRATA_HAVE_CUDA
#define DEVICE_NAMES "cpu,cuda"
Test(device, cuda_is_found_in_a_build_with_the_toolkit_gpu_or_not)
{
    /* found by name whether or not this machine has a GPU: probe says that
     * (tests/test_cuda.c checks the device itself) */
    struct err e = {0};
    const struct device *d = device_find("cuda", &e);
    cr_assert_not_null(d, "%s", e.msg);
    cr_expect_str_eq(d->name, "cuda");
    cr_expect(!d->is_host_memory);
}
#else
#define DEVICE_NAMES "cpu"
Test(device, cuda_is_absent_with_a_message_naming_the_devices_there_are)
{
    struct err e = {0};
    cr_expect_null(device_find("cuda", &e));
    cr_expect_eq(e.code, ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "no cuda device in this build"), "%s", e.msg);
    cr_expect_not_null(strstr(e.msg, "devices: cpu"), "%s", e.msg);
    cr_expect_eq(device_check("cuda", &e), ERR_INPUT);
}
#endif

Test(device, cpu_is_host_memory_and_its_probe_always_passes)
{
    struct err e = {0};
    const struct device *d = test_cpu(0);
    cr_expect(d->is_host_memory);
    cr_expect_eq(d->probe(&e), 0);
    cr_expect_eq(device_check("cpu", &e), 0);
    cr_expect_eq(device_check("tpu", &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "'tpu' is not a device"), "%s", e.msg);
}

Test(device, an_unknown_name_is_bad_input_naming_the_devices_there_are)
{
    const char *bad[] = {"tpu", "CPU", "", "cpu ", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct err e = {0};
        cr_expect_null(device_find(bad[i], &e), "'%s' found", bad[i] ? bad[i] : "(null)");
        cr_expect_eq(e.code, ERR_INPUT);
        cr_expect_not_null(strstr(e.msg, "is not a device (devices: " DEVICE_NAMES ")"), "%s",
                           e.msg);
    }
}

Test(device, every_listed_name_is_found)
{
    /* device_names() is written by hand beside the registry: keep them in step. */
    char names[256];
    snprintf(names, sizeof names, "%s", device_names());
    for (char *save = NULL, *tok = strtok_r(names, ", ", &save); tok;
         tok = strtok_r(NULL, ", ", &save)) {
        struct err e = {0};
        cr_expect_not_null(device_find(tok, &e), "'%s' listed but not found: %s", tok, e.msg);
    }
}

Test(device, one_blas_thread_unless_told)
{
    const struct device *d = test_cpu(0);
    struct err e = {0};
    if (!getenv("OPENBLAS_NUM_THREADS"))
        cr_expect_eq(openblas_get_num_threads(), 1, "init(0) left %d BLAS threads",
                     openblas_get_num_threads());
    cr_assert_eq(d->init(2, &e), 0);
    cr_expect_eq(openblas_get_num_threads(), 2);
    cr_expect_eq(d->init(-1, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "-1 BLAS threads"), "%s", e.msg);
}

/* ---- memory and vectors ------------------------------------------------ */

Test(device, alloc_is_aligned_and_copies_go_both_ways)
{
    const struct device *d = test_cpu(0);
    struct err e = {0};
    float host[37], back[37];
    for (int i = 0; i < 37; i++) host[i] = (float)i - 18.5f;
    float *a = d->alloc(sizeof host, &e), *b = d->alloc(sizeof host, &e);
    void *none = d->alloc(0, &e);
    cr_assert(a && b && none, "%s", e.msg);
    cr_expect_eq((uintptr_t)a % DEV_ALIGN_BYTES, 0);
    cr_expect_eq((uintptr_t)b % DEV_ALIGN_BYTES, 0);
    d->copy(a, host, sizeof host, DEV_H2D);
    d->copy(b, a, sizeof host, DEV_D2D);
    d->copy(back, b, sizeof host, DEV_D2H);
    cr_expect_eq(memcmp(host, back, sizeof host), 0);
    d->free(a);
    d->free(b);
    d->free(none);
    d->free(NULL);
}

Test(device, fill_scale_axpy)
{
    const struct device *d = test_cpu(0);
    float x[5], y[5] = {1, 2, 3, 4, 5};
    d->fill(x, 5, 2.5f);
    d->scale(x, 5, -2);           /* x = -5 everywhere */
    d->axpy(5, 0.5f, x, y);       /* y = y - 2.5: -1.5 -0.5 0.5 1.5 2.5 (exact in binary) */
    for (int i = 0; i < 5; i++) {
        cr_expect_eq(x[i], -5.0f);
        cr_expect_eq(y[i], (float)i - 1.5f, "y[%d] = %g", i, y[i]);
    }
}

/* ---- sgemm ------------------------------------------------------------- */

/* C = alpha op(A) op(B) + beta C in double, the definition read literally. */
static void naive_gemm(bool ta, bool tb, int m, int n, int k, double alpha, const float *a,
                       int lda, const float *b, int ldb, double beta, const float *c0, int ldc,
                       double *c, double *abs_sum)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0, s_abs = 0;
            for (int p = 0; p < k; p++) {
                double av = ta ? a[p * lda + i] : a[i * lda + p];
                double bv = tb ? b[j * ldb + p] : b[p * ldb + j];
                s += av * bv;
                s_abs += fabs(av * bv);
            }
            double prior = beta == 0 ? 0 : beta * c0[i * ldc + j];
            c[i * n + j] = alpha * s + prior;
            abs_sum[i * n + j] = fabs(alpha) * s_abs + fabs(prior);
        }
}

/* Every transpose combination, leading dimensions wider than the rows
 * (padding that must be skipped), alpha and beta not 1, then beta 0 over a
 * C full of NaN (BLAS does not read C then). Tolerance: k float roundings of
 * the terms, |err| <= 2 k eps sum |terms| (Higham, Accuracy and Stability,
 * 3.1); the largest ratio err / bound is logged. */
Test(device, sgemm_matches_a_naive_loop_for_all_four_transposes)
{
    const struct device *d = test_cpu(0);
    const int m = 7, n = 5, k = 9, pad = 3;
    double worst = 0;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int use_beta = 0; use_beta < 2; use_beta++) {
                int a_rows = ta ? k : m, a_cols = ta ? m : k;
                int b_rows = tb ? n : k, b_cols = tb ? k : n;
                int lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
                float a[64 * 16], b[64 * 16], c[64 * 16], c0[64 * 16];
                double want[64], abs_sum[64];
                for (int i = 0; i < a_rows * lda; i++) a[i] = (float)((i * 37 % 23) - 11) / 7;
                for (int i = 0; i < b_rows * ldb; i++) b[i] = (float)((i * 53 % 19) - 9) / 5;
                for (int i = 0; i < m * ldc; i++)
                    c0[i] = use_beta ? (float)((i * 29 % 13) - 6) / 3 : NAN;
                memcpy(c, c0, sizeof c0);
                float alpha = 0.75f, beta = use_beta ? -0.5f : 0.0f;
                naive_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c0, ldc, want, abs_sum);
                d->sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        double got = c[i * ldc + j], err = fabs(got - want[i * n + j]);
                        double bound = 2 * (k + 1) * FLT_EPSILON * abs_sum[i * n + j] + 1e-30;
                        cr_expect(err <= bound, "ta %d tb %d beta %g: C[%d][%d] = %.9g, want %.9g",
                                  ta, tb, beta, i, j, got, want[i * n + j]);
                        worst = fmax(worst, err / bound);
                    }
                    /* the padding of C is not written */
                    for (int j = n; j < ldc; j++)
                        cr_expect(memcmp(&c[i * ldc + j], &c0[i * ldc + j], sizeof *c) == 0,
                                  "padding C[%d][%d] written", i, j);
                }
            }
    cr_log_info("sgemm vs naive loop: largest error / bound = %.3g (bound 2(k+1) eps sum|terms|)",
                worst);
}

/* ---- layers ------------------------------------------------------------ */

Test(device, bias_relu_forward_and_backward_by_hand)
{
    const struct device *d = test_cpu(0);
    /* y = x W already (2, 3); b = (1, -1, 0.5) */
    float y[6] = {-2, 0.5f, 0, 3, 1, -0.5f};
    const float b[3] = {1, -1, 0.5f};
    d->bias_act_forward(y, b, 2, 3, DEV_ACT_RELU);
    /* y + b = (-1, -0.5, 0.5; 4, 0, 0) -> ReLU (0, 0, 0.5; 4, 0, 0) */
    const float want_y[6] = {0, 0, 0.5f, 4, 0, 0};
    for (int i = 0; i < 6; i++) cr_expect_eq(y[i], want_y[i], "y[%d] = %g", i, y[i]);

    /* backward: mask where y > 0, i.e. (0 0 1; 1 0 0); db starts at (10, 20, 30) */
    const float dy[6] = {1, 2, 3, 4, 5, 6};
    float dy_out[6], db[3] = {10, 20, 30};
    d->bias_act_backward(dy, y, 2, 3, DEV_ACT_RELU, dy_out, db);
    const float want_dy[6] = {0, 0, 3, 4, 0, 0}, want_db[3] = {14, 20, 33};
    for (int i = 0; i < 6; i++) cr_expect_eq(dy_out[i], want_dy[i], "dy[%d] = %g", i, dy_out[i]);
    for (int j = 0; j < 3; j++) cr_expect_eq(db[j], want_db[j], "db[%d] = %g", j, db[j]);

    /* identity: y + b as is; backward in place passes dy through, db += sums */
    float z[6] = {-2, 0.5f, 0, 3, 1, -0.5f}, g[6] = {1, 2, 3, 4, 5, 6}, dbz[3] = {0, 0, 0};
    d->bias_act_forward(z, b, 2, 3, DEV_ACT_IDENTITY);
    const float want_z[6] = {-1, -0.5f, 0.5f, 4, 0, 0};
    for (int i = 0; i < 6; i++) cr_expect_eq(z[i], want_z[i], "z[%d] = %g", i, z[i]);
    d->bias_act_backward(g, z, 2, 3, DEV_ACT_IDENTITY, g, dbz);
    for (int i = 0; i < 6; i++) cr_expect_eq(g[i], (float)(i + 1));
    cr_expect(dbz[0] == 5 && dbz[1] == 7 && dbz[2] == 9, "db (%g %g %g), want (5 7 9)", dbz[0],
              dbz[1], dbz[2]);
}

Test(device, relu_keeps_nan)
{
    const struct device *d = test_cpu(0);
    float y[2] = {NAN, -1}, b[2] = {0, 0};
    d->bias_act_forward(y, b, 1, 2, DEV_ACT_RELU);
    cr_expect(isnan(y[0]), "NaN became %g", y[0]);
    cr_expect_eq(y[1], 0.0f);
}

/* Row 0: logits (1, 2, 3), label 2. Z' = e^-2 + e^-1 + 1 = 1.503214724 (shifted
 * by the max 3); loss = log Z' = 0.407605964; p = (0.090030573, 0.244728471,
 * 0.665240956). Row 1: logits (1000, 1000, 1000), label 0: p = 1/3 each,
 * loss = log 3 = 1.098612289 (exp(1000) would overflow without the shift). */
Test(device, softmax_xent_by_hand)
{
    const struct device *d = test_cpu(0);
    const float logits[6] = {1, 2, 3, 1000, 1000, 1000};
    const int32_t labels[2] = {2, 0};
    float dl[6];
    double loss;
    d->softmax_xent(logits, labels, 2, 3, 1.0f, dl, &loss);
    cr_expect(fabs(loss - (0.407605964 + 1.098612289)) < 1e-6, "loss sum %.9f", loss);
    const double want[6] = {0.090030573, 0.244728471, 0.665240956 - 1, 1.0 / 3 - 1, 1.0 / 3,
                            1.0 / 3};
    for (int i = 0; i < 6; i++)
        cr_expect(fabs(dl[i] - want[i]) < 1e-6, "dlogits[%d] = %.9f, want %.9f", i, dl[i],
                  want[i]);

    /* grad_scale scales the gradient only */
    float dl4[6];
    double loss4;
    d->softmax_xent(logits, labels, 2, 3, 0.25f, dl4, &loss4);
    cr_expect_eq(loss4, loss);
    for (int i = 0; i < 6; i++) cr_expect(fabs(dl4[i] - 0.25 * want[i]) < 1e-6);

    /* a label out of range gives NaN, not a read out of bounds */
    const int32_t bad[2] = {2, 3};
    d->softmax_xent(logits, bad, 2, 3, 1.0f, dl, &loss);
    cr_expect(isnan(loss), "loss %g with label 3 of 3 classes", loss);
}

/* ---- optimizer --------------------------------------------------------- */

/* Three steps, lr 0.1, momentum 0.9, weight decay 0.01, g_scale 0.5 (g sums
 * 2 samples), g held at 0.5 and -2; worked by hand from
 * g' = 0.5 g + 0.01 w; v = 0.9 v + g'; w -= 0.1 v:
 *   w0 = 1:   g' 0.26        v 0.26        w 0.974
 *             g' 0.25974     v 0.49374     w 0.924626
 *             g' 0.25924626  v 0.70361226  w 0.854264774
 *   w0 = -3:  g' -1.03       v -1.03       w -2.897
 *             g' -1.02897    v -1.95597    w -2.701403
 *             g' -1.02701403 v -2.78738703 w -2.422664297 */
Test(device, sgd_momentum_matches_three_steps_by_hand)
{
    const struct device *d = test_cpu(0);
    float w[2] = {1, -3}, v[2] = {0, 0};
    const float g[2] = {0.5f, -2};
    const double want_w[3][2] = {{0.974, -2.897}, {0.924626, -2.701403},
                                 {0.854264774, -2.422664297}};
    const double want_v[3][2] = {{0.26, -1.03}, {0.49374, -1.95597}, {0.70361226, -2.78738703}};
    double worst = 0;
    for (int step = 0; step < 3; step++) {
        d->sgd_momentum(w, v, g, 2, 0.1f, 0.9f, 0.01f, 0.5f);
        for (int i = 0; i < 2; i++) {
            double ew = fabs(w[i] - want_w[step][i]), ev = fabs(v[i] - want_v[step][i]);
            cr_expect(ew < 1e-6 && ev < 1e-6, "step %d: w %.9f (want %.9f) v %.9f (want %.9f)",
                      step + 1, w[i], want_w[step][i], v[i], want_v[step][i]);
            worst = fmax(worst, fmax(ew, ev));
        }
    }
    cr_log_info("sgd_momentum: largest difference from the hand values %.3g (tolerance 1e-6)",
                worst);
}

/* ---- speed ------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* GFLOP/s of one sgemm shape: untimed warm-up, then the best of 5 timed
 * windows of at least 40 ms each (the best, because on a shared machine
 * other work only ever slows a window down). */
static double gflops(const struct device *d, bool ta, bool tb, int m, int n, int k,
                     const float *a, const float *b, float *c)
{
    int lda = ta ? m : k, ldb = tb ? k : n;
    for (int i = 0; i < 3; i++) d->sgemm(ta, tb, m, n, k, 1, a, lda, b, ldb, 0, c, n);
    double best = 0;
    for (int trial = 0; trial < 5; trial++) {
        int reps = 0;
        double t0 = now_s(), t;
        do {
            d->sgemm(ta, tb, m, n, k, 1, a, lda, b, ldb, 1, c, n);
            reps++;
        } while ((t = now_s() - t0) < 0.04);
        best = fmax(best, 2.0 * m * n * k * reps / t / 1e9);
    }
    return best;
}

/* The GEMMs of one training step of mlp:784-256-128-10 at batch 256 (one
 * BLAS thread): forward x W (NN), weight gradient x^T dy (TN), input
 * gradient dy W^T (NT, not for layer 0). Logged, not asserted: a loaded
 * machine is not a failure. Criterion runs tests two at a time, so for a
 * clean figure run this test alone:
 *   build/test_device --filter 'device/sgemm_speed*' --verbose */
Test(device, sgemm_speed_on_the_fmnist_model_shapes)
{
    const struct device *d = test_cpu(0);
    const int batch = 256, sizes[4] = {784, 256, 128, 10};
    size_t most = 784 * 256;
    float *a = calloc(most, sizeof *a), *b = calloc(most, sizeof *b), *c = calloc(most, sizeof *c);
    cr_assert(a && b && c);
    for (size_t i = 0; i < most; i++) a[i] = b[i] = (float)(i % 7) / 7;
    double flops = 0, seconds = 0;
    for (int l = 0; l < 3; l++) {
        int in = sizes[l], out = sizes[l + 1];
        struct { const char *what; bool ta, tb; int m, n, k; } g[3] = {
            {"forward  x W   NN", false, false, batch, out, in},
            {"weights  x^T dy TN", true, false, in, out, batch},
            {"input    dy W^T NT", false, true, batch, in, out},
        };
        for (int i = 0; i < (l == 0 ? 2 : 3); i++) {
            double r = gflops(d, g[i].ta, g[i].tb, g[i].m, g[i].n, g[i].k, a, b, c);
            double f = 2.0 * g[i].m * g[i].n * g[i].k;
            cr_log_info("layer %d %s (%d x %d x %d): %6.1f GFLOP/s", l, g[i].what, g[i].m,
                        g[i].n, g[i].k, r);
            flops += f;
            seconds += f / (r * 1e9);
        }
    }
    cr_log_info("a step's GEMMs at batch %d: %.2f MFLOP/sample, %.1f GFLOP/s overall, "
                "%.0f samples/s if GEMMs were all", batch, flops / batch / 1e6,
                flops / seconds / 1e9, batch / seconds);
    free(a);
    free(b);
    free(c);
}
