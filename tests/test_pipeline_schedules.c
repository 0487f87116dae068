/* Tests of strategies/pipeline_interleaved.c and strategies/pipeline_zb.c:
 * their plans pass the checker at every size that fits and are refused,
 * naming the option, where none does; their bubbles on the `ideal` cluster
 * (unit costs: F = 1 a layer, B = W = 1, BACKWARD 2) are the closed forms of
 * their papers; their activations are what their schedules hold; and the
 * simulator's report agrees with the unit-cost run. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/plan_check.h"
#include "../core/plan_memory.h"
#include "../strategies/strategy.h"

/* 17 layers: 8 devices of 2 chunks fit */
#define DEEP_MLP "mlp:64-64-64-64-64-64-64-64-64-64-64-64-64-64-64-64-64-10"

/* An mlp of n layers 64 wide: equal stages and chunks at unit cost and in
 * bytes (each layer saves (64 + 64) x 4 bytes a sample). */
static const char *uniform_mlp(int n_layers, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "mlp:64");
    for (int l = 0; l < n_layers; l++) used += (size_t)snprintf(buf + used, size - used, "-64");
    return buf;
}

static struct config scenario(const char *model, int devices, int batch, int microbatches,
                              int chunks)
{
    struct config c = test_config(model, devices, batch, microbatches);
    c.chunks = chunks;
    c.staleness = 0;
    return c;
}

static const struct strategy *find(const char *name)
{
    return test_strategy(name);
}

static void assert_refused(const char *name, const struct config *c, const char *needle,
                           const char *needle_too)
{
    struct workload *wl = test_workload(c->model);
    struct err e = {0};
    struct plan *p = (struct plan *)1;
    int rc = strategy_build(find(name), c, wl, &p, &e);
    cr_assert_null(p, "%s: a refused build leaves no plan", name);
    cr_assert_eq(rc, ERR_INPUT, "%s: %d '%s'", name, rc, e.msg);
    cr_assert(strstr(e.msg, needle) && strstr(e.msg, needle_too), "%s: '%s' lacks '%s' or '%s'",
              name, e.msg, needle, needle_too);
    workload_free(wl);
}

/* A fresh test_tmp_dir per test, for the simulator's reports. */
TEST_SUITE_WITH_TMP_DIR(pipelines, .timeout = 120);

/* ---- every size that fits passes the checker ---------------------------- */

Test(pipelines, both_pass_the_checker_for_devices_1_to_8_and_microbatches_1_to_16)
{
    const int devices[] = {1, 2, 4, 8}, microbatches[] = {1, 4, 8, 16};
    struct workload *wl = test_workload(DEEP_MLP);
    int n_valid = 0, n_refused = 0;
    for (int d = 0; d < 4; d++)
        for (int k = 0; k < 4; k++) {
            struct config c = scenario(DEEP_MLP, devices[d], 256, microbatches[k], 2);
            char what[128];
            snprintf(what, sizeof what, "%d devices, %d microbatches", devices[d],
                     microbatches[k]);
            struct plan *zb = test_build_plan("pipeline-zb", &c, wl);
            test_assert_plan_valid(zb, what);
            plan_free(zb);
            n_valid++;
            /* interleaved sends microbatches round in groups of p */
            if (devices[d] > 1 && microbatches[k] % devices[d]) {
                assert_refused("pipeline-interleaved", &c, "--microbatches", "--devices");
                n_refused++;
                continue;
            }
            struct plan *il = test_build_plan("pipeline-interleaved", &c, wl);
            test_assert_plan_valid(il, what);
            plan_free(il);
            n_valid++;
        }
    /* refused: m = 1 on 2, 4, 8 devices; m = 4 on 8 */
    cr_assert_eq(n_refused, 4);
    cr_assert_eq(n_valid, 16 + 12);
    workload_free(wl);
}

