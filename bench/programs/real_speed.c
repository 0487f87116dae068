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
 *      with --lr 0.1 (momentum 0.9, batch 256): the recipe of the figure;
 *   4. strata against PyTorch (issue 13): mirrored on 1 and 2 ranks at
 *      batch 64 and 256 against the same training in PyTorch
 *      (bench/peers/torch_mlp.py: same data, model, batch, seed, one thread
 *      per process, DDP over gloo for 2 ranks), for mlp:784-256-128-10 and
 *      mlp:784-4096-4096-4096-10; 3 repeats, the two alternating (which goes
 *      first alternates too), medians; the ratio strata / PyTorch, and
 *      strata's share of the one-core GEMM peak (a 2048^3 SGEMM of the
 *      library strata's cpu device uses, on one thread) for the MLP's
 *      FLOPs: 6 in out per sample per layer (forward, weight and input
 *      gradients), less the first layer's input gradient, which no one
 *      computes. PyTorch runs when some python3 imports torch (Debian's
 *      python3-torch; $STRATA_PYTHON, python3, then /usr/bin/python3 are
 *      tried); without it, strata's figures and shares print alone.
 *
 * Run by hand from the build directory, not by ctest:
 *
 *   build/real_speed             all four (about six minutes)
 *   build/real_speed gemm        1 only
 *   build/real_speed throughput  2 only
 *   build/real_speed accuracy    3 only
 *   build/real_speed peer        4 only
 *
 * Targets: one rank >= 40,000 samples/s at batch 64 and >= 55,000 at 256;
 * mirrored on 2 ranks >= 85,000 at 256; accuracy >= 0.87; against PyTorch
 * (issue 13) >= 1.5x on one process, >= 2x on two ranks, and >= 0.8 of the
 * GEMM peak on one process. Each line says whether it met its target; the
 * exit status is 0 whatever the figures (a benchmark reports, it does not
 * judge a noisy machine: the load average is printed with section 4). */
#include <libgen.h>
#include <stdbool.h>
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

/* The cpu device, ready, and its description; NULL (said on stderr) when
 * it cannot start. */
static const struct device *open_cpu(char *desc, size_t desc_bytes)
{
    struct err e = {0};
    const struct device *dev = device_find("cpu", &e);
    if (!dev || dev->init(0, &e) < 0) {
        fprintf(stderr, "real_speed: %s\n", e.msg);
        return NULL;
    }
    dev->describe(desc, desc_bytes);
    return dev;
}

static void bench_gemm(void)
{
    char desc[256];
    const struct device *dev = open_cpu(desc, sizeof desc);
    if (!dev) return;
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
static int job_of(const char *model, const char *strategy, int np, long long batch,
                  long long steps, long long epochs, const char *data, struct report_doc *out)
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
    if (config_set(&cfg, "model", model, ~0u, &e) < 0 ||
        (epochs && config_set(&cfg, "lr", "0.1", ~0u, &e) < 0) ||
        config_set(&cfg, "batch", batch_s, ~0u, &e) < 0 ||
        config_set(&cfg, epochs ? "epochs" : "steps", epochs ? epochs_s : steps_s, ~0u, &e) < 0 ||
        config_set(&cfg, "data", data, ~0u, &e) < 0 || workload_parse(model, &wl, &e) < 0 ||
        (rc = real_job_run(&cfg, wl, strategy, np, bin, out, &e)) < 0) {
        if (rc != ERR_INPUT) fprintf(stderr, "real_speed: %s on %d: %s\n", strategy, np, e.msg);
        workload_free(wl);
        return rc < 0 ? rc : ERR_RUN;
    }
    workload_free(wl);
    return 0;
}

