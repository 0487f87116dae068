/* strata compare: several strategies, one scenario, one table, each with its
 * speedup over the same scenario on one device (bench/compare.h runs them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/compare.h"
#include "../bench/run_numerics.h"
#include "../core/table_notes.h"
#include "compare.h"
#include "html.h"
#include "notes.h"
#include "outputs.h"
#include "plot.h"
#include "scenario.h"

static void show_progress(void *ctx, const char *strategy, int done, int total)
{
    (void)ctx;
    fprintf(stderr, "\rsimulating %-16s (%d of %d)", strategy, done + 1, total);
}

/* Each strategy's --trace file, before any run: not another output's path. */
static int check_traces(const struct config *cfg, const struct strategy *const *list, size_t n,
                        struct err *e)
{
    const char **names = XCALLOC(e, n ? n : 1, sizeof *names);
    if (!names) return ERR_NOMEM;
    for (size_t i = 0; i < n; i++) names[i] = list[i]->name;
    int rc = outputs_check_traces(cfg, names, (int)n, e);
    free(names);
    return rc;
}

int cmd_compare(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct scenario s;
    const struct strategy **list = NULL;
    size_t n = 0;
    struct compare c = {0};
    struct run_numerics *numerics = NULL;   /* every run of the comparison shares it */
    struct notes notes = {0};               /* those under the table, for --html too */
    int status = 0;

    int rc = scenario_load(&s, self, argc, argv, &e);
    if (rc == 0 && !strcmp(s.cfg.mode, "real")) {
        status = cmd_compare_real(self, &s);
        goto out;
    }
    if (rc == 0 && !(list = calloc(strategy_count, sizeof *list)))
        rc = err_set(&e, ERR_NOMEM, "out of memory");
    if (rc == 0) rc = strategy_parse_list(s.cfg.strategies, list, &n, &e);
    if (rc == 0) rc = check_traces(&s.cfg, list, n, &e);
    if (rc == 0 && !(numerics = run_numerics_create(&e))) rc = ERR_NOMEM;
    bool progress = isatty(STDERR_FILENO);
    /* -j: the strategies in workers, unless the runs' spans are wanted here */
    int n_jobs = config_is_set(&s.cfg, "jobs") ? (int)s.cfg.jobs : compare_default_jobs();
    if (rc == 0)
        rc = compare_run_spread(&s.cfg, s.wl, list, (int)n, outputs_keep_steps(&s.cfg), n_jobs,
                                numerics, progress ? show_progress : NULL, NULL, &c, &e);
    if (progress && n) fprintf(stderr, "\r%40s\r", "");
    if (rc != 0) {
        status = rc == CONFIG_HELP ? 0 : scenario_fail_in(self, &s, &e);
        goto out;
    }
    /* Nothing ran: the reasons are the whole answer, on stderr, and there
     * is no report to write (an empty document would only mislead). Every
     * strategy unfit means the scenario is the problem (2); else a run
     * failed (1). */
    if (c.n == 0) {
        fprintf(stderr, "strata %s: no strategy ran; nothing written:\n", self->name);
        for (int i = 0; i < c.n_notes; i++) fprintf(stderr, "  not run: %s\n", c.notes[i]);
        status = c.n_failed ? 1 : 2;
        goto out;
    }
    /* A strategy whose run failed (not one the scenario does not fit) fails
     * the command, which then writes no file: a document missing a
     * strategy for a reason that is not the scenario's would read as
     * complete. */
    if (c.n_failed) {
        status = 1;
        fprintf(stderr, "strata %s: %d of %d strategies failed; no file written:\n", self->name,
                c.n_failed, c.n + c.n_notes);
        for (int i = 0; i < c.n_notes; i++) fprintf(stderr, "  not run: %s\n", c.notes[i]);
    }

    char desc[512], scenario[1024];
    workload_describe(s.wl, desc, sizeof desc);
    snprintf(scenario, sizeof scenario,
             "%lld device%s of %s, batch %lld, %lld step%s, stragglers %s",
             s.cfg.devices, s.cfg.devices == 1 ? "" : "s", c.sim_base.cluster.name, s.cfg.batch,
             s.cfg.steps, s.cfg.steps == 1 ? "" : "s", s.cfg.straggler);
    printf("%s\n%s\n\n", scenario, desc);
    report_print_table(stdout, c.reports, c.n, c.speedup);
    table_legend_print(stdout, c.reports, c.n);   /* the page has its own legend */
    notes_begin(&notes);
    run_print_baseline_note(notes.f, &s.cfg, c.base->step_time_s.mean, false);
    for (int i = 0; i < c.n_notes; i++) fprintf(notes.f, "  not run: %s\n", c.notes[i]);
    table_notes_print(notes.f, c.reports, c.n, c.speedup, c.base);
    for (int i = 0; i < c.n; i++)
        if (c.plan_notes[i][0])
            fprintf(notes.f, "  note: %s: %s\n", c.reports[i]->strategy, c.plan_notes[i]);
    /* the strategies' cluster is the baseline's (--cluster), wherever they ran */
    for (int i = 0; i < c.n; i++)
        if (c.exceeds_memory[i])
            outputs_warn_memory(notes.f, "  ", c.reports[i], &c.sim_base.cluster);
    scenario_note_unread(notes.f, &s.cfg, OPTG_EXEC | OPTG_LAUNCH,
                         "read by real runs only (--mode real); this compare is simulated");
    scenario_note_training_unread(notes.f, &s.cfg, "  note:", "");
    scenario_note_unread_by_all(notes.f, list, n, &s.cfg, "compared");
    scenario_note_no_failure(notes.f, &s.cfg, "  note:", "");
    if (s.cfg.checkpoint_every > 0) {
        char given[64];
        snprintf(given, sizeof given, "--checkpoint-every %lld", s.cfg.checkpoint_every);
        scenario_note_free_checkpoints(notes.f, &s.cfg, &c.sim_base.cluster, given, "  note:", "");
    }
    outputs_note_ideal(notes.f, &c.sim_base);
    notes_end(&notes);
    if (s.cfg.timeline)
        for (int i = 0; i < c.n; i++) outputs_timeline(c.sim_runs[i]);
    if (status != 0)
        ;
    else if ((c.sim_runs ? outputs_write(&s.cfg, c.sim_runs, c.n, (int)n, c.speedup, &e)
                          : outputs_write_reports(&s.cfg, c.reports, c.n, c.speedup, &e)) < 0)
        status = scenario_fail_in(self, &s, &e);
    else if (plot_wanted(&s.cfg) && plot_sim_runs(&s.cfg, c.sim_runs, c.n, &e) < 0)
        status = scenario_fail_in(self, &s, &e);
    else if (html_write_reports(&s.cfg,
                                (struct html_run){.command = "compare", .scenario = scenario,
                                                  .description = desc, .notes_text = notes.text,
                                                  .runs = c.sim_runs,
                                                  .n_runs = c.sim_runs ? c.n : 0},
                                c.reports, c.n, c.speedup, &e) < 0)
        status = scenario_fail_in(self, &s, &e);
out:
    notes_release(&notes);
    compare_release(&c);
    run_numerics_free(numerics);
    free(list);
    scenario_release(&s);
    return status;
}
