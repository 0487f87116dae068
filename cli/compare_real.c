/* strata compare --mode real: every strategy executed, one MPI job each,
 * and the same table as the simulated compare, speedups over the same
 * scenario run for real on one device. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../bench/real_job.h"
#include "../bench/run.h"
#include "../strategies/strategy.h"
#include "compare.h"
#include "plot.h"

static int write_outputs(const struct config *cfg, const struct report *const *rows, int n,
                         const double *speedup, struct err *e)
{
    if (cfg->json_path[0])
        TRY_CTX(e, n == 1 ? report_write_json(rows[0], cfg->json_path, e)
                          : report_write_compare_json(rows, n, cfg->json_path, e), "--json");
    if (cfg->csv_path[0]) TRY_CTX(e, report_write_csv(rows, n, speedup, cfg->csv_path, e), "--csv");
    return 0;
}

int compare_real(const struct command *self, struct scenario *s)
{
    struct err e = {0};
    const struct config *cfg = &s->cfg;
    if (cfg->trace_path[0] || cfg->timeline)
        return scenario_fail(self, &(struct err){ERR_INPUT, "--trace and --timeline show one real "
                                                            "run: use `strata real --strategy S` "
                                                            "for them"});
    const struct strategy *list[64];
    size_t n = 0;
    if (strategy_parse_list(cfg->strategies, list, &n, &e) < 0) return scenario_fail(self, &e);
    int np = (int)(config_is_set(cfg, "np") ? cfg->np : cfg->devices);
    if (np < 1) return scenario_fail(self, &(struct err){ERR_INPUT, "--np: 0 is not allowed with "
                                                                    "--mode real (1 or more)"});

    bool progress = isatty(STDERR_FILENO);
    struct report_doc base = {0}, docs[64] = {{0}};
    const struct report *rows[64];
    double speedup[64];
    char notes[64][ERR_MSG_BYTES + 64];
    int n_rows = 0, n_notes = 0, n_unfit = 0, status = 0;
    if (progress) fprintf(stderr, "running the one-device baseline for real\n");
    struct config base_cfg;
    if (run_baseline_config(cfg, &base_cfg, &e) < 0 ||
        real_job_run(&base_cfg, s->wl, strategy_baseline()->name, 1, NULL, &base, &e) < 0) {
        status = scenario_fail(self, &e);
        goto out;
    }
    for (size_t i = 0; i < n && i < 64; i++) {
        if (progress)
            fprintf(stderr, "running %s on %d ranks for real (%zu of %zu)\n", list[i]->name, np,
                    i + 1, n);
        struct err one = {0};
        int rc = real_job_run(cfg, s->wl, list[i]->name, np, NULL, &docs[n_rows], &one);
        if (rc == 0) {
            rows[n_rows] = &docs[n_rows].reports[0];
            double b = base.reports[0].throughput_samples_per_s;
            speedup[n_rows] = b > 0 ? rows[n_rows]->throughput_samples_per_s / b : 0;
            n_rows++;
            continue;
        }
        snprintf(notes[n_notes++], sizeof notes[0], "%s: %s", list[i]->name, one.msg);
        if (rc == ERR_INPUT) n_unfit++;
        else status = 1;
    }

    char desc[512];
    workload_describe(s->wl, desc, sizeof desc);
    printf("%d MPI ranks of this machine (%s device), batch %lld, %s %lld, data %s, stragglers %s\n"
           "%s\n\n", np, cfg->device, cfg->batch, cfg->epochs > 0 ? "epochs" : "steps",
           cfg->epochs > 0 ? cfg->epochs : cfg->steps, cfg->data, cfg->straggler, desc);
    report_print_table(stdout, rows, n_rows, speedup);
    run_print_baseline_note(stdout, cfg, base.reports[0].step_time_s.mean, true);
    for (int i = 0; i < n_notes; i++) printf("  not run: %s\n", notes[i]);
    if (write_outputs(cfg, rows, n_rows, speedup, &e) < 0) {
        status = scenario_fail(self, &e);
    } else if (plot_wanted(cfg)) {
        char title[512];
        snprintf(title, sizeof title, "%d MPI ranks (%s device), batch %lld, %.120s, measured", np,
                 cfg->device, cfg->batch, cfg->model);
        if (plot_real_reports(cfg, rows, n_rows, title, &e) < 0) status = scenario_fail(self, &e);
    }
    if (status == 0 && n_rows == 0 && n_unfit > 0) status = 2;
out:
    for (int i = 0; i < n_rows; i++) report_doc_release(&docs[i]);
    report_doc_release(&base);
    return status;
}
