/* strata compare --mode real: every strategy executed, one MPI job each
 * (bench/compare.h runs them), and the same table as the simulated compare,
 * speedups over the same scenario run for real on one device. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../bench/compare.h"
#include "../core/straggler_detect.h"
#include "../core/table_notes.h"
#include "../real/real.h"
#include "compare.h"
#include "html.h"
#include "notes.h"
#include "plot.h"

static int write_outputs(const struct config *cfg, const struct report *const *rows, int n,
                         const double *speedup, struct err *e)
{
    if (cfg->json_path[0])
        TRY_CTX(e, n == 1 ? report_write_json(rows[0], cfg->json_path, e)
                          : report_write_compare_json(rows, n, speedup, cfg->json_path, e),
                "--json");
    if (cfg->csv_path[0]) TRY_CTX(e, report_write_csv(rows, n, speedup, cfg->csv_path, e), "--csv");
    return 0;
}

struct progress {
    int np;
};

static void show_progress(void *ctx, const char *strategy, int done, int total)
{
    const struct progress *p = ctx;
    if (!strategy) fprintf(stderr, "running the one-device baseline for real\n");
    else
        fprintf(stderr, "running %s on %d ranks for real (%d of %d)\n", strategy, p->np,
                done + 1, total);
}

int cmd_compare_real(const struct command *self, struct scenario *s)
{
    struct err e = {0};
    const struct config *cfg = &s->cfg;
    if (cfg->trace_path[0] || cfg->timeline)
        return scenario_fail(self, &(struct err){ERR_INPUT, "--trace and --timeline show one real "
                                                            "run: use `strata real --strategy S` "
                                                            "for them"});
    const struct strategy **list = calloc(strategy_count, sizeof *list);
    if (!list) return scenario_fail(self, &(struct err){ERR_NOMEM, "out of memory"});
    size_t n = 0;
    struct compare c = {0};
    struct notes notes = {0};   /* those under the table, for --html too */
    int status = 0;
    /* what every job would refuse alike, once, before the baseline's job */
    if (strategy_parse_list(cfg->strategies, list, &n, &e) < 0 ||
        real_check_launch_pairs(cfg, &e) < 0) {
        status = scenario_fail_in(self, s, &e);
        goto out;
    }
    struct progress p = {(int)(config_is_set(cfg, "np") ? cfg->np : cfg->devices)};
    if (p.np < 1) {
        status = scenario_fail(self, &(struct err){ERR_INPUT, "--np: 0 is not allowed with "
                                                              "--mode real (1 or more)"});
        goto out;
    }
    bool progress = isatty(STDERR_FILENO);
    if (compare_run_real(cfg, s->wl, list, (int)n, p.np, progress ? show_progress : NULL, &p, &c,
                         &e) < 0) {
        status = scenario_fail_in(self, s, &e);
        goto out;
    }
    /* A strategy whose job failed (not one the scenario does not fit) fails
     * the command; every strategy unfit means the scenario is the problem. */
    if (c.n_failed) status = 1;
    else if (c.n == 0 && c.n_unfit > 0) status = 2;

    char desc[512], scenario[CONFIG_PATH_BYTES + 512];
    workload_describe(s->wl, desc, sizeof desc);
    /* "8 steps" or "2 epochs", as sim and compare say it */
    long long amount = cfg->epochs > 0 ? cfg->epochs : cfg->steps;
    snprintf(scenario, sizeof scenario, "%d MPI rank%s %s (%s device), batch %lld, "
             "%lld %s%s, data %s, stragglers %s", p.np, p.np == 1 ? "" : "s",
             cfg->hostfile[0] ? "on --hostfile's hosts" : "of this machine", cfg->device,
             cfg->batch, amount, cfg->epochs > 0 ? "epoch" : "step", amount == 1 ? "" : "s",
             cfg->data, cfg->straggler);
    printf("%s\n%s\n\n", scenario, desc);
    report_print_table(stdout, c.reports, c.n, c.speedup);
    table_legend_print(stdout, c.reports, c.n);   /* the page has its own legend */
    notes_begin(&notes);
    run_print_baseline_note(notes.f, cfg, c.base->step_time_s.mean, true);
    for (int i = 0; i < c.n; i++)
        straggler_print(notes.f, c.reports[i]->strategy, c.reports[i]->paces,
                        c.reports[i]->n_paces);
    for (int i = 0; i < c.n_notes; i++) fprintf(notes.f, "  not run: %s\n", c.notes[i]);
    table_notes_print(notes.f, c.reports, c.n, c.speedup, c.base);
    scenario_note_unread_by_all(notes.f, list, n, cfg, "compared");
    scenario_note_tf32_unread(notes.f, cfg, "  note:", "");
    notes_end(&notes);
    /* Then no file is written, as for a simulated compare, and the reasons
     * go to stderr too. */
    if (status != 0) {
        fprintf(stderr, "strata %s: %s; no file written:\n", self->name,
                status == 1 ? "a strategy failed" : "no strategy ran");
        for (int i = 0; i < c.n_notes; i++) fprintf(stderr, "  not run: %s\n", c.notes[i]);
    } else if (write_outputs(cfg, c.reports, c.n, c.speedup, &e) < 0) {
        status = scenario_fail(self, &e);
    } else if (plot_wanted(cfg)) {
        char title[512];
        snprintf(title, sizeof title, "%d MPI ranks (%s device), batch %lld, %.120s, measured",
                 p.np, cfg->device, cfg->batch, cfg->model);
        if (plot_real_reports(cfg, c.reports, c.n, title, &e) < 0) status = scenario_fail(self, &e);
    }
    if (status == 0 &&
        html_write_reports(cfg, (struct html_run){.command = "compare", .scenario = scenario,
                                                  .description = desc,
                                                  .notes_text = notes.text},
                           c.reports, c.n, c.speedup, &e) < 0)
        status = scenario_fail(self, &e);
out:
    notes_release(&notes);
    compare_release(&c);
    free(list);
    return status;
}