static int job(const char *strategy, int np, long long batch, long long steps, long long epochs,
               const char *data, struct report_doc *out)
{
    return job_of(MODEL, strategy, np, batch, steps, epochs, data, out);
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
        const char *name = strategy_registry[i].name;
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

/* ---- 4. strata against PyTorch -------------------------------------------- */

/* A python3 that imports torch, or NULL: $STRATA_PYTHON, python3 (which may
 * be a virtual environment's, without Debian's packages), /usr/bin/python3. */
static const char *python_with_torch(void)
{
    static char found[256];
    const char *candidates[] = {getenv("STRATA_PYTHON"), "python3", "/usr/bin/python3"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (!candidates[i] || !*candidates[i] || strchr(candidates[i], '\'')) continue;
        char cmd[512];
        snprintf(cmd, sizeof cmd, "'%s' -c 'import torch' >/dev/null 2>&1", candidates[i]);
        if (system(cmd) == 0) {
            snprintf(found, sizeof found, "%s", candidates[i]);
            return found;
        }
    }
    return NULL;
}

/* What a run of the peer said: the figures of its one JSON line on stdout
 * (0 or "" for the ones it did not print, all of them when it failed). */
struct peer_said {
    double samples_per_s, gemm_gflops;
    char torch[64], blas[160];
};

/* A string field "key": "value" of line into out (n bytes), when present. */
static void string_field(const char *line, const char *key, char *out, size_t n)
{
    const char *v = strstr(line, key);
    if (v) {
        v += strlen(key);
        snprintf(out, n, "%.*s", (int)strcspn(v, "\""), v);
    }
}

/* Runs bench/peers/torch_mlp.py with args under python; what it said. */
static struct peer_said peer_run(const char *python, const char *args)
{
    struct peer_said said = {0};
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' '%s/bench/peers/torch_mlp.py' %s", python,
             STRATA_SOURCE_DIR, args);
    FILE *f = popen(cmd, "r");
    if (!f) return said;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, "\"samples_per_s\": ");
        if (at) said.samples_per_s = strtod(at + strlen("\"samples_per_s\": "), NULL);
        at = strstr(line, "\"gemm_gflops\": ");
        if (at) said.gemm_gflops = strtod(at + strlen("\"gemm_gflops\": "), NULL);
        string_field(line, "\"torch\": \"", said.torch, sizeof said.torch);
        string_field(line, "\"blas\": \"", said.blas, sizeof said.blas);
    }
    if (pclose(f) != 0) said = (struct peer_said){0};
    return said;
}

/* The peer's samples/s training model on np ranks, 0 when it failed; its
 * torch version into version (n bytes) the first time. */
static double peer_throughput(const char *python, const char *model, int np, int batch,
                              long long steps, char *version, size_t n)
{
    char args[512];
    snprintf(args, sizeof args,
             "--model %s --batch %d --steps %lld --ranks %d --seed 1 --lr 0.02 --momentum 0.9",
             model, batch, steps, np);
    struct peer_said said = peer_run(python, args);
    if (!*version) snprintf(version, n, "%s", said.torch);
    return said.samples_per_s;
}

static double strata_throughput(const char *model, int np, int batch, long long steps)
{
    struct report_doc d;
    if (job_of(model, "mirrored", np, batch, steps, 0, "fashion-mnist", &d) < 0) return 0;
    double x = d.reports[0].throughput_samples_per_s;
    report_doc_release(&d);
    return x;
}

static double median3(const double x[3])
{
    double a = x[0], b = x[1], c = x[2];
    if (a > b) { double t = a; a = b; b = t; }
    if (b > c) b = c;
    return a > b ? a : b;
}

/* Training FLOPs of one sample as the MLP computes them: per dense layer
 * 2 in out forward, as many for the weight gradient and for the input
 * gradient, except the first layer's input gradient (its input is data). */
static double mlp_step_flops_per_sample(const char *model)
{
    struct err e = {0};
    struct workload *wl = NULL;
    if (workload_parse(model, &wl, &e) < 0) return 0;
    double flops = 0;
    for (int l = 0; l < wl->n_layers; l++) {
        double mac = (double)wl->layers[l].in * (double)wl->layers[l].out;
        flops += (l == 0 ? 4 : 6) * mac;
    }
    workload_free(wl);
    return flops;
}

/* The 1-minute load average (/proc/loadavg), -1 where there is none. */
static double load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double x = -1;
    if (f) {
        if (fscanf(f, "%lf", &x) != 1) x = -1;
        fclose(f);
    }
    return x;
}

