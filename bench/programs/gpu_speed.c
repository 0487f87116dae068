/* The cuda device's SGEMM speed against the card's peak, and the check that
 * two parameter files agree; what tools/gpu-proof runs on a machine with a
 * GPU. Built only with CUDA (CMakeLists.txt); it goes through the device
 * table (nn/device.h), so it times what training uses: cuBLAS on the
 * device's stream, row-major.
 *
 *   build/gpu_speed gemm                 TFLOP/s, FP32 and TF32, on the layer
 *                                        shapes of mlp:784-256-128-10 and
 *                                        mlp:784-4096-4096-4096-10 at batch
 *                                        256, and on an 8192^3 product
 *   build/gpu_speed compare A B [TOL]    the parameters in A equal B's within
 *                                        TOL relative (default 1e-4), each as
 *                                        |a - b| <= TOL max(|b|, 1e-2)
 *
 * Timing as nccl-tests' BenchTime: warm-up (untimed), then a timed loop of
 * enough repetitions to last ~0.2 s, best of 3, one sync at the end of each
 * loop, on random operands (fill_random). Peaks are the datasheet's dense
 * figures for the card the device names (H100 SXM: FP32 67, TF32 495
 * TFLOP/s); an unknown card prints none. tools/gpu-proof holds the square
 * product against the same product through PyTorch on the same card
 * (bench/peers/torch_gpu.py): the ceiling that card actually reaches.
 * Exit status: gemm 0 unless the GPU cannot be used (2); compare 0 when the
 * files agree, 1 when they do not, 2 when they cannot be read. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../nn/device.h"
#include "../../real/params.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Dense peaks in TFLOP/s, by the name cudaGetDeviceProperties gives. */
struct peak {
    const char *name_has;
    double fp32, tf32;
};

static const struct peak peaks[] = {
    {"H100 PCIe", 51.2, 378},
    {"H100 NVL", 60, 418},
    {"H100", 66.9, 494.7},   /* SXM5 */
    {"H200", 66.9, 494.7},
    {"A100", 19.5, 156},
    {"L40S", 91.6, 183},
};

static const struct peak *peak_of(const char *desc)
{
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++)
        if (strstr(desc, peaks[i].name_has)) return &peaks[i];
    return NULL;
}

/* x[0..n) = uniform draws in [-1, 1) from a fixed 64-bit LCG (Knuth's
 * MMIX constants), copied from the host. Random rather than constant: the
 * card draws less power, and so clocks higher, on constant or zero operands,
 * which would flatter the figure held against PyTorch's random ones. */
static int fill_random(const struct device *dev, float *x, size_t n, uint64_t seed,
                       struct err *e)
{
    float *host = malloc(n * sizeof(float));
    if (!host) return err_set(e, ERR_NOMEM, "out of memory for %zu floats", n);
    uint64_t state = seed;
    for (size_t i = 0; i < n; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        host[i] = (float)((double)(state >> 40) / (double)(1ULL << 24) * 2.0 - 1.0);
    }
    dev->copy(x, host, n * sizeof(float), DEV_H2D);
    int rc = dev->sync(e);
    free(host);
    return rc;
}

