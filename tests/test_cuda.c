/* nn/device_cuda.cu and real/comm_nccl.c: the cuda device against the cpu
 * device, operation by operation on the same inputs, then training (the
 * MLP, and `strata real` on 1 and 2 ranks) against the cpu's, and what a
 * build with CUDA says on a machine without a GPU.
 *
 * Tolerances, and why. Each value is compared as |a - b| <= tol * max(|b|,
 * floor), the floor being the scale of the values (a difference near zero
 * is an absolute one), and the largest difference is printed. The
 * element-wise kernels are built with --fmad=false and sum in the cpu's
 * order: fill/scale/axpy, bias and ReLU and SGD within 1e-6 (exact, in
 * practice). Softmax uses CUDA's expf (within 2 ulp of glibc's): 1e-6 of
 * grad_scale, since p - grad_scale cancels. sgemm adds its 53 terms in
 * cuBLAS's order: 1e-5 of the results' scale (~1). A few training steps
 * compound that: 1e-4 of 1e-2. The bias gradient's column sums and the
 * loss add in a parallel tree, not the cpu's row order: 2e-5 of the sums'
 * scale (~1). TF32 (inputs rounded to 11 significant bits, 2^-11 ~ 4.9e-4
 * each): a product's norm-wise relative error near 3e-4, asserted to lie
 * in [1e-5, 3e-3], so that a TF32 mode that is not applied (FP32's ~1e-7)
 * fails.
 *
 * Without a GPU (or without CUDA in the build) the GPU tests are SKIPPED,
 * saying why, never passed. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/workload.h"
#include "../nn/device.h"
#include "../nn/mlp.h"
#include "../real/comm.h"
#include "../real/params.h"
#ifdef STRATA_HAVE_CUDA
#include "../nn/cuda_device.h"
#endif

/* ---- the devices ---------------------------------------------------------------- */

/* The cuda device, initialised in TF32 (is_tf32) or FP32 mode; skips the
 * test where there is none. */
static const struct device *gpu_in(bool is_tf32)
{
#ifndef STRATA_HAVE_CUDA
    (void)is_tf32;
    cr_skip_test("this build has no CUDA (no toolkit found at configure time, or "
                 "-DSTRATA_CUDA=OFF)");
    return NULL;
#else
    struct err e = {0};
    if (device_check("cuda", &e) < 0) cr_skip_test("%s", e.msg);
    const struct device *d = device_find("cuda", &e);
    cr_assert_not_null(d, "%s", e.msg);
    setenv("STRATA_TF32", is_tf32 ? "1" : "0", 1);
    cr_assert_eq(d->init(0, &e), 0, "%s", e.msg);
    return d;
#endif
}

/* The cuda device in FP32, as every test but TF32's wants it. */
static const struct device *gpu(void)
{
    return gpu_in(false);
}

/* n floats of host data on d */
static float *on(const struct device *d, const float *host, size_t n)
{
    struct err e = {0};
    float *p = d->alloc(n * sizeof *p, &e);
    cr_assert_not_null(p, "%s", e.msg);
    d->copy(p, host, n * sizeof *p, DEV_H2D);
    return p;
}

static float *back(const struct device *d, const float *p, size_t n)
{
    float *h = malloc(n * sizeof *h + 1);
    cr_assert_not_null(h);
    d->copy(h, p, n * sizeof *h, DEV_D2H);
    struct err e = {0};
    cr_assert_eq(d->sync(&e), 0, "%s", e.msg);
    return h;
}

/* Deterministic values in [-1, 1). */
static void fill_values(float *x, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
    }
}

/* a (the cuda device's) equals b (the cpu's) within tol relative. */
static void expect_close(const float *a, const float *b, size_t n, double tol, double floor,
                         const char *what)
{
    double max_rel = 0;
    size_t worst = 0, n_bad = 0;
    for (size_t i = 0; i < n; i++) {
        double rel = fabs((double)a[i] - (double)b[i]) / fmax(fabs((double)b[i]), floor);
        if (!(rel <= tol)) n_bad++;
        if (!(rel <= max_rel)) {
            max_rel = rel;
            worst = i;
        }
    }
    cr_expect_eq(n_bad, 0, "%s: %zu of %zu values differ from the cpu's by more than %g; max "
                 "relative difference %.3g at %zu (%.9g vs %.9g)", what, n_bad, n, tol, max_rel,
                 worst, (double)a[worst], (double)b[worst]);
    cr_log_info("%s: max relative difference from the cpu %.3g (tolerance %g)", what, max_rel,
                tol);
}

