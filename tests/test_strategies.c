/* Tests of strategies/: every strategy's plan passes the checker at every
 * size, the schedules have the shapes their papers give them (bubble
 * closed forms, in-flight bounds, buckets and shards computed by hand), all
 * strategies do the same arithmetic, and bad scenarios are refused with
 * messages that name the option. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/plan_check.h"
#include "../core/plan_memory.h"
#include "../strategies/partition.h"
#include "../strategies/strategy.h"

#define DEFAULT_MLP "mlp:784-256-256-256-10"   /* 4 layers: the default --model */
/* 17 layers: deep enough for 16 stages */
#define DEEP_MLP "mlp:64-64-64-64-64-64-64-64-64-64-64-64-64-64-64-64-64-10"
/* 18 layers (embedding, 16 blocks, head), none alike in cost */
#define SMALL_TRANSFORMER "transformer:layers=16,hidden=64,seq=16,vocab=100"
#define UNIFORM_MLP "mlp:64-64-64-64-64"       /* 4 layers of one width */
#define MLP_16 "mlp:64-64-64-64-64-64-64-64-64-64-64-64-64-64-64-64-10"   /* 16 layers */

/* ---- helpers ---------------------------------------------------------- */

static struct config scenario(const char *model, int devices, int batch, int microbatches)
{
    return test_config(model, devices, batch, microbatches);
}

static const struct strategy *find(const char *name)
{
    return test_strategy(name);
}

/* A plan with the workload it was built for (its config's model). */
struct built {
    struct workload *wl;
    struct plan *p;
};

static struct built build_model(const char *name, const struct config *c)
{
    struct built b = {.wl = test_workload(c->model)};
    b.p = test_build_plan(name, c, b.wl);
    return b;
}

static void built_free(struct built *b)
{
    plan_free(b->p);
    workload_free(b->wl);
}

/* Strategy name's plan of DEFAULT_MLP on 4 devices (batch 256, one
 * microbatch) with buckets of bucket_mb MiB. */
static struct built build_bucketed(const char *name, double bucket_mb)
{
    struct config c = scenario(DEFAULT_MLP, 4, 256, 1);
    c.bucket_mb = bucket_mb;
    return build_model(name, &c);
}

/* The error strategy `name` gives for c; checks it leaves no plan behind. */
static int build_error(const char *name, const struct config *c, struct err *e)
{
    struct workload *wl = test_workload(c->model);
    struct plan *p = (struct plan *)1;
    int rc = strategy_build(find(name), c, wl, &p, e);
    cr_assert_null(p, "%s: a failed build must leave *out NULL", name);
    workload_free(wl);
    return rc;
}

static void assert_input_error(const char *name, const struct config *c, const char *needle)
{
    struct err e = {0};
    int rc = build_error(name, c, &e);
    cr_assert_eq(rc, ERR_INPUT, "%s: expected ERR_INPUT containing '%s', got %d '%s'", name,
                 needle, rc, e.msg);
    cr_assert(strstr(e.msg, needle), "%s: message '%s' lacks '%s'", name, e.msg, needle);
}

/* Our own cheap invariant, independent of the checker: every SEND has
 * exactly one RECV on its peer with the same tag and bytes, and back. */
static void assert_messages_pair(const struct plan *p)
{
    for (int r = 0; r < p->n_ranks; r++)
        for (size_t i = 0; i < p->ranks[r].ops.len; i++) {
            const struct op *s = &p->ranks[r].ops.items[i];
            if (s->kind != OP_SEND && s->kind != OP_RECV) continue;
            enum op_kind other = s->kind == OP_SEND ? OP_RECV : OP_SEND;
            cr_assert(s->peer >= 0 && s->peer < p->n_workers && s->peer != r);
            int matches = 0;
            for (size_t j = 0; j < p->ranks[s->peer].ops.len; j++) {
                const struct op *o = &p->ranks[s->peer].ops.items[j];
                matches += o->kind == other && o->peer == r && o->tag == s->tag &&
                           o->bytes == s->bytes;
            }
            cr_assert_eq(matches, 1, "%s: rank %d op %zu (%s) has %d partners", p->strategy, r,
                         i, op_infos[s->kind].name, matches);
        }
}

/* plan_check accepts p and the unit-cost run finishes. */
static void assert_valid(const struct plan *p, const char *what)
{
    test_assert_plan_valid(p, what);
    struct err e = {0};
    struct plan_times t;
    cr_assert_eq(plan_unit_run(p, &t, &e), 0, "%s: %s", what, e.msg);
    cr_assert(t.makespan > 0, "%s", what);
    plan_times_release(&t);
    assert_messages_pair(p);
}

static const struct op *op_at(const struct plan *p, int rank, int i)
{
    return &p->ranks[rank].ops.items[i];
}

static int count_ops(const struct plan *p, int rank, enum op_kind kind)
{
    int n = 0;
    for (size_t i = 0; i < p->ranks[rank].ops.len; i++) n += op_at(p, rank, (int)i)->kind == kind;
    return n;
}

/* FLOPs of ops of `kind` summed over all ranks. */
static double total_flops(const struct plan *p, enum op_kind kind)
{
    double sum = 0;
    for (int r = 0; r < p->n_ranks; r++)
        for (size_t i = 0; i < p->ranks[r].ops.len; i++)
            if (op_at(p, r, (int)i)->kind == kind) sum += op_at(p, r, (int)i)->flops;
    return sum;
}

static bool is_layer_split(const struct strategy *s)
{
    return !strcmp(s->name, "model") || !strncmp(s->name, "pipeline-", 9);
}

/* ---- registry --------------------------------------------------------- */

Test(strategies, registry_lists_every_strategy_in_table_order)
{
    const char *expected[] = {"mirrored",       "ps-sync",       "ps-async",
                              "ps-ssp",         "model",         "pipeline-gpipe",
                              "pipeline-1f1b",  "pipeline-interleaved", "pipeline-zb",
                              "mirrored-zero1", "pipelined-steps"};
    cr_assert_eq(strategy_count, 11);
    /* speedup's baseline (docs/metrics.md) is mirrored, wherever it stands */
    cr_assert_str_eq(strategy_baseline()->name, "mirrored");
    for (size_t i = 0; i < strategy_count; i++) {
        cr_assert_str_eq(strategy_registry[i].name, expected[i]);
        cr_assert_eq(find(expected[i]), &strategy_registry[i]);
        cr_assert(strategy_registry[i].summary && *strategy_registry[i].summary);
        cr_assert_not_null(strategy_registry[i].options);
        cr_assert_not_null(strategy_registry[i].build);
    }
    cr_assert_eq(find("mirrored")->policy, POLICY_NONE);
    cr_assert_eq(find("ps-sync")->policy, POLICY_SYNC);
    cr_assert_eq(find("ps-async")->policy, POLICY_ASYNC);
    cr_assert_eq(find("ps-ssp")->policy, POLICY_SSP);
}

/* `options` lists, comma-separated, options that exist in core/config.c. */
Test(strategies, options_each_strategy_reads_are_real_options)
{
    for (size_t i = 0; i < strategy_count; i++) {
        char list[256];
        snprintf(list, sizeof list, "%s", strategy_registry[i].options);
        for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
             name = strtok_r(NULL, ",", &save))
            cr_assert_not_null(config_find(name), "%s reads --%s, which is not an option",
                               strategy_registry[i].name, name);
    }
    cr_assert_str_eq(find("mirrored")->options, "bucket-mb");
    cr_assert_str_eq(find("ps-sync")->options, "servers,backup-workers");
}

