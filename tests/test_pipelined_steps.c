/* Tests of pipelined-steps (strategies/pipelined_steps.c) and the lag that
 * lets a plan keep steps in flight (core/plan.h "Steps in flight"): its
 * plans pass the checker, K = 1 is mirrored op for op and in time, K > 1
 * lags every all-reduce and the update by K-1 steps, holds K gradient
 * blocks, is faster than mirrored where communication is slow, and its
 * measured staleness never exceeds K-1 on any worker. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/plan_check.h"
#include "../core/plan_memory.h"
#include "../strategies/strategy.h"

#define DEFAULT_MLP "mlp:784-256-256-256-10"   /* 4 layers: the default --model */

/* labs/ethernet.profile: 50 us, 500 MB/s links, so that the default
 * model's all-reduce (1.3 MB of gradients) takes longer than its compute */
#define SLOW_NETWORK                                                                   \
    "name = slow network\nflops_per_s = 48000000000\nmem_bw_bytes_per_s = 10000000000\n" \
    "op_overhead_s = 2e-06\nmem_bytes = 8589934592\ndevices_per_node = 1\n"              \
    "intra_latency_s = 5e-05\nintra_bw_bytes_per_s = 500000000\n"                        \
    "inter_latency_s = 5e-05\ninter_bw_bytes_per_s = 500000000\n"

TEST_SUITE_WITH_TMP_DIR(pipelined_steps, .timeout = 120);

static struct config scenario(int devices, int microbatches, int inflight, double bucket_mb)
{
    struct config c = test_config(DEFAULT_MLP, devices, 256, microbatches);
    c.staleness = 0;
    c.bucket_mb = bucket_mb;
    c.dp = 1;
    c.inflight = inflight;
    return c;
}

Test(pipelined_steps, passes_the_checker_for_devices_microbatches_and_inflight)
{
    struct workload *wl = test_workload(DEFAULT_MLP);
    const int devices[] = {1, 2, 4, 8}, microbatches[] = {1, 4, 8, 16}, inflight[] = {1, 2, 3, 64};
    const double buckets[] = {0, 0.25, 25};
    for (size_t d = 0; d < 4; d++)
        for (size_t m = 0; m < 4; m++)
            for (size_t k = 0; k < 4; k++)
                for (size_t b = 0; b < 3; b++) {
                    struct config c = scenario(devices[d], microbatches[m], inflight[k], buckets[b]);
                    struct plan *p = test_build_plan("pipelined-steps", &c, wl);
                    char what[128];
                    snprintf(what, sizeof what, "%d devices, %d microbatches, K %d, bucket %g",
                             devices[d], microbatches[m], inflight[k], buckets[b]);
                    test_assert_plan_valid(p, what);
                    /* one device has nothing to overlap: the single-device step */
                    int slots = devices[d] == 1 ? 1 : inflight[k];
                    cr_assert_eq(p->n_grad_slots, slots, "%s: %d gradient blocks", what,
                                 p->n_grad_slots);
                    plan_free(p);
                }
    workload_free(wl);
}

/* K = 1: mirrored's plan, op for op (kinds, layers, groups, deps, no lag) */
Test(pipelined_steps, one_in_flight_is_mirrored_op_for_op)
{
    struct workload *wl = test_workload(DEFAULT_MLP);
    const int devices[] = {1, 2, 4, 8};
    for (size_t d = 0; d < 4; d++) {
        struct config c = scenario(devices[d], 1, 1, 0.25);
        struct plan *a = test_build_plan("pipelined-steps", &c, wl);
        struct plan *b = test_build_plan("mirrored", &c, wl);
        cr_assert_eq(a->n_grad_slots, 1);
        for (int r = 0; r < a->n_ranks; r++) {
            cr_assert_eq(a->ranks[r].ops.len, b->ranks[r].ops.len, "%d devices, rank %d",
                         devices[d], r);
            for (size_t i = 0; i < a->ranks[r].ops.len; i++) {
                const struct op *x = &a->ranks[r].ops.items[i], *y = &b->ranks[r].ops.items[i];
                cr_assert(x->kind == y->kind && x->lo == y->lo && x->hi == y->hi &&
                          x->group == y->group && x->n_deps == y->n_deps && x->lag == 0 &&
                          x->bytes == y->bytes && x->flops == y->flops,
                          "%d devices, rank %d op %zu differs from mirrored's", devices[d], r, i);
                for (int k = 0; k < x->n_deps; k++)
                    cr_assert_eq(plan_deps(a, r, (int)i)[k], plan_deps(b, r, (int)i)[k]);
            }
        }
        plan_free(a);
        plan_free(b);
    }
    workload_free(wl);
}

