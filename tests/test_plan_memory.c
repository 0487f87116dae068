/* Tests for core/plan_memory.c: memory per device of real strategies' plans,
 * against byte counts worked out by hand from the workload's layer fields. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <string.h>

#include "../core/plan_memory.h"
#include "../strategies/strategy.h"

/* Four dense 64->64 layers, fp32: per layer 64*64 + 64 = 4160 parameters
 * and (in + out) * 4 = 512 saved bytes per sample (workload.c). */
#define UNIFORM_MLP "mlp:64-64-64-64-64"
#define LAYER_PARAMS 4160
#define LAYER_SAVED 512

static struct workload *wl;

static void setup(void)
{
    wl = test_workload(UNIFORM_MLP);
    /* the constants above are what the workload says */
    cr_assert_eq(wl->n_layers, 4);
    cr_assert_eq(wl->elem_bytes, 4);
    for (int l = 0; l < 4; l++) {
        cr_assert_eq(wl->layers[l].params, LAYER_PARAMS);
        cr_assert_eq(wl->layers[l].saved_bytes_per_sample, LAYER_SAVED);
    }
}

static void teardown(void)
{
    workload_free(wl);
}

TestSuite(plan_memory, .init = setup, .fini = teardown);

static struct plan *build_on(const struct workload *w, const char *strategy, int devices,
                             int batch, int microbatches)
{
    struct config c;
    config_init(&c);
    c.devices = devices;
    c.batch = batch;
    c.microbatches = microbatches;
    return test_build_plan(strategy, &c, w);
}

static struct plan *build(const char *strategy, int devices, int batch, int microbatches)
{
    return build_on(wl, strategy, devices, batch, microbatches);
}

static void assert_memory(const struct plan_memory *m, int64_t params, int64_t optimizer,
                          int64_t activations, const char *what)
{
    cr_assert_eq(m->params, params, "%s: params %lld, want %lld", what, (long long)m->params,
                 (long long)params);
    cr_assert_eq(m->grads, params, "%s: grads %lld, want %lld", what, (long long)m->grads,
                 (long long)params);
    cr_assert_eq(m->optimizer, optimizer, "%s: optimizer %lld, want %lld", what,
                 (long long)m->optimizer, (long long)optimizer);
    cr_assert_eq(m->activations, activations, "%s: activations %lld, want %lld", what,
                 (long long)m->activations, (long long)activations);
    cr_assert_eq(m->peak, 2 * params + optimizer + activations, "%s: peak", what);
}

/* GPipe, 4 stages of one layer, M = 8 microbatches of 32/8 = 4 samples:
 * every forward runs before any backward, so each stage holds all 8. */
Test(plan_memory, gpipe_holds_every_microbatch)
{
    struct plan *p = build("pipeline-gpipe", 4, 32, 8);
    const int64_t stage_params = LAYER_PARAMS * 4;   /* one layer, 4 bytes each */
    for (int i = 0; i < 4; i++) {
        struct plan_memory m;
        plan_memory_rank(p, i, &m);
        assert_memory(&m, stage_params, stage_params, 8 * 4 * LAYER_SAVED, "gpipe stage");
    }
    plan_free(p);
}

/* 1F1B: stage i runs min(p-1-i, M) warm-up forwards and one more before its
 * first backward, so it holds min(p - i, M) = 4 - i microbatches of 4. */
Test(plan_memory, one_f_one_b_holds_at_most_the_stages)
{
    struct plan *p = build("pipeline-1f1b", 4, 32, 8);
    const int64_t stage_params = LAYER_PARAMS * 4;
    for (int i = 0; i < 4; i++) {
        struct plan_memory m;
        plan_memory_rank(p, i, &m);
        assert_memory(&m, stage_params, stage_params, (int64_t)(4 - i) * 4 * LAYER_SAVED,
                      "1f1b stage");
    }
    /* the device that must hold the most: stage 0 */
    struct plan_memory max, first;
    plan_memory_max(p, &max);
    plan_memory_rank(p, 0, &first);
    cr_assert_eq(memcmp(&max, &first, sizeof max), 0);
    cr_assert_eq(max.activations, 4 * 4 * LAYER_SAVED);
    plan_free(p);
}

/* With fewer microbatches than stages, 1F1B holds all M, like GPipe. */
Test(plan_memory, one_f_one_b_with_few_microbatches_holds_them_all)
{
    struct plan *p = build("pipeline-1f1b", 4, 32, 2);   /* 2 microbatches of 16 */
    struct plan_memory m;
    plan_memory_rank(p, 0, &m);
    cr_assert_eq(m.activations, 2 * 16 * LAYER_SAVED);
    plan_free(p);
}

/* Unequal microbatches (30 = 6 x 4 + 2 x 3) count their own samples: GPipe's
 * stage 0 holds all 30 samples. */
Test(plan_memory, activations_count_each_microbatch_samples)
{
    struct plan *p = build("pipeline-gpipe", 4, 30, 8);
    struct plan_memory m;
    plan_memory_rank(p, 0, &m);
    cr_assert_eq(m.activations, 30 * LAYER_SAVED);
    plan_free(p);
}

/* mirrored: a full replica holding one forward of its 16/2 = 8 samples
 * through all 4 layers, whether the backward comes as one op or in
 * per-layer buckets. */