static void bench_peer(void)
{
    char desc[256];
    const struct device *dev = open_cpu(desc, sizeof desc);
    if (!dev) return;
    double peak_gflops = gemm_gflops(dev, false, false, 2048, 2048, 2048);
    const char *python = python_with_torch();
    printf("strata (mirrored) against PyTorch (DDP over gloo for 2 ranks), one thread per process, "
           "Fashion-MNIST, seed 1, lr 0.02, momentum 0.9; samples/s, median of 3 alternating "
           "repeats\n  strata's %s; one-core GEMM peak %.1f GFLOP/s (2048^3 SGEMM)\n", desc,
           peak_gflops);
    if (!python)
        printf("  no python3 imports torch (install python3-torch, or point STRATA_PYTHON at "
               "one that does): strata alone\n");
    else {
        /* The ratio compares GEMM libraries as much as frameworks when their
         * peaks differ: Debian's PyTorch calls OpenBLAS, whose kernel depends
         * on whether it knows the CPU (or on OPENBLAS_CORETYPE). */
        struct peer_said said = peer_run(python, "--gemm");
        double theirs = said.gemm_gflops;
        printf("  PyTorch's one-core GEMM peak %.1f GFLOP/s (2048^3 torch.mm; %s): %.2fx strata's"
               "%s\n", theirs, *said.blas ? said.blas : "its BLAS unknown",
               peak_gflops > 0 ? theirs / peak_gflops : 0,
               theirs > 0 && theirs < 0.8 * peak_gflops
                   ? "; the large model's ratio below is mostly that of the libraries"
                   : "");
    }
    printf("  load average %.2f at the start: a busy machine makes every figure lower and "
           "noisier\n\n", load_average());
    printf("  %-26s %5s %5s %10s %10s %7s %8s\n", "model", "ranks", "batch", "strata",
           "pytorch", "ratio", "of peak");
    static const struct {
        const char *model;
        long long samples;   /* per run: one epoch of the small model, 1024 of the large */
    } models[] = {{"mlp:784-256-128-10", 60000}, {"mlp:784-4096-4096-4096-10", 1024}};
    char version[64] = "";
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        double flops = mlp_step_flops_per_sample(models[mi].model);
        for (int np = 1; np <= 2; np++)
            for (int batch = 64; batch <= 256; batch *= 4) {
                long long steps = models[mi].samples / batch;
                double ours[3] = {0}, theirs[3] = {0};
                for (int rep = 0; rep < 3; rep++) {
                    bool peer_first = python && rep % 2;   /* alternate who goes first */
                    if (peer_first)
                        theirs[rep] = peer_throughput(python, models[mi].model, np, batch, steps,
                                                      version, sizeof version);
                    ours[rep] = strata_throughput(models[mi].model, np, batch, steps);
                    if (python && !peer_first)
                        theirs[rep] = peer_throughput(python, models[mi].model, np, batch, steps,
                                                      version, sizeof version);
                }
                double s = median3(ours), t = median3(theirs);
                /* each rank has its own core, hence np cores' peak */
                double share = peak_gflops > 0 ? s * flops / (peak_gflops * 1e9 * np) : 0;
                printf("  %-26s %5d %5d %10.0f ", models[mi].model, np, batch, s);
                if (python) printf("%10.0f %6.2fx", t, t > 0 ? s / t : 0);
                else printf("%10s %7s", "-", "-");
                printf(" %8.2f", share);
                if (python && t > 0) {
                    double target = np == 1 ? 1.5 : 2.0;
                    printf("  %s", s / t >= target ? "meets" : "BELOW");
                    printf(" %.1fx", target);
                    if (np == 1) printf(", %s 0.8 of peak", share >= 0.8 ? "meets" : "BELOW");
                }
                putchar('\n');
                fflush(stdout);
            }
    }
    if (python) printf("  (PyTorch %s, %s)\n", version, python);
    printf("  of peak: samples/s x training FLOPs per sample (first layer's input gradient "
           "not counted) / (ranks x one-core peak)\n\n");
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";
    const char *const parts[] = {"", "gemm", "throughput", "accuracy", "peer"};
    bool is_known = false;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) is_known |= !strcmp(only, parts[i]);
    if (argc > 2 || !is_known) {
        fprintf(stderr, "real_speed: '%s' is not a part (use gemm, throughput, accuracy or "
                "peer, or nothing for all)\n", argc > 2 ? argv[2] : only);
        return 2;
    }
    if (!*only || !strcmp(only, "gemm")) bench_gemm();
    if (!*only || !strcmp(only, "throughput")) bench_throughput();
    if (!*only || !strcmp(only, "accuracy")) bench_accuracy();
    if (!*only || !strcmp(only, "peer")) bench_peer();
    return 0;
}