/* expect_close on the n floats at device address p, copied back, against the
 * cpu's want. */
static void expect_back_close(const struct device *d, const float *p, const float *want,
                              size_t n, double tol, double floor, const char *what)
{
    float *h = back(d, p, n);
    expect_close(h, want, n, tol, floor, what);
    free(h);
}

/* ---- without a GPU ---------------------------------------------------------------- */

#ifdef STRATA_HAVE_CUDA
Test(cuda, without_a_gpu_the_probe_names_cudaGetDeviceCount)
{
    if (dev_cuda_count() > 0) cr_skip_test("this machine has a GPU");
    struct err e = {0};
    cr_expect_eq(device_check("cuda", &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "no CUDA device: cudaGetDeviceCount says"), "%s", e.msg);
    const struct device *d = device_find("cuda", &e);
    cr_assert_not_null(d);
    cr_expect_eq(d->init(0, &e), ERR_INPUT, "init without a GPU is bad input, like probe");
    cr_expect_not_null(strstr(e.msg, "no CUDA device"), "%s", e.msg);
}

Test(cuda, strata_real_on_cuda_without_a_gpu_exits_2_before_any_mpi_job, .timeout = 60)
{
    if (dev_cuda_count() > 0) cr_skip_test("this machine has a GPU");
    const char *argv[] = {STRATA_BIN, "real", "--device", "cuda", "--np", "1", "--steps", "5",
                          "--data", "synthetic", NULL};
    struct run r = run_argv(argv);
    cr_expect_eq(r.status, 2, "exit %d; stderr:\n%s", r.status, r.err);
    cr_expect_not_null(strstr(r.err, "no CUDA device: cudaGetDeviceCount says"), "%s", r.err);
    cr_expect_null(strstr(r.err, "mpirun"), "the launcher should stop before mpirun:\n%s", r.err);
    run_free(&r);
}
#endif

#ifdef STRATA_HAVE_NCCL
Test(cuda, nccl_is_a_comm_of_this_build)
{
    struct err e = {0};
    const struct comm_ops *ops = comm_find("nccl", &e);
    cr_assert_not_null(ops, "%s", e.msg);
    cr_expect_str_eq(ops->name, "nccl");
    cr_expect_null(comm_find("gloo", &e));
    cr_expect_not_null(strstr(e.msg, "this build has: mpi, nccl"), "%s", e.msg);
}
#endif

/* ---- the device, operation by operation ------------------------------------------------ */

Test(cuda, says_what_it_is_and_allocates_aligned_memory_that_copies_both_ways)
{
    const struct device *d = gpu();
    char line[256];
    d->describe(line, sizeof line);
    cr_log_info("%s", line);
    cr_expect_eq(strncmp(line, "cuda (", 6), 0, "%s", line);
    cr_expect_not_null(strstr(line, "FP32"), "TF32 is off unless asked: %s", line);
    struct err e = {0};
    float host[37];
    fill_values(host, 37, 1);
    float *a = on(d, host, 37), *b = d->alloc(sizeof host, &e);
    void *none = d->alloc(0, &e);
    cr_assert(b && none, "%s", e.msg);
    cr_expect_eq((uintptr_t)a % DEV_ALIGN_BYTES, 0);
    d->copy(b, a, sizeof host, DEV_D2D);
    float *h = back(d, b, 37);
    cr_expect_eq(memcmp(h, host, sizeof host), 0);
    free(h);
    d->free(a);
    d->free(b);
    d->free(none);
    d->free(NULL);
    cr_expect_eq(d->sync(&e), 0, "%s", e.msg);
}

Test(cuda, an_impossible_allocation_is_out_of_memory_naming_the_size)
{
    const struct device *d = gpu();
    struct err e = {0};
    cr_expect_null(d->alloc((size_t)1 << 50, &e));
    cr_expect_eq(e.code, ERR_NOMEM);
    cr_expect_not_null(strstr(e.msg, "cudaMalloc of 1125899906842624 bytes"), "%s", e.msg);
    cr_expect_eq(d->sync(&e), 0, "a failed allocation does not poison later work: %s", e.msg);
}