/* K > 1: every all-reduce works on step s-K+1's gradients from the step's
 * start (no deps), the UPDATE lags as much, follows the last all-reduce
 * and the whole backward; K gradient blocks per device in the memory model */
Test(pipelined_steps, inflight_k_lags_exchange_and_update_by_k_minus_1)
{
    struct workload *wl = test_workload(DEFAULT_MLP);
    for (int k = 2; k <= 4; k++) {
        struct config c = scenario(4, 1, k, 0.25);
        struct plan *p = test_build_plan("pipelined-steps", &c, wl);
        cr_assert_eq(p->n_grad_slots, k);
        for (int r = 0; r < p->n_workers; r++) {
            int n_reduce = 0, last_backward = -1, update = -1;
            for (size_t i = 0; i < p->ranks[r].ops.len; i++) {
                const struct op *o = &p->ranks[r].ops.items[i];
                if (o->kind == OP_ALLREDUCE) {
                    n_reduce++;
                    cr_assert_eq(o->lag, k - 1);
                    cr_assert_eq(o->n_deps, 0, "a lagged all-reduce waits for nothing of its step");
                } else if (o->kind == OP_BACKWARD) {
                    last_backward = (int)i;
                    cr_assert_eq(o->lag, 0);
                } else if (o->kind == OP_UPDATE) {
                    update = (int)i;
                    cr_assert_eq(o->lag, k - 1);
                }
            }
            /* the 0.25 MiB buckets of the default model: 4 (test_strategies.c) */
            cr_assert_eq(n_reduce, 4, "rank %d: %d all-reduces", r, n_reduce);
            cr_assert_gt(update, last_backward, "the update follows this step's backward");
        }
        struct plan_memory one, mem;
        struct config c1 = scenario(4, 1, 1, 0.25);
        struct plan *p1 = test_build_plan("pipelined-steps", &c1, wl);
        plan_memory_rank(p1, 0, &one);
        plan_memory_rank(p, 0, &mem);
        cr_assert_eq(mem.grads, k * one.grads, "K %d: gradients %lld, one block %lld", k,
                     (long long)mem.grads, (long long)one.grads);
        cr_assert_eq(mem.activations, one.activations, "one step's activations at a time");
        plan_free(p1);
        plan_free(p);
    }
    workload_free(wl);
}

/* The checker refuses a lag the plan has no gradient block for */
Test(pipelined_steps, checker_refuses_a_lag_beyond_the_gradient_blocks)
{
    struct workload *wl = test_workload(DEFAULT_MLP);
    struct config c = scenario(2, 1, 2, 25);
    struct plan *p = test_build_plan("pipelined-steps", &c, wl);
    p->n_grad_slots = 1;   /* as if the lag had been set by hand, not by plan_set_lag */
    struct err e = {0};
    struct plan_verdict v;
    cr_assert_eq(plan_check(p, &v, &e), 0, "%s", e.msg);
    cr_assert_not(v.is_valid);
    cr_assert(strstr(v.defects[0].msg, "lag 1"), "%s", v.defects[0].msg);
    plan_free(p);
    workload_free(wl);
}

/* ---- simulated runs (the built binary) ------------------------------------ */

static cJSON *sim_json(const char *strategy, const char *inflight, const char *cluster,
                       const char *name, const char *trace)
{
    const char *json = test_tmp_path(name);
    const char *args[32] = {"sim",     "--strategy", strategy, "--inflight", inflight,
                            "--devices", "4",        "--cluster", cluster, "--steps", "12",
                            "--json",  json};
    int n = 13;
    if (trace) {
        args[n++] = "--trace";
        args[n++] = trace;
    }
    args[n] = NULL;
    struct run r = run_strata(args);
    cr_assert_eq(r.status, 0, "strata sim --strategy %s --inflight %s: %s", strategy, inflight,
                 r.err);
    run_free(&r);
    return read_json(json);
}

