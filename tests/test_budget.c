/* core/budget.c with the strategies' bounds on their plans
 * (strategies/strategy.h strategy_plan_size): the bound is never below the
 * plan a strategy builds and follows it closely, the estimate stays above
 * the peaks measured for those plans, a compare counts the largest of its
 * strategies (pipeline-interleaved's --chunks when it may run it), runs the
 * old estimate refused wrongly now fit, and a simulation whose events
 * (ranks x ops a step x steps) exceed what --max-memory allows is refused,
 * naming the option. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/budget.h"
#include "../core/config.h"
#include "../core/workload.h"
#include "../strategies/strategy.h"
#include "helpers.h"

TEST_SUITE_WITH_WORKLOAD(budget, wl, "mlp:784-256-128-10");

static void set(struct config *c, const char *name, const char *value)
{
    struct err e = {0};
    cr_assert_eq(config_set(c, name, value, ~0u, &e), 0, "%s", e.msg);
}

/* c from config_init, then --strategy `strategy` (unless NULL) and the
 * option pairs of options (name, value, ..., NULL); c is the caller's to
 * release. */
static void config_with(struct config *c, const char *strategy, const char *const *options)
{
    config_init(c);
    if (strategy) set(c, "strategy", strategy);
    for (const char *const *o = options; *o; o += 2) set(c, o[0], o[1]);
}

/* CONFIG_WITH(&c, "mirrored", "devices", "4"): config_with on a literal list. */
#define CONFIG_WITH(c, strategy, ...)                                                    \
    config_with(c, strategy, (const char *const[]){__VA_ARGS__, NULL})

#define SIM_GROUPS (OPTG_SCENARIO | OPTG_RUN | OPTG_SIM)
#define COMPARE_GROUPS (OPTG_SCENARIO | OPTG_COMPARE | OPTG_RUN | OPTG_SIM)

static const struct strategy *find(const char *name)
{
    struct err e = {0};
    const struct strategy *s = strategy_find(name, &e);
    cr_assert(s, "%s", e.msg);
    return s;
}

/* The estimate of `strategy`'s run of c on w (one strategy: strata sim). */
static void estimate(const struct config *c, const struct workload *w, struct budget *b)
{
    struct budget_plan plan;
    strategy_plan_size(find(c->strategy), c, w, &plan);
    budget_estimate(c, w, SIM_GROUPS, &plan, b);
}

/* Peak RSS of a plan of `ops` ops on `ranks` ranks, from the runs measured
 * (core/budget.c BUDGET_BYTES_PER_OP): at most ~291 B an op for pipelines,
 * 5.9 KB a rank of 18 ops for mirrored, 10.6 KB of 33 for mirrored-zero1,
 * 2.4 KB of 4 for ps-async and 2.3 KB of 7 for model; 330 B an op and
 * 1100 B a rank is above every one of them. */
static double measured_peak(double ops, double ranks)
{
    return ops * 330 + ranks * 1100;
}

/* Each strategy's bound against the plan it builds: never fewer ranks or
 * ops, at most 10% more ops (plus a few), and the estimate's plan part
 * above the peak measured for that plan. */
static void expect_bound_holds(const char *strategy, const struct workload *w,
                               const char *const *options)
{
    struct config c;
    config_with(&c, strategy, options);
    const struct strategy *s = find(strategy);
    struct plan *p = NULL;
    struct err e = {0};
    cr_assert_eq(strategy_build(s, &c, w, &p, &e), 0, "%s: %s", strategy, e.msg);
    struct budget_plan bound;
    strategy_plan_size(s, &c, w, &bound);
    double ops = (double)plan_n_ops(p);
    cr_expect_geq(bound.ranks, p->n_ranks, "%s: %.0f ranks bound, %d built", strategy,
                  bound.ranks, p->n_ranks);
    cr_expect_geq(bound.ops, ops, "%s on %lld devices: %.0f ops bound, %.0f built", strategy,
                  c.devices, bound.ops, ops);
    cr_expect_leq(bound.ops, 1.1 * ops + 8, "%s on %lld devices: %.0f ops bound, %.0f built",
                  strategy, c.devices, bound.ops, ops);
    struct budget b;
    budget_estimate(&c, w, SIM_GROUPS, &bound, &b);
    cr_expect_geq(b.parts[BUDGET_PLAN].bytes, measured_peak(ops, p->n_ranks), "%s: %s",
                  strategy, b.parts[BUDGET_PLAN].why);
    plan_free(p);
    config_release(&c);
}

