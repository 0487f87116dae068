/* Real training's speed and accuracy on this machine (issue 5's targets, for
 * mlp:784-256-128-10 on Fashion-MNIST with one BLAS thread per rank):
 *
 *   1. the cpu device's SGEMM GFLOP/s on the model's own layer shapes, at
 *      batch 64 and 256 (forward, weight gradient, input gradient);
 *   2. training throughput (samples/s) of every strategy on 1, 2 and 4
 *      ranks at --batch 256, and of one rank at --batch 64, each an MPI job
 *      of `strata real` whose report gives samples/s over the whole run;
 *      the ratio to one rank is printed beside it;
 *   3. test accuracy of mirrored on 2 ranks after 10 epochs (target 0.87),
 *      with --lr 0.1 (momentum 0.9, batch 256): the recipe of the figure.
 *
 * Run by hand from the build directory, not by ctest:
 *
 *   build/real_speed             all three (about two minutes)
 *   build/real_speed gemm        1 only
 *   build/real_speed throughput  2 only
 *   build/real_speed accuracy    3 only
 *
 * Targets: one rank >= 40,000 samples/s at batch 64 and >= 55,000 at 256;
 * mirrored on 2 ranks >= 85,000 at 256; accuracy >= 0.87. Each line says
 * whether it met its target; the exit status is 0 whatever the figures
 * (a benchmark reports, it does not judge a noisy machine). */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../bench/real_job.h"
#include "../../nn/device.h"
#include "../../real/launch.h"
#include "../../strategies/strategy.h"

#define MODEL "mlp:784-256-128-10"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* GFLOP/s of C(m,n) = op(A) op(B) with inner size k, best of 5 runs of
 * enough repetitions to last ~50 ms. */
