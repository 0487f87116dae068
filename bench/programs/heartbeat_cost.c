/* The per-step heartbeat's cost (real/heartbeat.h), measured directly: a
 * run's step time is too noisy on a shared machine to show a few
 * microseconds (tools/bench_heartbeat.sh compares whole runs). Times
 * heartbeat_step with its file in a fresh directory on /dev/shm (as the
 * supervisor's run directory) and without one (an unsupervised rank), 3
 * rounds of 200000 steps each, and prints the medians and the cost as a
 * share of a step time given in microseconds (default 580: the tests'
 * smallest model, mirrored on 2 ranks, on a 2-core VM).
 *
 *   build/heartbeat_cost [STEP_US] */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../real/heartbeat.h"

#define STEPS 200000
#define ROUNDS 3

/* Seconds per heartbeat_step of one round. */
static double round_s(void)
{
    struct heartbeat *hb = NULL;
    struct err e = {0};
    if (heartbeat_open(0, "", &hb, &e) < 0) {
        fprintf(stderr, "heartbeat_cost: %s\n", e.msg);
        exit(1);
    }
    heartbeat_start(hb);
    heartbeat_step(hb, 0, 0);   /* warm-up: the file's page is in */
    double t0 = heartbeat_clock_s();
    for (int i = 1; i <= STEPS; i++) heartbeat_step(hb, i, 0);
    double s = (heartbeat_clock_s() - t0) / STEPS;
    heartbeat_close(hb);
    return s;
}

static double median_of_rounds(void)
{
    double t[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) t[k] = round_s();
    /* three values: the one neither smallest nor largest */
    double lo = t[0] < t[1] ? t[0] : t[1], hi = t[0] < t[1] ? t[1] : t[0];
    return t[2] < lo ? lo : t[2] > hi ? hi : t[2];
}

int main(int argc, char **argv)
{
    double step_us = argc > 1 ? atof(argv[1]) : 580;
    if (!(step_us > 0)) {
        fprintf(stderr, "usage: heartbeat_cost [STEP_US > 0]\n");
        return 2;
    }
    unsetenv(HEARTBEAT_DIR_ENV);
    unsetenv(HEARTBEAT_SUPERVISOR_ENV);
    unsetenv(HEARTBEAT_TEST_HANG_ENV);
    double without = median_of_rounds();
    char dir[] = "/dev/shm/strata-hb-cost-XXXXXX";
    char tmp_dir[] = "/tmp/strata-hb-cost-XXXXXX";
    char *made = mkdtemp(dir);
    if (!made) made = mkdtemp(tmp_dir);
    if (!made) {
        perror("heartbeat_cost: mkdtemp");
        return 1;
    }
    setenv(HEARTBEAT_DIR_ENV, made, 1);
    double with = median_of_rounds();
    char file[128];
    snprintf(file, sizeof file, "%s/rank-0", made);
    unlink(file);
    rmdir(made);
    double cost_us = (with - without) * 1e6;
    printf("heartbeat_step, median of %d rounds of %d: %.3f us with its file (%s), %.3f us "
           "without; the file costs %.3f us a step, %.2f%% of a %.0f us step\n", ROUNDS, STEPS,
           with * 1e6, made, without * 1e6, cost_us, 100 * cost_us / step_us, step_us);
    return 0;
}