Test(strategies, find_rejects_an_unknown_name_listing_the_choices)
{
    struct err e = {0};
    cr_assert_null(strategy_find("foo", &e));
    cr_assert_eq(e.code, ERR_INPUT);
    cr_assert_str_eq(e.msg, "--strategy: 'foo' is not a strategy (mirrored, ps-sync, ps-async, "
                            "ps-ssp, model, pipeline-gpipe, pipeline-1f1b, "
                            "pipeline-interleaved, pipeline-zb, mirrored-zero1, "
                            "pipelined-steps)");
    cr_assert_null(strategy_find("", &e));
    cr_assert_null(strategy_find("Mirrored", &e), "names are case-sensitive");
    cr_assert_null(strategy_find("mirrored ", &e));
}

Test(strategies, parse_list_takes_all_or_a_comma_list)
{
    const struct strategy *out[16];
    size_t n = 99;
    struct err e = {0};
    cr_assert_eq(strategy_parse_list("all", out, &n, &e), 0, "%s", e.msg);
    cr_assert_eq(n, strategy_count);
    for (size_t i = 0; i < n; i++) cr_assert_eq(out[i], &strategy_registry[i]);

    cr_assert_eq(strategy_parse_list("pipeline-1f1b,mirrored, model", out, &n, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(out[0]->name, "pipeline-1f1b");   /* the order given */
    cr_assert_str_eq(out[1]->name, "mirrored");
    cr_assert_str_eq(out[2]->name, "model");

    cr_assert_eq(strategy_parse_list("ps-ssp", out, &n, &e), 0, "%s", e.msg);
    cr_assert_eq(n, 1);
}

Test(strategies, parse_list_rejects_unknown_repeated_and_empty_items)
{
    const struct strategy *out[16];
    size_t n;
    struct err e = {0};
    struct {
        const char *spec, *needle;
    } bad[] = {
        {"mirrored,foo", "'foo' is not a strategy"},
        {"mirrored,model,mirrored", "'mirrored' is listed twice"},
        {"mirrored,,model", "empty item"},
        {"mirrored,", "empty item"},
        {",mirrored", "empty item"},
        {"", "empty item"},
        {"all,mirrored", "'all' is not a strategy"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = 99;
        e = (struct err){0};
        cr_assert_eq(strategy_parse_list(bad[i].spec, out, &n, &e), ERR_INPUT, "'%s'",
                     bad[i].spec);
        cr_assert(strstr(e.msg, "--strategies"), "'%s': %s", bad[i].spec, e.msg);
        cr_assert(strstr(e.msg, bad[i].needle), "'%s': '%s' lacks '%s'", bad[i].spec, e.msg,
                  bad[i].needle);
        cr_assert_eq(n, 0);
    }
}

/* A strategy whose build leaves a sticky builder error in its plan. */
static int build_broken(const struct strategy *s, const struct config *c,
                        const struct workload *wl, struct plan **out, struct err *e)
{
    (void)c;
    struct plan *p = plan_create(s->name, wl, 1, 0, 1, 1, e);
    if (!p) return ERR_NOMEM;
    plan_forward(p, 0, 0, wl->n_layers + 1, 0, 1, NO_DEPS);   /* past the last layer */
    *out = p;
    return 0;
}

Test(strategies, build_reports_and_frees_a_plan_with_a_builder_error)
{
    const struct strategy broken = {"broken", "fails", "", POLICY_NONE, build_broken, NULL};
    struct workload *wl = test_workload(DEFAULT_MLP);
    struct config c = scenario(DEFAULT_MLP, 1, 1, 1);
    struct plan *p = (struct plan *)1;
    struct err e = {0};
    cr_assert_eq(strategy_build(&broken, &c, wl, &p, &e), ERR_RUN);
    cr_assert_null(p);   /* freed: the sanitizer build catches a leak */
    cr_assert(strstr(e.msg, "broken"), "%s", e.msg);
    workload_free(wl);
}

/* ---- every plan passes the checker ------------------------------------ */

Test(strategies, every_strategy_passes_the_checker_at_every_size, .timeout = 120)
{
    const int devices[] = {1, 2, 3, 4, 8, 16};
    const int microbatches[] = {1, 4, 8};
    const char *deep[] = {DEEP_MLP, SMALL_TRANSFORMER};
    int n_plans = 0;
    for (size_t s = 0; s < strategy_count; s++) {
        const struct strategy *st = &strategy_registry[s];
        /* its sizes must divide (test_pipeline_schedules.c checks them) */
        if (!strcmp(st->name, "pipeline-interleaved")) continue;
        bool layer_split = is_layer_split(st);
        bool uses_mb = !strncmp(st->name, "pipeline-", 9);
        for (size_t m = 0; m < (layer_split ? 2u : 1u); m++) {
            const char *model = layer_split ? deep[m] : DEFAULT_MLP;
            struct workload *wl = test_workload(model);
            for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++)
                for (size_t k = 0; k < (uses_mb ? 3u : 1u); k++) {
                    struct config c = scenario(model, devices[d], 256, microbatches[k]);
                    struct plan *p = test_build_plan(st->name, &c, wl);
                    char what[512];
                    snprintf(what, sizeof what, "%s on %s, %d devices, %d microbatches",
                             st->name, model, devices[d], microbatches[k]);
                    assert_valid(p, what);
                    plan_free(p);
                    n_plans++;
                }
            workload_free(wl);
        }
    }
    cr_assert_eq(n_plans, 6 /* dp */ * 6 + 6 * 2 /* model */ + 3 * 6 * 2 * 3 /* pipelines */);
}

Test(strategies, pipelines_pass_the_checker_for_every_stage_count_and_odd_microbatches,
     .timeout = 120)
{
    /* any N <= L and M >= 1, here with a batch that does not divide */
    struct workload *wl = test_workload(DEEP_MLP);
    for (int n = 1; n <= wl->n_layers; n++)
        for (int m = 1; m <= 13; m += 3) {
            struct config c = scenario(DEEP_MLP, n, 37, m);
            for (int k = 0; k < 2; k++) {
                const char *name = k ? "pipeline-1f1b" : "pipeline-gpipe";
                struct plan *p = test_build_plan(name, &c, wl);
                char what[128];
                snprintf(what, sizeof what, "%s, %d stages, %d microbatches", name, n, m);
                assert_valid(p, what);
                plan_free(p);
            }
        }
    workload_free(wl);
}

Test(strategies, ps_passes_the_checker_with_several_servers_and_policies)
{
    struct workload *wl = test_workload(DEFAULT_MLP);
    const char *names[] = {"ps-sync", "ps-async", "ps-ssp"};
    for (int servers = 1; servers <= 4; servers++)
        for (int devices = 1; devices <= 8; devices *= 2)
            for (int k = 0; k < 3; k++) {
                struct config c = scenario(DEFAULT_MLP, devices, 64, 1);
                c.servers = servers;
                c.backup_workers = k == 0 ? devices - 1 : 0;   /* ps-sync: backup policy */
                struct plan *p = test_build_plan(names[k], &c, wl);
                char what[128];
                snprintf(what, sizeof what, "%s, %d servers, %d devices", names[k], servers,
                         devices);
                assert_valid(p, what);
                plan_free(p);
            }
    workload_free(wl);
}

/* ---- the same step, the same arithmetic -------------------------------- */

Test(strategies, one_device_is_the_single_device_step_for_every_strategy)
{
    struct workload *wl = test_workload(DEEP_MLP);
    const int L = wl->n_layers;
    for (size_t s = 0; s < strategy_count; s++) {
        const struct strategy *st = &strategy_registry[s];
        struct config c = scenario(DEEP_MLP, 1, 256, 4);   /* microbatches 4 is ignored */
        struct plan *p = test_build_plan(st->name, &c, wl);
        cr_assert_eq(p->n_workers, 1);
        const struct op *fwd = op_at(p, 0, 0);
        cr_assert_eq(fwd->kind, OP_FORWARD, "%s", st->name);
        cr_assert(fwd->lo == 0 && fwd->hi == L && fwd->n_samples == 256, "%s", st->name);
        cr_assert_eq(count_ops(p, 0, OP_FORWARD), 1, "%s", st->name);
        if (st->policy != POLICY_NONE) {
            /* ps-*: its server(s) and the PUSH/PULL that reach them; the
             * server applies the update */
            cr_assert_eq(p->n_servers, 1);
            cr_assert_eq(count_ops(p, 0, OP_BACKWARD), 1);
            cr_assert_eq(count_ops(p, 0, OP_PUSH), 1);
            cr_assert_eq(count_ops(p, 0, OP_PULL), 1);
            cr_assert_eq(count_ops(p, 0, OP_UPDATE), 0);
        } else {
            cr_assert_eq(p->n_ranks, 1, "%s", st->name);
            cr_assert_eq(p->ranks[0].ops.len, 3, "%s: FORWARD, BACKWARD, UPDATE", st->name);
            const struct op *bwd = op_at(p, 0, 1), *upd = op_at(p, 0, 2);
            cr_assert(bwd->kind == OP_BACKWARD && bwd->lo == 0 && bwd->hi == L &&
                          bwd->n_samples == 256,
                      "%s", st->name);
            cr_assert(upd->kind == OP_UPDATE && upd->lo == 0 && upd->hi == L, "%s", st->name);
        }
        plan_free(p);
    }
    workload_free(wl);
}

/* Every strategy computes the forward and backward of every sample through
 * every layer once per step: the same FLOPs, however they are cut. */
Test(strategies, compute_flops_per_step_are_equal_across_strategies)
{
    struct workload *wl = test_workload(DEEP_MLP);
    const int L = wl->n_layers;
    const int devices[] = {1, 2, 3, 4, 8};
    for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++)
        for (int batch = 250; batch <= 256; batch += 6) {
            /* expected: per-sample FLOPs of the whole model times the batch */
            double expected = (workload_fwd_flops(wl, 0, L) + workload_bwd_flops(wl, 0, L)) * batch;
            double one_update = 4.0 * (double)workload_params(wl, 0, L);
            for (size_t s = 0; s < strategy_count; s++) {
                const struct strategy *st = &strategy_registry[s];
                struct config c = scenario(DEEP_MLP, devices[d], batch, 4);
                /* interleaved: microbatches in groups of one per device */
                if (!strcmp(st->name, "pipeline-interleaved")) c.microbatches = 4 * devices[d];
                struct plan *p = test_build_plan(st->name, &c, wl);
                /* zero-bubble's backward comes in two halves that sum to it */
                double got = total_flops(p, OP_FORWARD) + total_flops(p, OP_BACKWARD) +
                             total_flops(p, OP_BACKWARD_INPUT) + total_flops(p, OP_BACKWARD_WEIGHT);
                cr_assert(fabs(got - expected) <= 1e-12 * expected,
                          "%s, %d devices, batch %d: %.17g FLOPs, expected %.17g", st->name,
                          devices[d], batch, got, expected);
                /* updates differ by design: replicas each update (mirrored),
                 * stages update their own layers once, servers update for
                 * ps-* workers, ZeRO-1's replicas each update their shard */
                double updates = total_flops(p, OP_UPDATE);
                bool is_sharded = !strcmp(st->name, "mirrored-zero1");
                double expected_updates = st->policy != POLICY_NONE ? 0
                                          : is_layer_split(st) || is_sharded ? one_update
                                                                   : devices[d] * one_update;
                cr_assert(fabs(updates - expected_updates) <= 1e-12 * one_update, "%s: %g vs %g",
                          st->name, updates, expected_updates);
                plan_free(p);
            }
        }
    workload_free(wl);
}

Test(strategies, batch_of_10_over_3_devices_is_4_3_3)
{
    struct workload *wl = test_workload(DEFAULT_MLP);
    const int expected[] = {4, 3, 3};
    const char *names[] = {"mirrored", "ps-sync", "ps-async", "ps-ssp"};
    for (size_t k = 0; k < 4; k++) {
        struct config c = scenario(DEFAULT_MLP, 3, 10, 1);
        struct plan *p = test_build_plan(names[k], &c, wl);
        for (int r = 0; r < 3; r++) {
            cr_assert_eq(op_at(p, r, 0)->kind, OP_FORWARD);
            cr_assert_eq(op_at(p, r, 0)->n_samples, expected[r], "%s rank %d", names[k], r);
        }
        plan_free(p);
    }
    /* microbatches split the same way: 10 samples in 3 microbatches */
    struct config c = scenario(DEFAULT_MLP, 2, 10, 3);
    struct plan *p = test_build_plan("pipeline-gpipe", &c, wl);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(op_at(p, 0, 2 * i)->kind, OP_FORWARD);
        cr_assert_eq(op_at(p, 0, 2 * i)->mb, i);
        cr_assert_eq(op_at(p, 0, 2 * i)->n_samples, expected[i]);
    }
    plan_free(p);
    for (int n = 1; n <= 10; n++) {
        int sum = 0;
        for (int i = 0; i < n; i++) sum += partition_share(10, n, i);
        cr_assert_eq(sum, 10);
    }
    workload_free(wl);
}