/* TFLOP/s of C (m, n) = op(A) op(B), inner size k. */
static double gemm_tflops(const struct device *dev, bool ta, bool tb, int m, int n, int k)
{
    struct err e = {0};
    float *a = dev->alloc((size_t)m * k * sizeof(float), &e);
    float *b = dev->alloc((size_t)k * n * sizeof(float), &e);
    float *c = dev->alloc((size_t)m * n * sizeof(float), &e);
    double best_s = 1e30, flops = 2.0 * m * n * k;
    if (!a || !b || !c) {
        fprintf(stderr, "gpu_speed: %s\n", e.msg);
        best_s = 0;
        goto out;
    }
    if (fill_random(dev, a, (size_t)m * k, 1, &e) < 0 ||
        fill_random(dev, b, (size_t)k * n, 2, &e) < 0) {
        fprintf(stderr, "gpu_speed: %s\n", e.msg);
        best_s = 0;
        goto out;
    }
    for (int r = 0; r < 3; r++)   /* warm-up: cuBLAS picks its kernel */
        dev->sgemm(ta, tb, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
    if (dev->sync(&e) < 0) {
        fprintf(stderr, "gpu_speed: %s\n", e.msg);
        best_s = 0;
        goto out;
    }
    double t0 = now_s();
    dev->sgemm(ta, tb, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
    dev->sync(&e);
    double one_s = now_s() - t0;
    int reps = one_s > 0 ? (int)(0.2 / one_s) + 1 : 1000;
    if (reps > 100000) reps = 100000;
    for (int trial = 0; trial < 3; trial++) {
        t0 = now_s();
        for (int r = 0; r < reps; r++)
            dev->sgemm(ta, tb, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
        if (dev->sync(&e) < 0) {
            fprintf(stderr, "gpu_speed: %s\n", e.msg);
            best_s = 0;
            goto out;
        }
        double t = (now_s() - t0) / reps;
        if (t < best_s) best_s = t;
    }
out:
    dev->free(a);
    dev->free(b);
    dev->free(c);
    return best_s > 0 ? flops / best_s / 1e12 : 0;
}

static void row(const char *what, double tflops, double peak)
{
    if (peak > 0)
        printf("  %-34s %8.2f TFLOP/s  %5.1f%% of %.0f\n", what, tflops, 100 * tflops / peak,
               peak);
    else
        printf("  %-34s %8.2f TFLOP/s\n", what, tflops);
}

/* The three products of each layer of sizes[] at batch B: forward Y = X W,
 * weight gradient dW = X^T dY, input gradient dX = dY W^T. */
static void model_shapes(const struct device *dev, const char *model, const int *sizes,
                         int n_sizes, int B, double peak)
{
    printf(" %s, batch %d:\n", model, B);
    for (int l = 0; l + 1 < n_sizes; l++) {
        int in = sizes[l], out = sizes[l + 1];
        char what[64];
        snprintf(what, sizeof what, "%d-%d forward", in, out);
        row(what, gemm_tflops(dev, false, false, B, out, in), peak);
        snprintf(what, sizeof what, "%d-%d weight grad", in, out);
        row(what, gemm_tflops(dev, true, false, in, out, B), peak);
        snprintf(what, sizeof what, "%d-%d input grad", in, out);
        row(what, gemm_tflops(dev, false, true, B, in, out), peak);
    }
}

static int gemm(void)
{
    struct err e = {0};
    const struct device *dev = device_find("cuda", &e);
    if (!dev || dev->probe(&e) < 0) {
        fprintf(stderr, "gpu_speed: %s\n", e.msg);
        return 2;
    }
    for (int tf32 = 0; tf32 < 2; tf32++) {
        setenv("STRATA_TF32", tf32 ? "1" : "0", 1);
        if (dev->init(0, &e) < 0) {
            fprintf(stderr, "gpu_speed: %s\n", e.msg);
            return 2;
        }
        char desc[256];
        dev->describe(desc, sizeof desc);
        const struct peak *pk = peak_of(desc);
        double peak = pk ? (tf32 ? pk->tf32 : pk->fp32) : 0;
        printf("SGEMM on %s (%s peak: %s)\n", desc, tf32 ? "TF32" : "FP32",
               pk ? pk->name_has : "unknown card");
        const int small[] = {784, 256, 128, 10}, large[] = {784, 4096, 4096, 4096, 10};
        model_shapes(dev, "mlp:784-256-128-10", small, 4, 256, peak);
        model_shapes(dev, "mlp:784-4096-4096-4096-10", large, 5, 256, peak);
        double sq = gemm_tflops(dev, false, false, 8192, 8192, 8192);
        row("square 8192^3", sq, peak);
        /* one line for tools/gpu-proof to pick up */
        printf("gemm-square %s %.2f %.2f\n\n", tf32 ? "tf32" : "fp32", sq, peak);
    }
    return 0;
}

static int compare(const char *a_path, const char *b_path, double tol)
{
    struct err e = {0};
    float *a = NULL, *b = NULL;
    int64_t na = 0, nb = 0;
    if (params_load(a_path, &a, &na, &e) < 0 || params_load(b_path, &b, &nb, &e) < 0) {
        fprintf(stderr, "gpu_speed compare: %s\n", e.msg);
        free(a);
        return 2;
    }
    int rc = 0;
    if (na != nb) {
        printf("compare: %s has %lld parameters, %s %lld\n", a_path, (long long)na, b_path,
               (long long)nb);
        rc = 1;
    } else {
        double max_rel = 0;
        int64_t worst = 0, n_bad = 0;
        for (int64_t i = 0; i < na; i++) {
            double rel = fabs((double)a[i] - (double)b[i]) / fmax(fabs((double)b[i]), 1e-2);
            if (!(rel <= tol)) n_bad++;
            if (!(rel <= max_rel)) {
                max_rel = rel;
                worst = i;
            }
        }
        /* "max_rel N_BAD N": what tools/gpu-proof reads */
        printf("compare: max relative difference %.3g (parameter %lld: %.9g vs %.9g), %lld of "
               "%lld over %g\n", max_rel, (long long)worst, (double)a[worst], (double)b[worst],
               (long long)n_bad, (long long)na, tol);
        rc = n_bad ? 1 : 0;
    }
    free(a);
    free(b);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "gemm")) return gemm();
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "compare"))
        return compare(argv[2], argv[3], argc == 5 ? atof(argv[4]) : 1e-4);
    fprintf(stderr, "usage: gpu_speed gemm | gpu_speed compare A.params B.params [TOL]\n");
    return 2;
}
