/* core/budget.c: the estimate counts pipeline-interleaved's --chunks in a
 * compare that may run it, and refuses a simulation whose events (ranks x
 * ops a step x steps) exceed what --max-memory allows, naming the option. */
#include <criterion/criterion.h>

#include <string.h>

#include "../core/budget.h"
#include "../core/config.h"
#include "../core/workload.h"
#include "helpers.h"

TEST_SUITE_WITH_WORKLOAD(budget, wl, "mlp:784-256-128-10");

static void set(struct config *c, const char *name, const char *value)
{
    struct err e = {0};
    cr_assert_eq(config_set(c, name, value, ~0u, &e), 0, "%s", e.msg);
}

#define COMPARE_GROUPS (OPTG_SCENARIO | OPTG_COMPARE | OPTG_RUN | OPTG_SIM)

Test(budget, compare_counts_chunks_when_it_may_run_interleaved)
{
    struct config c;
    config_init(&c);
    set(&c, "microbatches", "64");
    set(&c, "chunks", "8");
    struct budget all, listed, without;
    budget_estimate(&c, wl, COMPARE_GROUPS, &all);   /* --strategies all */
    set(&c, "strategies", "mirrored,pipeline-interleaved");
    budget_estimate(&c, wl, COMPARE_GROUPS, &listed);
    set(&c, "strategies", "mirrored,pipeline-1f1b");
    budget_estimate(&c, wl, COMPARE_GROUPS, &without);
    /* ops a step: 4 x chunks x microbatches + 2 x 3 layers + 8 = 2062 with
     * the chunks, 270 without */
    cr_expect_gt(all.parts[BUDGET_PLAN].bytes, 7 * without.parts[BUDGET_PLAN].bytes);
    cr_expect_eq(all.parts[BUDGET_PLAN].bytes, listed.parts[BUDGET_PLAN].bytes);
    cr_expect(strstr(listed.parts[BUDGET_PLAN].why, " 2062 ops a step"), "%s",
              listed.parts[BUDGET_PLAN].why);
    cr_expect(strstr(without.parts[BUDGET_PLAN].why, " 270 ops a step"), "%s",
              without.parts[BUDGET_PLAN].why);
    config_release(&c);
}

Test(budget, too_many_events_are_refused_naming_the_option_and_max_memory)
{
    struct config c;
    config_init(&c);
    set(&c, "strategy", "pipeline-1f1b");
    set(&c, "microbatches", "1024");
    set(&c, "batch", "1024");
    set(&c, "steps", "1000000");
    struct budget b;
    budget_estimate(&c, wl, OPTG_SCENARIO | OPTG_RUN | OPTG_SIM, &b);
    /* 4 ranks x (4 x 1024 + 2 x 3 + 8 = 4110 ops) x 10^6 steps */
    cr_expect_float_eq(b.events, 4.0 * 4110 * 1e6, 1);
    /* its memory fits 4 GiB: the events alone refuse it */
    cr_expect_lt(b.total_bytes, 4.0 * (1 << 30));
    struct err e = {0};
    cr_assert_eq(budget_check(&c, wl, OPTG_SCENARIO | OPTG_RUN | OPTG_SIM, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "events") && strstr(e.msg, "--steps 1000000") &&
                  strstr(e.msg, "--max-memory 4"),
              "%s", e.msg);
    /* what --max-memory allows, it runs */
    set(&c, "max-memory", "20");
    cr_expect_eq(budget_check(&c, wl, OPTG_SCENARIO | OPTG_RUN | OPTG_SIM, &e), 0, "%s", e.msg);
    config_release(&c);
}

Test(budget, a_real_run_simulates_no_events)
{
    struct config c;
    config_init(&c);
    set(&c, "steps", "1000000000");
    struct budget b;
    budget_estimate(&c, wl, OPTG_SCENARIO | OPTG_RUN | OPTG_LAUNCH, &b);
    cr_expect_eq(b.events, 0);
    config_release(&c);
}