static double gemm_gflops(const struct device *dev, bool ta, bool tb, int m, int n, int k)
{
    struct err e = {0};
    float *a = dev->alloc((size_t)m * k * sizeof(float), &e);
    float *b = dev->alloc((size_t)k * n * sizeof(float), &e);
    float *c = dev->alloc((size_t)m * n * sizeof(float), &e);
    if (!a || !b || !c) return 0;
    dev->fill(a, (size_t)m * k, 0.5f);
    dev->fill(b, (size_t)k * n, 0.25f);
    double flops = 2.0 * m * n * k, best_s = 1e30;
    int reps = (int)(2e9 * 0.05 / flops) + 1;
    for (int trial = 0; trial < 5; trial++) {
        double t0 = now_s();
        for (int r = 0; r < reps; r++)
            dev->sgemm(ta, tb, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
        double t = (now_s() - t0) / reps;
        if (t < best_s) best_s = t;
    }
    dev->free(a);
    dev->free(b);
    dev->free(c);
    return flops / best_s / 1e9;
}

static void bench_gemm(void)
{
    struct err e = {0};
    const struct device *dev = device_find("cpu", &e);
    if (!dev || dev->init(0, &e) < 0) {
        fprintf(stderr, "real_speed: %s\n", e.msg);
        return;
    }
    char desc[256];
    dev->describe(desc, sizeof desc);
    printf("SGEMM on %s, layer shapes of %s:\n", desc, MODEL);
    printf("  %5s %-10s %14s %14s %14s\n", "batch", "layer", "forward", "weight grad", "input grad");
    const int sizes[] = {784, 256, 128, 10}, batches[] = {64, 256};
    for (int bi = 0; bi < 2; bi++)
        for (int l = 0; l < 3; l++) {
            int B = batches[bi], in = sizes[l], out = sizes[l + 1];
            char name[32];
            snprintf(name, sizeof name, "%d-%d", in, out);
            printf("  %5d %-10s %9.1f GF/s %9.1f GF/s %9.1f GF/s\n", B, name,
                   gemm_gflops(dev, false, false, B, out, in),   /* Y = X W */
                   gemm_gflops(dev, true, false, in, out, B),    /* dW = X^T dY */
                   gemm_gflops(dev, false, true, B, in, out));   /* dX = dY W^T */
        }
    printf("  square 1024: %.1f GF/s\n\n", gemm_gflops(dev, false, false, 1024, 1024, 1024));
}

/* The strata binary beside this program. */
static void strata_path(char *buf, size_t n)
{
    struct err e = {0};
    char self[LAUNCH_PATH_BYTES];
    if (launch_self_path("real_speed", self, sizeof self, &e) < 0) snprintf(self, sizeof self, ".");
    snprintf(buf, n, "%s/strata", dirname(self));
}

/* 0, or the job's error: ERR_INPUT when the scenario does not fit the
 * strategy (quietly: the table says so), another code printed. */
static int job(const char *strategy, int np, long long batch, long long steps, long long epochs,
               const char *data, struct report_doc *out)
{
    struct err e = {0};
    int rc = 0;
    struct config cfg;
    config_init(&cfg);
    struct workload *wl = NULL;
    char bin[LAUNCH_PATH_BYTES + 16];
    strata_path(bin, sizeof bin);
    /* as if typed: config_set marks them given, so the job receives them */
    char batch_s[32], steps_s[32], epochs_s[32];
    snprintf(batch_s, sizeof batch_s, "%lld", batch);
    snprintf(steps_s, sizeof steps_s, "%lld", steps);
    snprintf(epochs_s, sizeof epochs_s, "%lld", epochs);
    if (config_set(&cfg, "model", MODEL, ~0u, &e) < 0 ||
        (epochs && config_set(&cfg, "lr", "0.1", ~0u, &e) < 0) ||
        config_set(&cfg, "batch", batch_s, ~0u, &e) < 0 ||
        config_set(&cfg, epochs ? "epochs" : "steps", epochs ? epochs_s : steps_s, ~0u, &e) < 0 ||
        config_set(&cfg, "data", data, ~0u, &e) < 0 || workload_parse(MODEL, &wl, &e) < 0 ||
        (rc = real_job_run(&cfg, wl, strategy, np, bin, out, &e)) < 0) {
        if (rc != ERR_INPUT) fprintf(stderr, "real_speed: %s on %d: %s\n", strategy, np, e.msg);
        workload_free(wl);
        return rc < 0 ? rc : ERR_RUN;
    }
    workload_free(wl);
    return 0;
}

/* samples/s; -1 when the strategy does not fit np ranks, 0 when it failed */
static double throughput(const char *strategy, int np, long long batch, long long steps)
{
    struct report_doc d;
    int rc = job(strategy, np, batch, steps, 0, "fashion-mnist", &d);
    if (rc < 0) return rc == ERR_INPUT ? -1 : 0;
    double x = d.reports[0].throughput_samples_per_s;
    report_doc_release(&d);
    return x;
}

static void verdict(double x, double target)
{
    printf("  %s (target %.6g)\n", x >= target ? "meets" : "BELOW", target);
}

static void bench_throughput(void)
{
    printf("training throughput, %s on Fashion-MNIST (samples/s over the whole run):\n", MODEL);
    double one64 = throughput("mirrored", 1, 64, 400);
    printf("  1 rank, batch 64:  %8.0f", one64);
    verdict(one64, 40000);
    double one256 = throughput("mirrored", 1, 256, 200);
    printf("  1 rank, batch 256: %8.0f", one256);
    verdict(one256, 55000);
    printf("\n  batch 256         1 rank     2 ranks     4 ranks   (x one rank)\n");
    for (size_t i = 0; i < strategy_count; i++) {
        const char *name = strategy_registry[i]->name;
        printf("  %-14s", name);
        for (int np = 1; np <= 4; np *= 2) {
            double x = throughput(name, np, 256, 200);
            if (x < 0) printf(" %8s %5s", "-", "");   /* more stages than layers */
            else printf(" %8.0f %4.2fx", x, one256 > 0 ? x / one256 : 0);
            fflush(stdout);
        }
        putchar('\n');
    }
    printf("  (-: more ranks than the model's 3 layers, which model and pipelines split)\n");
    double mirrored2 = throughput("mirrored", 2, 256, 200);
    printf("\n  mirrored, 2 ranks, batch 256 (again): %8.0f", mirrored2);
    verdict(mirrored2, 85000);
    putchar('\n');
}

static void bench_accuracy(void)
{
    struct report_doc d;
    double t0 = now_s();
    if (job("mirrored", 2, 256, 0, 10, "fashion-mnist", &d) < 0) return;
    const struct report *r = &d.reports[0];
    printf("mirrored, 2 ranks, batch 256, lr 0.1, 10 epochs of Fashion-MNIST: test accuracy %.4f "
           "(%.1f s)", r->final.test_accuracy, now_s() - t0);
    verdict(r->final.test_accuracy, 0.87);
    report_doc_release(&d);
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";
    if (!*only || !strcmp(only, "gemm")) bench_gemm();
    if (!*only || !strcmp(only, "throughput")) bench_throughput();
    if (!*only || !strcmp(only, "accuracy")) bench_accuracy();
    return 0;
}