Test(plan_memory, mirrored_holds_one_batch_of_the_whole_model)
{
    const int64_t params = 4 * LAYER_PARAMS * 4;
    struct plan *p = build("mirrored", 2, 16, 1);
    struct plan_memory m;
    plan_memory_max(p, &m);
    assert_memory(&m, params, params, 8 * 4 * LAYER_SAVED, "mirrored");
    plan_free(p);

    struct err e = {0};
    struct config c;
    config_init(&c);
    c.devices = 2;
    c.batch = 16;
    c.bucket_mb = 1e-3;   /* 1048 bytes: below one layer, so one bucket per layer */
    cr_assert_eq(strategy_build(strategy_find("mirrored", &e), &c, wl, &p, &e), 0, "%s", e.msg);
    int n_backward = 0;
    for (size_t i = 0; i < p->ranks[0].ops.len; i++)
        n_backward += p->ranks[0].ops.items[i].kind == OP_BACKWARD;
    cr_assert_eq(n_backward, 4);
    plan_memory_rank(p, 1, &m);
    assert_memory(&m, params, params, 8 * 4 * LAYER_SAVED, "mirrored, bucketed");
    plan_free(p);
}

/* Parameter-server workers keep no optimizer state (the servers do), and
 * servers are no devices: zeros. */
Test(plan_memory, ps_workers_keep_no_optimizer_state)
{
    const char *names[] = {"ps-sync", "ps-async", "ps-ssp"};
    const int64_t params = 4 * LAYER_PARAMS * 4;
    for (size_t k = 0; k < 3; k++) {
        struct plan *p = build(names[k], 3, 24, 1);
        cr_assert_eq(p->n_workers, 3);
        cr_assert_gt(p->n_servers, 0);
        for (int r = 0; r < p->n_workers; r++) {
            struct plan_memory m;
            plan_memory_rank(p, r, &m);
            assert_memory(&m, params, 0, 8 * 4 * LAYER_SAVED, names[k]);
        }
        struct plan_memory s;
        plan_memory_rank(p, p->n_workers, &s);
        struct plan_memory zero = {0};
        cr_assert_eq(memcmp(&s, &zero, sizeof s), 0, "%s: a server has no device memory",
                     names[k]);
        plan_free(p);
    }
}

/* Model parallel: each of 2 stages holds its 2 layers and one batch of 8. */
Test(plan_memory, model_parallel_stage_holds_its_layers)
{
    struct plan *p = build("model", 2, 8, 1);
    for (int i = 0; i < 2; i++) {
        struct plan_memory m;
        plan_memory_rank(p, i, &m);
        assert_memory(&m, 2 * LAYER_PARAMS * 4, 2 * LAYER_PARAMS * 4, 8 * 2 * LAYER_SAVED,
                      "model stage");
    }
    plan_free(p);
}

/* bf16 transformer: parameters and gradients take elem_bytes = 2 each. */
Test(plan_memory, element_size_comes_from_the_workload)
{
    struct err e = {0};
    struct workload *t = NULL;
    cr_assert_eq(workload_parse("transformer:layers=2,hidden=64,seq=16,vocab=100", &t, &e), 0,
                 "%s", e.msg);
    cr_assert_eq(t->elem_bytes, 2);
    struct plan *p = build_on(t, "mirrored", 1, 4, 1);
    int64_t params = 0, saved = 0;
    for (int l = 0; l < t->n_layers; l++) {
        params += t->layers[l].params;
        saved += t->layers[l].saved_bytes_per_sample;
    }
    struct plan_memory m;
    plan_memory_max(p, &m);
    assert_memory(&m, params * 2, params * 2, 4 * saved, "transformer");
    plan_free(p);
    workload_free(t);
}

/* Hand-made: parameters count each forwarded layer once, holes included;
 * plan_memory_max takes the largest peak, the lowest rank on ties. */
Test(plan_memory, params_are_the_forwarded_layers_once)
{
    struct err e = {0};
    struct plan *p = plan_create("test", wl, 3, 0, 4, 2, &e);
    cr_assert_not_null(p, "%s", e.msg);
    /* rank 0: layers 0 and 2, each forwarded twice */
    for (int mb = 0; mb < 2; mb++) {
        plan_forward(p, 0, 0, 1, mb, 2, NO_DEPS);
        plan_forward(p, 0, 2, 3, mb, 2, NO_DEPS);
    }
    /* rank 1: layers 1-3, one backward then one forward again: the peak is
     * the larger of the two holds, 4 samples through 3 layers */
    plan_forward(p, 1, 1, 4, 0, 4, NO_DEPS);
    plan_backward(p, 1, 1, 4, 0, 4, NO_DEPS);
    plan_forward(p, 1, 1, 4, 1, 2, NO_DEPS);
    plan_update(p, 1, 1, 4, NO_DEPS);
    /* rank 2: same peak as rank 1 */
    plan_forward(p, 2, 1, 4, 0, 4, NO_DEPS);
    plan_update(p, 2, 1, 4, NO_DEPS);
    cr_assert_eq(plan_build_status(p, &e), 0, "%s", e.msg);

    struct plan_memory m;
    plan_memory_rank(p, 0, &m);
    /* 4 forwards of 2 samples through one layer each, none freed */
    assert_memory(&m, 2 * LAYER_PARAMS * 4, 0, 4 * 2 * LAYER_SAVED, "rank 0");
    plan_memory_rank(p, 1, &m);
    assert_memory(&m, 3 * LAYER_PARAMS * 4, 3 * LAYER_PARAMS * 4, 4 * 3 * LAYER_SAVED,
                  "rank 1");

    struct plan_memory max, one;
    plan_memory_max(p, &max);
    plan_memory_rank(p, 1, &one);
    cr_assert_eq(memcmp(&max, &one, sizeof max), 0, "rank 1 and 2 tie; the lower wins");
    plan_memory_rank(p, 7, &m);   /* no such rank */
    cr_assert_eq(m.peak, 0);
    plan_free(p);
}