Test(cuda, fill_scale_axpy_equal_the_cpu)
{
    const struct device *g = gpu(), *c = test_cpu(0);
    enum { N = 100003 };   /* not a multiple of a block */
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    fill_values(y, N, 2);
    float *gx = on(g, y, N), *gy = on(g, y, N);
    g->fill(gx, N, 2.5f);
    g->scale(gx, N, -0.75f);
    g->axpy(N, 0.5f, gx, gy);
    c->fill(x, N, 2.5f);
    c->scale(x, N, -0.75f);
    c->axpy(N, 0.5f, x, y);
    expect_back_close(g, gx, x, N, 1e-6, 1e-6, "fill + scale");
    expect_back_close(g, gy, y, N, 1e-6, 1e-6, "axpy");
    free(x);
    free(y);
    g->free(gx);
    g->free(gy);
}

/* Frees a product's three host operands and their three device copies. */
static void free_operands(const struct device *g, float *host[3], float *dev[3])
{
    for (int i = 0; i < 3; i++) {
        free(host[i]);
        g->free(dev[i]);
    }
}

/* C = alpha op(A) op(B) + beta C on padded row strides, every transposition,
 * against the cpu's cblas; with beta 0 a NaN in C must not leak. */
static void check_sgemm(bool ta, bool tb, float beta, double tol, double floor)
{
    const struct device *g = gpu(), *c = test_cpu(0);
    const int m = 37, n = 29, k = 53, pad = 3;
    int lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
    size_t na = (size_t)(ta ? k : m) * lda, nb = (size_t)(tb ? n : k) * ldb, nc = (size_t)m * ldc;
    float *a = malloc(na * 4), *b = malloc(nb * 4), *cc = malloc(nc * 4);
    fill_values(a, na, 3);
    fill_values(b, nb, 4);
    fill_values(cc, nc, 5);
    if (beta == 0) cc[0] = NAN;
    float *ga = on(g, a, na), *gb = on(g, b, nb), *gc = on(g, cc, nc);
    g->sgemm(ta, tb, m, n, k, 0.75f, ga, lda, gb, ldb, beta, gc, ldc);
    c->sgemm(ta, tb, m, n, k, 0.75f, a, lda, b, ldb, beta, cc, ldc);
    char what[64];
    snprintf(what, sizeof what, "sgemm %c%c beta %g", ta ? 'T' : 'N', tb ? 'T' : 'N', beta);
    expect_back_close(g, gc, cc, nc, tol, floor, what);
    free_operands(g, (float *[]){a, b, cc}, (float *[]){ga, gb, gc});
}

Test(cuda, sgemm_in_every_transposition_equals_the_cpu_row_major)
{
    for (int t = 0; t < 4; t++) {
        check_sgemm(t & 1, t & 2, 0.5f, 1e-5, 1.0);
        check_sgemm(t & 1, t & 2, 0.0f, 1e-5, 1.0);
    }
}

Test(cuda, bias_relu_forward_and_backward_equal_the_cpu)
{
    const struct device *g = gpu(), *c = test_cpu(0);
    const int n = 67, out = 300;
    size_t total = (size_t)n * out;
    float *y = malloc(total * 4), *dy = malloc(total * 4), *b = malloc(out * 4),
          *db = malloc(out * 4), *dyo = malloc(total * 4);
    fill_values(y, total, 6);
    fill_values(dy, total, 7);
    fill_values(b, out, 8);
    fill_values(db, out, 9);
    y[5] = NAN;   /* a NaN stays NaN through ReLU */
    float *gy = on(g, y, total), *gdy = on(g, dy, total), *gb = on(g, b, out),
          *gdb = on(g, db, out), *gdyo = on(g, dy, total);
    for (int act = 0; act < 2; act++) {
        enum dev_act a = act ? DEV_ACT_RELU : DEV_ACT_IDENTITY;
        g->bias_act_forward(gy, gb, n, out, a);
        c->bias_act_forward(y, b, n, out, a);
        g->bias_act_backward(gdy, gy, n, out, a, gdyo, gdb);
        c->bias_act_backward(dy, y, n, out, a, dyo, db);
    }
    float *hy = back(g, gy, total);
    cr_expect(isnan(hy[5]), "ReLU(NaN) is %g, not NaN", hy[5]);
    hy[5] = y[5] = 0;
    expect_close(hy, y, total, 1e-6, 1e-6, "bias + act forward");
    free(hy);
    expect_back_close(g, gdyo, dyo, total, 1e-6, 1e-6, "bias + act backward: dy");
    /* a tree's sum against the cpu's row order: see the top */
    expect_back_close(g, gdb, db, out, 2e-5, 1.0, "bias + act backward: db");
    free(y);
    free(dy);
    free(b);
    free(db);
    free(dyo);
    g->free(gy);
    g->free(gdy);
    g->free(gb);
    g->free(gdb);
    g->free(gdyo);
}

