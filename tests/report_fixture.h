/* A report for the tests of core/report*.c: every field set, each to a
 * value no other field has, so a field written under the wrong name, or
 * read into the wrong place, shows up. Header-only (static inline) because
 * every tests/test_*.c is its own executable. */
#ifndef STRATA_TESTS_REPORT_FIXTURE_H
#define STRATA_TESTS_REPORT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "../core/config.h"
#include "../core/json_doc.h"
#include "../core/report.h"

/* No config (r->config NULL), no failure: the tests add what they need. */
static inline void test_fill_report(struct report *r)
{
    report_init(r);
    r->mode = "sim";
    snprintf(r->strategy, sizeof r->strategy, "pipeline-1f1b");
    r->devices = 8;
    r->step_time_s.mean = 0.125;
    r->step_time_s.p50 = 0.0625;
    r->step_time_s.p99 = 0.25;
    r->throughput_samples_per_s = 4096.5;
    r->breakdown.compute = 0.5;
    r->breakdown.comm = 0.375;
    r->breakdown.idle = 0.125;
    r->bubble_fraction = 0.2;
    r->staleness.mean = 1.75;
    r->staleness.max = 4;
    r->staleness.n_histogram = 3;
    r->staleness.histogram = calloc(3, sizeof *r->staleness.histogram);
    r->staleness.histogram[0] = 10;
    r->staleness.histogram[1] = 20;
    r->staleness.histogram[2] = 30;
    r->memory_bytes_per_device.params = 1000;
    r->memory_bytes_per_device.grads = 2000;
    r->memory_bytes_per_device.optimizer = 3000;
    r->memory_bytes_per_device.activations = 4000;
    /* above 2^32, to show int64 survives (exact below 2^53) */
    r->memory_bytes_per_device.peak = 5000000000123LL;
    r->n_loss_curve = 2;
    r->loss_curve = calloc(2, sizeof *r->loss_curve);
    r->loss_curve[0] = (struct loss_point){.step = 0, .time_s = 0.0, .loss = 2.5};
    r->loss_curve[1] = (struct loss_point){.step = 100, .time_s = 12.5, .loss = 0.75};
    r->has_final = true;
    r->final.loss = 0.625;
    r->final.test_accuracy = 0.875;
    r->updates = 100;
    r->has_time_to_accuracy = true;
    r->time_to_accuracy_s = 42.5;
    r->n_per_rank = 2;
    r->per_rank = calloc(2, sizeof *r->per_rank);
    r->per_rank[0] = (struct rank_time){.rank = 0, .compute_s = 1.5, .comm_s = 0.5, .idle_s = 0.25,
                                        .steps = 7};
    r->per_rank[1] = (struct rank_time){.rank = 1, .compute_s = 1.25, .comm_s = 0.75, .idle_s = 0.125,
                                        .down_s = 0.5, .steps = 3};
    r->samples_applied = 2560;
    r->breakdown.down = 0.0625;
}

/* j read back into back and c_back, initialized here (the caller releases
 * both): report_from_json's 0, or its code with e's message. */
static inline int test_read_back(const cJSON *j, struct report *back, struct config *c_back,
                                 struct err *e)
{
    struct json_at at = {.file = "test", .e = e};
    report_init(back);
    config_init(c_back);
    return report_from_json(j, &at, back, c_back);
}

#endif