static double step_mean_s(const cJSON *report)
{
    return num_at(report, "step_time_s", "mean");
}

Test(pipelined_steps, one_in_flight_simulates_as_mirrored)
{
    const char *clusters[] = {"cpu-loopback", test_tmp_file("slow.profile", SLOW_NETWORK)};
    for (int k = 0; k < 2; k++) {
        cJSON *a = sim_json("pipelined-steps", "1", clusters[k], "a.json", NULL);
        cJSON *b = sim_json("mirrored", "1", clusters[k], "b.json", NULL);
        cr_assert_eq(step_mean_s(a), step_mean_s(b), "%s: %g s against mirrored's %g s",
                     clusters[k], step_mean_s(a), step_mean_s(b));
        cr_assert_eq(num_at(a, "staleness", "max"), 0);
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
}

/* The largest staleness of any lagged UPDATE of each rank in a Chrome trace */
static void max_staleness_per_rank(const char *trace, int *max, int n_ranks)
{
    cJSON *t = read_json(trace);
    const cJSON *events = cJSON_IsArray(t) ? t : cJSON_GetObjectItem(t, "traceEvents");
    cr_assert(cJSON_IsArray(events));
    for (int r = 0; r < n_ranks; r++) max[r] = -1;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events) {
        const cJSON *args = cJSON_GetObjectItem(ev, "args");
        if (!args || !cJSON_GetObjectItem(args, "version_applied")) continue;
        int rank = (int)num_at(ev, "pid", NULL);
        cr_assert(rank >= 0 && rank < n_ranks);
        int k = (int)(num_at(args, "version_applied", NULL) - num_at(args, "version_read", NULL));
        if (k > max[rank]) max[rank] = k;
    }
    cJSON_Delete(t);
}

Test(pipelined_steps, on_a_slow_network_k_steps_in_flight_beat_mirrored_with_staleness_k_minus_1)
{
    const char *slow = test_tmp_file("slow.profile", SLOW_NETWORK);
    cJSON *base = sim_json("mirrored", "1", slow, "mirrored.json", NULL);
    const char *ks[] = {"2", "3"};
    for (int i = 0; i < 2; i++) {
        int k = atoi(ks[i]);
        const char *trace = test_tmp_path("trace.json");
        cJSON *r = sim_json("pipelined-steps", ks[i], slow, "k.json", trace);
        /* compute no longer waits for the exchange: the step shrinks by the
         * compute the all-reduce hides (measured 7.1 ms -> 4.9 ms, K = 2) */
        cr_assert_lt(step_mean_s(r), 0.9 * step_mean_s(base), "K %d: %g s, mirrored %g s", k,
                     step_mean_s(r), step_mean_s(base));
        cr_assert_eq(num_at(r, "staleness", "max"), k - 1);
        int max[4];
        max_staleness_per_rank(trace, max, 4);
        for (int w = 0; w < 4; w++)
            cr_assert_eq(max[w], k - 1, "K %d, worker %d: staleness up to %d", k, w, max[w]);
        cJSON_Delete(r);
    }
    cJSON_Delete(base);
}

/* A calibrated profile of a 2-core machine (strata calibrate writes
 * cores_per_node and timeshare_slowdown): its ranks time-share the cores */
#define TIME_SHARED                                                                       \
    "name = calibrated\nflops_per_s = 137e9\nmem_bw_bytes_per_s = 47e9\n"                \
    "op_overhead_s = 2.8e-07\nmem_bytes = 12638251008\ndevices_per_node = 1024\n"        \
    "intra_latency_s = 5e-07\nintra_bw_bytes_per_s = 8.4e9\ninter_latency_s = 5e-07\n"   \
    "inter_bw_bytes_per_s = 8.4e9\ncores_per_node = 2\n"                                  \
    "timeshare_slowdown = 0.93,1,1.43,1.75\n"

/* On time-shared cores a rank's compute op takes the slowdown of the ranks
 * computing on its node. The UPDATEs that step 0 skips (their gradients
 * are a step away) freed a core they never took: the node counted one rank
 * too few from then on, and with one rank computing, none (a slowdown of
 * 0), so every compute op took no time: 2.8% compute and a 0.387 ms step
 * where mirrored's is 1.486 ms (strata validate measured 1.26 ms). The
 * same ops now compute as long as mirrored's. */