Test(cuda, softmax_cross_entropy_equals_the_cpu_and_its_loss_is_on_the_host)
{
    const struct device *g = gpu(), *c = test_cpu(0);
    struct err e = {0};
    /* more rows than the grid has warps (1,024 blocks of 8), more classes
     * than lanes */
    const int n = 9000, classes = 37;
    size_t total = (size_t)n * classes;
    float *l = malloc(total * 4), *d = malloc(total * 4);
    int32_t *y = malloc(n * 4);
    fill_values(l, total, 10);
    for (size_t i = 0; i < total; i++) l[i] *= 20;
    l[3] = 1e4f;   /* large logits must not overflow */
    for (int i = 0; i < n; i++) y[i] = (i * 7) % classes;
    float *gl = on(g, l, total), *gd = g->alloc(total * 4, &e);
    int32_t *gy = g->alloc(n * 4, &e);
    cr_assert(gd && gy, "%s", e.msg);
    g->copy(gy, y, n * 4, DEV_H2D);
    double loss_gpu = -1, loss_cpu = -1;
    g->softmax_xent(gl, gy, n, classes, 0.5f, gd, &loss_gpu);
    c->softmax_xent(l, y, n, classes, 0.5f, d, &loss_cpu);
    expect_back_close(g, gd, d, total, 1e-6, 0.5, "softmax cross-entropy gradient");
    cr_expect(isfinite(loss_gpu), "loss %g", loss_gpu);
    /* log z per row off by ~1e-7 at most, over 9000 rows of losses ~10 */
    cr_expect_leq(fabs(loss_gpu - loss_cpu) / loss_cpu, 1e-7, "loss %.12g, cpu %.12g",
                  loss_gpu, loss_cpu);
    cr_log_info("softmax loss: cuda %.12g, cpu %.12g", loss_gpu, loss_cpu);
    /* a label out of range: NaN, not a read out of bounds */
    y[0] = classes;
    g->copy(gy, y, n * 4, DEV_H2D);
    g->softmax_xent(gl, gy, n, classes, 1.0f, gd, &loss_gpu);
    cr_expect(isnan(loss_gpu), "loss %g with a bad label", loss_gpu);
    cr_expect_eq(g->sync(&e), 0, "%s", e.msg);
    free(l);
    free(d);
    free(y);
    g->free(gl);
    g->free(gd);
    g->free(gy);
}

Test(cuda, sgd_momentum_equals_the_cpu)
{
    const struct device *g = gpu(), *c = test_cpu(0);
    enum { N = 4099 };
    float w[N], v[N], gr[N];
    fill_values(w, N, 11);
    fill_values(v, N, 12);
    fill_values(gr, N, 13);
    float *gw = on(g, w, N), *gv = on(g, v, N), *gg = on(g, gr, N);
    for (int step = 0; step < 3; step++) {
        g->sgd_momentum(gw, gv, gg, N, 0.1f, 0.9f, 1e-4f, 1.0f / 64);
        c->sgd_momentum(w, v, gr, N, 0.1f, 0.9f, 1e-4f, 1.0f / 64);
    }
    expect_back_close(g, gw, w, N, 1e-6, 1e-6, "sgd: w");
    expect_back_close(g, gv, v, N, 1e-6, 1e-6, "sgd: v");
    g->free(gw);
    g->free(gv);
    g->free(gg);
}

Test(cuda, tf32_is_on_only_when_asked_and_a_bad_setting_is_bad_input)
{
    const struct device *g = gpu();
    struct err e = {0};
    char line[256];
    setenv("STRATA_TF32", "yes", 1);
    cr_expect_eq(g->init(0, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "STRATA_TF32=yes"), "%s", e.msg);
    setenv("STRATA_TF32", "1", 1);
    cr_assert_eq(g->init(0, &e), 0, "%s", e.msg);
    g->describe(line, sizeof line);
    cr_expect_not_null(strstr(line, "TF32"), "%s", line);
    setenv("STRATA_TF32", "0", 1);
    cr_assert_eq(g->init(0, &e), 0, "%s", e.msg);
    g->describe(line, sizeof line);
    cr_expect_not_null(strstr(line, "FP32"), "%s", line);
}