Test(pipelines, interleaved_passes_the_checker_with_more_chunks_and_uneven_layers)
{
    /* 17 layers into 2 x 3 = 6 or 4 x 4 = 16 chunks, uneven; a batch that
     * does not divide */
    struct workload *wl = test_workload(DEEP_MLP);
    const int cases[][3] = {{2, 6, 3}, {4, 8, 4}, {2, 2, 8}, {4, 12, 3}, {3, 9, 5}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct config c = scenario(DEEP_MLP, cases[k][0], 37, cases[k][1], cases[k][2]);
        struct plan *p = test_build_plan("pipeline-interleaved", &c, wl);
        char what[96];
        snprintf(what, sizeof what, "p=%d m=%d V=%d", cases[k][0], cases[k][1], cases[k][2]);
        test_assert_plan_valid(p, what);
        plan_free(p);
    }
    workload_free(wl);
}

Test(pipelines, scenarios_that_do_not_fit_are_refused_naming_the_option)
{
    char model[256];
    /* 8 layers: 4 devices x 3 chunks need 12 */
    struct config c = scenario(uniform_mlp(8, model, sizeof model), 4, 64, 8, 3);
    assert_refused("pipeline-interleaved", &c, "--chunks", "8 layers");
    c = scenario(model, 4, 64, 6, 2);
    assert_refused("pipeline-interleaved", &c, "--microbatches 6", "try --microbatches 8");
    c = scenario(model, 9, 64, 9, 1);
    assert_refused("pipeline-zb", &c, "--devices 9", "8 layers");
    c = scenario(model, 4, 64, 65, 2);
    assert_refused("pipeline-zb", &c, "--microbatches", "--batch");
}

/* ---- bubbles on `ideal`: the papers' closed forms ----------------------- */

/* Interleaved 1F1B with V chunks of one layer each (V p layers): the bubble
 * is (p-1)/(V m + p-1) of the step (Narayanan et al. 2021, eq. 2, over the
 * whole step rather than the ideal time: see ARCHITECTURE.md). */
