/* The simulator's speed: events per second and wall time on the three large
 * scenarios of issue 4 (targets on a 2-core machine: each under 2 s, over
 * 10 million events per second). Run by hand, not by ctest:
 *
 *   build/sim_speed            all three
 *   build/sim_speed mirrored   one of them (mirrored, ps-async, pipeline-1f1b)
 *
 * Each run is the whole of `strata sim` minus printing: plan, cluster, events,
 * analysis. Wall time from CLOCK_MONOTONIC around run_simulate. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../bench/run.h"

struct scenario {
    const char *name;
    const char *strategy;
    const char *model;
    long long devices, batch, microbatches, steps;
    const char *what;
};

static const struct scenario scenarios[] = {
    {"mirrored", "mirrored", "fmnist-deep", 4096, 4096, 1, 1000, "4,096 devices x 1,000 steps"},
    /* 1,024 workers x 98 steps = 100,352 pushes */
    {"ps-async", "ps-async", "fmnist-deep", 1024, 1024, 1, 98, "1,024 workers x 100,352 pushes"},
    {"pipeline-1f1b", "pipeline-1f1b", "transformer:layers=62,hidden=1024,seq=1024,vocab=32000",
     64, 256, 256, 100, "64 stages x 256 microbatches x 100 steps"},
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run_one(const struct scenario *sc)
{
    struct err e = {0};
    struct config cfg;
    config_init(&cfg);
    snprintf(cfg.model, sizeof cfg.model, "%s", sc->model);
    cfg.devices = sc->devices;
    cfg.batch = sc->batch;
    cfg.microbatches = sc->microbatches;
    cfg.steps = sc->steps;
    struct workload *wl = NULL;
    const struct strategy *st = strategy_find(sc->strategy, &e);
    if (!st || workload_parse(cfg.model, &wl, &e) < 0) {
        fprintf(stderr, "sim_speed: %s\n", e.msg);
        return 1;
    }
    struct sim_run run;
    double t0 = now_s();
    int rc = run_simulate(&cfg, st, wl, 0, NULL, &run, &e);
    double wall_s = now_s() - t0;
    if (rc < 0) {
        fprintf(stderr, "sim_speed: %s: %s\n", sc->name, e.msg);
    } else {
        double rate = (double)run.result.n_events / wall_s;
        printf("%-14s %-42s %12llu events %8.3f s %8.2f M events/s   %s\n", sc->name, sc->what,
               (unsigned long long)run.result.n_events, wall_s, rate / 1e6,
               wall_s < 2 && rate > 1e7 ? "meets target" : "MISSES target (< 2 s, > 10 M/s)");
    }
    run_release(&run);
    workload_free(wl);
    return rc < 0;
}

int main(int argc, char **argv)
{
    int failed = 0, ran = 0;
    printf("simulator speed on cluster h100-nvlink-ib (targets: under 2 s, over 10 M events/s)\n");
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (argc > 1 && strcmp(argv[1], scenarios[i].name)) continue;
        failed |= run_one(&scenarios[i]);
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "sim_speed: no scenario '%s' (mirrored, ps-async, pipeline-1f1b)\n", argv[1]);
        return 2;
    }
    return failed;
}
