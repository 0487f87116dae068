/* bench/compare: every strategy of a list simulated against the one-device
 * baseline; a strategy the scenario does not fit is a note, not a failure,
 * and the results are as many as the strategies that ran (no fixed cap). */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "../bench/compare.h"
#include "../core/config.h"
#include "../strategies/strategy.h"

static void scenario_of(struct config *cfg, struct workload **wl, const char *model,
                        const char *devices)
{
    struct err e = {0};
    config_init(cfg);
    cr_assert_eq(config_set(cfg, "cluster", "cpu-loopback", ~0u, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(cfg, "model", model, ~0u, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(cfg, "devices", devices, ~0u, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(cfg, "steps", "3", ~0u, &e), 0, "%s", e.msg);
    cr_assert_eq(workload_parse(cfg->model, wl, &e), 0, "%s", e.msg);
}

/* 3 layers */
static void scenario(struct config *cfg, struct workload **wl, const char *devices)
{
    scenario_of(cfg, wl, "mlp:64-32-32-10", devices);
}

Test(compare, every_strategy_runs_with_its_speedup_over_the_simulated_baseline)
{
    struct config cfg;
    struct workload *wl;
    /* 4 layers: pipeline-interleaved's 2 chunks on each of 2 devices */
    scenario_of(&cfg, &wl, "mlp:64-32-32-32-10", "2");
    struct err e = {0};
    const struct strategy *all[16];
    size_t n_all = 0;
    cr_assert_eq(strategy_parse_list("all", all, &n_all, &e), 0, "%s", e.msg);
    struct compare c;
    cr_assert_eq(compare_run_sim(&cfg, wl, all, (int)n_all, 0, NULL, NULL,
                                 NULL, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(c.n, (int)strategy_count, "%d of %zu ran (notes: %s)", c.n, strategy_count,
                 c.n_notes ? c.notes[0] : "none");
    cr_expect_eq(c.n_notes, 0);
    for (int i = 0; i < c.n; i++) {
        cr_expect_str_eq(c.reports[i]->strategy, strategy_registry[i].name, "the list's order");
        /* the definition (bench/run.h): throughput over the baseline's */
        double want = c.reports[i]->throughput_samples_per_s / c.base->throughput_samples_per_s;
        cr_expect(fabs(c.speedup[i] - want) <= 1e-12 * want, "%s: %g, not %g",
                  c.reports[i]->strategy, c.speedup[i], want);
        cr_expect_eq(&c.sim_runs[i]->report, c.reports[i]);
    }
    compare_release(&c);
    workload_free(wl);
    config_release(&cfg);
}

Test(compare, a_strategy_the_scenario_does_not_fit_is_a_note_counted_as_unfit)
{
    /* 4 devices, 3 layers: model parallelism has more stages than layers. */
    struct config cfg;
    struct workload *wl;
    scenario(&cfg, &wl, "4");
    struct err e = {0};
    const struct strategy *list[2];
    size_t n = 0;
    cr_assert_eq(strategy_parse_list("model,mirrored", list, &n, &e), 0, "%s", e.msg);
    struct compare c;
    cr_assert_eq(compare_run_sim(&cfg, wl, list, (int)n, 0, NULL, NULL, NULL, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(c.n, 1);
    cr_expect_str_eq(c.reports[0]->strategy, "mirrored");
    cr_expect_eq(c.n_notes, 1);
    cr_expect_eq(c.n_unfit, 1);
    cr_expect_eq(c.n_failed, 0);
    cr_expect_eq(strncmp(c.notes[0], "model: ", 7), 0, "%s", c.notes[0]);
    compare_release(&c);
    workload_free(wl);
    config_release(&cfg);
}