Test(pipelined_steps, on_time_shared_cores_its_compute_takes_as_long_as_mirrored)
{
    const char *shared = test_tmp_file("shared.profile", TIME_SHARED);
    cJSON *base = sim_json("mirrored", "1", shared, "mirrored.json", NULL);
    cJSON *r = sim_json("pipelined-steps", "2", shared, "k2.json", NULL);
    const double base_s = num_at(base, "breakdown", "compute") * step_mean_s(base),
                 k2_s = num_at(r, "breakdown", "compute") * step_mean_s(r);
    cr_expect(k2_s > 0.8 * base_s && k2_s < 1.25 * base_s,
              "compute %g s a step in flight, mirrored's %g s", k2_s, base_s);
    cJSON_Delete(base);
    cJSON_Delete(r);
}

/* The arithmetic: K = 1 trains exactly as mirrored; K = 2 applies each
 * gradient a step late, which changes the loss, and still trains */
Test(pipelined_steps, numerics_one_in_flight_equal_mirrored_two_differ_and_train)
{
    const char *json = test_tmp_path("n.json");
    double final_loss[3];
    const char *runs[3][2] = {{"mirrored", "1"}, {"pipelined-steps", "1"}, {"pipelined-steps", "2"}};
    for (int i = 0; i < 3; i++) {
        struct run r = RUN("sim", "--strategy", runs[i][0], "--inflight", runs[i][1], "--numerics",
                           "--data", "synthetic", "--model", "mlp:784-32-10", "--devices", "2",
                           "--steps", "30", "--json", json);
        cr_assert_eq(r.status, 0, "%s", r.err);
        run_free(&r);
        cJSON *rep = read_json(json);
        final_loss[i] = num_at(rep, "final", "loss");
        const cJSON *curve = cJSON_GetObjectItem(rep, "loss_curve");
        double first = cJSON_GetArrayItem(cJSON_GetArrayItem(curve, 0), 2)->valuedouble;
        double last = cJSON_GetArrayItem(cJSON_GetArrayItem(curve, cJSON_GetArraySize(curve) - 1),
                                         2)->valuedouble;
        cr_assert(isfinite(last) && last < first, "%s K %s: loss %g -> %g", runs[i][0],
                  runs[i][1], first, last);
        cJSON_Delete(rep);
    }
    cr_assert_eq(final_loss[1], final_loss[0], "K 1: %.9g, mirrored %.9g", final_loss[1],
                 final_loss[0]);
    cr_assert_neq(final_loss[2], final_loss[0], "K 2 applied the gradients on time");
}

Test(pipelined_steps, bad_inflight_is_refused_naming_the_option)
{
    expect_refused(RUN("sim", "--strategy", "pipelined-steps", "--inflight", "0"), "--inflight",
                   NULL);
    expect_refused(RUN("sim", "--strategy", "pipelined-steps", "--inflight", "65"), "--inflight",
                   "64");
}

/* --dp is refused by the strategies that do not read it (registry.c
 * check_unread), naming those that do; compare still runs the ones that
 * take it, its baseline being one device. --inflight, which only tunes
 * pipelined-steps, is ignored by the others, as --staleness is. */
Test(pipelined_steps, dp_is_refused_where_not_read_and_inflight_ignored)
{
    expect_refused(RUN("sim", "--strategy", "mirrored", "--dp", "2"), "--dp 2",
                   "only model, pipeline-gpipe, pipeline-1f1b");
    expect_refused(RUN("sim", "--strategy", "pipeline-zb", "--dp", "2", "--devices", "4"),
                   "--dp 2", "pipeline-zb does not take");
    struct run r = RUN("compare", "--strategies", "mirrored,pipeline-1f1b", "--dp", "2",
                       "--devices", "4");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\npipeline-1f1b "), "%s", r.out);
    cr_assert(strstr(r.out, "not run: mirrored: --dp 2"), "%s", r.out);
    run_free(&r);
    r = RUN("compare", "--strategies", "mirrored,pipelined-steps", "--inflight", "3");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\nmirrored ") && strstr(r.out, "\npipelined-steps "), "%s", r.out);
    cr_assert_null(strstr(r.out, "not run"), "%s", r.out);
    run_free(&r);
}