Test(pipelines, interleaved_bubble_matches_the_closed_form)
{
    const int cases[][3] = {{4, 8, 2}, {8, 16, 2}, {4, 8, 3}, {2, 4, 2}, {4, 4, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int p = cases[k][0], m = cases[k][1], v = cases[k][2];
        char model[256];
        struct workload *wl = test_workload(uniform_mlp(v * p, model, sizeof model));
        struct config c = scenario(model, p, 16 * m, m, v);
        struct plan *il = test_build_plan("pipeline-interleaved", &c, wl);
        double got = test_unit_bubble(il), want = (double)(p - 1) / (v * m + p - 1);
        cr_expect(fabs(got - want) <= 1e-12, "p=%d m=%d V=%d: bubble %.15f, closed form %.15f",
                  p, m, v, got, want);
        plan_free(il);
        workload_free(wl);
    }
}

/* ZB-H1 with p one-layer stages: 1F1B's (p-1)(F+B+W) idle becomes
 * (p-1)(F+B-W) (Qi et al. 2024, section 3.1), a share (p-1)/(3m+p-1) of the
 * step with F = B = W; 1F1B's share is (p-1)/(m+p-1), three times the idle. */
Test(pipelines, zero_bubble_bubble_matches_the_closed_form_a_third_of_1f1b)
{
    const int cases[][2] = {{4, 8}, {8, 16}, {2, 4}, {4, 4}, {8, 8}, {4, 5}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int p = cases[k][0], m = cases[k][1];
        char model[256];
        struct workload *wl = test_workload(uniform_mlp(p, model, sizeof model));
        struct config c = scenario(model, p, 16 * m, m, 2);
        struct plan *zb = test_build_plan("pipeline-zb", &c, wl);
        struct plan *ofob = test_build_plan("pipeline-1f1b", &c, wl);
        double got = test_unit_bubble(zb), want = (double)(p - 1) / (3 * m + p - 1);
        cr_expect(fabs(got - want) <= 1e-12, "p=%d m=%d: bubble %.15f, closed form %.15f", p, m,
                  got, want);
        /* idle units: the bubble times the step, 3m units of work a stage */
        double idle_zb = 3.0 * m * got / (1 - got), b = test_unit_bubble(ofob);
        double idle_1f1b = 3.0 * m * b / (1 - b);
        cr_expect(fabs(idle_1f1b - 3 * idle_zb) <= 1e-9, "p=%d m=%d: idle %g vs 1F1B's %g", p,
                  m, idle_zb, idle_1f1b);
        plan_free(zb);
        plan_free(ofob);
        workload_free(wl);
    }
}

/* The simulator on `ideal` reports what the unit-cost run says: the same
 * bubble through sim/'s executor and core/analysis. */
Test(pipelines, the_simulated_report_on_ideal_has_the_closed_form_bubbles)
{
    const struct {
        const char *strategy, *devices, *microbatches, *model;
        double want;
    } cases[] = {
        {"pipeline-zb", "4", "8", "mlp:64-64-64-64-64", 3.0 / 27},
        {"pipeline-interleaved", "4", "8", "mlp:64-64-64-64-64-64-64-64-64", 3.0 / 19},
    };
    for (size_t k = 0; k < 2; k++) {
        const char *json = test_tmp_path("report.json");
        struct run r = run_strata((const char *const[]){
            "sim", "--strategy", cases[k].strategy, "--cluster", "ideal", "--devices",
            cases[k].devices, "--microbatches", cases[k].microbatches, "--model", cases[k].model,
            "--batch", "64", "--steps", "2", "--json", json, NULL});
        cr_assert_eq(r.status, 0, "%s: %s", cases[k].strategy, r.err);
        run_free(&r);
        cJSON *doc = read_json(json);
        double got = cJSON_GetObjectItem(doc, "bubble_fraction")->valuedouble;
        cr_expect(fabs(got - cases[k].want) <= 1e-9, "%s: reported bubble %.12f, closed form %.12f",
                  cases[k].strategy, got, cases[k].want);
        cJSON_Delete(doc);
    }
}

/* ---- what the schedules hold and send ----------------------------------- */

/* Stage i of 1F1B holds min(p-i, m) microbatches' activations; of ZB-H1
 * min(p, m), since it owes up to i W's and a W frees them: with equal
 * stages, the device that holds most holds what 1F1B's first stage holds.
 * A microbatch of n samples through one 64-wide layer saves 512 n bytes. */
Test(pipelines, zero_bubble_peak_activations_equal_1f1b)
{
    const int cases[][2] = {{4, 8}, {8, 16}, {4, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int p = cases[k][0], m = cases[k][1], n = 8;
        char model[256];
        struct workload *wl = test_workload(uniform_mlp(p, model, sizeof model));
        struct config c = scenario(model, p, n * m, m, 2);
        struct plan *zb = test_build_plan("pipeline-zb", &c, wl);
        struct plan *ofob = test_build_plan("pipeline-1f1b", &c, wl);
        for (int i = 0; i < p; i++) {
            struct plan_memory mz, mo;
            plan_memory_rank(zb, i, &mz);
            plan_memory_rank(ofob, i, &mo);
            int held_zb = p < m ? p : m, held_1f1b = p - i < m ? p - i : m;
            cr_expect_eq(mz.activations, (int64_t)held_zb * 512 * n, "zb p=%d m=%d stage %d",
                         p, m, i);
            cr_expect_eq(mo.activations, (int64_t)held_1f1b * 512 * n, "1f1b stage %d", i);
        }
        struct plan_memory peak_zb, peak_1f1b;
        plan_memory_max(zb, &peak_zb);
        plan_memory_max(ofob, &peak_1f1b);
        cr_expect_eq(peak_zb.activations, peak_1f1b.activations, "p=%d m=%d", p, m);
        cr_expect_eq(peak_zb.peak, peak_1f1b.peak, "p=%d m=%d", p, m);
        plan_free(zb);
        plan_free(ofob);
        workload_free(wl);
    }
}

/* Device d of interleaved 1F1B runs a warm-up of w = 2(p-d-1) + (V-1)p
 * forward units, then one more before its first backward: it holds
 * min(w + 1, V m) chunks' activations, each one 64-wide layer here. */
Test(pipelines, interleaved_peak_activations_follow_the_warm_up)
{
    const int cases[][3] = {{4, 8, 2}, {8, 16, 2}, {4, 4, 2}, {2, 4, 3}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int p = cases[k][0], m = cases[k][1], v = cases[k][2], n = 4;
        char model[256];
        struct workload *wl = test_workload(uniform_mlp(v * p, model, sizeof model));
        struct config c = scenario(model, p, n * m, m, v);
        struct plan *il = test_build_plan("pipeline-interleaved", &c, wl);
        for (int d = 0; d < p; d++) {
            struct plan_memory mem;
            plan_memory_rank(il, d, &mem);
            int held = 2 * (p - d - 1) + (v - 1) * p + 1;
            if (held > v * m) held = v * m;
            cr_expect_eq(mem.activations, (int64_t)held * 512 * n,
                         "p=%d m=%d V=%d device %d: %lld bytes, %d chunks' worth", p, m, v, d,
                         (long long)mem.activations, held);
            /* parameters: its V chunks of one layer, 64 x 64 + 64 each */
            cr_expect_eq(mem.params, (int64_t)v * (64 * 64 + 64) * 4, "device %d", d);
        }
        plan_free(il);
        workload_free(wl);
    }
}

/* Each microbatch crosses V p - 1 chunk boundaries forward and back instead
 * of 1F1B's p - 1: about V times the point-to-point traffic. */
Test(pipelines, interleaved_sends_vp_minus_1_boundaries_per_microbatch)
{
    int p = 4, m = 8, v = 2, n = 8;
    char model[256];
    struct workload *wl = test_workload(uniform_mlp(v * p, model, sizeof model));
    struct config c = scenario(model, p, n * m, m, v);
    struct plan *il = test_build_plan("pipeline-interleaved", &c, wl);
    int64_t per_boundary = (int64_t)n * 64 * 4;   /* n samples of 64 floats */
    cr_expect_eq(plan_comm_bytes(il), 2 * m * (int64_t)(v * p - 1) * per_boundary);
    plan_free(il);
    workload_free(wl);
}

/* ZB-H1's program of stage i: 1F1B's forwards and input halves in 1F1B's
 * order, the W of microbatch j right after the B of microbatch j + i, each
 * W after its B, and B + W the FLOPs of the whole backward. */
Test(pipelines, zero_bubble_defers_stage_i_weight_halves_by_i)
{
    int p = 4, m = 8;
    char model[256];
    struct workload *wl = test_workload(uniform_mlp(p, model, sizeof model));
    struct config c = scenario(model, p, 8 * m, m, 2);
    struct plan *zb = test_build_plan("pipeline-zb", &c, wl);
    double bwd = workload_bwd_flops(wl, 1, 2) * 8;
    for (int i = 0; i < p; i++) {
        const struct plan_rank *pr = &zb->ranks[i];
        int n_b = 0, n_w = 0;
        double b_flops = 0, w_flops = 0;
        for (size_t k = 0; k < pr->ops.len; k++) {
            const struct op *o = &pr->ops.items[k];
            if (o->kind == OP_BACKWARD) cr_assert_fail("stage %d runs a whole BACKWARD", i);
            if (o->kind == OP_BACKWARD_INPUT) {
                cr_expect_eq(o->mb, n_b, "stage %d: B's in microbatch order", i);
                n_b++;
                b_flops = o->flops;
            }
            if (o->kind == OP_BACKWARD_WEIGHT) {
                int owed = n_b - n_w;
                cr_expect(owed == i + 1 || n_b == m, "stage %d: W of mb %d after %d B's", i,
                          o->mb, n_b);
                cr_expect_eq(o->mb, n_w, "stage %d: W's in microbatch order", i);
                const struct op *dep = &pr->ops.items[plan_deps(zb, i, (int)k)[0]];
                cr_expect(dep->kind == OP_BACKWARD_INPUT && dep->mb == o->mb,
                          "stage %d: W of mb %d waits for its B", i, o->mb);
                n_w++;
                w_flops = o->flops;
            }
        }
        cr_expect(n_b == m && n_w == m, "stage %d: %d B's, %d W's", i, n_b, n_w);
        if (i > 0) cr_expect(fabs(b_flops + w_flops - bwd) <= 1e-9 * bwd, "stage %d", i);
    }
    plan_free(zb);
    workload_free(wl);
}