/* ||C_gpu - C_cpu|| / ||C_cpu|| (Frobenius) of a 256-cubed product of
 * values in [-1, 1), with the device in TF32 or FP32 mode. 256 and its
 * 256-byte-aligned rows are shapes cuBLAS runs on tensor cores when TF32
 * is allowed (an odd small product may get an FP32 kernel either way). */
static double product_error(bool is_tf32)
{
    const struct device *g = gpu_in(is_tf32), *c = test_cpu(0);
    enum { S = 256 };
    const size_t n = (size_t)S * S;
    float *a = malloc(n * 4), *b = malloc(n * 4), *cc = malloc(n * 4);
    fill_values(a, n, 21);
    fill_values(b, n, 22);
    float *ga = on(g, a, n), *gb = on(g, b, n), *gc = on(g, a, n);
    g->sgemm(false, false, S, S, S, 1.0f, ga, S, gb, S, 0.0f, gc, S);
    c->sgemm(false, false, S, S, S, 1.0f, a, S, b, S, 0.0f, cc, S);
    float *h = back(g, gc, n);
    double diff2 = 0, ref2 = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)h[i] - (double)cc[i];
        diff2 += d * d;
        ref2 += (double)cc[i] * (double)cc[i];
    }
    free(h);
    free_operands(g, (float *[]){a, b, cc}, (float *[]){ga, gb, gc});
    return sqrt(diff2 / ref2);
}

Test(cuda, tf32_products_carry_tf32_rounding_and_fp32_ones_do_not)
{
    double tf32 = product_error(true), fp32 = product_error(false);
    cr_log_info("256^3 sgemm, norm-wise relative error against the cpu: TF32 %.3g, FP32 %.3g",
                tf32, fp32);
    cr_expect(tf32 >= 1e-5 && tf32 <= 3e-3, "TF32 error %.3g is not TF32's (~3e-4, allowed "
              "1e-5 to 3e-3): is the math mode applied?", tf32);
    cr_expect_lt(fp32, 1e-5, "FP32 error %.3g: TF32 left on after STRATA_TF32=0?", fp32);
}

/* ---- training -------------------------------------------------------------------------- */

/* A few SGD steps of an MLP from the same seed on both devices: the same
 * parameters within 1e-4. */
Test(cuda, mlp_training_steps_equal_the_cpu)
{
    const struct device *g = gpu(), *c = test_cpu(0);
    struct err e = {0};
    struct workload *wl = NULL;
    cr_assert_eq(workload_parse("mlp:784-128-64-10", &wl, &e), 0, "%s", e.msg);
    struct mlp *mg = NULL, *mc = NULL;
    cr_assert_eq(mlp_create(wl, g, 7, &mg, &e), 0, "%s", e.msg);
    cr_assert_eq(mlp_create(wl, c, 7, &mc, &e), 0, "%s", e.msg);
    struct mlp_act *ag = NULL, *ac = NULL;
    const int n = 64;
    cr_assert_eq(mlp_act_create(mg, n, &ag, &e), 0, "%s", e.msg);
    cr_assert_eq(mlp_act_create(mc, n, &ac, &e), 0, "%s", e.msg);
    float *x = malloc((size_t)n * 784 * 4);
    int32_t y[64];
    int32_t *gy = g->alloc(sizeof y, &e);
    for (int step = 0; step < 5; step++) {
        fill_values(x, (size_t)n * 784, 100 + step);
        for (int i = 0; i < n; i++) y[i] = (i + step) % 10;
        g->copy(ag->x[0], x, (size_t)n * 784 * 4, DEV_H2D);
        g->copy(gy, y, sizeof y, DEV_H2D);
        double lg = 0, lc = 0;
        mlp_zero_grad(mg, 0, 3);
        mlp_zero_grad(mc, 0, 3);
        cr_assert_eq(mlp_forward(mg, ag, 0, 3, NULL, n, NULL, &e), 0, "%s", e.msg);
        cr_assert_eq(mlp_forward(mc, ac, 0, 3, x, n, NULL, &e), 0, "%s", e.msg);
        cr_assert_eq(mlp_loss(mg, ag, gy, n, &lg, &e), 0, "%s", e.msg);
        cr_assert_eq(mlp_loss(mc, ac, y, n, &lc, &e), 0, "%s", e.msg);
        cr_expect_leq(fabs(lg - lc) / lc, 1e-4, "step %d: loss %.9g, cpu %.9g", step, lg, lc);
        cr_assert_eq(mlp_backward(mg, ag, 0, 3, ag->dlogits, n, NULL, &e), 0, "%s", e.msg);
        cr_assert_eq(mlp_backward(mc, ac, 0, 3, ac->dlogits, n, NULL, &e), 0, "%s", e.msg);
        mlp_sgd_step(mg, 0, 3, 0.1f, 0.9f, 0, 1.0f / n);
        mlp_sgd_step(mc, 0, 3, 0.1f, 0.9f, 0, 1.0f / n);
    }
    float *p = back(g, mg->params, (size_t)mg->n_params);
    expect_close(p, mc->params, (size_t)mc->n_params, 1e-4, 1e-2, "5 training steps: params");
    free(p);
    free(x);
    g->free(gy);
    mlp_act_free(ag);
    mlp_act_free(ac);
    mlp_free(mg);
    mlp_free(mc);
    workload_free(wl);
}