Test(budget, every_strategys_bound_holds_its_plan_and_follows_it)
{
    struct workload *deep = test_workload("mlp:784-256-256-256-256-256-256-256-10");
    static const char *const sizes[][10] = {
        {"devices", "1", NULL},
        {"devices", "2", "batch", "64", "microbatches", "8", NULL},
        {"devices", "4", "batch", "64", "microbatches", "16", "bucket-mb", "0.1", NULL},
        {"devices", "8", "batch", "256", "microbatches", "64", "servers", "3", NULL},
    };
    for (size_t i = 0; i < strategy_count; i++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            expect_bound_holds(strategy_registry[i].name, deep, sizes[k]);
    /* --dp replicas of the stages, --chunks of interleaved, --inflight */
    static const char *const dp[] = {"devices", "8", "dp", "2", "batch", "64", "microbatches",
                                     "8", "bucket-mb", "0.2", NULL};
    expect_bound_holds("pipeline-1f1b", deep, dp);
    expect_bound_holds("model", deep, dp);
    static const char *const chunks[] = {"devices", "4", "chunks", "2", "batch", "64",
                                         "microbatches", "16", NULL};
    expect_bound_holds("pipeline-interleaved", deep, chunks);
    static const char *const inflight[] = {"devices", "16", "inflight", "3", "batch", "64",
                                           NULL};
    expect_bound_holds("pipelined-steps", deep, inflight);
    workload_free(deep);
}

/* The run the old estimate (ops a step = 4 x microbatches + 2 x layers + 8
 * for every strategy: 52 here) refused at 25.1 GiB: mirrored's plan has 18
 * ops a rank (buckets, no microbatches), and the run peaks at 5.8 GB. */
Test(budget, a_million_mirrored_devices_are_estimated_from_their_plan)
{
    struct workload *gpt2 = test_workload("gpt2-small");
    struct config c;
    CONFIG_WITH(&c, "mirrored", "devices", "1000000", "batch", "16000000", "steps", "10");
    struct budget_plan plan;
    strategy_plan_size(find("mirrored"), &c, gpt2, &plan);
    struct budget b;
    budget_estimate(&c, gpt2, SIM_GROUPS, &plan, &b);
    cr_expect(strstr(b.parts[BUDGET_PLAN].why, "1000000 ranks x 18 ops a step"), "%s",
              b.parts[BUDGET_PLAN].why);
    cr_expect_gt(b.total_bytes, 5.8e9);
    cr_expect_lt(b.total_bytes, 10.0 * (1 << 30));
    struct err e = {0};
    set(&c, "max-memory", "10");
    cr_expect_eq(budget_check(&c, gpt2, SIM_GROUPS, &plan, &e), 0, "%s", e.msg);
    /* still refused at the default, in the message's form */
    set(&c, "max-memory", "4");
    cr_assert_eq(budget_check(&c, gpt2, SIM_GROUPS, &plan, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "most of it from --devices 1000000: 1000000 ranks x 18 ops a step x ") &&
                  strstr(e.msg, "Lower --devices, or raise --max-memory"),
              "%s", e.msg);
    config_release(&c);
    workload_free(gpt2);
}

/* A stage holds its own layers: 2000 stages of a 2000-layer transformer
 * with 64 microbatches have ~6 x 64 ops a stage (they peak at 220 MB), not
 * the 2 x 2000 layers the old estimate counted on every rank (4.1 GiB). */
Test(budget, a_2000_stage_pipeline_fits_the_default)
{
    struct workload *t = test_workload("transformer:layers=2000,hidden=1024,seq=1024,vocab=32000");
    static const char *const names[] = {"pipeline-1f1b", "pipeline-gpipe", "pipeline-zb",
                                        "model"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct config c;
        CONFIG_WITH(&c, names[i], "devices", "2000", "microbatches", "64", "batch", "64", "steps",
                    "3");
        struct budget_plan plan;
        strategy_plan_size(find(names[i]), &c, t, &plan);
        struct err e = {0};
        cr_expect_eq(budget_check(&c, t, SIM_GROUPS, &plan, &e), 0, "%s: %s", names[i], e.msg);
        struct budget b;
        budget_estimate(&c, t, SIM_GROUPS, &plan, &b);
        cr_expect_lt(b.total_bytes, 0.5 * (1 << 30), "%s: %s", names[i],
                     b.parts[BUDGET_PLAN].why);
        config_release(&c);
    }
    workload_free(t);
}

Test(budget, compare_counts_chunks_when_it_may_run_interleaved)
{
    struct config c;
    CONFIG_WITH(&c, NULL, "microbatches", "64", "chunks", "8");
    struct budget_plan plan;
    struct budget all, listed, without;
    strategy_plan_size_spec(c.strategies, &c, wl, &plan);   /* --strategies all */
    budget_estimate(&c, wl, COMPARE_GROUPS, &plan, &all);
    strategy_plan_size_spec("mirrored,pipeline-interleaved", &c, wl, &plan);
    budget_estimate(&c, wl, COMPARE_GROUPS, &plan, &listed);
    strategy_plan_size_spec("mirrored,pipeline-1f1b", &c, wl, &plan);
    budget_estimate(&c, wl, COMPARE_GROUPS, &plan, &without);
    /* ops a rank on 4 devices: interleaved 6 x 8 chunks x 64 microbatches +
     * 8 updates, less the end stages' 4 x 64 over 4 ranks = 3016; 1F1B's
     * 6 x 64 + 1 - 64 = 321 */
    cr_expect_gt(listed.parts[BUDGET_PLAN].bytes, 7 * without.parts[BUDGET_PLAN].bytes);
    /* all: interleaved's ops, on ps-async's 5 ranks (4 devices, a server) */
    cr_expect_geq(all.parts[BUDGET_PLAN].bytes, listed.parts[BUDGET_PLAN].bytes);
    cr_expect(strstr(all.parts[BUDGET_PLAN].why, "5 ranks x 2413 ops a step"), "%s",
              all.parts[BUDGET_PLAN].why);
    cr_expect(strstr(listed.parts[BUDGET_PLAN].why, " 3016 ops a step"), "%s",
              listed.parts[BUDGET_PLAN].why);
    cr_expect(strstr(without.parts[BUDGET_PLAN].why, " 321 ops a step"), "%s",
              without.parts[BUDGET_PLAN].why);
    /* the servers of a ps-* strategy are ranks */
    strategy_plan_size_spec("mirrored,ps-async", &c, wl, &plan);
    cr_expect_eq(plan.ranks, 5);
    config_release(&c);
}

Test(budget, too_many_events_are_refused_naming_the_option_and_max_memory)
{
    struct config c;
    CONFIG_WITH(&c, "pipeline-1f1b", "microbatches", "1024", "batch", "1024", "steps", "1000000");
    struct budget b;
    estimate(&c, wl, &b);
    /* 4 ranks x (6 x 1024 + 1 - 1024 = 5121 ops) x 10^6 steps */
    cr_expect_float_eq(b.events, 4.0 * 5121 * 1e6, 1);
    /* its memory fits 4 GiB: the events alone refuse it */
    cr_expect_lt(b.total_bytes, 4.0 * (1 << 30));
    struct budget_plan plan;
    strategy_plan_size(find("pipeline-1f1b"), &c, wl, &plan);
    struct err e = {0};
    cr_assert_eq(budget_check(&c, wl, SIM_GROUPS, &plan, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "events") && strstr(e.msg, "--steps 1000000") &&
                  strstr(e.msg, "--max-memory 4"),
              "%s", e.msg);
    /* what --max-memory allows, it runs */
    set(&c, "max-memory", "30");
    cr_expect_eq(budget_check(&c, wl, SIM_GROUPS, &plan, &e), 0, "%s", e.msg);
    /* absurd steps are refused whatever the strategy */
    set(&c, "max-memory", "4");
    set(&c, "steps", "1000000000");
    for (size_t i = 0; i < strategy_count; i++) {
        set(&c, "strategy", strategy_registry[i].name);
        strategy_plan_size(&strategy_registry[i], &c, wl, &plan);
        cr_expect_eq(budget_check(&c, wl, SIM_GROUPS, &plan, &e), ERR_INPUT, "%s",
                     strategy_registry[i].name);
    }
    config_release(&c);
}

/* A limit below 0.1 GiB (--max-memory takes 0.001) got "the run would take
 * about 0.0 GiB of memory, more than --max-memory 0.001 (GiB) allows": the
 * estimate, rounded to one decimal, read as below the limit it broke. */
Test(budget, a_small_limits_refusal_gives_the_estimate_in_digits_above_the_limit)
{
    struct config c;
    CONFIG_WITH(&c, "mirrored", "devices", "4096", "batch", "65536", "steps", "2", "max-memory",
                "0.001");
    struct budget b;
    estimate(&c, wl, &b);
    double total_gib = b.total_bytes / (1024.0 * 1024 * 1024);
    cr_assert(total_gib > 0.001 && total_gib < 0.05, "%g GiB", total_gib);
    struct budget_plan plan;
    strategy_plan_size(find("mirrored"), &c, wl, &plan);
    struct err e = {0};
    cr_assert_eq(budget_check(&c, wl, SIM_GROUPS, &plan, &e), ERR_INPUT);
    const char *about = strstr(e.msg, "about ");
    cr_assert(about, "%s", e.msg);
    double shown = strtod(about + strlen("about "), NULL);
    cr_expect(shown > 0.001 && fabs(shown - total_gib) <= 0.05 * total_gib,
              "shown %g GiB for %g: %s", shown, total_gib, e.msg);
    cr_expect(!strstr(e.msg, " 0.0 GiB"), "%s", e.msg);
    config_release(&c);
}

Test(budget, a_real_run_simulates_no_events)
{
    struct config c;
    CONFIG_WITH(&c, NULL, "steps", "1000000000");
    struct budget_plan plan;
    strategy_plan_size(find(c.strategy), &c, wl, &plan);
    struct budget b;
    budget_estimate(&c, wl, OPTG_SCENARIO | OPTG_RUN | OPTG_LAUNCH, &plan, &b);
    cr_expect_eq(b.events, 0);
    config_release(&c);
}

/* A real run keeps rank 0's parameters at each --eval-every point and
 * evaluates them after training (real/eval_snapshots.h): the points short
 * of the last step, each a copy of the model. More of them than memory
 * allows are refused up front, naming --eval-every and the way it shrinks
 * (a larger value), not mid-run. */
Test(budget, a_real_runs_evaluation_points_are_counted_and_refused_by_raising_eval_every)
{
    struct config c;
    CONFIG_WITH(&c, "mirrored", "steps", "101", "eval-every", "10");
    struct budget_plan plan;
    strategy_plan_size(find(c.strategy), &c, wl, &plan);
    const unsigned real = OPTG_SCENARIO | OPTG_RUN | OPTG_LAUNCH;
    struct budget b;
    budget_estimate(&c, wl, real, &plan, &b);
    /* 235,146 parameters (784-256-128-10), fp32, at steps 10, 20, ..., 100 */
    cr_expect_float_eq(b.parts[BUDGET_EVAL_POINTS].bytes, 10.0 * 235146 * 4, 1);
    cr_expect_str_eq(b.parts[BUDGET_EVAL_POINTS].why,
                     "10 evaluation points x 235146 parameters x 4 B");
    /* the simulator evaluates off its own clock and keeps nothing */
    budget_estimate(&c, wl, SIM_GROUPS, &plan, &b);
    cr_expect_eq(b.parts[BUDGET_EVAL_POINTS].bytes, 0);
    set(&c, "eval-every", "1");
    set(&c, "steps", "100000");
    struct err e = {0};
    cr_assert_eq(budget_check(&c, wl, real, &plan, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "most of it from --eval-every 1: 99999 evaluation points x ") &&
                  strstr(e.msg, "Raise --eval-every, or raise --max-memory"),
              "%s", e.msg);
    config_release(&c);
}
