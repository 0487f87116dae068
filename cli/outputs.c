#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileio.h"
#include "../plots/timeline_text.h"
#include "outputs.h"

int outputs_keep_steps(const struct config *cfg)
{
    if (cfg->trace_path[0]) return -1;
    bool is_plotted = cfg->plot_dir[0] || cfg->plot_terminal;
    return cfg->timeline || is_plotted ? OUTPUTS_TIMELINE_STEPS : 0;
}

int outputs_check(const struct config *cfg, struct err *e)
{
    /* The file outputs, each with the option that names it. */
    const struct {
        const char *option, *path;
    } files[] = {
        {"--json", cfg->json_path},        {"--csv", cfg->csv_path},
        {"--trace", cfg->trace_path},      {"--save-params", cfg->save_params},
        {"--output", cfg->output},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (files[i].path[0])
            TRY_CTX(e, file_check_writable(files[i].path, e), "%s", files[i].option);
    if (cfg->plot_dir[0]) TRY_CTX(e, file_check_dir_writable(cfg->plot_dir, true, e), "--plot");
    return 0;
}

/* "out/t.json" + "mirrored" -> "out/t.mirrored.json" */
static void per_strategy_path(const char *path, const char *name, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) dot = path + strlen(path);
    snprintf(buf, n, "%.*s.%s%s", (int)(dot - path), path, name, dot);
}

int outputs_write(const struct config *cfg, struct sim_run *const *runs, int n,
                  const double *speedup, struct err *e)
{
    if (cfg->json_path[0] || cfg->csv_path[0]) {
        /* n + 1: a comparison where nothing ran still writes its document */
        const struct report **reports = XCALLOC(e, (size_t)n + 1, sizeof *reports);
        if (!reports) return ERR_NOMEM;
        for (int i = 0; i < n; i++) reports[i] = &runs[i]->report;
        int rc = 0;
        if (cfg->json_path[0]) {
            rc = n == 1 ? report_write_json(reports[0], cfg->json_path, e)
                        : report_write_compare_json(reports, n, cfg->json_path, e);
            if (rc < 0) err_prefix(e, "--json");
        }
        if (rc == 0 && cfg->csv_path[0]) {
            rc = report_write_csv(reports, n, speedup, cfg->csv_path, e);
            if (rc < 0) err_prefix(e, "--csv");
        }
        free(reports);
        TRY(rc);
    }
    if (cfg->trace_path[0])
        for (int i = 0; i < n; i++) {
            char path[CONFIG_PATH_BYTES + 80];
            if (n == 1)
                snprintf(path, sizeof path, "%s", cfg->trace_path);
            else
                per_strategy_path(cfg->trace_path, runs[i]->report.strategy, path, sizeof path);
            const struct trace_scenario sc = {.mode = "sim", .cfg = runs[i]->report.config,
                                              .config_groups = runs[i]->report.config_groups,
                                              .steps = runs[i]->cfg.steps};
            TRY_CTX(e, trace_write_chrome(&runs[i]->trace, runs[i]->plan, &sc, path, e),
                    "--trace");
            if (runs[i]->trace.n_dropped)
                fprintf(stderr, "strata: --trace %s: kept the first %lld spans, left out %lld "
                        "(use fewer --steps for a whole trace)\n", path,
                        (long long)runs[i]->trace.spans.len, (long long)runs[i]->trace.n_dropped);
        }
    return 0;
}

void outputs_timeline(const struct sim_run *run)
{
    const struct trace *t = &run->trace;
    double t_end = 0;
    for (size_t i = 0; i < t->spans.len; i++)
        if (t->spans.items[i].step < OUTPUTS_TIMELINE_STEPS && t->spans.items[i].end_s > t_end)
            t_end = t->spans.items[i].end_s;
    /* On the ideal cluster, one time unit a column when it fits: the
     * textbook picture, as `strata schedule` draws it. */
    int cols = timeline_width();
    if (run->cluster.is_ideal && t_end + 18 < cols) cols = (int)t_end + 18;
    printf("\n%s, first %d steps: ", run->report.strategy, OUTPUTS_TIMELINE_STEPS);
    timeline_print(stdout, t->spans.items, t->spans.len, run->plan->n_ranks, t_end, cols, 64,
                   run->cluster.is_ideal ? "units" : "s");
}

void outputs_note_ideal(const struct sim_run *run)
{
    if (run->cluster.is_ideal)
        printf("ideal cluster: a layer costs one unit per microbatch whatever its size, so "
               "speedups here\nare not meaningful; it is for schedules and closed forms.\n");
}