/* ---- mirrored ---------------------------------------------------------- */

/* The layer ranges of rank 0's ALLREDUCEs, in program order. */
static int buckets_of(const struct plan *p, int lo[], int hi[], int cap)
{
    int n = 0;
    for (size_t i = 0; i < p->ranks[0].ops.len; i++) {
        const struct op *op = op_at(p, 0, (int)i);
        if (op->kind != OP_ALLREDUCE) continue;
        cr_assert(n < cap);
        lo[n] = op->lo, hi[n] = op->hi, n++;
    }
    return n;
}

/* Gradient bytes of mlp:784-256-256-256-10 (fp32), by hand:
 *   layer 0: (784*256 + 256) * 4 = 803,840
 *   layer 1: (256*256 + 256) * 4 = 263,168
 *   layer 2:                       263,168
 *   layer 3: (256*10 + 10) * 4   =  10,280 */
Test(strategies, mirrored_buckets_match_a_count_by_hand)
{
    struct workload *wl = test_workload(DEFAULT_MLP);
    cr_assert_eq(workload_param_bytes(wl, 0, 1), 803840);
    cr_assert_eq(workload_param_bytes(wl, 1, 2), 263168);
    cr_assert_eq(workload_param_bytes(wl, 3, 4), 10280);
    struct {
        double bucket_mb;
        int n;
        int lo[4], hi[4];
    } cases[] = {
        /* 0.3 MiB = 314,572.8 B: 10,280 + 263,168 < cap; + 263,168 reaches it;
         * layer 0 is larger than the cap: alone */
        {0.3, 2, {1, 0}, {4, 1}},
        /* 0.25 MiB = 262,144 B: layers 2, 1, 0 are each larger than the cap,
         * so layer 3 closes alone and each big layer is its own bucket */
        {0.25, 4, {3, 2, 1, 0}, {4, 3, 2, 1}},
        /* 0.75 MiB = 786,432 B: 536,616 after layers 3..1; layer 0 is larger */
        {0.75, 2, {1, 0}, {4, 1}},
        /* 1 MiB: everything (1,340,456 B) reaches the cap only with layer 0 */
        {1.0, 1, {0}, {4}},
        /* the default 25 MiB: one bucket */
        {25, 1, {0}, {4}},
        /* tiny: every layer alone */
        {1e-6, 4, {3, 2, 1, 0}, {4, 3, 2, 1}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct config c = scenario(DEFAULT_MLP, 4, 256, 1);
        c.bucket_mb = cases[k].bucket_mb;
        struct plan *p = test_build_plan("mirrored", &c, wl);
        int lo[8], hi[8];
        int n = buckets_of(p, lo, hi, 8);
        cr_assert_eq(n, cases[k].n, "bucket %g MiB: %d buckets, expected %d", c.bucket_mb, n,
                     cases[k].n);
        for (int i = 0; i < n; i++)
            cr_assert(lo[i] == cases[k].lo[i] && hi[i] == cases[k].hi[i],
                      "bucket %g MiB, bucket %d: [%d,%d)", c.bucket_mb, i, lo[i], hi[i]);
        /* every rank has the same buckets, as a collective needs */
        for (int r = 1; r < 4; r++) cr_assert_eq(count_ops(p, r, OP_ALLREDUCE), n);
        plan_free(p);
    }
    workload_free(wl);
}

/* Each bucket's ALLREDUCE waits for the BACKWARD of its layers only, so the
 * comm stream works while compute runs the next bucket's backward. */
Test(strategies, mirrored_allreduce_follows_its_own_backward_and_update_follows_the_last)
{
    struct built b = build_bucketed("mirrored", 0.25);
    const struct plan *p = b.p;
    cr_assert_eq(p->groups.len, 1);
    cr_assert_eq(p->groups.items[0].n_ranks, 4);
    for (int r = 0; r < 4; r++) {
        int last_reduce = -1, n_bwd = 0;
        for (size_t i = 0; i < p->ranks[r].ops.len; i++) {
            const struct op *op = op_at(p, r, (int)i);
            if (op->kind == OP_BACKWARD) n_bwd++;
            if (op->kind == OP_ALLREDUCE) {
                cr_assert_eq(op->stream, STREAM_COMM);
                cr_assert_eq(op->n_deps, 1);
                const struct op *dep = op_at(p, r, plan_deps(p, r, (int)i)[0]);
                cr_assert(dep->kind == OP_BACKWARD && dep->lo == op->lo && dep->hi == op->hi);
                last_reduce = (int)i;
            }
            if (op->kind == OP_UPDATE) {
                cr_assert(op->lo == 0 && op->hi == 4);
                cr_assert_eq(op->stream, STREAM_COMPUTE);
                cr_assert_eq(plan_deps(p, r, (int)i)[0], last_reduce);
            }
        }
        cr_assert_eq(n_bwd, 4, "one BACKWARD per bucket");
    }
    built_free(&b);
}

Test(strategies, mirrored_bucket_zero_is_one_allreduce_after_the_whole_backward)
{
    struct workload *wl = test_workload(DEFAULT_MLP);
    for (int n = 2; n <= 16; n *= 2) {
        struct config c = scenario(DEFAULT_MLP, n, 256, 1);
        c.bucket_mb = 0;
        struct plan *p = test_build_plan("mirrored", &c, wl);
        for (int r = 0; r < n; r++) {
            cr_assert_eq(p->ranks[r].ops.len, 4);
            cr_assert_eq(op_at(p, r, 0)->kind, OP_FORWARD);
            cr_assert(op_at(p, r, 1)->kind == OP_BACKWARD && op_at(p, r, 1)->lo == 0 &&
                      op_at(p, r, 1)->hi == 4);
            cr_assert(op_at(p, r, 2)->kind == OP_ALLREDUCE && op_at(p, r, 2)->lo == 0 &&
                      op_at(p, r, 2)->hi == 4);
            cr_assert_eq(op_at(p, r, 3)->kind, OP_UPDATE);
        }
        plan_free(p);
    }
    workload_free(wl);
}

/* ---- parameter servers ------------------------------------------------- */

static void assert_shards(const struct plan *p, const int *bounds, int n_servers)
{
    cr_assert_eq(p->n_servers, n_servers);
    for (int s = 0; s < n_servers; s++) {
        const struct plan_rank *server = &p->ranks[p->n_workers + s];
        cr_assert(server->is_server);
        cr_assert_eq(server->ops.len, 0, "servers run no program");
        cr_assert(server->shard_lo == bounds[s] && server->shard_hi == bounds[s + 1],
                  "server %d holds [%d,%d), expected [%d,%d)", s, server->shard_lo,
                  server->shard_hi, bounds[s], bounds[s + 1]);
    }
}

/* A model cut into n parts (server shards, pipeline stages), part i holding
 * layers [bounds[i], bounds[i + 1]). */
struct layer_split {
    const char *model;
    int n;
    int bounds[17];
};

/* Parameters of mlp:784-256-256-256-10 by layer: 200,960, 65,792, 65,792,
 * 2,570 (335,114 in all). No shard can be below layer 0's 200,960, and
 * that bound is met: 2 servers [0,1) [1,4); 3 servers [0,1) [1,3) [3,4)
 * (earlier shards take what the bound allows). mlp:10-100-100-100-100-10:
 * 1,100, 10,100 x3, 1,010; 2 servers: [0,2) = 11,200, [2,5) = 21,210 beats
 * [0,3) = 21,300. */
Test(strategies, ps_shards_cover_every_layer_once_balanced_as_by_hand)
{
    const struct layer_split cases[] = {
        {DEFAULT_MLP, 1, {0, 4}},
        {DEFAULT_MLP, 2, {0, 1, 4}},
        {DEFAULT_MLP, 3, {0, 1, 3, 4}},
        {DEFAULT_MLP, 4, {0, 1, 2, 3, 4}},
        {"mlp:10-100-100-100-100-10", 2, {0, 2, 5}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct workload *wl = test_workload(cases[k].model);
        struct config c = scenario(cases[k].model, 3, 30, 1);
        c.servers = cases[k].n;
        struct plan *p = test_build_plan("ps-async", &c, wl);
        assert_shards(p, cases[k].bounds, cases[k].n);
        plan_free(p);
        workload_free(wl);
    }
}

/* Worker program: FORWARD; per shard, last first, BACKWARD then its PUSH
 * (comm stream, waiting for that BACKWARD only); then a PULL per shard. */
Test(strategies, ps_worker_pushes_each_shard_after_its_backward_then_pulls_all)
{
    struct config c = scenario(DEFAULT_MLP, 2, 64, 1);
    c.servers = 3;   /* shards [0,1) [1,3) [3,4) on ranks 2, 3, 4 */
    struct built b = build_model("ps-sync", &c);
    const struct plan *p = b.p;
    const int shard_lo[] = {3, 1, 0}, shard_hi[] = {4, 3, 1}, server[] = {4, 3, 2};
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(p->ranks[r].ops.len, 1 + 2 * 3 + 3);
        cr_assert_eq(op_at(p, r, 0)->kind, OP_FORWARD);
        for (int k = 0; k < 3; k++) {
            const struct op *bwd = op_at(p, r, 1 + 2 * k), *push = op_at(p, r, 2 + 2 * k);
            cr_assert(bwd->kind == OP_BACKWARD && bwd->lo == shard_lo[k] && bwd->hi == shard_hi[k]);
            cr_assert(push->kind == OP_PUSH && push->lo == shard_lo[k] &&
                      push->hi == shard_hi[k] && push->peer == server[k]);
            cr_assert_eq(push->stream, STREAM_COMM);
            cr_assert(push->n_deps == 1 && plan_deps(p, r, 2 + 2 * k)[0] == 1 + 2 * k);
        }
        for (int s = 0; s < 3; s++) {
            const struct op *pull = op_at(p, r, 7 + s);
            cr_assert_eq(pull->kind, OP_PULL);
            cr_assert_eq(pull->peer, 2 + s, "pulls go first shard first");
        }
        cr_assert_eq(count_ops(p, r, OP_UPDATE), 0, "servers apply the update");
    }
    built_free(&b);
}

Test(strategies, ps_policies_follow_the_options)
{
    struct workload *wl = test_workload(DEFAULT_MLP);
    struct config c = scenario(DEFAULT_MLP, 4, 64, 1);
    c.staleness = 7;
    struct plan *p = test_build_plan("ps-sync", &c, wl);
    cr_assert_eq(p->policy, POLICY_SYNC);
    plan_free(p);
    c.backup_workers = 3;
    p = test_build_plan("ps-sync", &c, wl);
    cr_assert_eq(p->policy, POLICY_BACKUP);
    cr_assert_eq(p->policy_arg, 3);
    plan_free(p);
    p = test_build_plan("ps-async", &c, wl);
    cr_assert_eq(p->policy, POLICY_ASYNC);
    plan_free(p);
    p = test_build_plan("ps-ssp", &c, wl);
    cr_assert_eq(p->policy, POLICY_SSP);
    cr_assert_eq(p->policy_arg, 7);
    plan_free(p);
    workload_free(wl);
}

/* ---- model parallelism and stages -------------------------------------- */

/* The first and last layer of each stage, from its FORWARDs. */
static void stage_layers(const struct plan *p, int stage, int *lo, int *hi)
{
    for (size_t i = 0; i < p->ranks[stage].ops.len; i++)
        if (op_at(p, stage, (int)i)->kind == OP_FORWARD) {
            *lo = op_at(p, stage, (int)i)->lo;
            *hi = op_at(p, stage, (int)i)->hi;
            return;
        }
    cr_assert_fail("stage %d has no FORWARD", stage);
}

/* mlp:64-64-64-64-64, forward + backward FLOPs per sample by layer: layer 0
 * 8,256 + 8,256 = 16,512 (no input gradient), layers 1..3 8,256 + 16,448 =
 * 24,704. Two stages: [0,2) 41,216 | [2,4) 49,408 beats [0,3) 65,920.
 * Three: the largest stage holds two layers at best; [0,2) 41,216 is the
 * smallest such. DEEP_MLP (17 layers) on 16 stages: its last layer (64 ->
 * 10) costs 1,290 + 2,570 = 3,860, so two layers must share a stage and the
 * cheapest pair is [15,17) at 28,564 (layers 0 and 1 would be 41,216). */
Test(strategies, model_stages_are_balanced_by_flops_as_by_hand)
{
    const struct layer_split cases[] = {
        {UNIFORM_MLP, 2, {0, 2, 4}},
        {UNIFORM_MLP, 3, {0, 2, 3, 4}},
        {UNIFORM_MLP, 4, {0, 1, 2, 3, 4}},
        {DEEP_MLP, 16, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct workload *wl = test_workload(cases[k].model);
        struct config c = scenario(cases[k].model, cases[k].n, 32, 4);
        for (int j = 0; j < 3; j++) {
            const char *name = j == 0 ? "model" : j == 1 ? "pipeline-gpipe" : "pipeline-1f1b";
            struct plan *p = test_build_plan(name, &c, wl);
            for (int i = 0; i < cases[k].n; i++) {
                int lo, hi;
                stage_layers(p, i, &lo, &hi);
                cr_assert(lo == cases[k].bounds[i] && hi == cases[k].bounds[i + 1],
                          "%s %s stage %d: [%d,%d)", name, cases[k].model, i, lo, hi);
            }
            plan_free(p);
        }
        workload_free(wl);
    }
}

/* Stage i: RECV ACT, FORWARD, SEND ACT; RECV GRAD, BACKWARD, SEND GRAD;
 * UPDATE; the first and last stages skip the messages they have no peer for. */
Test(strategies, model_sends_activations_down_and_gradients_up)
{
    struct config c = scenario(UNIFORM_MLP, 4, 32, 4);
    struct built b = build_model("model", &c);
    const struct plan *p = b.p;
    cr_assert_eq(p->n_microbatches, 1);
    for (int i = 0; i < 4; i++) {
        enum op_kind expected[7];
        int n = 0;
        if (i > 0) expected[n++] = OP_RECV;
        expected[n++] = OP_FORWARD;
        if (i < 3) expected[n++] = OP_SEND, expected[n++] = OP_RECV;
        expected[n++] = OP_BACKWARD;
        if (i > 0) expected[n++] = OP_SEND;
        expected[n++] = OP_UPDATE;
        cr_assert_eq((int)p->ranks[i].ops.len, n, "stage %d", i);
        for (int j = 0; j < n; j++) {
            const struct op *op = op_at(p, i, j);
            cr_assert_eq(op->kind, expected[j], "stage %d op %d", i, j);
            if (op->kind == OP_FORWARD || op->kind == OP_BACKWARD)
                cr_assert(op->mb == 0 && op->n_samples == 32 && op->lo == i && op->hi == i + 1);
            if (op->kind == OP_SEND || op->kind == OP_RECV) {
                bool is_act = plan_tag_kind(op->tag) == TAG_ACT;
                bool is_down = (op->kind == OP_SEND) == is_act;   /* toward stage i+1 */
                cr_assert_eq(op->peer, is_down ? i + 1 : i - 1, "stage %d op %d", i, j);
                cr_assert_eq(plan_tag_boundary(op->tag), op->peer > i ? i + 1 : i);
            }
        }
    }
    built_free(&b);
}

/* ---- pipelines --------------------------------------------------------- */

/* GPipe and 1F1B with p equal stages idle (p-1)/(m+p-1) of the step at unit
 * cost (Huang et al., 2019; Narayanan et al., 2021); naive model
 * parallelism is the m = 1 case, (p-1)/p. Unit cost counts layers, so
 * equal stages means as many layers on each: p = layers gives one each. */
Test(strategies, pipeline_bubble_matches_the_closed_form)
{
    struct {
        const char *model;
        int p, m;
    } cases[] = {{UNIFORM_MLP, 4, 8}, {UNIFORM_MLP, 2, 4}, {MLP_16, 16, 8}, {UNIFORM_MLP, 4, 1}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct workload *wl = test_workload(cases[k].model);
        struct config c = scenario(cases[k].model, cases[k].p, 64, cases[k].m);
        double expected = (double)(cases[k].p - 1) / (cases[k].m + cases[k].p - 1);
        struct plan *gpipe = test_build_plan("pipeline-gpipe", &c, wl);
        struct plan *ofob = test_build_plan("pipeline-1f1b", &c, wl);
        double b_gpipe = test_unit_bubble(gpipe), b_1f1b = test_unit_bubble(ofob);
        cr_assert(fabs(b_gpipe - expected) <= 1e-12, "gpipe p=%d m=%d: %.15f, expected %.15f",
                  cases[k].p, cases[k].m, b_gpipe, expected);
        cr_assert(fabs(b_1f1b - expected) <= 1e-12, "1f1b p=%d m=%d: %.15f, expected %.15f",
                  cases[k].p, cases[k].m, b_1f1b, expected);
        plan_free(gpipe);
        plan_free(ofob);
        workload_free(wl);
    }
    struct workload *wl = test_workload(UNIFORM_MLP);
    struct config c = scenario(UNIFORM_MLP, 4, 64, 1);
    struct plan *model = test_build_plan("model", &c, wl);
    cr_assert(fabs(test_unit_bubble(model) - 3.0 / 4.0) <= 1e-12, "%.15f", test_unit_bubble(model));
    plan_free(model);
    workload_free(wl);
}

/* Largest number of microbatches whose FORWARD stage i has run and whose
 * BACKWARD it has not, over the BACKWARDs of its program. */
static int max_in_flight(const struct plan *p, int stage)
{
    int in_flight = 0, most = 0;
    for (size_t i = 0; i < p->ranks[stage].ops.len; i++) {
        enum op_kind k = op_at(p, stage, (int)i)->kind;
        if (k == OP_FORWARD) in_flight++;
        if (k == OP_BACKWARD) {
            if (in_flight > most) most = in_flight;
            in_flight--;
        }
    }
    cr_assert_eq(in_flight, 0);
    return most;
}

Test(strategies, pipeline_1f1b_keeps_at_most_n_minus_i_microbatches_in_flight)
{
    struct workload *wl = test_workload(DEEP_MLP);
    for (int n = 2; n <= 16; n *= 2)
        for (int m = 1; m <= 16; m *= 2) {
            struct config c = scenario(DEEP_MLP, n, 64, m);
            struct plan *ofob = test_build_plan("pipeline-1f1b", &c, wl);
            struct plan *gpipe = test_build_plan("pipeline-gpipe", &c, wl);
            for (int i = 0; i < n; i++) {
                int bound = n - i < m ? n - i : m;
                cr_assert_eq(max_in_flight(ofob, i), bound, "1f1b n=%d m=%d stage %d", n, m, i);
                cr_assert_eq(max_in_flight(gpipe, i), m, "gpipe holds all m");
            }
            plan_free(ofob);
            plan_free(gpipe);
        }
    workload_free(wl);
}

Test(strategies, pipeline_backward_order_is_reverse_for_gpipe_and_forward_for_1f1b)
{
    struct workload *wl = test_workload(UNIFORM_MLP);
    struct config c = scenario(UNIFORM_MLP, 4, 64, 8);
    struct plan *gpipe = test_build_plan("pipeline-gpipe", &c, wl);
    struct plan *ofob = test_build_plan("pipeline-1f1b", &c, wl);
    cr_assert_eq(gpipe->n_microbatches, 8);
    for (int i = 0; i < 4; i++) {
        int g = 7, o = 0, fwd_g = 0, fwd_o = 0;
        for (size_t j = 0; j < gpipe->ranks[i].ops.len; j++) {
            const struct op *op = op_at(gpipe, i, (int)j);
            if (op->kind == OP_BACKWARD) cr_assert_eq(op->mb, g--);
            if (op->kind == OP_FORWARD) cr_assert_eq(op->mb, fwd_g++);
        }
        for (size_t j = 0; j < ofob->ranks[i].ops.len; j++) {
            const struct op *op = op_at(ofob, i, (int)j);
            if (op->kind == OP_BACKWARD) cr_assert_eq(op->mb, o++);
            if (op->kind == OP_FORWARD) cr_assert_eq(op->mb, fwd_o++);
        }
        cr_assert(g == -1 && o == 8 && fwd_g == 8 && fwd_o == 8);
        /* the step ends with the stage's UPDATE of its own layers */
        const struct op *last = op_at(ofob, i, (int)ofob->ranks[i].ops.len - 1);
        cr_assert(last->kind == OP_UPDATE && last->lo == i && last->hi == i + 1);
    }
    plan_free(gpipe);
    plan_free(ofob);
    workload_free(wl);
}

/* ---- partition --------------------------------------------------------- */

/* Brute force over every cut of n layers into k ranges: the smallest
 * largest range, and of the cuts that reach it the lexicographically
 * largest bounds (earlier ranges longest). */
static void brute(const double *cost, int n, int k, int at, int part, int *cur, double worst,
                  double *best, int *best_bounds)
{
    if (part == k - 1) {
        double last = 0;
        for (int i = at; i < n; i++) last += cost[i];
        if (last > worst) worst = last;
        cur[k] = n;
        bool better = worst < *best;
        if (worst == *best)
            for (int i = 1; i < k; i++)
                if (cur[i] != best_bounds[i]) {
                    better = cur[i] > best_bounds[i];
                    break;
                }
        if (better) {
            *best = worst;
            memcpy(best_bounds, cur, (size_t)(k + 1) * sizeof *cur);
        }
        return;
    }
    double sum = 0;
    for (int end = at + 1; end <= n - (k - 1 - part); end++) {
        sum += cost[end - 1];
        cur[part + 1] = end;
        brute(cost, n, k, end, part + 1, cur, sum > worst ? sum : worst, best, best_bounds);
    }
}

Test(strategies, partition_layers_finds_the_optimal_cut_of_a_brute_force_search)
{
    unsigned seed = 12345;   /* a fixed LCG: the same costs every run */
    for (int trial = 0; trial < 300; trial++) {
        double cost[9];
        int n = 1 + trial % 9;
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            cost[i] = (double)((seed >> 16) % (trial % 3 ? 100 : 4));   /* ties and zeros too */
        }
        for (int k = 1; k <= n; k++) {
            int bounds[10], cur[10] = {0}, expected[10] = {0};
            double best = INFINITY;
            brute(cost, n, k, 0, 0, cur, 0, &best, expected);
            struct err e = {0};
            cr_assert_eq(partition_layers(cost, n, k, bounds, &e), 0);
            double worst = 0;
            for (int i = 0; i < k; i++) {
                cr_assert(bounds[i] < bounds[i + 1], "every range holds a layer");
                double sum = 0;
                for (int j = bounds[i]; j < bounds[i + 1]; j++) sum += cost[j];
                if (sum > worst) worst = sum;
            }
            cr_assert(bounds[0] == 0 && bounds[k] == n);
            cr_assert_eq(worst, best, "trial %d, %d layers, %d parts: %g, optimum %g", trial, n,
                         k, worst, best);
            for (int i = 0; i <= k; i++)
                cr_assert_eq(bounds[i], expected[i], "trial %d n %d k %d bound %d", trial, n, k,
                             i);
        }
    }
}

/* ---- errors ------------------------------------------------------------ */

Test(strategies, more_stages_than_layers_is_refused_naming_devices)
{
    struct config c = scenario(DEFAULT_MLP, 8, 256, 4);
    struct err e = {0};
    cr_assert_eq(build_error("model", &c, &e), ERR_INPUT);
    cr_assert_str_eq(e.msg, "--devices 8 exceeds the model's 4 layers: model parallelism needs "
                            "a layer per stage (use a deeper --model, or --dp 2: 2 replicas of "
                            "4 stages)");
    assert_input_error("pipeline-gpipe", &c, "--devices 8 exceeds the model's 4 layers");
    assert_input_error("pipeline-1f1b", &c, "--devices 8 exceeds the model's 4 layers");
    /* 10 devices on 4 layers: --dp 5 makes 5 replicas of 2 stages, and a
     * strategy that takes --dp says so; one that does not, only the model */
    c.devices = 10;
    c.batch = 250;   /* 50 samples a replica */
    assert_input_error("pipeline-1f1b", &c, "(use a deeper --model, or --dp 5: 5 replicas of 2 "
                                            "stages)");
    cr_assert_eq(build_error("pipeline-zb", &c, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "(use a deeper --model)"), "%s", e.msg);
    c.devices = 4;   /* as many stages as layers is fine */
    struct workload *wl = test_workload(DEFAULT_MLP);
    plan_free(test_build_plan("model", &c, wl));
    workload_free(wl);
}

Test(strategies, more_devices_than_samples_is_refused_naming_devices_and_batch)
{
    struct config c = scenario(DEFAULT_MLP, 300, 256, 1);
    const char *names[] = {"mirrored", "ps-sync", "ps-async", "ps-ssp"};
    for (size_t k = 0; k < 4; k++) {
        struct err e = {0};
        cr_assert_eq(build_error(names[k], &c, &e), ERR_INPUT, "%s", names[k]);
        cr_assert_str_eq(e.msg,
                         "--devices 300 exceeds --batch 256: each device needs at least one sample");
    }
}

Test(strategies, more_microbatches_than_samples_is_refused_naming_microbatches)
{
    struct config c = scenario(DEFAULT_MLP, 2, 256, 300);
    assert_input_error("pipeline-gpipe", &c, "--microbatches 300 exceeds --batch 256");
    assert_input_error("pipeline-1f1b", &c, "--microbatches 300 exceeds --batch 256");
    c.microbatches = 0;
    assert_input_error("pipeline-gpipe", &c, "--microbatches: 0 is not allowed");
    c.microbatches = 256;   /* one sample each is fine */
    struct workload *wl = test_workload(DEFAULT_MLP);
    plan_free(test_build_plan("pipeline-1f1b", &c, wl));
    workload_free(wl);
}

Test(strategies, ps_option_errors_name_the_option)
{
    struct config c = scenario(DEFAULT_MLP, 4, 256, 1);
    c.servers = 5;
    struct err e = {0};
    cr_assert_eq(build_error("ps-async", &c, &e), ERR_INPUT);
    cr_assert_str_eq(e.msg, "--servers 5 exceeds the model's 4 layers: each server holds whole "
                            "layers");
    c.servers = 0;
    assert_input_error("ps-ssp", &c, "--servers: 0 is not allowed");
    c.servers = 1;
    c.backup_workers = 4;
    assert_input_error("ps-sync", &c, "--backup-workers 4 must be less than --devices 4");
    c.backup_workers = -1;
    assert_input_error("ps-sync", &c, "--backup-workers: -1 is not allowed");
    c.backup_workers = 0;
    c.staleness = -1;
    assert_input_error("ps-ssp", &c, "--staleness: -1 is not allowed");
}

Test(strategies, out_of_range_devices_batch_and_bucket_are_refused)
{
    for (size_t s = 0; s < strategy_count; s++) {
        struct config c = scenario(DEFAULT_MLP, 0, 256, 1);
        assert_input_error(strategy_registry[s].name, &c, "--devices: 0 is not allowed");
        c.devices = 1;
        c.batch = 0;
        assert_input_error(strategy_registry[s].name, &c, "--batch: 0 is not allowed");
    }
    struct config c = scenario(DEFAULT_MLP, 2, 256, 1);
    c.bucket_mb = -1;
    assert_input_error("mirrored", &c, "--bucket-mb: -1 is not allowed");
    c.bucket_mb = NAN;
    assert_input_error("mirrored", &c, "--bucket-mb");
}

/* What a sweep asks a strategy (strategies/strategy.h): whole option names
 * of its .options list, and whether it has servers (its policy's). */
Test(strategies, reads_matches_whole_option_names_and_servers_follow_the_policy)
{
    cr_expect(strategy_reads(find("mirrored"), "bucket-mb"));
    cr_expect(strategy_reads(find("ps-sync"), "servers"));
    cr_expect(strategy_reads(find("ps-sync"), "backup-workers"));
    cr_expect(!strategy_reads(find("ps-sync"), "backup"), "a prefix is not the option");
    cr_expect(!strategy_reads(find("ps-sync"), "workers"), "nor is a suffix");
    cr_expect(!strategy_reads(find("mirrored"), "microbatches"));
    cr_expect(!strategy_reads(find("model"), ""), "an empty list reads nothing");
    for (size_t i = 0; i < strategy_count; i++) {
        const struct strategy *s = &strategy_registry[i];
        cr_expect_eq(strategy_has_servers(s), s->policy != POLICY_NONE, "%s", s->name);
    }
    cr_expect(strategy_has_servers(find("ps-ssp")));
    cr_expect(!strategy_has_servers(find("pipeline-1f1b")));
}

/* ---- ZeRO-1 (mirrored-zero1) -------------------------------------------- */

Test(strategies, zero1_passes_the_checker_for_devices_and_microbatches)
{
    struct workload *wl = test_workload(DEFAULT_MLP);
    const int devices[] = {1, 2, 4, 8}, microbatches[] = {1, 4, 8, 16};
    for (size_t d = 0; d < 4; d++)
        for (size_t m = 0; m < 4; m++)
            for (double bucket_mb = 0; bucket_mb <= 0.5; bucket_mb += 0.25) {
                struct config c = scenario(DEFAULT_MLP, devices[d], 256, microbatches[m]);
                c.bucket_mb = bucket_mb;
                struct plan *p = test_build_plan("mirrored-zero1", &c, wl);
                char what[128];
                snprintf(what, sizeof what, "mirrored-zero1, %d devices, %d microbatches, "
                         "bucket %g MiB", devices[d], microbatches[m], bucket_mb);
                assert_valid(p, what);
                plan_free(p);
            }
    workload_free(wl);
}

/* Each bucket: its reduce-scatter right after its own backward, its shard
 * UPDATE after that reduce-scatter, its all-gather after that UPDATE; the
 * buckets are mirrored's (0.25 MiB: the three upper layers of the default
 * model alone, 257 KiB each, the big first layer alone). */
Test(strategies, zero1_scatters_each_bucket_after_its_backward_and_gathers_after_its_step)
{
    struct built b = build_bucketed("mirrored-zero1", 0.25),
                 m = build_bucketed("mirrored", 0.25);
    const struct plan *p = b.p, *mirrored = m.p;
    for (int r = 0; r < 4; r++) {
        int n_rs = count_ops(p, r, OP_REDUCE_SCATTER);
        cr_assert_eq(n_rs, count_ops(mirrored, r, OP_ALLREDUCE), "mirrored's buckets");
        cr_assert_eq(count_ops(p, r, OP_ALL_GATHER), n_rs);
        cr_assert_eq(count_ops(p, r, OP_UPDATE), n_rs);
        cr_assert_eq(count_ops(p, r, OP_ALLREDUCE), 0);
        for (size_t i = 0; i < p->ranks[r].ops.len; i++) {
            const struct op *op = op_at(p, r, (int)i);
            if (op->kind == OP_REDUCE_SCATTER) {
                const struct op *bwd = op_at(p, r, plan_deps(p, r, (int)i)[0]);
                cr_assert(bwd->kind == OP_BACKWARD && bwd->lo == op->lo && bwd->hi == op->hi);
            } else if (op->kind == OP_UPDATE) {
                cr_assert_eq(op->group, 0, "a shard UPDATE");
                const struct op *rs = op_at(p, r, plan_deps(p, r, (int)i)[0]);
                cr_assert(rs->kind == OP_REDUCE_SCATTER && rs->lo == op->lo && rs->hi == op->hi);
            } else if (op->kind == OP_ALL_GATHER) {
                const struct op *up = op_at(p, r, plan_deps(p, r, (int)i)[0]);
                cr_assert(up->kind == OP_UPDATE && up->lo == op->lo && up->hi == op->hi);
            }
        }
    }
    built_free(&m);
    built_free(&b);
}

/* Memory: the momentum per device is 1/N of mirrored's, so the peak drops by
 * (N-1)/N of the momentum; parameters, gradients and activations are
 * mirrored's. mlp:64-64-64-64-64 has 4 x (64 x 64 + 64) = 16,640
 * parameters, a multiple of 8, so the shards are exact: 16,640 x 4 / N bytes. */
Test(strategies, zero1_momentum_per_device_is_one_nth_of_mirrored)
{
    struct workload *wl = test_workload(UNIFORM_MLP);
    cr_assert_eq(workload_params(wl, 0, wl->n_layers), 16640);
    for (int n = 1; n <= 8; n *= 2)
        for (int bucket = 0; bucket < 2; bucket++) {
            struct config c = scenario(UNIFORM_MLP, n, 64, 1);
            c.bucket_mb = bucket ? 0.01 : 0;   /* one bucket; or one a layer (16.6 KB each) */
            struct plan *z = test_build_plan("mirrored-zero1", &c, wl);
            struct plan *m = test_build_plan("mirrored", &c, wl);
            struct plan_memory mz, mm;
            plan_memory_max(z, &mz);
            plan_memory_max(m, &mm);
            cr_assert_eq(mm.optimizer, 16640 * 4);
            cr_assert_eq(mz.optimizer, 16640 * 4 / n, "%d devices: %lld bytes of momentum", n,
                         (long long)mz.optimizer);
            cr_assert(mz.params == mm.params && mz.grads == mm.grads &&
                      mz.activations == mm.activations);
            cr_assert_eq(mm.peak - mz.peak, (int64_t)16640 * 4 * (n - 1) / n);
            plan_free(z);
            plan_free(m);
        }
    workload_free(wl);
}

/* Uneven shards: the last member also holds the remainder (core/plan.h),
 * and plan_memory_max reports that largest one. DEFAULT_MLP's 335,114
 * parameters in one bucket over 4: 83,778 and 83,780 for the last. */
Test(strategies, zero1_largest_shard_is_the_last_members)
{
    struct built b = build_bucketed("mirrored-zero1", 0);
    struct plan_memory m0, m3, most;
    plan_memory_rank(b.p, 0, &m0);
    plan_memory_rank(b.p, 3, &m3);
    plan_memory_max(b.p, &most);
    cr_assert_eq(m0.optimizer, 83778 * 4);
    cr_assert_eq(m3.optimizer, 83780 * 4);
    cr_assert_eq(most.optimizer, m3.optimizer);
    built_free(&b);
}

/* ---- hybrid data x pipeline (--dp) ---------------------------------------- */

Test(strategies, hybrid_passes_the_checker_for_devices_replicas_and_microbatches,
     .timeout = 120)
{
    struct workload *wl = test_workload(DEEP_MLP);
    const char *layer_split[] = {"model", "pipeline-gpipe", "pipeline-1f1b"};
    const int devices[] = {1, 2, 4, 8}, microbatches[] = {1, 4, 8, 16};
    int n_plans = 0;
    for (size_t s = 0; s < 3; s++)
        for (size_t d = 0; d < 4; d++)
            for (int dp = 1; dp <= devices[d]; dp *= 2)
                for (size_t m = 0; m < 4; m++)
                    for (int bucket = 0; bucket < 2; bucket++) {
                        struct config c = scenario(DEEP_MLP, devices[d], 256, microbatches[m]);
                        c.dp = dp;
                        c.bucket_mb = bucket ? 0.01 : 25;   /* a bucket a layer, or one */
                        struct plan *p = test_build_plan(layer_split[s], &c, wl);
                        char what[160];
                        snprintf(what, sizeof what, "%s, %d devices, --dp %d, %d microbatches, "
                                 "bucket %g MiB", layer_split[s], devices[d], dp,
                                 microbatches[m], c.bucket_mb);
                        assert_valid(p, what);
                        cr_assert_eq(p->groups.len, dp > 1 ? (size_t)(devices[d] / dp) : 0u,
                                     "%s: one group per stage", what);
                        plan_free(p);
                        n_plans++;
                    }
    cr_assert_eq(n_plans, 3 * (1 + 2 + 3 + 4) * 4 * 2);
    workload_free(wl);
}

/* On the ideal cluster communication is free, so D replicas of a pipeline
 * run side by side with the pipeline's own bubble, (p-1)/(m+p-1): the
 * replicas each get 1/D of the batch, as m microbatches. */
Test(strategies, hybrid_bubble_is_its_pipelines_bubble)
{
    struct {
        const char *model;
        int p, m, dp;
    } cases[] = {{UNIFORM_MLP, 4, 8, 2}, {UNIFORM_MLP, 2, 4, 4}, {MLP_16, 8, 16, 2},
                 {UNIFORM_MLP, 4, 1, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct workload *wl = test_workload(cases[k].model);
        struct config c = scenario(cases[k].model, cases[k].p * cases[k].dp, 128, cases[k].m);
        c.dp = cases[k].dp;
        double expected = (double)(cases[k].p - 1) / (cases[k].m + cases[k].p - 1);
        const char *names[] = {"pipeline-gpipe", "pipeline-1f1b"};
        for (int s = 0; s < 2; s++) {
            struct plan *p = test_build_plan(names[s], &c, wl);
            double got = test_unit_bubble(p);
            cr_assert(fabs(got - expected) <= 1e-12, "%s p=%d m=%d dp=%d: %.15f, expected %.15f",
                      names[s], cases[k].p, cases[k].m, cases[k].dp, got, expected);
            plan_free(p);
        }
        workload_free(wl);
    }
    struct workload *wl = test_workload(UNIFORM_MLP);
    struct config c = scenario(UNIFORM_MLP, 8, 64, 1);
    c.dp = 2;
    struct plan *model = test_build_plan("model", &c, wl);
    cr_assert(fabs(test_unit_bubble(model) - 3.0 / 4.0) <= 1e-12, "%.15f", test_unit_bubble(model));
    plan_free(model);
    workload_free(wl);
}

/* Replica d's stage i is rank d p + i; stage i's group is its D copies; each
 * replica computes its share of the batch (10 over 3: 4, 3, 3, as
 * partition_share) and every stage's UPDATE waits for its all-reduces. */
Test(strategies, hybrid_ranks_groups_and_batch_shares_follow_the_grid)
{
    struct workload *wl = test_workload(UNIFORM_MLP);
    struct config c = scenario(UNIFORM_MLP, 6, 10, 1);
    c.dp = 3;
    struct plan *p = test_build_plan("pipeline-1f1b", &c, wl);
    cr_assert_eq(p->n_workers, 6);
    cr_assert_eq(p->groups.len, 2);
    for (int i = 0; i < 2; i++) {
        const struct plan_group *g = &p->groups.items[i];
        cr_assert(g->n_ranks == 3 && g->ranks[0] == i && g->ranks[1] == 2 + i &&
                  g->ranks[2] == 4 + i);
    }
    const int share[3] = {4, 3, 3};
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < 2; i++) {
            int r = 2 * d + i;
            cr_assert_eq(op_at(p, r, i == 0 ? 0 : 1)->n_samples, share[d], "rank %d", r);
            int n = (int)p->ranks[r].ops.len;
            const struct op *upd = op_at(p, r, n - 1);
            cr_assert_eq(upd->kind, OP_UPDATE);
            bool waits_for_reduce = false;
            for (int k = 0; k < upd->n_deps; k++)
                waits_for_reduce |= op_at(p, r, plan_deps(p, r, n - 1)[k])->kind == OP_ALLREDUCE;
            cr_assert(waits_for_reduce, "rank %d's UPDATE waits for its all-reduce", r);
            cr_assert_eq(count_ops(p, r, OP_ALLREDUCE), 1, "one bucket at 25 MiB");
        }
    plan_free(p);
    workload_free(wl);
}

Test(strategies, hybrid_errors_name_dp_devices_batch_and_microbatches)
{
    struct config c = scenario(DEFAULT_MLP, 8, 256, 4);
    c.dp = 3;
    assert_input_error("pipeline-1f1b", &c, "--dp 3 does not divide --devices 8");
    c.dp = 16;
    assert_input_error("model", &c, "--dp: 16 is not allowed (1 to --devices 8)");
    c = scenario(DEFAULT_MLP, 8, 2, 1);
    c.dp = 4;
    assert_input_error("pipeline-gpipe", &c, "--dp 4 exceeds --batch 2");
    c = scenario(DEFAULT_MLP, 4, 8, 8);
    c.dp = 2;
    assert_input_error("pipeline-1f1b", &c, "--microbatches 8 exceeds the 4 samples of each of "
                                            "the --dp 2 replicas");
    c = scenario(DEFAULT_MLP, 16, 256, 4);
    c.dp = 2;
    assert_input_error("pipeline-1f1b", &c, "--devices 16 / --dp 2 = 8 stages exceed the "
                                            "model's 4 layers");
}
