/* strata compare: several strategies, one scenario, one table, each with its
 * speedup over the same scenario on one device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/run.h"
#include "../bench/run_numerics.h"
#include "compare.h"
#include "outputs.h"
#include "plot.h"
#include "scenario.h"

int cmd_compare(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct scenario s;
    const struct strategy *list[64];
    size_t n = 0;
    struct sim_run base = {0};
    struct sim_run *runs = NULL;
    struct run_numerics *numerics = NULL;   /* every run of the comparison shares it */
    int n_runs = 0, status = 0;
    char (*notes)[ERR_MSG_BYTES + 64] = NULL;
    int n_notes = 0, n_unfit = 0;

    int rc = scenario_load(&s, self, argc, argv, &e);
    if (rc == 0 && !strcmp(s.cfg.mode, "real")) {
        status = compare_real(self, &s);
        goto out;
    }
    if (rc == 0) rc = strategy_parse_list(s.cfg.strategies, list, &n, &e);
    if (rc == 0 && !(numerics = run_numerics_create(&e))) rc = ERR_NOMEM;
    if (rc == 0) rc = run_baseline(&s.cfg, s.wl, numerics, &base, &e);
    if (rc != 0) {
        status = rc == CONFIG_HELP ? 0 : scenario_fail(self, &e);
        goto out;
    }
    runs = calloc(n, sizeof *runs);
    notes = calloc(n, sizeof *notes);
    if (!runs || !notes) {
        status = scenario_fail(self, &(struct err){ERR_NOMEM, "out of memory"});
        goto out;
    }
    bool progress = isatty(STDERR_FILENO);
    for (size_t i = 0; i < n; i++) {
        if (progress) fprintf(stderr, "\rsimulating %-16s (%zu of %zu)", list[i]->name, i + 1, n);
        struct err one = {0};
        rc = run_simulate(&s.cfg, list[i], s.wl, outputs_keep_steps(&s.cfg), numerics,
                          &runs[n_runs], &one);
        if (rc == 0) {
            n_runs++;
            continue;
        }
        run_release(&runs[n_runs]);
        /* A scenario that does not fit one strategy (more stages than layers,
         * say) is that strategy's note, not the whole comparison's failure. */
        snprintf(notes[n_notes++], sizeof notes[0], "%s: %s", list[i]->name, one.msg);
        if (rc == ERR_INPUT) n_unfit++;
        else status = 1;
    }
    if (progress) fprintf(stderr, "\r%40s\r", "");

    char desc[512];
    workload_describe(s.wl, desc, sizeof desc);
    printf("%lld devices of %s, batch %lld, %lld steps, stragglers %s\n%s\n\n", s.cfg.devices,
           base.cluster.name, s.cfg.batch, s.cfg.steps, s.cfg.straggler, desc);
    const struct report *rows[64];
    double speedup[64];
    struct sim_run *run_ptrs[64];
    for (int i = 0; i < n_runs && i < 64; i++) {
        rows[i] = &runs[i].report;
        run_ptrs[i] = &runs[i];
        speedup[i] = run_speedup(&runs[i], &base);
    }
    report_print_table(stdout, rows, n_runs, speedup);
    run_print_baseline_note(stdout, &s.cfg, base.report.step_time_s.mean, false);
    for (int i = 0; i < n_notes; i++) printf("  not run: %s\n", notes[i]);
    for (int i = 0; i < n_runs; i++)
        if (run_exceeds_memory(&runs[i]))
            printf("  warning: %s needs more memory per device than a %s device has\n",
                   runs[i].report.strategy, runs[i].cluster.name);
    outputs_note_ideal(&base);
    if (s.cfg.timeline)
        for (int i = 0; i < n_runs; i++) outputs_timeline(&runs[i]);
    if (outputs_write(&s.cfg, run_ptrs, n_runs, speedup, &e) < 0) status = scenario_fail(self, &e);
    else if (plot_wanted(&s.cfg) && plot_sim_runs(&s.cfg, run_ptrs, n_runs, &e) < 0)
        status = scenario_fail(self, &e);
    /* Every strategy unfit for this scenario means the scenario is the problem. */
    if (status == 0 && n_runs == 0 && n_unfit > 0) status = 2;
out:
    for (int i = 0; i < n_runs; i++) run_release(&runs[i]);
    free(runs);
    free(notes);
    run_release(&base);
    run_numerics_free(numerics);
    scenario_release(&s);
    return status;
}