/* `strata real` on the cuda device equals it on the cpu (same seed, 5
 * steps, TF32 off): one rank, then 2 ranks sharing the GPU through mpi's
 * host copies (mirrored: all-reduce; ps-sync: pushes and pulls to a cpu
 * server; pipeline-1f1b: activations and gradients), then nccl where there
 * are 2 GPUs. The one-device cpu run is the reference for all. */
#define REAL_MODEL "mlp:784-64-32-16-10"

static void real_params(const char *device, const char *comm, const char *strategy,
                        const char *np, const char *path)
{
    const char *argv[] = {STRATA_BIN, "real", "--data", "synthetic", "--model", REAL_MODEL,
                          "--seed", "7", "--batch", "64", "--microbatches", "4", "--steps", "5",
                          "--device", device, "--comm", comm, "--strategy", strategy, "--np",
                          np, "--save-params", path, NULL};
    struct run r = run_argv(argv);
    int status = r.status;
    cr_expect_eq(status, 0, "%s %s on %s ranks (%s, comm %s) exited %d:\n%s", strategy,
                 device, np, device, comm, status, r.err);
    run_free(&r);
    cr_assert_eq(status, 0);
}

static void expect_same_file(const char *path, const char *ref, const char *what)
{
    struct err e = {0};
    float *a = NULL, *b = NULL;
    int64_t na = 0, nb = 0;
    cr_assert_eq(params_load(path, &a, &na, &e), 0, "%s", e.msg);
    cr_assert_eq(params_load(ref, &b, &nb, &e), 0, "%s", e.msg);
    cr_assert_eq(na, nb, "%s: %lld parameters, the cpu run %lld", what, (long long)na,
                 (long long)nb);
    expect_close(a, b, (size_t)na, 1e-4, 1e-2, what);
    free(a);
    free(b);
}

Test(cuda, strata_real_on_cuda_equals_the_cpu_on_one_and_two_ranks, .timeout = 300)
{
    gpu();
    char dir[64], ref[128], path[128];
    test_make_dir(dir, sizeof dir, "cuda");
    snprintf(ref, sizeof ref, "%s/cpu.params", dir);
    real_params("cpu", "mpi", "mirrored", "1", ref);
    const char *runs[][3] = {
        {"mirrored", "1", "auto"},      {"mirrored", "2", "mpi"},
        {"ps-sync", "2", "mpi"},        {"pipeline-1f1b", "2", "mpi"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char what[128];
        snprintf(path, sizeof path, "%s/%s-%s.params", dir, runs[i][0], runs[i][1]);
        snprintf(what, sizeof what, "%s on %s cuda ranks, comm %s", runs[i][0], runs[i][1],
                 runs[i][2]);
        real_params("cuda", runs[i][2], runs[i][0], runs[i][1], path);
        expect_same_file(path, ref, what);
    }
#ifdef STRATA_HAVE_NCCL
    if (dev_cuda_count() >= 2) {
        const char *nccl[] = {"mirrored", "pipeline-1f1b", "model"};
        for (size_t i = 0; i < 3; i++) {
            char what[128];
            snprintf(path, sizeof path, "%s/%s-nccl.params", dir, nccl[i]);
            snprintf(what, sizeof what, "%s on 2 GPUs, comm nccl", nccl[i]);
            real_params("cuda", "nccl", nccl[i], "2", path);
            expect_same_file(path, ref, what);
        }
    } else {
        cr_log_warn("one GPU: nccl on 2 ranks not tried (NCCL refuses a shared GPU)");
    }
#endif
    test_remove_dir(dir);
}
